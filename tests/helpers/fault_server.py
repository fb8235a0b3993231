"""A real, deliberately flaky HTTP scoring server on 127.0.0.1 for fault-injection tests (stdlib only).

Reusable by any test (``tests/targets``, engine-level fault tests, benchmarks)::

    from helpers.fault_server import FaultServer, expected_score
    with FaultServer(fault_rate=0.2, seed=0, hang=1.0) as srv:
        target = HttpTarget(srv.url + "/score", timeout=0.3, ...)

Endpoints (POST, JSON bodies):

* ``/score`` - ``{"text": ...}`` -> ``{"score": expected_score(text)}`` where
  ``expected_score(text) = len(text.split()) % 4``;
* ``/qa`` - ``{"text": question, "context": ...}`` -> ``{"answer": longest context word, "candidates": ...}``;
* ``/batch`` - ``{"inputs": [{"text": ...}, ...]}`` or ``{"texts": [...]}`` -> ``{"results": [{"score": ...}]}``;
* ``/leak`` - answers 403 with the request's Authorization header in the body (to test secret scrubbing).

Faults: each request is faulty with probability ``fault_rate``; the draw is a deterministic function of
``(seed, request body, how many times this body was seen before)``, so the same inputs meet the same faults
whatever the arrival order or number of client workers, and a retry of a request gets a fresh draw. The kind is
drawn the same way from ``faults``: ``"500"`` (HTTP 500), ``"timeout"`` (sleeps ``hang`` seconds, then closes
without answering), ``"drop"`` (closes the connection without a response), ``"malformed"`` (HTTP 200 with a
truncated JSON body). ``always`` maps a substring of the body to a fault kind that every matching request gets
(poison inputs that can never succeed).

Observations: ``requests`` (count), ``faults`` (Counter by kind), ``max_concurrent`` (requests in flight at
once), ``arrivals`` (monotonic times), ``auth_headers`` (Authorization values seen), ``texts`` (Counter of
texts scored successfully).
"""

from __future__ import annotations

import collections
import hashlib
import json
import threading
import time
from collections.abc import Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

FAULT_KINDS = ("500", "timeout", "drop", "malformed")


def expected_score(text: str) -> int:
    """The score the server gives ``text`` (what a correct client must return)."""
    return len(text.split()) % 4


def expected_answer(context: str) -> str:
    """The answer the ``/qa`` endpoint gives: the longest word of the context (first on ties)."""
    words = context.split() or [""]
    return max(words, key=len)


def _unit(seed: int, *parts: Any) -> float:
    h = hashlib.sha256(json.dumps([seed, *parts], default=str).encode()).digest()
    return int.from_bytes(h[:8], "big") / 2.0**64


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        st = self.server.state
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        with st.lock:
            st.requests += 1
            st.in_flight += 1
            st.max_concurrent = max(st.max_concurrent, st.in_flight)
            st.arrivals.append(time.monotonic())
            st.auth_headers.append(self.headers.get("Authorization"))
            seen = st.seen[raw]
            st.seen[raw] += 1
        try:
            fault = st.choose_fault(raw, seen)
            if fault:
                with st.lock:
                    st.faults_seen[fault] += 1
                self._fault(fault)
                return
            if st.delay:
                time.sleep(st.delay)
            self._answer(raw)
        finally:
            with st.lock:
                st.in_flight -= 1

    def _fault(self, kind: str) -> None:
        if kind == "500":
            self._send(500, b'{"error": "injected internal error"}')
        elif kind == "timeout":
            time.sleep(self.server.state.hang)
            self.close_connection = True
        elif kind == "drop":
            self.close_connection = True
        elif kind == "malformed":
            self._send(200, b'{"score": 1, "trunc')
        elif kind == "429":
            self.send_response(429)
            self.send_header("Retry-After", "0")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            raise ValueError(f"unknown fault kind {kind!r}")

    def _answer(self, raw: bytes) -> None:
        st = self.server.state
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            self._send(400, b'{"error": "request body is not JSON"}')
            return
        path = self.path.split("?")[0]
        if path == "/score":
            text = str(body.get("text", ""))
            with st.lock:
                st.texts[text] += 1
            self._send(200, json.dumps({"score": expected_score(text), "model": "words-mod-4"}).encode())
        elif path == "/qa":
            context = str(body.get("context") or "")
            words = sorted(dict.fromkeys(context.split()), key=len, reverse=True)[:3]
            with st.lock:
                st.texts[str(body.get("text", ""))] += 1
            self._send(200, json.dumps({"answer": expected_answer(context),
                                        "candidates": [[w, 1.0 / (i + 1)] for i, w in enumerate(words)]}).encode())
        elif path == "/batch":
            items = body.get("inputs")
            texts = [str(i.get("text", "")) for i in items] if items is not None else list(body.get("texts", []))
            with st.lock:
                st.batch_sizes.append(len(texts))
                for t in texts:
                    st.texts[t] += 1
            self._send(200, json.dumps({"results": [{"score": expected_score(t)} for t in texts]}).encode())
        elif path == "/leak":
            msg = f"forbidden for Authorization: {self.headers.get('Authorization')}"
            self._send(403, msg.encode(), "text/plain")
        else:
            self._send(404, json.dumps({"error": f"no endpoint {path}"}).encode())


