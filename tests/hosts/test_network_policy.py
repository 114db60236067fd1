"""The network policy of hosts and judges (issue 25, item 1): blocked addresses in every spelling, userinfo,
DNS rebinding and cross-origin redirects.

The blocked address itself is only ever reached inside a network namespace the test makes (``unshare -rnm``),
where 169.254.169.254 is an address of the namespace's own loopback and ``rebind.test`` maps to it through a
bind-mounted ``/etc/hosts``: nothing leaves the machine, and a recording server there shows that no request
(and no Authorization header) arrived. Redirects are tested between two servers on 127.0.0.1.
"""

import asyncio
import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from assay.calls.network import NetworkPolicy, check_url, literal_address, url_refusal, vetted_addresses
from assay.config import DEFAULT_BLOCKED_NETWORKS, load_settings
from assay.hosts import CallPolicy, create_host, resolve
from assay.models import ModelHost, TestCase
from assay.testing.local_app import serving_handler
from assay.testing.network import CLIENT_HOSTS, METADATA_SPELLINGS

ROOT = Path(__file__).resolve().parents[2]
ASSAY = ROOT / ".venv" / "bin" / "assay"
PYTHON = ROOT / ".venv" / "bin" / "python"
SECRET = "sk-canary-network-policy-0123456789"
POLICY = NetworkPolicy.from_settings(DEFAULT_BLOCKED_NETWORKS, 8 * 1024 * 1024)
FAST = CallPolicy(concurrency=2, timeout_s=10.0, retries=2, backoff_s=0.01)



@pytest.mark.parametrize("url", METADATA_SPELLINGS)
def test_every_spelling_of_a_blocked_address_is_refused(url: str) -> None:
    reason = url_refusal(url, POLICY)
    assert reason is not None and ("blocked network" in reason or "not a valid URL" in reason), reason


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000@169.254.169.254/v1",  # the audit's spelling: the real host is after '@'
        "http://user:pass@api.example.com/v1",
        "http://token@127.0.0.1:8000/v1",
        "http://169.254.169.254\\@127.0.0.1/",  # parsers disagree on the host: refused either way
    ],
)
def test_userinfo_is_refused(url: str) -> None:
    reason = url_refusal(url, POLICY)
    assert reason is not None and "userinfo" in reason


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/v1",
        "https://api.openai.com/v1",
        "http://[::1]:11434",
        "localhost:11434",
        "http://10.0.0.5/",
    ],
)
def test_ordinary_addresses_pass(url: str) -> None:
    assert url_refusal(url, POLICY) is None


def test_literals_are_read_as_the_resolver_reads_them() -> None:
    assert str(literal_address("2852039166")) == "169.254.169.254"
    assert str(literal_address("0xa9.0xfe.0xa9.0xfe")) == "169.254.169.254"
    assert str(literal_address("[::ffff:169.254.169.254]")) == "::ffff:a9fe:a9fe"
    assert literal_address("rebind.test") is None


def test_every_resolved_address_is_checked() -> None:
    assert vetted_addresses("ok.test", ["127.0.0.1", "::1", "127.0.0.1"], POLICY) == ["127.0.0.1", "::1"]
    with pytest.raises(Exception) as raised:  # one blocked address among good ones refuses the name
        vetted_addresses("rebind.test", ["127.0.0.1", "::ffff:169.254.169.254"], POLICY)
    assert getattr(raised.value, "kind", None) == "blocked_address"
    assert "rebind.test" in str(raised.value) and "hosts.blocked_networks" in str(raised.value)


def test_the_policy_comes_from_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_HOSTS__BLOCKED_NETWORKS", '["10.0.0.0/8"]')
    assert load_settings().hosts.blocked_networks == ["10.0.0.0/8"]
    with pytest.raises(ValueError, match=r"field 'url'.*10\.0\.0\.0/8"):
        check_url("http://10.1.2.3/v1", "url")
    check_url("http://169.254.169.254/", "url")  # the setting replaces the defaults
    monkeypatch.setenv("ASSAY_HOSTS__BLOCKED_NETWORKS", '["not-a-network"]')
    with pytest.raises(ValueError, match=r"hosts\.blocked_networks.*not-a-network"):
        load_settings()


