"""A stand-in for ``python -m llama_cpp.server``, run as its own process by a :class:`LocalLLMServer` subclass
(``argv``): the same lifecycle (a process on 127.0.0.1:PORT answering ``GET /v1/models``, a log on stdout), the
chat replies of :mod:`chat_server` (``{"score": N}``), every chat request appended to a calls file, and, after
``crash_after`` chat requests (0: never), a native crash: it prints an abort line and kills itself with SIGSEGV
while the request is in flight, as a llama.cpp build that crashes on the first generation does.

``python fake_llm_server.py PORT CRASH_AFTER CALLS_FILE``
"""

from __future__ import annotations

import json
import os
import signal
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from chat_server import stand_in_score  # this script's directory (tests/helpers) is sys.path[0]

PORT, CRASH_AFTER, CALLS = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
served = 0


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        print("request:", format % args, flush=True)

    def _send(self, status: int, payload: Any) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def do_GET(self) -> None:
        self._send(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})

    def do_POST(self) -> None:
        global served
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        served += 1
        with open(CALLS, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(body["messages"][-1]["content"]) + "\n")
        if CRASH_AFTER and served > CRASH_AFTER:
            print(f"llama_decode: fake backend abort on request {served} (GGML_ASSERT failed)", flush=True)
            os.kill(os.getpid(), signal.SIGSEGV)
        content = json.dumps({"score": stand_in_score(body)})
        self._send(200, {"id": f"chatcmpl-{served}", "object": "chat.completion", "model": body.get("model"),
                         "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                      "finish_reason": "stop"}],
                         "usage": {"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14}})


if __name__ == "__main__":
    print(f"fake llama server: model loaded, listening on 127.0.0.1:{PORT}", flush=True)
    ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