class _State:
    def __init__(self, fault_rate: float, faults: Sequence[str], seed: int, hang: float, delay: float,
                 always: Mapping[str, str]) -> None:
        bad = [f for f in faults if f not in (*FAULT_KINDS, "429")]
        if bad:
            raise ValueError(f"unknown fault kinds {bad}; choose from {FAULT_KINDS + ('429',)}")
        self.fault_rate, self.faults, self.seed = fault_rate, tuple(faults), seed
        self.hang, self.delay, self.always = hang, delay, dict(always)
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self.requests = 0
        self.in_flight = 0
        self.max_concurrent = 0
        self.arrivals: list[float] = []
        self.auth_headers: list[str | None] = []
        self.faults_seen: collections.Counter[str] = collections.Counter()
        self.seen: collections.Counter[bytes] = collections.Counter()
        self.texts: collections.Counter[str] = collections.Counter()
        self.batch_sizes: list[int] = []

    def choose_fault(self, raw: bytes, seen: int) -> str | None:
        text = raw.decode("utf-8", "replace")
        for needle, kind in self.always.items():
            if needle in text:
                return kind
        if self.fault_rate <= 0 or not self.faults:
            return None
        if _unit(self.seed, "fault", text, seen) >= self.fault_rate:
            return None
        return self.faults[int(_unit(self.seed, "kind", text, seen) * len(self.faults))]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    state: _State


class FaultServer:
    """Run the flaky server in a background thread on a free port of 127.0.0.1 (a context manager)."""

    def __init__(self, *, fault_rate: float = 0.0, faults: Sequence[str] = FAULT_KINDS, seed: int = 0,
                 hang: float = 1.0, delay: float = 0.0, always: Mapping[str, str] | None = None) -> None:
        self._state = _State(fault_rate, faults, seed, hang, delay, always or {})
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # observations
    @property
    def requests(self) -> int:
        return self._state.requests

    @property
    def faults(self) -> collections.Counter[str]:
        return self._state.faults_seen

    @property
    def max_concurrent(self) -> int:
        return self._state.max_concurrent

    @property
    def arrivals(self) -> list[float]:
        return list(self._state.arrivals)

    @property
    def auth_headers(self) -> list[str | None]:
        return list(self._state.auth_headers)

    @property
    def texts(self) -> collections.Counter[str]:
        return self._state.texts

    @property
    def batch_sizes(self) -> list[int]:
        return list(self._state.batch_sizes)

    def reset(self) -> None:
        """Forget the observations (and the per-body counts that drive the fault draws)."""
        with self._state.lock:
            self._state.reset()

    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("FaultServer is not running; use it as a context manager or call start()")
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FaultServer:
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.state = self._state
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True, name="fault-server")
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


if __name__ == "__main__":  # manual use: python tests/helpers/fault_server.py [fault_rate]
    import sys

    rate = float(sys.argv[1]) if len(sys.argv) > 1 else 0.2
    with FaultServer(fault_rate=rate) as srv:
        print(f"serving on {srv.url} (fault rate {rate}); Ctrl-C to stop", flush=True)
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            pass
