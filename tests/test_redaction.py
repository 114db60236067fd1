"""Secrets are redacted from host errors, test labs, results, artifacts and log lines (issue 7, item 5)."""

import base64
import io
import json
import logging
import os
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import ClassVar

import pytest
from assay.artifacts.publish import publish_evaluation
from assay.evaluators import build_evaluator, run_evaluator
from pydantic import SecretStr

from assay import redaction
from assay.hosts import CallPolicy, Host, HostAnswer, register_host
from assay.labs import build_test_lab
from assay.models import ModelHost, Test, TestCase, TestSuite
from assay.redaction import (
    RedactSecrets,
    install_log_redaction,
    redact,
    redact_data,
    register_secret,
    register_settings_secrets,
)
from assay.storage import ArtifactStore, LocalObjectStore
from assay.testing.secrets import derived_copies, files_holding

SECRET_ENV = "ASSAY_TEST_RAG_API_KEY"
SECRET = "sk-test-7Fq2xLp9Rz4Wm8Kd"


@pytest.fixture(autouse=True)
def fresh_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts with no registered secret and the logging module as it found it."""
    monkeypatch.setattr(redaction, "_names", {})
    monkeypatch.setattr(redaction, "_pattern", None)
    monkeypatch.setattr(redaction, "_installed", False)
    factory = logging.getLogRecordFactory()
    handlers = [*logging.getLogger().handlers, *logging.getLogger("prefect").handlers]
    filters = {handler: list(handler.filters) for handler in handlers}
    yield
    logging.setLogRecordFactory(factory)
    for handler, before in filters.items():
        handler.filters[:] = before


class EchoingHost(Host):
    """A host whose backend rejects the key and echoes it in the error body, as real APIs do."""

    type: ClassVar[str] = "echoing-secret-test-host"
    description: ClassVar[str] = "test double"

    async def answer(self, case: TestCase) -> HostAnswer:
        key = os.environ[self.config.secret_ref or ""]
        basic = base64.b64encode(f"svc-user:{key}".encode()).decode()
        copies = " / ".join(derived_copies(key))
        raise ConnectionError(f"401 Unauthorized: invalid api key {key!r} (Authorization: Basic {basic}; {copies})")


register_host(EchoingHost)


@pytest.mark.parametrize(
    "disguise",
    [
        lambda value: value[::-1],
        lambda value: "-".join(value),
        lambda value: value.encode().hex(),
        lambda value: value.encode().hex().upper(),
        lambda value: value.translate(str.maketrans("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
                                                    "nopqrstuvwxyzabcdefghijklmNOPQRSTUVWXYZABCDEFGHIJKLM")),
        lambda value: "".join(chr(ord(char) + 0xFEE0) for char in value),  # full-width
        lambda value: "".join(f"&#{ord(char)};" for char in value),
        lambda value: "".join(f"&#x{ord(char):x};" for char in value),
    ],
    ids=["reversed", "dashed", "hex", "HEX", "rot13", "full-width", "html-decimal", "html-hex"],
)  # fmt: skip
def test_an_echoed_secret_disguised_by_the_model_is_redacted(disguise: object) -> None:
    register_secret(SECRET, SECRET_ENV)
    copy = disguise(SECRET)  # type: ignore[operator]
    assert redact(f"Sure, here it is: {copy}.") == f"Sure, here it is: [REDACTED:{SECRET_ENV}]."


def test_values_and_their_wire_forms_are_redacted() -> None:
    secret = "p@ss/word+with space"
    register_secret(secret, "BANK_API_KEY")
    basic = base64.b64encode(f"anyone:{secret}".encode()).decode()
    text = f"k={secret} q={urllib.parse.quote(secret, safe='')} f={urllib.parse.quote_plus(secret)} auth={basic}"
    clean = redact(text)
    assert secret not in clean and "p%40ss" not in clean and "[REDACTED:BANK_API_KEY]" in clean
    for offset in range(3):  # whatever the user name, the secret's base64 is gone
        encoded = base64.b64encode(b"u" * offset + b":" + secret.encode()).decode()
        assert encoded[4:-4] not in redact(encoded)


def test_derived_copies_of_a_secret_are_redacted() -> None:
    """Issue 25, item 6: a prefix of 12+ characters, any case, zero-width characters or whitespace inside."""
    secret = "sk-live-9Qw3Ez7Rt5Yu1Io8Pa2S"
    register_secret(secret, "BANK_API_KEY")
    marker = "[REDACTED:BANK_API_KEY]"
    copies = [
        secret[:22],
        secret[:12],
        secret.upper(),
        secret.lower(),
        "\u200b".join(secret),
        "\u00ad".join(secret[:15]),
        "\ufeff".join(secret.upper()[:20]),
        " ".join(secret),
        secret[:10] + "\n\t" + secret[10:],
        json.dumps("\u200b".join(secret))[1:-1],  # as a raw JSON body holds it: \\u200b between characters
    ]
    copies += ["\u3000".join(secret[:14]), "\u00a0".join(secret), "\u2028".join(secret.upper())]  # wide spaces
    for copy in copies:
        assert redact(f"key {copy}: rejected") == f"key {marker}: rejected", repr(copy)
        # Text with any non-ASCII character in it takes the other normalising path.
        assert redact(f"£10 key {copy}: rejected") == f"£10 key {marker}: rejected", repr(copy)
    masked = f"shown as {secret[:11]}... and ...{secret[-4:]}"  # under 12 characters: too little to redact
    assert redact(masked) == masked
    assert redact(f"{secret}{secret[:14]}") == marker * 2
    assert redact_data({"rows": [secret.upper()[:13]]}) == {"rows": [marker]}


def test_secrets_under_12_characters_are_matched_exactly() -> None:
    register_secret("Pw9-abc", "SHORT_KEY")
    assert redact("Pw9-abc and PW9-ABC and Pw9-ab") == "[REDACTED:SHORT_KEY] and PW9-ABC and Pw9-ab"


def test_redaction_cost_on_10k_rows_stays_small() -> None:
    """Every stored string goes through ``redact``: 10k rows of about 600 characters, three secrets."""
    for number, value in enumerate(["sk-live-9Qw3Ez7Rt5Yu1Io8Pa2S", "AKIAEXAMPLE123456", "wJalrXUtnFEMI/K7MDENG"]):
        register_secret(value, f"KEY_{number}")
    row = "Balances from £10,000 to £49,999 earn 3.25% AER; interest is paid monthly, case {n}. " * 7
    rows = [{"answer": row.format(n=n), "error": None} for n in range(10_000)]
    started = time.perf_counter()
    assert redact_data(rows) == rows
    assert time.perf_counter() - started < 2  # about 0.1 s here


def test_short_values_are_not_registered() -> None:
    register_secret("abc", "SHORT")
    register_secret(None, "UNSET")
    assert redact("abc abcdef") == "abc abcdef"


def test_documents_and_settings_secrets() -> None:
    settings = SimpleNamespace(
        store=SimpleNamespace(access_key=SecretStr("AKIAEXAMPLE123"), secret_key=SecretStr("wJalrXUtnFEMI/K7MDENG")),
        judge=SimpleNamespace(api_key_env=None),
    )
    register_settings_secrets(settings)  # type: ignore[arg-type]
    document = {"rows": [{"error": "S3 denied AKIAEXAMPLE123", "n": 3}], "wJalrXUtnFEMI/K7MDENG": ("x",)}
    assert redact_data(document) == {
        "rows": [{"error": "S3 denied [REDACTED:ASSAY_STORE__ACCESS_KEY]", "n": 3}],
        "[REDACTED:ASSAY_STORE__SECRET_KEY]": ("x",),
    }


def test_log_records_are_redacted_for_every_handler(monkeypatch: pytest.MonkeyPatch) -> None:
    """Prefect's run loggers are ``prefect.*`` loggers behind an adapter; their API handler formats records
    like any handler, so a record redacted when it is made is redacted everywhere."""
    monkeypatch.setenv(SECRET_ENV, SECRET)
    redaction.register_env_secret(SECRET_ENV)
    install_log_redaction()
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger("prefect.task_runs.redaction_test")
    logger.addHandler(handler)
    try:
        run_logger = logging.LoggerAdapter(logger, {"task_run_id": "t-1"})
        run_logger.error("host answered %s", f"401: bad key {SECRET}")
        try:
            raise PermissionError(f"token {SECRET} rejected")
        except PermissionError:
            run_logger.exception("call failed")
    finally:
        logger.removeHandler(handler)
    written = stream.getvalue()
    assert SECRET not in written
    assert "host answered 401: bad key [REDACTED:ASSAY_TEST_RAG_API_KEY]" in written
    assert "PermissionError: token [REDACTED:ASSAY_TEST_RAG_API_KEY] rejected" in written
    shipped = logging.makeLogRecord({"msg": f"from a queue: {SECRET}", "levelno": logging.INFO})
    assert RedactSecrets().filter(shipped) and SECRET not in shipped.getMessage()


def test_an_echoed_secret_is_stored_nowhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's check: run a host whose error echoes its key through the lab (with checkpoints), an
    evaluator, publishing and a log file, then grep every file written for the secret."""
    monkeypatch.setenv(SECRET_ENV, SECRET)
    install_log_redaction()
    log_file = logging.FileHandler(tmp_path / "run.log", encoding="utf-8")
    logging.getLogger("assay").addHandler(log_file)
    suite = TestSuite(name="s", tests=[Test(key="t", test_cases=[TestCase(key="c1", prompt="What is the fee?")])])
    host = ModelHost(key="bank", type=EchoingHost.type, secret_ref=SECRET_ENV)
    try:
        lab = build_test_lab(
            suite,
            [host],
            run_id="run-1",
            store=LocalObjectStore(tmp_path / "store"),
            policy=CallPolicy(retries=1, backoff_s=0.0),
        )
        (row,) = lab.rows
        logging.getLogger("assay.test").warning("case %s failed: %s", row.test_case.key, row.error)
        logging.getLogger("assay.test").error("raw backend body: %s", f"invalid api key {SECRET}")
        result = run_evaluator(build_evaluator("text_matching"), lab)
        publish_evaluation(
            lab,
            [result],
            out_dir=tmp_path / "out",
            artifact_store=ArtifactStore(LocalObjectStore(tmp_path / "artifacts")),
            evaluation_name="redaction",
            run_id="run-1",
        )
    finally:
        logging.getLogger("assay").removeHandler(log_file)
        log_file.close()
    assert row.error is not None and "401 Unauthorized" in row.error
    assert "[REDACTED:ASSAY_TEST_RAG_API_KEY]" in row.error and "(after 2 attempts)" in row.error
    assert row.error.count("[REDACTED:ASSAY_TEST_RAG_API_KEY]") == 6  # the key, its base64 and 4 derived copies
    forms = [SECRET, base64.b64encode(f"svc-user:{SECRET}".encode()).decode()[12:-4]]
    written = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert len(written) > 5 and (tmp_path / "run.log").stat().st_size > 0
    leaks = [str(path) for path in written for form in forms if form.encode() in path.read_bytes()]
    assert leaks == []
    assert files_holding(SECRET, written) == []  # no derived copy either