def _host_file(folder: Path, name: str, url: str) -> Path:
    path = folder / f"{name}.json"
    config = {"key": name, "type": "openai-compatible", "url": url, "llm_model_name": "m", "secret_ref": "CANARY_KEY"}
    path.write_text(json.dumps(config))
    return path


def _assay(*args: str, isolated: bool = False) -> subprocess.CompletedProcess[str]:
    """``assay ARGS``; ``isolated``: in a new, empty network namespace (no route anywhere)."""
    command = [*(["unshare", "-rn"] if isolated else []), str(ASSAY), *args]
    environment = {**os.environ, "CANARY_KEY": SECRET}
    return subprocess.run(command, capture_output=True, text=True, env=environment, timeout=120)


@pytest.mark.parametrize("url", ["http://[::ffff:169.254.169.254]/v1", "http://127.0.0.1:9@169.254.169.254/v1"])
def test_a_host_file_with_a_refused_url_is_refused_when_loaded(tmp_path: Path, url: str) -> None:
    """Exit 2 at load, naming the file and the field. Run in an empty network namespace, so that even a
    regression could send nothing anywhere."""
    if not _namespaces_work():
        pytest.skip("unshare -rn (user + network namespaces) is not available here")
    path = _host_file(tmp_path, "meta", url)
    result = _assay("hosts", "check", str(path), isolated=True)
    assert result.returncode == 2, result.stdout + result.stderr
    assert str(path) in result.stderr and "field 'url'" in result.stderr
    assert "Traceback" not in result.stderr


# -- inside a network namespace --------------------------------------------------------------------------------

RECORDER = """
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
record = sys.argv[3]
class Recorder(BaseHTTPRequestHandler):
    def _any(self):
        with open(record, "a") as out:
            out.write(f"{self.command} {self.path} authorization={self.headers.get('authorization')}\\n")
        self.send_response(200)
        self.end_headers()
    do_GET = do_POST = _any
server = ThreadingHTTPServer((sys.argv[1], int(sys.argv[2])), Recorder)
open(record + ".ready", "w").close()
server.serve_forever()
"""

IN_PROCESS = """
import asyncio, json, sys
from assay.hosts import CallPolicy, create_host, resolve
from assay.judges.client import JudgeClient
from assay.judges.templates import builtin_templates
from assay.models import ModelHost, TestCase
from assay.models.judges import JudgeEndpoint
config = ModelHost.model_validate_json(open(sys.argv[1]).read())
policy = CallPolicy(concurrency=1, timeout_s=10.0, retries=2, backoff_s=0.01)
[row] = asyncio.run(resolve(create_host(config), [("t", TestCase(key="c", prompt="hi"))], policy))
judge = JudgeClient(JudgeEndpoint(base_url=config.url, model="m", api_key_env="CANARY_KEY"), policy=policy)
template = next(iter(builtin_templates().values()))
variables = {name: "x" for name in template.inputs}
call = judge.run(lambda: judge.ask(template, variables))
print(json.dumps({"host": [row.error_kind, row.error, row.attempts], "judge": [call.error_kind, call.error]}))
"""

NAMESPACE_SCRIPT = """
set -u
ip link set lo up
ip addr add 169.254.169.254/32 dev lo
mount --bind "$HOSTS_FILE" /etc/hosts
"$PYTHON" "$RECORDER" 169.254.169.254 8080 "$RECORD" &
server=$!
for _ in $(seq 100); do [ -e "$RECORD.ready" ] && break; sleep 0.1; done
"$ASSAY" hosts check "$LITERAL" > "$OUT/literal.out" 2>&1; echo $? > "$OUT/literal.rc"
"$ASSAY" hosts check "$REBIND" > "$OUT/rebind.out" 2>&1; echo $? > "$OUT/rebind.rc"
"$PYTHON" "$IN_PROCESS" "$REBIND" > "$OUT/in_process.out" 2>&1
kill $server
"""


