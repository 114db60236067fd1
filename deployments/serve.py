"""Serve the evaluate flow as a Prefect deployment, e.g. for scheduled re-validation of a production RAG.

    PREFECT_API_URL=http://127.0.0.1:4200/api python -m deployments.serve \\
        --suite suite.json --host sample-rag --out /data/revalidation --cron "0 6 * * 1"

Runs then appear in the Prefect UI, where they can also be triggered by hand
(``prefect deployment run evaluate/revalidation``).
"""

import argparse

from assay.config import load_settings
from assay.prefect_env import configure_prefect


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", required=True, help="Test suite (Assay JSON).")
    parser.add_argument("--host", action="append", default=None, help="Host type; repeatable.")
    parser.add_argument("--evaluators", default="answer_semantic_similarity,text_matching")
    parser.add_argument("--out", required=True, help="Results folder; each run continues or starts a run there.")
    parser.add_argument("--name", default="revalidation", help="Deployment name.")
    parser.add_argument("--cron", default=None, help="Schedule, e.g. '0 6 * * 1' (Mondays 06:00).")
    return parser.parse_args(argv)


def build_deployment(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    """The evaluate flow as a runner deployment with the given parameters and schedule."""
    configure_prefect(load_settings())
    from flows.evaluate import evaluate_flow

    return evaluate_flow.to_deployment(
        name=args.name,
        cron=args.cron,
        parameters={
            "suite": args.suite,
            "hosts": args.host or ["sample-rag"],
            "evaluators": args.evaluators.split(","),
            "out": args.out,
        },
    )


def main(argv: list[str] | None = None) -> None:
    deployment = build_deployment(parse_args(argv))
    from prefect import serve

    serve(deployment)


if __name__ == "__main__":
    main()
