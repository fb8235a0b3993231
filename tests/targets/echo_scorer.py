"""A JSON-lines scorer for CommandTarget tests: one JSON object per line in, one per line out.

Scores ``len(text.split()) % 4`` (the same rule as fault_server.expected_score); for ``task == "reading"``
answers the longest word of the context. Misbehaves on purpose when the text contains a marker:
``CRASH`` exits with code 3 (after a message on stderr), ``HANG`` sleeps 30 s, ``NOISE`` prints a non-JSON
line before answering, ``REFUSE`` answers ``{"error": ...}``, ``GARBAGE`` answers a JSON string instead of an
object and then the real answer. Every answer carries the process id (``pid``) so tests can see restarts.
With ``--die-at-start`` it exits immediately (a scorer that cannot load its model).
"""

from __future__ import annotations

import json
import os
import sys
import time


def main() -> int:
    if "--die-at-start" in sys.argv:
        print("cannot load model: missing weights", file=sys.stderr, flush=True)
        return 2
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        text = req.get("text", "")
        if "CRASH" in text:
            print(f"fatal: cannot score {text!r}", file=sys.stderr, flush=True)
            return 3
        if "HANG" in text:
            time.sleep(30)
        if "NOISE" in text:
            print("loading vocabulary... done", flush=True)
        if "GARBAGE" in text:
            print(json.dumps("not an object"), flush=True)
        if "REFUSE" in text:
            out = {"id": req["id"], "error": "refused: text too short"}
        elif req.get("task") == "reading":
            words = (req.get("context") or "").split() or [""]
            out = {"id": req["id"], "answer": max(words, key=len), "candidates": [[max(words, key=len), 0.9]]}
        else:
            out = {"id": req["id"], "score": len(text.split()) % 4}
        out["pid"] = os.getpid()
        print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
