"""The applications, above everything they use: the `assay` command line, the guardrail service, the Prefect
server Assay keeps and serves, and the sample RAG server. Nothing in the library imports them."""
