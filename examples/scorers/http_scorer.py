#!/usr/bin/env python3
"""A tiny HTTP scoring service (stdlib) for examples/http-target.toml: POST /score {"text", "prompt_id"}
-> {"score"}, requiring the header "Authorization: Bearer $SCORER_TOKEN". Listens on 127.0.0.1 only.

    SCORER_TOKEN=letmein python examples/scorers/http_scorer.py 8765
"""

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from keyword_scorer import score  # noqa: E402


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # quiet
        pass

    def do_POST(self):  # noqa: N802
        if self.headers.get("Authorization") != f"Bearer {os.environ.get('SCORER_TOKEN', '')}":
            self.send_response(401)
            self.end_headers()
            return
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        out = json.dumps({"score": score(body.get("text", ""), body.get("prompt_id") or "")}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8765
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
