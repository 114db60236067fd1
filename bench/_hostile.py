"""Round two of the hostile cases (issue 25), each section counted as tried / held / failed.

    duplicate keys, lone surrogates, CSV cell counts   files that would import with data silently lost
    100 MB reply        a host streaming 100 MB: recorded as response_too_large, the other cases answered
    blocked address     every spelling of a metadata address refused at load; each client library refused at
                        connect (127.0.0.2 blocked by the setting, so nothing ever leaves the machine)
    secret variants     a secret's derived copies (cut short, upper-cased, zero-width or space split) redacted
"""

import asyncio
import json
import os
import resource
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

import _fuzz_inputs

from assay.testing.local_app import serving_handler

HUGE = 100 * 1024 * 1024
PIECE = b"x" * 65536
SECRET = "sk-hostile-bench-5ecret-0123456789abcdef"


@dataclass
class Section:
    name: str
    tried: int = 0
    failures: list[str] = field(default_factory=list)

    @property
    def held(self) -> int:
        return self.tried - len(self.failures)

    def check(self, what: str, ok: bool, detail: str = "") -> None:
        self.tried += 1
        if not ok:
            self.failures.append(f"{what}: {detail}" if detail else what)


def _files() -> Iterator[Section]:
    kinds = {_fuzz_inputs.REPEATED: "duplicate keys", _fuzz_inputs.LONE: "lone surrogates",
             _fuzz_inputs.CELLS: "CSV cell counts"}  # fmt: skip
    sections = {expected: Section(name) for expected, name in kinds.items()}
    for item in _fuzz_inputs.HOSTILE_FILES:
        outcome = _fuzz_inputs.refuse_one(item)
        sections[item[3]].check(f"{item[0]} {item[1]} {item[2][:40]!r}", outcome == "refused", outcome)
    yield from sections.values()


class _Replies(BaseHTTPRequestHandler):
    """An OpenAI-compatible, http-rag and Ollama server: a prompt holding ``huge`` gets 100 MB with no length."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0)).decode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        try:
            if "huge" in body:
                self.end_headers()  # HTTP/1.0: the body ends when the connection closes
                self.wfile.write(b'{"choices": [{"message": {"role": "assistant", "content": "')
                for _ in range(HUGE // len(PIECE)):
                    self.wfile.write(PIECE)
                return
            text = "a short answer"
            reply = {"answer": text, "model": "m", "message": {"role": "assistant", "content": text}, "done": True,
                     "choices": [{"message": {"role": "assistant", "content": text}}]}  # fmt: skip
            data = json.dumps(reply).encode()
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client hung up: what should happen
            pass

    def log_message(self, *args: object) -> None:
        pass


def _huge_reply() -> Section:
    from assay.hosts import CallPolicy, create_host, resolve
    from assay.models import ModelHost, TestCase

    section = Section("100 MB reply")
    policy = CallPolicy(concurrency=2, timeout_s=60.0, retries=2, backoff_s=0.01)
    cases = [("t", TestCase(key=key, prompt=f"please answer {key}")) for key in ("huge", "small")]
    with serving_handler(_Replies) as url:
        hosts = [
            {"type": "openai-compatible", "url": f"{url}/v1", "llm_model_name": "m"},
            {"type": "http-rag", "url": f"{url}/rag",
             "settings": {"body": {"q": "{{prompt}}"}, "mapping": {"answer": "$.answer"}}},
            {"type": "ollama", "url": url, "llm_model_name": "m"},
        ]  # fmt: skip
        for fields in hosts:
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            started = time.perf_counter()
            rows = asyncio.run(resolve(create_host(ModelHost(key="h", **fields)), cases, policy))
            seconds = time.perf_counter() - started
            grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
            by_key = {row.test_case.key: row for row in rows}
            ok = (by_key["huge"].error_kind == "response_too_large" and by_key["small"].actual_output is not None
                  and seconds < 30 and grown_mb < 200)  # fmt: skip
            detail = f"{by_key['huge'].error_kind}, {seconds:.1f} s, peak memory +{grown_mb:.0f} MB"
            section.check(fields["type"], ok, detail)
    return section


class _Recorded(BaseHTTPRequestHandler):
    received: list[str] = []

    def do_POST(self) -> None:
        self.received.append(self.path)
        self.send_response(500)
        self.end_headers()

    do_GET = do_POST

    def log_message(self, *args: object) -> None:
        pass


def _blocked_address() -> Section:
    from assay.calls.network import NetworkPolicy, url_refusal
    from assay.config import load_settings
    from assay.hosts import CallPolicy, create_host, resolve
    from assay.models import ModelHost, TestCase
    from assay.testing.network import CLIENT_HOSTS, METADATA_SPELLINGS

    section = Section("blocked address")
    defaults = load_settings().hosts
    policy = NetworkPolicy.from_settings(defaults.blocked_networks, defaults.max_reply_bytes)
    for url in METADATA_SPELLINGS:
        reason = url_refusal(url, policy)
        section.check(f"load {url}", reason is not None, "accepted")
    environment = {"ASSAY_HOSTS__BLOCKED_NETWORKS": '["127.0.0.2/32"]', "CANARY_KEY": SECRET,
                   "AWS_ACCESS_KEY_ID": "AKIAASSAYBENCH000000", "AWS_SECRET_ACCESS_KEY": SECRET,
                   "AWS_CONFIG_FILE": "/nonexistent", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
                   "AWS_EC2_METADATA_DISABLED": "true"}  # fmt: skip
    saved = {name: os.environ.get(name) for name in environment}
    os.environ.update(environment)
    fast = CallPolicy(concurrency=1, timeout_s=10.0, retries=2, backoff_s=0.01)
    try:
        for fields in [{"type": "openai-compatible", "llm_model_name": "m", "secret_ref": "CANARY_KEY"}, *CLIENT_HOSTS]:
            received: list[str] = []
            with serving_handler(type("Blocked", (_Recorded,), {"received": received}), "127.0.0.2") as url:
                config = ModelHost(key="h", url=url, **fields)
                [row] = asyncio.run(resolve(create_host(config), [("t", TestCase(key="c", prompt="hi"))], fast))
            ok = row.error_kind == "blocked_address" and not received
            section.check(f"connect {fields['type']}", ok, f"{row.error_kind}, {len(received)} requests received")
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return section


def _secret_variants() -> Section:
    from assay.redaction import redact, register_secret
    from assay.testing.secrets import derived_copies, text_holds

    section = Section("secret variants")
    register_secret(SECRET, "HOSTILE_BENCH_KEY")
    copies = [*derived_copies(SECRET), SECRET[:12], SECRET.lower().title(), "\u2060".join(SECRET[:20]),
              json.dumps("\u200b".join(SECRET)).strip('"')]  # fmt: skip
    for copy in copies:
        stored = redact(f"401: invalid key {copy} (echoed by the host)")
        section.check(repr(copy[:30]), not text_holds(SECRET, stored), f"stored as {stored[:60]!r}")
    return section


def sections() -> Iterator[Section]:
    yield from _files()
    yield _huge_reply()
    yield _blocked_address()
    yield _secret_variants()


def run(print_line: Callable[[str], Any] = print, chosen: Iterable[Section] | None = None) -> list[Section]:
    done = []
    for section in sections() if chosen is None else chosen:
        failed = len(section.failures)
        print_line(f"hostile {section.name}: {section.tried} tried, {section.held} held, {failed} failed")
        for failure in section.failures[:5]:
            print_line(f"    {failure}")
        done.append(section)
    return done

