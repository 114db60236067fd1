"""LLM judges: an OpenAI-compatible client with structured output, a content-addressed cache, versioned
prompt templates (data files) and evidence for every judged case. Library code: no Prefect.

Importing this package is cheap; the client (and ``openai``) load when a judge is first used.
"""

NOT_CONFIGURED = "unavailable: no judge endpoint configured"
