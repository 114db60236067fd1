"""Network-policy fixtures shared by the tests and ``bench/reliability.py``: the spellings of a blocked address
and one host file per client library."""

METADATA_SPELLINGS = [
    "http://169.254.169.254/latest/meta-data",
    "http://2852039166/",  # one decimal number
    "http://0xa9fea9fe/",  # one hex number
    "http://0xa9.0xfe.0xa9.0xfe/",  # hex parts
    "http://0251.0376.0251.0376/",  # octal parts
    "http://169.254.43518/",  # a.b.c, the last part 16 bits
    "http://169.254.169.254./",  # trailing dot
    "http://[::ffff:169.254.169.254]/",  # IPv4-mapped IPv6
    "http://[::ffff:a9fe:a9fe]/",  # the same, in hex
    "http://[0:0:0:0:0:ffff:a9fe:a9fe]:80/v1",
    "http://[2002:a9fe:a9fe::1]/",  # 6to4 carrying 169.254.169.254
    "http://[64:ff9b::a9fe:a9fe]/",  # NAT64
    "http://[fe80::1]/",  # IPv6 link-local
    "http://[fe80::1%25eth0]/",  # ... with a zone
    "http://[fd00:ec2::254]/",  # AWS metadata over IPv6
    "http://100.100.100.200/",  # Alibaba Cloud metadata
    "http://168.63.129.16/machine?comp=goalstate",  # Azure's platform endpoint (WireServer)
    "http://[fd20:ce::254]/computeMetadata/v1/",  # Google Cloud metadata over IPv6
    "http://[fd00:c1::a9fe:a9fe]/opc/v2/instance/",  # Oracle Cloud metadata over IPv6
    "http://192.0.0.192/",  # Oracle Cloud's older metadata address
    "169.254.169.254:11434",  # a bare host:port, as ollama takes it
    "HTTP://169.254.169.254/",
]

CLIENT_HOSTS = [
    {"type": "bedrock-kb", "llm_model_name": "m", "settings": {"region": "eu-west-1", "knowledge_base_id": "KB1"}},
    {"type": "h2ogpte-llm", "llm_model_name": "m", "secret_ref": "CANARY_KEY"},
    {"type": "ollama", "llm_model_name": "m", "secret_ref": "CANARY_KEY"},
    {"type": "http-rag", "settings": {"mapping": {"answer": "$.answer"}}},
    {"type": "azure-openai", "llm_model_name": "d", "secret_ref": "CANARY_KEY", "settings": {"api_version": "v"}},
    {"type": "openai-assistants", "secret_ref": "CANARY_KEY", "settings": {"assistant_id": "asst_1"}},
]
"""A host of each client library but the openai-compatible ones (tested beside them), URL left out."""
