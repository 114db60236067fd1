"""Looking for a secret in what a run wrote: its exact text and the derived copies a host may echo."""

import base64
import json
import random
import re
import string
from collections.abc import Iterable
from pathlib import Path

ALNUM = string.ascii_letters + string.digits
MIN_DERIVED_CHARS = 12
"""The shortest prefix of a secret that must never be stored (issue 25)."""
_SEPARATORS = re.compile(r"[\s\u200b-\u200d\u2060\ufeff\u00ad]+|\\u(?:200[bcd]|2060|feff|00ad)", re.IGNORECASE)
"""Whitespace and zero-width characters, raw or JSON-escaped (a JSON file may hold ``\\u200b``)."""


def derived_copies(secret: str) -> list[str]:
    """The forms an audit found stored: cut short, upper-cased, split by zero-width characters or by spaces."""
    return [secret[: len(secret) * 4 // 5], secret.upper(), "\u200b".join(secret), " ".join(secret)]


def files_holding(secret: str, paths: Iterable[Path]) -> list[str]:
    """The files from which the secret's first ``MIN_DERIVED_CHARS`` characters can be read back, in any case,
    whatever whitespace or zero-width characters were put between them."""
    return [str(path) for path in paths if text_holds(secret, path.read_bytes().decode("utf-8", "replace"))]


def text_holds(secret: str, text: str) -> bool:
    """Whether the secret's first ``MIN_DERIVED_CHARS`` characters can be read back from ``text``, as above."""
    return secret[:MIN_DERIVED_CHARS].casefold() in _SEPARATORS.sub("", text).casefold()


def credential_forms(seed: int = 7) -> dict[str, tuple[str, str]]:
    """Sixteen common credential forms: name -> (the text as a trace carries it, the part that must not be kept)."""
    rng = random.Random(seed)

    def chars(count: int, alphabet: str = ALNUM) -> str:
        # Generated keys mix cases and digits: start with one of each.
        mixed = "aZ7" if alphabet == ALNUM else ""
        return mixed + "".join(rng.choice(alphabet) for _ in range(count - len(mixed)))

    def same(text: str) -> tuple[str, str]:
        return text, text

    b64 = ALNUM + "+/"
    header = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    claims = base64.urlsafe_b64encode(json.dumps({"sub": chars(12)}).encode()).decode().rstrip("=")
    key_body = "\n".join(chars(64, b64) for _ in range(4))
    aws_secret, azure_key, azure_openai = chars(40, b64), chars(86, b64) + "==", chars(32, "0123456789abcdef")
    bearer, basic_password, db_password = chars(40), chars(16), chars(20)
    escaped_body = json.dumps(key_body)[1:-1]  # the body as a JSON file holds it
    pem = f"-----BEGIN PRIVATE KEY-----\n{key_body}\n-----END PRIVATE KEY-----\n"
    basic = base64.b64encode(f"svc-user:{basic_password}".encode()).decode()
    return {
        "openai": same(f"sk-proj-{chars(48)}"),
        "anthropic": same(f"sk-ant-api03-{chars(93)}-{chars(6)}AA"),
        "aws_access_key_id": same(f"AKIA{chars(16, string.ascii_uppercase + string.digits)}"),
        "aws_secret_access_key": (f"aws_secret_access_key = {aws_secret}", aws_secret),
        "gcp_api_key": same(f"AIza{chars(35)}"),
        "gcp_service_account": (json.dumps({"type": "service_account", "private_key": pem}), escaped_body),
        "azure_storage": (
            f"DefaultEndpointsProtocol=https;AccountName=bank;AccountKey={azure_key};EndpointSuffix=core.windows.net",
            azure_key,
        ),
        "azure_openai": (f"api-key: {azure_openai}", azure_openai),
        "github": same(f"ghp_{chars(36)}"),
        "slack": same(f"xoxb-{chars(12, string.digits)}-{chars(13, string.digits)}-{chars(24)}"),
        "stripe": same(f"sk_live_{chars(24)}"),
        "bearer": (f"Authorization: Bearer {bearer}", bearer),
        "basic": (f"Authorization: Basic {basic}", basic),
        "jwt": same(f"{header}.{claims}.{chars(43)}"),
        "private_key": (f"-----BEGIN RSA PRIVATE KEY-----\n{key_body}\n-----END RSA PRIVATE KEY-----", key_body),
        "connection_string": (f"postgresql://app:{db_password}@db.internal:5432/prod", db_password),
    }
