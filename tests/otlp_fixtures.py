"""Pytest fixtures yielding a started OTLP receiver (see otlp_receiver.py).

Register with ``pytest_plugins = ["otlp_fixtures"]`` (``tests/`` on the path).
"""

from __future__ import annotations

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
