"""A loopback OpenAI-compatible server for the end-to-end tests of usage from spans.

``POST /v1/chat/completions`` answers with a random reply and random usage
(prompt tokens with a cached part, completion tokens with a reasoning part),
or streams it (``stream: true``, the usage in the last chunk). Every answer's
usage is appended, one JSON line each with the last message's content as ``prompt``, to the file
named by ``GENAI_USAGE_LOG`` (when set), so a test can sum what the server billed, and tell which call
each line billed. The model ``refuse`` gets
an HTTP 400 whose error message is ``REFUSED_MESSAGE`` (the OpenAI SDK raises
``BadRequestError: Error code: 400 - …``). Copied into pytester
folders as ``genai_server.py``; ``start()`` serves on 127.0.0.1 in a daemon thread.
"""

from __future__ import annotations

import json
import os
import random
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

RESPONSE_SUFFIX = "-2024-07-18"
#: The error message of the answer to the model ``refuse``.
REFUSED_MESSAGE = "SERVER-SECRET-7Q2: your prompt mentions the account"


def _usage(rng: random.Random) -> dict:
    prompt = rng.randint(20, 400)
    completion = rng.randint(1, 60)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": rng.randint(0, prompt)},
        "completion_tokens_details": {"reasoning_tokens": rng.randint(0, completion)},
    }


class Handler(BaseHTTPRequestHandler):
    rng = random.Random()
    lock = threading.Lock()

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        if body.get("model") == "refuse":
            error = json.dumps({"error": {"message": REFUSED_MESSAGE, "type": "invalid_request_error"}}).encode()
            self.send_response(400)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(error)))
            self.end_headers()
            self.wfile.write(error)
            return
        with self.lock:
            usage = _usage(self.rng)
            answer = self.rng.choice(["yes", "no", "maybe"])
        model = str(body.get("model", "m")) + RESPONSE_SUFFIX
        log = os.environ.get("GENAI_USAGE_LOG")
        if log:
            messages = body.get("messages") or [{}]
            with self.lock, open(log, "a", encoding="utf-8") as handle:
                handle.write(json.dumps({"model": model, "prompt": messages[-1].get("content"), **usage}) + "\n")
        base = {"id": "chatcmpl-1", "created": 1700000000, "model": model, "system_fingerprint": "fp_test"}
        if body.get("stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            chunks = [
                {
                    **base,
                    "object": "chat.completion.chunk",
                    "choices": [{"index": 0, "delta": {"role": "assistant", "content": answer}, "finish_reason": None}],
                },
                {
                    **base,
                    "object": "chat.completion.chunk",
                    "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                },
                {**base, "object": "chat.completion.chunk", "choices": [], "usage": usage},
            ]
            for chunk in chunks:
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            return
        payload = json.dumps(
            {
                **base,
                "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
                "usage": usage,
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def start() -> str:
    """Serve in a daemon thread; returns the base URL (``http://127.0.0.1:PORT/v1``)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/v1"
