"""``assay report html|zip|csv RUN``: the reports people read, for a run folder or a run id."""

import typer

app = typer.Typer(help="Render a run's HTML report, ZIP archive or CSV results.", no_args_is_help=True)
