"""HMAC-SHA256 signatures with a key the object store never holds.

Hashes alone prove nothing against someone who can write the store: they re-hash what they edit. A MAC
made with a key kept elsewhere (a local file readable only by its owner, or an environment variable filled
from a secret manager) cannot be recomputed by them. Settings and artifacts only ever name where the key
is; the key itself is never logged, stored or shown.
"""

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import stat
import uuid
from pathlib import Path
from typing import Any

from assay.storage.anchor import HeadAnchor
from assay.storage.errors import StorageError

KEY_BYTES = 32


def canonical_json(document: Any) -> bytes:
    """One byte string per JSON value (sorted keys, no spaces): what a MAC is computed over."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


class Signer:
    """Signs and checks payloads with a key referenced by a file or an environment variable.

    The key is read on first use. A missing key file is created (32 random bytes, mode 0600) only when
    something is signed, never when something is checked: checking without a key reports what it could
    not check instead of inventing a key that matches nothing.
    """

    def __init__(
        self,
        *,
        key_file: Path | None = None,
        key_env: str = "",
        key: bytes | None = None,
        anchor: HeadAnchor | None = None,
    ) -> None:
        if [key_file is not None, bool(key_env), key is not None].count(True) != 1:
            raise ValueError("a signer needs exactly one of key_file, key_env or key")
        if key is not None and len(key) < KEY_BYTES:
            raise ValueError(f"a signing key needs at least {KEY_BYTES} bytes, got {len(key)}")
        self.key_file = key_file.expanduser() if key_file is not None else None
        self.key_env = key_env
        self.anchor = anchor
        self._key = key

    def describe(self) -> str:
        """Where the key is looked for; never the key."""
        if self.key_file is not None:
            return f"signing key file {self.key_file}"
        if self.key_env:
            return f"signing key environment variable {self.key_env}"
        return "signing key given in code"

    def __repr__(self) -> str:
        return f"Signer({self.describe()!r})"

    def has_key(self) -> bool:
        return self._load(create=False) is not None

    def sign(self, payload: bytes) -> str:
        key = self._load(create=True)
        if key is None:  # a key given in code or a created file is always there; this guards the types
            raise StorageError(f"no key to sign with: {self.describe()} is missing")
        return hmac.new(key, payload, hashlib.sha256).hexdigest()

    def check(self, payload: bytes, mac: str | None) -> bool | None:
        """Whether ``mac`` signs ``payload``; None when there is no key to tell."""
        key = self._load(create=False)
        if key is None:
            return None
        expected = hmac.new(key, payload, hashlib.sha256).hexdigest()
        return mac is not None and hmac.compare_digest(expected, mac)

    def _load(self, *, create: bool) -> bytes | None:
        if self._key is None:
            if self.key_env:
                self._key = _key_from_env(self.key_env, required=create)
            elif self.key_file is not None:
                if create:
                    _create_key_file(self.key_file)
                self._key = _key_from_file(self.key_file)
        return self._key


def _decode(text: str, where: str) -> bytes:
    try:
        key = bytes.fromhex(text.strip())
    except ValueError:
        key = b""
    if len(key) < KEY_BYTES:
        raise StorageError(
            f"{where} must hold at least {KEY_BYTES} bytes as hex ({2 * KEY_BYTES}+ characters), "
            "e.g. the output of: python -c 'import secrets; print(secrets.token_hex(32))'"
        )
    return key


def _key_from_env(name: str, *, required: bool) -> bytes | None:
    value = os.environ.get(name, "")
    if not value:
        if required:
            raise StorageError(f"signing key environment variable {name} (store.signing_key_env) is not set or empty")
        return None
    return _decode(value, f"signing key environment variable {name}")


def _key_from_file(path: Path) -> bytes | None:
    try:
        mode = path.stat().st_mode
        text = path.read_text(encoding="ascii")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise StorageError(f"cannot read signing key file {path}: {error}") from error
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise StorageError(
            f"signing key file {path} is readable by other users (mode {stat.filemode(mode)}); run: chmod 600 {path}"
        )
    return _decode(text, f"signing key file {path}")


def _create_key_file(path: Path) -> None:
    """Write a fresh random key unless one exists; linking a finished temp file makes creation atomic."""
    if path.exists():
        return
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temp = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
        descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(descriptor, "w", encoding="ascii") as handle:
                handle.write(secrets.token_hex(KEY_BYTES) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            with contextlib.suppress(FileExistsError):  # another process created it first: keep theirs
                os.link(temp, path)
        finally:
            temp.unlink(missing_ok=True)
    except OSError as error:
        raise StorageError(f"cannot create signing key file {path}: {error}") from error
