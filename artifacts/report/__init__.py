"""Reports people read: self-contained HTML pages (jinja2 + embedded plotly), their machine-readable twin
``interpretation.json``, the manual's ZIP layout and CSV exports, all rendered from the documents a run
already wrote (its export folder, or its versions in the artifact store)."""