def _namespaces_work() -> bool:
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return False
    probe = subprocess.run(["unshare", "-rnm", "true"], capture_output=True, timeout=30)
    return probe.returncode == 0


def test_a_name_resolving_to_a_blocked_address_gets_nothing(tmp_path: Path) -> None:
    """DNS rebinding: ``rebind.test`` resolves to 169.254.169.254 (in the namespace only). The literal is
    refused at load (exit 2); the name passes the load check but every connection is refused: ``hosts check``
    fails naming the address and the setting, the case and the judge call record ``blocked_address`` without
    a retry, and the server listening there receives no request at all."""
    if not _namespaces_work():
        pytest.skip("unshare -rnm (user + network + mount namespaces) is not available here")
    hosts_file = tmp_path / "hosts"
    hosts_file.write_text("127.0.0.1 localhost\n169.254.169.254 rebind.test\n")
    (tmp_path / "recorder.py").write_text(RECORDER)
    (tmp_path / "in_process.py").write_text(IN_PROCESS)
    record = tmp_path / "requests.log"
    environment = {
        **os.environ,
        "CANARY_KEY": SECRET,
        "HOSTS_FILE": str(hosts_file),
        "PYTHON": str(PYTHON),
        "ASSAY": str(ASSAY),
        "RECORDER": str(tmp_path / "recorder.py"),
        "IN_PROCESS": str(tmp_path / "in_process.py"),
        "RECORD": str(record),
        "OUT": str(tmp_path),
        "LITERAL": str(_host_file(tmp_path, "literal", "http://169.254.169.254:8080/v1")),
        "REBIND": str(_host_file(tmp_path, "rebind", "http://rebind.test:8080/v1")),
        "ASSAY_HOME": str(tmp_path / "home"),
    }
    subprocess.run(["unshare", "-rnm", "sh", "-c", NAMESPACE_SCRIPT], env=environment, timeout=300, check=True)
    assert (tmp_path / "requests.log.ready").exists(), "the recording server did not start in the namespace"

    literal = (tmp_path / "literal.out").read_text()
    assert (tmp_path / "literal.rc").read_text().strip() == "2", literal
    assert "literal.json" in literal and "field 'url'" in literal and "169.254.0.0/16" in literal

    rebind = (tmp_path / "rebind.out").read_text()
    assert (tmp_path / "rebind.rc").read_text().strip() == "1", rebind
    assert "rebind.test" in rebind and "169.254.169.254" in rebind and "hosts.blocked_networks" in rebind

    outcome = json.loads((tmp_path / "in_process.out").read_text().splitlines()[-1])
    kind, error, attempts = outcome["host"]
    assert kind == "blocked_address" and attempts == 1, error  # refused, never retried
    assert "rebind.test" in error and "169.254.169.254" in error and "hosts.blocked_networks" in error
    assert outcome["judge"][0] == "blocked_address", outcome["judge"]

    assert not record.exists() or record.read_text() == "", record.read_text()  # no request, no key


# -- redirects -------------------------------------------------------------------------------------------------


