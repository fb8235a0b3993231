#!/usr/bin/env python3
"""A bag-of-keywords short-answer scorer that speaks callbluff's JSON-lines protocol on stdin/stdout.

It stands in for "your system" in examples/*.toml: one JSON object per line in ({"text": ..., "prompt_id": ...}),
one per line out ({"score": ...}). Like many real scorers it looks at which words occur, not at their order,
so the Shuffle attack (Ding et al. 2020) does not move its scores: exactly the overstability callbluff reports.
"""

import json
import re
import sys

KEYWORDS = {
    # demo-1 (0-2): heat conduction in a metal spoon
    "demo-1": {"conduction", "conducts", "conductor", "conduct", "particles", "vibrate", "energy", "metal", "transfer"},
    # demo-2 (0-3): specialist species
    "demo-2": {"specialist", "bamboo", "eucalyptus", "one", "only", "food", "habitat", "risk", "extinct", "disease"},
}
SCALE = {"demo-1": 2, "demo-2": 3}


def score(text: str, prompt_id: str) -> int:
    words = set(re.findall(r"[a-z]+", text.lower()))
    hits = len(words & KEYWORDS.get(prompt_id, set()))
    return min(SCALE.get(prompt_id, 3), hits // 2)


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        print(json.dumps({"score": score(req.get("text", ""), req.get("prompt_id") or "")}), flush=True)


if __name__ == "__main__":
    main()
