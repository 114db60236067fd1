"""Calls to model servers, shared by the systems under test (``assay.hosts``) and the LLM judges
(``assay.judges``): one retry loop with backoff, one circuit breaker, one rate limiter, one mapping of HTTP
statuses and client failures to kinds. Nothing here knows what is being asked."""
