"""``assay guardrail serve``: the live guardrail service that applies a guardrail configuration."""

import typer

app = typer.Typer(help="The guardrail service (seed 002's real-time safety shield).", no_args_is_help=True)
