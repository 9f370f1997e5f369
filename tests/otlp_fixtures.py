"""Pytest fixtures yielding a started OTLP receiver (see otlp_receiver.py).

Register with ``pytest_plugins = ["otlp_fixtures"]`` (``tests/`` on the path).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator

import pytest
from otlp_receiver import OtlpReceiver


@pytest.fixture
def otlp_http_receiver() -> Iterator[OtlpReceiver]:
    """An OTLP/HTTP (protobuf) receiver on 127.0.0.1; ``.endpoint`` is its base URL."""
    with OtlpReceiver("http") as receiver:
        yield receiver


@pytest.fixture
def otlp_grpc_receiver() -> Iterator[OtlpReceiver]:
    """An OTLP/gRPC receiver on 127.0.0.1; ``.endpoint`` is ``http://127.0.0.1:PORT``."""
    with OtlpReceiver("grpc") as receiver:
        yield receiver


@pytest.fixture(params=["http", "grpc"])
def receiver(request: pytest.FixtureRequest) -> Iterator[OtlpReceiver]:
    """An OTLP receiver on 127.0.0.1, once over HTTP (protobuf) and once over gRPC."""
    with OtlpReceiver(request.param) as rx:
        yield rx


@pytest.fixture(scope="session")
def certs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A throwaway CA, a server certificate for 127.0.0.1/localhost and a client certificate."""
    openssl = shutil.which("openssl") or ("/usr/bin/openssl" if os.path.exists("/usr/bin/openssl") else None)
    if openssl is None:
        pytest.skip("the openssl command is not available")
    folder = tmp_path_factory.mktemp("tls")

    def run(*args: str) -> None:
        done = subprocess.run([openssl, *args], cwd=folder, capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            pytest.skip(f"openssl {args[0]} failed: {done.stderr.strip()[-300:]}")

    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    for ca in ("ca", "other-ca"):
        run("req", "-x509", *ec, "-keyout", f"{ca}.key", "-out", f"{ca}.pem", "-days", "2", "-subj", f"/CN=pytest-probability {ca}",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")  # fmt: skip
    for name, usage, extra in (
        ("server", "serverAuth", "subjectAltName=IP:127.0.0.1,DNS:localhost\n"),
        ("client", "clientAuth", ""),
    ):
        run("req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN=pytest-probability {name}")
        (folder / f"{name}.ext").write_text(
            "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
            f"extendedKeyUsage={usage}\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid,issuer\n{extra}"
        )
        run("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", f"{name}.pem", "-days", "2", "-extfile", f"{name}.ext")  # fmt: skip
    return {
        name: str(folder / name)
        for name in ("ca.pem", "other-ca.pem", "server.pem", "server.key", "client.pem", "client.key")
    }
