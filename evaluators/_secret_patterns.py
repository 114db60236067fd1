"""The sensitive-data regex suite: PEM keys and certificates, provider API keys, tokens, product keys, passwords.

Provider keys are found by their documented prefixes and lengths; generic shapes (an ``sk-`` key, a value
after ``password:``) get a validator that rejects what documentation and code samples usually show instead of
a secret: placeholders (``<your-key>``, ``********``), variable lookups and plain words.
"""

import base64
import binascii
import json

import regex
from assay.evaluators._detectors import Detector

_PLACEHOLDER_WORDS = {
    "null", "none", "nil", "true", "false", "required", "optional", "empty", "hidden", "redacted", "masked",
    "secret", "password", "passwd", "pwd", "string", "str", "text", "value", "the", "your", "my", "not", "set",
    "n/a", "tbd", "todo", "unknown", "same", "below", "above", "enter", "provided", "omitted",
}  # fmt: skip
_PLACEHOLDER_PARTS = ("your", "example", "placeholder", "redacted", "dummy", "xxxx", "****", "...", "…")
_CODE_CHARACTERS = set("()[]{}<>$%")


def _real_secret_value(value: str) -> str | None:
    """Rejects placeholders, repeated filler characters, variable references and code, keeping real values."""
    lowered = value.lower().rstrip(".")
    if lowered in _PLACEHOLDER_WORDS or len(set(lowered)) < 3:
        return None
    if any(part in lowered for part in _PLACEHOLDER_PARTS) or _CODE_CHARACTERS.intersection(value):
        return None
    return value


def _random_looking(value: str) -> str | None:
    """Generated keys mix upper case, lower case and digits; hyphenated words ("sk-learn-...") do not."""
    has_upper = any(char.isupper() for char in value)
    has_lower = any(char.islower() for char in value)
    has_digit = any(char.isdigit() for char in value)
    return value if has_upper and has_lower and has_digit else None


def _product_key(value: str) -> str | None:
    return value if any(char.isdigit() for char in value) and any(char.isalpha() for char in value) else None


def _jwt(value: str) -> str | None:
    """A JWT's first segment is base64url JSON naming its signing algorithm."""
    header = value.split(".", 1)[0]
    try:
        decoded = json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))
    except (binascii.Error, ValueError):
        return None
    return value if isinstance(decoded, dict) and isinstance(decoded.get("alg"), str) else None


def _opaque_token(value: str) -> str | None:
    """A bearer token: letters and digits mixed (a placeholder or a word is not one)."""
    if _real_secret_value(value) is None:
        return None
    return value if any(char.isdigit() for char in value) and any(char.isalpha() for char in value) else None


