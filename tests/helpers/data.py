"""Hand-made short-answer data for engine tests (written to tmp files by the tests)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

WORDS = ["panda", "bamboo", "koala", "eucalyptus", "specialist", "habitat", "eat", "the", "only", "because",
         "species", "they", "food", "a", "is", "needs", "risk", "lose", "their", "forest"]


def write_answers(path: Path, n: int = 120, seed: int = 0) -> Path:
    """``n`` JSON lines {id, prompt_id, text, score} over two prompts with a 0-3 scale."""
    rng = np.random.default_rng(seed)
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            k = int(rng.integers(3, 14))
            text = " ".join(rng.choice(WORDS, size=k)) + "."
            score = int(min(3, sum(w in text for w in ("panda", "bamboo", "koala", "eucalyptus")) ))
            fh.write(json.dumps({"id": f"a{i:04d}", "prompt_id": f"p{i % 2 + 1}", "text": text,
                                 "score": score}) + "\n")
    return path