class _Recorded(BaseHTTPRequestHandler):
    """Answers chat completions; ``redirect_to`` set: answers 307 to that URL (plus the request path)."""

    redirect_to = ""
    received: list[str]

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.received.append(f"{self.path} authorization={self.headers.get('authorization')}")
        if self.redirect_to and not self.path.startswith("/moved"):
            self.send_response(307)
            self.send_header("location", f"{self.redirect_to}{self.path}")
            self.send_header("content-length", "0")
            self.end_headers()
            return
        body = json.dumps({"choices": [{"message": {"role": "assistant", "content": "an answer"}}]}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def _server(redirect_to: str = "") -> Iterator[tuple[str, list[str]]]:
    received: list[str] = []
    handler = type("Handler", (_Recorded,), {"redirect_to": redirect_to, "received": received})
    with serving_handler(handler) as url:
        yield url, received


def _ask(url: str) -> list:
    config = ModelHost(key="h", type="openai-compatible", url=url, llm_model_name="m", secret_ref="CANARY_KEY")
    return asyncio.run(resolve(create_host(config), [("t", TestCase(key="c", prompt="hi"))], FAST))


def test_a_redirect_to_another_origin_is_not_followed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CANARY_KEY", SECRET)
    with _server() as (elsewhere, received_elsewhere), _server(redirect_to=elsewhere) as (first, received_first):
        [row] = _ask(f"{first}/v1")
        assert row.error_kind == "redirect_refused" and row.attempts == 1, row.error
        assert elsewhere in row.error and "307" in row.error
        assert len(received_first) == 1 and received_elsewhere == []

        result = _assay("hosts", "check", str(_host_file(tmp_path, "redirecting", f"{first}/v1")))
        assert result.returncode == 1 and "another origin" in result.stderr, result.stdout + result.stderr
        assert received_elsewhere == []


def test_a_redirect_within_the_origin_is_followed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CANARY_KEY", SECRET)
    received: list[str] = []
    handler = type("SelfRedirect", (_Recorded,), {"received": received})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    handler.redirect_to = f"http://127.0.0.1:{server.server_port}/moved"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        [row] = _ask(f"http://127.0.0.1:{server.server_port}/v1")
    finally:
        server.shutdown()
        server.server_close()
    assert row.error is None and row.actual_output == "an answer"
    assert [entry.split()[0] for entry in received] == ["/v1/chat/completions", "/moved/v1/chat/completions"]


def test_tls_still_checks_the_certificate_against_the_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The guarded backend connects to the vetted address, yet TLS verifies the certificate against the URL's
    name: a certificate for ``localhost`` is accepted at https://localhost and refused at https://127.0.0.1."""
    import ssl

    import httpx

    from assay.calls.guarded_http import guarded_client

    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)  # fmt: skip
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    received: list[str] = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("Tls", (_Recorded,), {"received": received}))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_port
    try:
        with guarded_client(POLICY) as client:
            assert client.post(f"https://localhost:{port}/v1/chat/completions", content=b"{}").status_code == 200
            with pytest.raises(httpx.ConnectError, match=r"CERTIFICATE_VERIFY_FAILED|IP address mismatch"):
                client.post(f"https://127.0.0.1:{port}/v1/chat/completions", content=b"{}")
    finally:
        server.shutdown()
        server.server_close()
    assert len(received) == 1


@pytest.mark.parametrize("host", CLIENT_HOSTS, ids=lambda host: host["type"])
def test_every_client_is_refused_a_blocked_address(host: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every host type's client, refused at connect: 127.0.0.2 is blocked by the setting here (a local address,
    so even a regression sends nothing off the machine) and a recording server there receives nothing."""
    monkeypatch.setenv("ASSAY_HOSTS__BLOCKED_NETWORKS", '["127.0.0.2/32"]')
    monkeypatch.setenv("CANARY_KEY", SECRET)
    for name, value in {"AWS_ACCESS_KEY_ID": "AKIAASSAYTEST0000000", "AWS_SECRET_ACCESS_KEY": SECRET,
                        "AWS_CONFIG_FILE": "/nonexistent", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
                        "AWS_EC2_METADATA_DISABLED": "true"}.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    received: list[str] = []
    server = ThreadingHTTPServer(("127.0.0.2", 0), type("Blocked", (_Recorded,), {"received": received}))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        config = ModelHost(key="h", url=f"http://127.0.0.2:{server.server_port}", **host)
        [row] = asyncio.run(resolve(create_host(config), [("t", TestCase(key="c", prompt="hi"))], FAST))
    finally:
        server.shutdown()
        server.server_close()
    assert row.error_kind == "blocked_address", row.error
    assert "127.0.0.2" in row.error and "hosts.blocked_networks" in row.error
    assert received == []
