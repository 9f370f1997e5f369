"""A loopback server that speaks OpenAI's chat-completions API, for the async example (``bench_route_async.py``).

``POST /v1/chat/completions`` on 127.0.0.1 answers with a support-queue label and the
usage a real model would bill. It answers like a model that is right with a fixed
probability per question, drawn from a generator seeded by a hash of the request (its
messages and its ``user`` field, which the benchmark sets to the run): so every run of
every case gets the same answer every time, serially and under pytest-xdist alike.
No network beyond the loopback interface, no API key.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

#: Question snippet -> (the right label, how often the simulated model gives it).
ACCURACY = {"charged twice": ("refund", 0.9), "site is down": ("outage", 0.6)}
LABELS = ("refund", "outage", "other")
MODEL_VERSION = "-2024-07-18"


def _answer(body: dict) -> tuple[str, dict]:
    text = " ".join(str(m.get("content", "")) for m in body.get("messages", ()))
    seed = hashlib.sha256(json.dumps([text, body.get("user", "")]).encode()).hexdigest()
    rng = random.Random(seed)
    right, accuracy = next((v for k, v in ACCURACY.items() if k in text), ("other", 0.5))
    label = right if rng.random() < accuracy else rng.choice([x for x in LABELS if x != right])
    prompt = 12 + len(text.split()) * 2
    usage = {
        "prompt_tokens": prompt,
        "completion_tokens": 1,
        "total_tokens": prompt + 1,
        "prompt_tokens_details": {"cached_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0},
    }
    return label, usage


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        label, usage = _answer(body)
        payload = json.dumps(
            {
                "id": "chatcmpl-example",
                "object": "chat.completion",
                "created": 1700000000,
                "model": str(body.get("model", "model")) + MODEL_VERSION,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": label}, "finish_reason": "stop"}],
                "usage": usage,
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def start() -> str:
    """Serve on a free loopback port in a daemon thread; the base URL for ``OPENAI_BASE_URL``."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/v1"
