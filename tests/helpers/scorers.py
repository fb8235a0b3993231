"""Real (if simple) systems under test, named ``helpers.scorers:NAME`` in a suite's callable targets.

``keyword_scorer`` scores a short answer 0-3 by how many distinct rubric keywords it contains, in order
(so shuffling can change its score). It appends every call's input key to the file named by
``CALLBLUFF_TEST_CALL_LOG`` (one line per call, flushed at once) so tests can count real target calls,
and sleeps ``CALLBLUFF_TEST_SLEEP`` seconds per call to make runs long enough to interrupt.
"""

from __future__ import annotations

import os
import time

from callbluff.targets.base import Input

KEYWORDS = ("panda", "bamboo", "koala", "eucalyptus", "specialist", "habitat")


def keyword_scorer(inp: Input) -> float:
    log = os.environ.get("CALLBLUFF_TEST_CALL_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(inp.key() + "\n")
            fh.flush()
    delay = float(os.environ.get("CALLBLUFF_TEST_SLEEP", "0"))
    if delay:
        time.sleep(delay)
    words = inp.text.lower().split()
    hits = {w.strip(".,") for w in words} & set(KEYWORDS)
    in_order = 1 if words and words[0].strip(".,") in KEYWORDS else 0
    return float(min(3, len(hits) // 2 + in_order))


def length_scorer(text: str) -> float:
    """An essay 'scorer' that looks only at length (the overstable extreme Kumar et al. warn about)."""
    return float(min(12, 2 + len(text.split()) // 60))


def essay_length_scorer(text: str) -> float:
    """An essay 'scorer' from 1 to 6 by length, saturating at 400 words: more words, higher score (the
    overstable kind Kumar et al. 2020 attack: shuffling keeps the score, deletion lowers it)."""
    return 1.0 + 5.0 * min(len(text.split()), 400) / 400


def constant_scorer(text: str) -> float:
    """Scores every essay 4: never lowered by any attack."""
    return 4.0


def toy_reader(inp: Input) -> list[tuple[str, float]]:
    """A reading-comprehension 'model' for search tests: every alphabetic context word of 4+ letters that is not
    a question word is a candidate span, scored by how many question words stand among the 3 words before it
    (later words win ties); the ranked candidates, best first. Words appended after question words attract it,
    so AddAny can fool it. Logs calls like ``keyword_scorer``."""
    log = os.environ.get("CALLBLUFF_TEST_CALL_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(inp.key() + "\n")
            fh.flush()
    qwords = {w.strip("?.,").lower() for w in inp.text.split()}
    words = [w.strip("?.,") for w in (inp.context or "").split()]
    scored = []
    for i, w in enumerate(words):
        if len(w) >= 4 and w.isalpha() and w.lower() not in qwords:
            near = sum(1 for v in words[max(0, i - 3):i] if v.lower() in qwords)
            scored.append((w, near + i / (10 * (len(words) + 1))))
    best: dict[str, float] = {}
    for w, s in sorted(scored, key=lambda x: -x[1]):
        best.setdefault(w, s)
    return list(best.items())[:5]
