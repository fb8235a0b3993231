#!/usr/bin/env python3
"""An essay 'scorer' that rewards length, the best-known shortcut of automatic essay scoring (Kumar et al.
2020 find deployed models lean on it). JSON lines on stdin/stdout: {"text", "prompt_id"} -> {"score"}.
Scales are those of ASAP-AES essay sets 1-8 (and the demo essay prompt, 1-6)."""

import json
import sys

SCALES = {"1": (2, 12), "2": (1, 6), "3": (0, 3), "4": (0, 3), "5": (0, 4), "6": (0, 4), "7": (0, 30),
          "8": (0, 60), "demo-essay": (1, 6)}


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        lo, hi = SCALES.get(str(req.get("prompt_id")), (0, 10))
        n = len(req.get("text", "").split())
        print(json.dumps({"score": min(hi, lo + round((hi - lo) * min(n, 600) / 600))}), flush=True)


if __name__ == "__main__":
    main()