def _basic_credentials(value: str) -> str | None:
    """HTTP basic auth: base64 of ``user:password`` with a password."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    _user, colon, password = decoded.partition(":")
    return value if colon and password and decoded.isprintable() else None


def _assignment(labels: str) -> regex.Pattern:
    """``label: value`` / ``label = "value"`` / ``"label": "value"`` with the value captured as ``value``."""
    return regex.compile(
        rf"(?i)(?<![A-Za-z0-9])(?:{labels})(?![A-Za-z0-9])[\"']?[ \t]{{0,3}}(?::=|=>|[:=])[ \t]{{0,3}}[\"'`]?"
        r"(?P<value>[^\s\"'`,;]{3,128})"
    )


_PEM_BREAK = r"(?:[ \t]|\\r|\\n|\r|\n){1,6}"
_PEM_HEADERS = r"(?:[A-Za-z-]{1,40}:[^\r\n\\]{0,200}(?:\r?\n|\\n)){0,4}"
_PEM_BODY = r"[A-Za-z0-9+/=]{16,}"
_PEM_REST = (
    r"(?:" + _PEM_BREAK + r"[A-Za-z0-9+/=]{1,128}){0,512}" + r"(?:" + _PEM_BREAK + r"-----END [A-Z0-9 ]{0,40}-----)?"
)
"""The key's further lines and its END line, when they follow: the whole block is the secret, so a masker
replaces all of it, not only the first line that proves it is one."""
_KEY_EDGE_BEFORE = r"(?<![A-Za-z0-9_-])"
_KEY_EDGE_AFTER = r"(?![A-Za-z0-9_-])"
_PRODUCT_KEY_BLOCK = "[BCDFGHJKMNPQRTVWXY2346789]{5}"

SENSITIVE_DETECTORS: tuple[Detector, ...] = (
    Detector(
        "private_key",
        "PEM private keys (RSA, EC, DSA, OpenSSH, PKCS#8, encrypted, PGP) with a key body",
        regex.compile(
            r"-----BEGIN (?:[A-Z0-9]{1,12} ){0,3}PRIVATE KEY(?: BLOCK)?-----"
            + _PEM_BREAK
            + _PEM_HEADERS
            + _PEM_BODY
            + _PEM_REST
        ),
    ),
    Detector(
        "certificate",
        "SSL/TLS certificates and certificate requests in PEM format with a body",
        regex.compile(
            r"-----BEGIN (?:[A-Z0-9]{1,12} ){0,2}CERTIFICATE(?: REQUEST)?-----" + _PEM_BREAK + _PEM_HEADERS + _PEM_BODY
        ),
    ),
    Detector(
        "aws_access_key",
        "AWS access key ids (AKIA..., ASIA...) and labelled AWS secret access keys",
        regex.compile(
            r"(?<![A-Za-z0-9])(?P<value>(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})(?![A-Za-z0-9])"
            r"|(?i:aws_?secret_?(?:access_?)?key)\W{1,5}(?P<value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
        ),
        group="value",
    ),
    Detector(
        "github_token",
        "GitHub personal, OAuth, app and fine-grained tokens (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_)",
        regex.compile(
            r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59})(?![A-Za-z0-9_])"
        ),
    ),
    Detector(
        "slack_token",
        "Slack tokens (xoxb-, xoxp-, xoxa-, ...) and incoming-webhook URLs",
        regex.compile(
            r"(?<![A-Za-z0-9-])xox[abposre]-(?:[A-Za-z0-9]{1,40}-){1,5}[A-Za-z0-9]{6,64}(?![A-Za-z0-9-])"
            r"|https://hooks\.slack\.com/services/T[A-Z0-9]{6,12}/B[A-Z0-9]{6,12}/[A-Za-z0-9]{20,32}"
        ),
    ),
    Detector(
        "stripe_key",
        "Stripe secret and restricted keys (sk_live_, sk_test_, rk_live_, rk_test_)",
        regex.compile(r"(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,247}(?![A-Za-z0-9_])"),
    ),
    Detector(
        "openai_style_key",
        "sk- secret keys as issued by OpenAI (sk-proj-, sk-svcacct-), H2O.ai, Anthropic (sk-ant-) and others",
        regex.compile(_KEY_EDGE_BEFORE + r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,250}" + _KEY_EDGE_AFTER),
        _random_looking,
    ),
    Detector(
        "google_api_key",
        "Google API keys (AIza + 35 characters)",
        regex.compile(_KEY_EDGE_BEFORE + r"AIza[0-9A-Za-z_-]{35}" + _KEY_EDGE_AFTER),
    ),
    Detector(
        "jwt",
        "JSON Web Tokens whose header decodes to JSON naming an algorithm",
        regex.compile(_KEY_EDGE_BEFORE + r"eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*" + _KEY_EDGE_AFTER),
        _jwt,
    ),
    Detector(
        "windows_product_key",
        "Windows/Office activation keys: five groups of five product-key characters",
        regex.compile(
            r"(?<![A-Za-z0-9-])" + _PRODUCT_KEY_BLOCK + r"(?:-" + _PRODUCT_KEY_BLOCK + r"){4}(?![A-Za-z0-9-])"
        ),
        _product_key,
    ),
    Detector(
        "bearer_token",
        "bearer tokens in Authorization headers and curl commands (Authorization: Bearer ...)",
        regex.compile(
            r"(?i)(?<![A-Za-z0-9])bearer[ \t]{1,3}(?P<value>[A-Za-z0-9._~+/-]{16,1024}=*)(?![A-Za-z0-9._~+/=-])"
        ),
        _opaque_token,
        "value",
    ),
    Detector(
        "basic_auth",
        "HTTP basic-auth credentials (Authorization: Basic base64 of user:password)",
        regex.compile(r"(?i)(?<![A-Za-z0-9])basic[ \t]{1,3}(?P<value>[A-Za-z0-9+/]{8,684}={0,2})(?![A-Za-z0-9+/=])"),
        _basic_credentials,
        "value",
    ),
    Detector(
        "password",
        'passwords given in text or configuration ("password: ...", "pwd=...", "passphrase = ...")',
        _assignment(r"password|passwd|passphrase|passcode|pwd"),
        _real_secret_value,
        "value",
    ),
    Detector(
        "secret_assignment",
        "values assigned to api_key, client_secret, secret_key, access_token, auth_token or account_key",
        _assignment(
            r"api[_ -]?key|client[_ -]?secret|app[_ -]?secret|secret[_ -]?key|access[_ -]?token"
            r"|auth[_ -]?token|account[_ -]?key"
        ),
        _real_secret_value,
        "value",
    ),
    Detector(
        "url_credentials",
        "user:password@ credentials embedded in URLs and connection strings",
        regex.compile(r"(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@]{1,64}:(?P<value>[^\s:/@]{1,128})@[a-z0-9.-]{1,253}"),
        _real_secret_value,
        "value",
    ),
)
