"""Protocol-faithful local servers (OpenAI, Azure, Assistants, Ollama, Bedrock, h2oGPTe, HTTP RAG, an LLM judge,
SeaweedFS) with fault injection, and the shared hostile inputs: what the tests and the bench scripts start on
127.0.0.1. Never imported by the product."""
