"""A real stand-in OpenAI-compatible chat server on 127.0.0.1 (stdlib ``http.server``) for the chat target's
fault and dialect tests: what a real grader server (tests/helpers/local_llm.py) cannot be made to do on demand.

``POST /v1/chat/completions``: the reply's content is ``{"score": N}`` (:func:`stand_in_score`, the maximum read
from the request's schema in any dialect, 5 when there is none), or, with ``free_text=True``, a sentence ending in
that number; a request whose schema asks for an ``answer`` gets ``{"answer": ...}`` (:func:`stand_in_answer`). Markers in the user message choose a fault for the *first*
request of that body (a retry of it succeeds), as a real rate-limited or overloaded server behaves:

* ``RA-MS`` - 429 with ``retry-after-ms: 300``;
* ``RA-S`` - 429 with ``Retry-After: 1`` (seconds);
* ``RA-DATE`` - 429 with ``Retry-After`` an HTTP date 2 s ahead;
* ``FIVE-OH-THREE`` - 503 without a wait;
* ``GARBAGE`` - every request: a 200 whose content is prose without a number or JSON;
* ``OUTSIDE`` - every request: ``{"score": 99}``;
* ``ECHO-AUTH`` - every request: a 401 whose body echoes the Authorization header (a leaky server).

Observations: ``bodies`` (every request body, parsed), ``auth`` (Authorization values), ``arrivals`` (per body
text: monotonic arrival times), ``requests``.
"""

from __future__ import annotations

import json
import threading
import time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


def schema_of(body: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema a request carries, in whichever dialect it is written."""
    rf = body.get("response_format") or {}
    if rf.get("type") == "json_schema":
        return rf["json_schema"]["schema"]
    if rf.get("type") == "json_object":
        return rf.get("schema")
    if "structured_outputs" in body:
        return body["structured_outputs"]["json"]
    return None


def stand_in_score(body: dict[str, Any]) -> int:
    """The score the stand-in gives a request (what a correct client reports): the user message's word count
    plus the request's ``seed`` (0 without one), modulo the scale's maximum + 1."""
    user = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
    schema = schema_of(body)
    prop = schema["properties"]["score"] if schema else {"maximum": 5}
    top = int(max(prop["enum"]) if "enum" in prop else prop["maximum"])
    return (len(user.split()) + int(body.get("seed") or 0)) % (top + 1)


def stand_in_answer(body: dict[str, Any]) -> str:
    """The answer the stand-in gives a QA request: the longest word of the line starting ``Context:``."""
    user = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
    ctx = next((line[len("Context:"):] for line in user.split("\n") if line.startswith("Context:")), "")
    return max(ctx.split() or [""], key=len)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(raw)

    def do_POST(self) -> None:
        srv = self.server
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.loads(raw)
        user = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
        key = json.dumps(body, sort_keys=True)
        with srv.lock:
            srv.requests += 1
            srv.bodies.append(body)
            srv.auth.append(self.headers.get("Authorization"))
            seen = srv.seen.get(key, 0)
            srv.seen[key] = seen + 1
            srv.arrivals.setdefault(user, []).append(time.monotonic())
        if self.path != "/v1/chat/completions":
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        if "ECHO-AUTH" in user:
            self._send(401, {"error": {"message": f"bad key {self.headers.get('Authorization')}"}})
            return
        if seen == 0:
            if "RA-MS" in user:
                self._send(429, {"error": "slow down"}, {"retry-after-ms": "300"})
                return
            if "RA-S" in user:
                self._send(429, {"error": "slow down"}, {"Retry-After": "1"})
                return
            if "RA-DATE" in user:
                self._send(429, {"error": "slow down"}, {"Retry-After": formatdate(time.time() + 2, usegmt=True)})
                return
            if "FIVE-OH-THREE" in user:
                self._send(503, {"error": "overloaded"})
                return
        schema = schema_of(body)
        if schema is not None and "answer" in schema["properties"]:
            content = json.dumps({"answer": stand_in_answer(body)})
            score = None
        else:
            score = stand_in_score(body)
        if score is None:
            pass
        elif "GARBAGE" in user:
            content = "This answer shows some understanding of the topic."
        elif "OUTSIDE" in user:
            content = json.dumps({"score": 99})
        elif srv.free_text:
            content = f"The answer mentions 3 points. Score: {score}"
        else:
            content = json.dumps({"score": score})
        self._send(200, {
            "id": f"chatcmpl-{srv.requests}", "object": "chat.completion", "model": body.get("model"),
            "system_fingerprint": "fp_standin",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": len(user.split()), "completion_tokens": 4,
                      "total_tokens": len(user.split()) + 4},
        })


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, free_text: bool) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.free_text = free_text
        self.lock = threading.Lock()
        self.requests = 0
        self.bodies: list[dict[str, Any]] = []
        self.auth: list[str | None] = []
        self.seen: dict[str, int] = {}
        self.arrivals: dict[str, list[float]] = {}


class ChatStandIn:
    """``with ChatStandIn() as srv: OpenAITarget(srv.base_url, "stand-in", ...)``."""

    def __init__(self, free_text: bool = False) -> None:
        self.server = _Server(free_text)
        self.thread = threading.Thread(target=self.server.serve_forever, name="chat-stand-in", daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __getattr__(self, name: str) -> Any:
        if name in ("bodies", "auth", "arrivals", "requests"):
            return getattr(self.server, name)
        raise AttributeError(name)

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
