"""Entry point of the ``assay`` command."""

from typing import Annotated

import typer

from assay.apps.cli import (
    artifacts,
    baseline,
    compare,
    evaluate,
    guardrail,
    judges,
    mrm,
    perturb,
    report,
    server,
    suite,
    traces,
    validate,
)
from assay.apps.cli import hosts as hosts_cli
from assay.apps.cli.common import AssayGroup, command_group, options

app = command_group(
    "Assay: model-risk validation studio for RAG and LLM systems.",
    name="assay",
    pretty_exceptions_enable=False,
    cls=AssayGroup,
)


@app.callback()
def global_options(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks, including Prefect's, on errors.")] = False,
) -> None:
    """Assay: model-risk validation studio for RAG and LLM systems."""
    options.debug = debug


app.add_typer(suite.app, name="suite")
app.add_typer(artifacts.app, name="artifacts")
app.add_typer(mrm.app, name="mrm")
evaluate.evaluators_app.command("validate")(validate.validate)
app.add_typer(evaluate.evaluators_app, name="evaluators")
evaluate.hosts_app.command("check")(hosts_cli.check)
app.add_typer(evaluate.hosts_app, name="hosts")
app.command("serve-sample")(hosts_cli.serve_sample)
app.command("evaluate")(evaluate.evaluate)
app.command("demo")(evaluate.demo)
app.command("perturb")(perturb.perturb)
app.add_typer(perturb.perturbators_app, name="perturbators")
app.add_typer(judges.app, name="judges")
app.add_typer(report.app, name="report")
app.command("compare")(compare.compare)
app.add_typer(baseline.app, name="baseline")
app.add_typer(guardrail.app, name="guardrail")
app.add_typer(server.app, name="server")
app.add_typer(traces.app, name="traces")


if __name__ == "__main__":
    app()
