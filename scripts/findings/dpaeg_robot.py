"""The DrQA-style robot of the DPAEG findings (``scripts/findings/questions.py``) as batched callable targets.

A suite names them as ``function = "dpaeg_robot:squad_open"`` (or ``curated_trec``) with this folder as its base
directory; the product's callable adapter imports this module, and the script imports the same module object, so
the index is built once per process and its cost is read back from :data:`INDEX`. Each function takes a batch of
inputs (``pass_input = true``) and returns the robot's outputs: the answer (rank 1) and the ranked candidates the
ranking metrics read (DPAEG Sec. 4.1.3).

The robot (DrQA's role, Sec. 4.1.2): :class:`callbluff.models.retriever.RetrieverReader`, DrQA's hashed
unigram+bigram TF-IDF retriever over SQuAD v1.1 paragraphs, the top ``N_DOCS`` paragraphs read by the
sliding-window reader, ``TOP_K`` answers kept.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from callbluff.models.qa import SlidingWindowQA
from callbluff.models.retriever import RetrieverReader
from callbluff.targets.base import Input, Output

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the harness beside this script
from harness import SHARED  # noqa: E402

SQUAD = SHARED / "data" / "squad-v1.1"
N_DOCS, TOP_K = 5, 20
HAYSTACKS: dict[str, tuple[Path, ...]] = {
    "SQuAD-open": (SQUAD / "dev-v1.1.json.gz",),  # the dev paragraphs (2,067)
    "CuratedTREC": (SQUAD / "train-v1.1.json.gz", SQUAD / "dev-v1.1.json.gz"),  # every SQuAD paragraph
}
ROBOTS: dict[str, RetrieverReader] = {}
INDEX: dict[str, dict[str, Any]] = {}  # name -> {"seconds": index build time, "n_documents": paragraphs}
ASKED: dict[str, dict[str, float]] = {}  # name -> {"questions": asked in this process, "seconds": in the robot}


def robot(name: str, progress: Any = None) -> RetrieverReader:
    """The robot over ``name``'s haystack, built once per process."""
    if name not in ROBOTS:
        t0 = time.perf_counter()
        reader = SlidingWindowQA(top_k=TOP_K, cache_size=60_000)
        ROBOTS[name] = RetrieverReader.from_squad([str(f) for f in HAYSTACKS[name]], unit="paragraph", reader=reader,
                                                  n_docs=N_DOCS, top_k=TOP_K, progress=progress)
        INDEX[name] = {"seconds": time.perf_counter() - t0, "n_documents": len(ROBOTS[name].documents)}
    return ROBOTS[name]


def _predict(name: str, inputs: Sequence[Input]) -> list[Output]:
    rr = robot(name)
    t0 = time.perf_counter()
    out = rr.predict(inputs)
    stats = ASKED.setdefault(name, {"questions": 0, "seconds": 0.0})
    stats["questions"] += len(inputs)
    stats["seconds"] += time.perf_counter() - t0
    return out


def squad_open(inputs: Sequence[Input]) -> list[Output]:
    """The SQuAD-open robot (dev paragraphs)."""
    return _predict("SQuAD-open", inputs)


def curated_trec(inputs: Sequence[Input]) -> list[Output]:
    """The CuratedTREC robot (every SQuAD v1.1 paragraph: the offline stand-in for DrQA's Wikipedia)."""
    return _predict("CuratedTREC", inputs)
