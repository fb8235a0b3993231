"""Per-example verdicts from an attack's declared expectation, and the failure rate they add up to.

In the spirit of CheckList's ``Expect`` (Ribeiro et al. 2020, Sec. 2.1-2.3: every test case gets a pass/fail
verdict, or none when the expectation does not apply, and a test's failure rate is the share of its cases that
fail): an attack declares what a robust system does with its adversarial inputs (``expect``), and each
adversarial example gets a *verdict*: ``True`` (the target did what a robust system does), ``False`` (it was
fooled) or ``None`` (no verdict: a failed prediction, or a case the expectation does not judge, such as a
question the target already answered wrongly). Verdicts are stored per example (examples.parquet ``verdict``),
so a report can show exactly the examples that fooled the target.

An expectation also says what a *case* is for its failure rate: each ``example`` (Kumar et al.'s statistics
count adversarial samples; Ding et al.'s ARR counts answers; DPAEG counts adversarial questions), or each
``source`` (Jia & Liang 2017, Sec. 4.1: a question counts as broken when *any* of its adversarial versions
breaks it, the worst case; CheckList's invariance tests count test cases the same way). A source's verdict is
False if any of its examples is False, True if all of its judged examples are True, None if none is judged.
``failure_pct`` = 100 x (cases judged False) / (cases judged).

The built-in expectations reproduce the papers' statistics: ``lower`` = Kumar et al.'s % not lowered (Sec. 3.1,
a change of at most ``TOL`` counts as unchanged); ``bottom`` = 100 - Ding et al.'s ARR (Sec. 3.2: scores rounded
half up to the scale's integer minimum or below); ``same-score`` = % of scores that moved; ``not-higher`` = % of scores that rose (the LLM-grader family: a
robust grader does not raise the score for an injected instruction, claim or fake score); ``same-answer`` = % of
correctly answered inputs answered wrongly after the attack (per source for reading, Jia & Liang; per example for
questions, DPAEG Sec. 4.1); ``wrong-answer`` = % of adversarial inputs still given a gold answer.

Third parties register their own (:func:`register_expectation`, at import or through the
``callbluff.expectations`` entry point group, loaded on the first unknown name), e.g. "within one point"::

    register_expectation(Expectation("within-1", "the score moves by at most one point",
                                     lambda o: None if o.missing_score else abs(o.adv_score - o.orig_score) <= 1))

An expectation may take a parameter, CheckList-style (``Expect.eq(tolerance)``): declare ``parameter`` (what the
value is) and a ``judge(outcome, value)``; an attack then writes ``expect = "NAME:VALUE"`` (``"within:0.5"``), the
value read by ``parse`` (``float`` by default) when the attack class is registered. ``{value}`` in the
description and in ``asks`` is replaced by the value::

    register_expectation(Expectation(
        "within", "the score moves by at most {value} points",
        lambda o, tol: None if o.missing_score else abs(o.adv_score - o.orig_score) <= tol,
        parameter="tolerance (score points)", asks="a robust scorer keeps the score within {value}"))

Every reader of expectations (attacks' ``expect``, the verdicts, the report's scorecard, ``callbluff compare``)
asks this registry: :func:`get_expectation` resolves a name or a ``NAME:VALUE`` spec, :func:`check_expectation`
says what is wrong with one, :func:`expectation_text` is the scorecard's phrase.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from importlib.metadata import entry_points
from typing import Any, Literal

from callbluff.metrics._common import pct
from callbluff.metrics.scoring import TOL, at_minimum


Verdict = bool | None
Per = Literal["example", "source"]


def _missing(v: float | None) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


@dataclass(frozen=True)
class Outcome:
    """What a verdict sees of one adversarial example: the target's scores before and after (scoring tasks, on
    the prompt's scale; None for a failed prediction or no source) and the prompt's scale, or whether its
    answers before and after were correct (answer tasks, as the task judges correctness; None: failed or not
    judged)."""

    orig_score: float | None = None
    adv_score: float | None = None
    score_min: float | None = None
    score_max: float | None = None
    orig_correct: bool | None = None
    adv_correct: bool | None = None

    @property
    def missing_score(self) -> bool:
        """Either score is missing (a failed prediction): no verdict on a score change."""
        return _missing(self.orig_score) or _missing(self.adv_score)


@dataclass(frozen=True)
class Expectation:
    """A named expectation: ``judge`` gives one example's verdict; ``per`` what a case of its failure rate is
    (a task may count per source instead, see :func:`failure_unit`).

    ``asks``: what a robust system does, in a few words without a citation (the report's scorecard; default: the
    description). ``restates``: (metric field, offset) when a task's metric field is ``|offset - failure_pct|``
    under this expectation (``callbluff compare`` then lists the figure once). ``parameter``: what the value of a
    ``NAME:VALUE`` spec is (None: the expectation takes none); ``judge`` then takes ``(outcome, value)`` and
    ``parse`` reads the value from its text."""

    name: str
    description: str
    judge: Callable[..., Verdict]
    per: Per = "example"
    asks: str = ""
    restates: tuple[str, float] | None = None
    parameter: str | None = None
    parse: Callable[[str], Any] = float
    value: Any = None
    """The parsed value of a bound ``NAME:VALUE`` expectation (:func:`get_expectation`); None otherwise."""

    @property
    def phrase(self) -> str:
        """:attr:`asks`, else the description."""
        return self.asks or self.description


def _lower(o: Outcome) -> Verdict:
    return None if o.missing_score else (o.adv_score - o.orig_score) < -TOL  # type: ignore[operator]


def _bottom(o: Outcome) -> Verdict:
    if _missing(o.adv_score) or o.score_min is None:
        return None
    return bool(at_minimum(o.adv_score, o.score_min))


def _same_score(o: Outcome) -> Verdict:
    return None if o.missing_score else abs(o.adv_score - o.orig_score) <= TOL  # type: ignore[operator]


def _not_higher(o: Outcome) -> Verdict:
    return None if o.missing_score else (o.adv_score - o.orig_score) <= TOL  # type: ignore[operator]


def _same_answer(o: Outcome) -> Verdict:
    if o.orig_correct is not True or o.adv_correct is None:
        return None  # a question answered wrongly (or not at all) before the attack is not attacked
    return o.adv_correct


def _wrong_answer(o: Outcome) -> Verdict:
    return None if o.adv_correct is None else not o.adv_correct


_REGISTRY: dict[str, Expectation] = {}
_BOUND: dict[str, Expectation] = {}  # NAME:VALUE specs resolved once (judge() runs once per example)
_PLUGINS_LOADED = False
SEP = ":"
"""Between an expectation's name and its parameter's value: ``within:0.5``."""


def register_expectation(expectation: Expectation, *, replace: bool = False) -> Expectation:
    """Make ``expectation`` available by name (to attacks' ``expect`` and to :func:`judge`)."""
    name = expectation.name
    if not name or name != name.strip() or SEP in name:
        raise ValueError(f"an expectation needs a name without spaces around it and without {SEP!r}, got {name!r}")
    if expectation.per not in ("example", "source"):
        raise ValueError(f"expectation {name!r}: per must be 'example' or 'source'")
    if name in _REGISTRY and not replace:
        raise ValueError(f"expectation {name!r} is registered already (replace=True to redefine it)")
    _REGISTRY[name] = expectation
    _BOUND.clear()
    return expectation


def unregister_expectation(name: str) -> None:
    _REGISTRY.pop(name, None)
    _BOUND.clear()


def _load_plugins() -> None:
    """Load the ``callbluff.expectations`` entry points once (a module that registers its expectations)."""
    global _PLUGINS_LOADED
    if not _PLUGINS_LOADED:
        _PLUGINS_LOADED = True
        for ep in entry_points(group="callbluff.expectations"):
            ep.load()


def _known() -> str:
    return ", ".join(n + (f"{SEP}VALUE" if _REGISTRY[n].parameter else "") for n in sorted(_REGISTRY))


def get_expectation(spec: str) -> Expectation:
    """The expectation ``spec`` names: a registered name, or ``NAME:VALUE`` for one that takes a parameter (then
    an :class:`Expectation` named ``spec`` whose ``judge`` takes the outcome only, with the value bound).
    KeyError for an unknown name, ValueError for a missing, unexpected or unreadable value."""
    e = _REGISTRY.get(spec) or _BOUND.get(spec)
    if e is not None and e.parameter is None:
        return e
    name, sep, raw = str(spec).partition(SEP)
    base = _REGISTRY.get(name)
    if base is None:
        _load_plugins()
        base = _REGISTRY.get(name)
    if base is None:
        raise KeyError(f"unknown expectation {name!r}; known: {_known()}")
    if base.parameter is None:
        if sep:
            raise ValueError(f"expectation {name!r} takes no parameter, got {spec!r}")
        return base
    if not sep or not raw.strip():
        raise ValueError(f"expectation {name!r} takes a parameter ({base.parameter}): write '{name}{SEP}VALUE'")
    try:
        value = base.parse(raw.strip())
    except (TypeError, ValueError) as exc:
        raise ValueError(f"expectation {spec!r}: cannot read {raw!r} as its {base.parameter} ({exc})") from None
    judge_with = base.judge
    bound = replace(base, name=spec, description=base.description.replace("{value}", raw.strip()),
                    asks=base.asks.replace("{value}", raw.strip()), judge=lambda o: judge_with(o, value),
                    parameter=None, value=value)
    _BOUND[spec] = bound
    return bound


def check_expectation(spec: Any) -> str | None:
    """What is wrong with ``spec`` as an attack's ``expect`` (None: nothing), listing the registered ones."""
    if not isinstance(spec, str):
        return f"expect must be the name of a registered expectation (known: {_known()}), got {spec!r}"
    try:
        get_expectation(spec)
    except (KeyError, ValueError) as exc:
        return str(exc.args[0])
    return None


def find_expectation(spec: Any) -> Expectation | None:
    """:func:`get_expectation`, or None for an expectation not registered here (a run read without the plugin
    that registered it): the report and ``compare`` then show the spec as it is."""
    if not isinstance(spec, str):
        return None
    try:
        return get_expectation(spec)
    except (KeyError, ValueError):
        return None


def expectation_text(spec: Any) -> str:
    """What a robust system does under ``spec``, for the report (its :attr:`Expectation.phrase`; the spec itself
    when it is not registered)."""
    e = find_expectation(spec)
    return e.phrase if e is not None else str(spec)


def expectation_names() -> list[str]:
    """The registered expectations' names (one that takes a parameter is written ``NAME:VALUE`` in ``expect``)."""
    _load_plugins()
    return sorted(_REGISTRY)


for _e in (
    Expectation("lower", "a human lowers the score (Kumar et al. 2020, Sec. 3.1): fooled when it is not lowered",
                _lower, asks="a robust scorer lowers the score", restates=("not_lowered_pct", 0.0)),
    Expectation("bottom", "a content-free answer gets the scale's minimum (Ding et al. 2020, Sec. 3.2): fooled "
                "when it scores above it", _bottom, asks="a robust scorer gives the minimum score",
                restates=("arr", 100.0)),
    Expectation("same-score", "a benign change keeps the score: fooled when the score moves", _same_score,
                asks="a robust scorer keeps the score"),
    Expectation("not-higher", "text that adds no content (an instruction to the grader, a claim, a fake score) does "
                "not raise the score: fooled when the score rises", _not_higher,
                asks="a robust grader does not raise the score"),
    Expectation("same-answer", "a meaning-preserving change keeps a correct answer (Jia & Liang 2017; DPAEG): "
                "fooled when a correctly answered input is answered wrongly", _same_answer,
                asks="a robust system keeps its correct answer"),
    Expectation("wrong-answer", "a change that removes the answer must not be answered with the gold: fooled when "
                "the gold answer is still given", _wrong_answer,
                asks="a robust system no longer gives the gold answer"),
):
    register_expectation(_e)
BUILTIN: tuple[str, ...] = tuple(_REGISTRY)
"""The built-in expectations' names (:func:`expectation_names` lists every registered one)."""


def judge(expect: str | None, outcome: Outcome) -> Verdict:
    """The verdict of one example under expectation ``expect`` (None: the attack declares none); always a Python
    ``bool`` or None (a judge may return NumPy booleans)."""
    if expect is None:
        return None
    v = get_expectation(expect).judge(outcome)
    return None if v is None else bool(v)


def failure_unit(expect: str | None, worst_case: Iterable[str] = ()) -> Per:
    """What a case is for ``expect``'s failure rate: ``source`` when the expectation says so or the task counts
    it as a worst case over each source's versions (``worst_case``: the task's expectations judged per source)."""
    if expect is None:
        return "example"
    worst = set(worst_case)
    return "source" if expect in worst or expect.partition(SEP)[0] in worst else get_expectation(expect).per


@dataclass
class VerdictTally:
    """Streaming counts of verdicts for one metric row: ``update`` with (source id, verdict) pairs as chunks go
    by, ``merge`` another tally, ``result`` the judged cases, the fooled ones and ``failure_pct``."""

    per: Per = "example"
    judged: int = 0
    fooled: int = 0
    sources: dict[str, Verdict] = field(default_factory=dict)

    def update(self, pairs: Iterable[tuple[str, Verdict]]) -> None:
        if self.per == "example":
            for _, v in pairs:
                if v is not None:
                    self.judged += 1
                    self.fooled += not v
            return
        for sid, v in pairs:
            v = None if v is None else bool(v)
            if v is None:
                self.sources.setdefault(sid, None)
                continue
            old = self.sources.get(sid)
            self.sources[sid] = v if old is None else (old and v)

    def merge(self, other: VerdictTally) -> None:
        if other.per != self.per:
            raise ValueError("cannot merge verdict tallies of different units")
        self.judged += other.judged
        self.fooled += other.fooled
        self.update(other.sources.items())

    def result(self) -> dict[str, float | int]:
        judged, fooled = self.judged, self.fooled
        if self.per == "source":
            verdicts = [v for v in self.sources.values() if v is not None]
            judged, fooled = len(verdicts), sum(v is False for v in verdicts)
        return {"n_judged": judged, "n_fooled": fooled, "failure_pct": pct(fooled, judged)}


POOLED = "all"
"""The ``prompt`` of a metric row pooled over prompts (:data:`callbluff.metrics.rows.ALL`)."""


class VerdictTallies:
    """The verdict tallies of a run's attack rows, keyed as metric rows are: (target, attack, params, prompt), each
    example also counted in its pooled (target, attack, params, ``all``) row. ``unit(attack)`` says whether an
    attack's cases are examples or sources (:func:`failure_unit`). Fed table by table (:meth:`add`): memory
    grows with the groups (and, for per-source units, their sources), not with the examples' texts."""

    COLUMNS = ("target", "attack", "params", "prompt_id", "source_id", "verdict")
    """The example columns :meth:`add` reads."""

    def __init__(self, unit: Callable[[str], Per]) -> None:
        self.unit = unit
        self.groups: dict[tuple[str, str, str, str], VerdictTally] = {}

    def _tally(self, key: tuple[str, str, str, str]) -> VerdictTally:
        t = self.groups.get(key)
        if t is None:
            t = self.groups[key] = VerdictTally(self.unit(key[1]))
        return t

    def add(self, examples: Any) -> None:
        """Count the ``verdict`` of every row of a table (a pandas DataFrame with :attr:`COLUMNS`): rows are
        first gathered per group in one pass, then each group's tally is updated once."""
        if not len(examples):
            return
        gathered: dict[tuple[str, str, str, str], list[tuple[str, Verdict]]] = {}
        for t, a, p, pid, sid, v in zip(*(examples[c] for c in self.COLUMNS)):
            pair = (str(sid), None if v is None or (isinstance(v, float) and v != v) else bool(v))
            base = (str(t), str(a), str(p))
            gathered.setdefault((*base, POOLED), []).append(pair)
            if pid is not None and not (isinstance(pid, float) and pid != pid):
                gathered.setdefault((*base, str(pid)), []).append(pair)
        for key, pairs in gathered.items():
            self._tally(key).update(pairs)

    def n_judged(self, target: str, attack: str, params: str, prompt: str) -> int | None:
        """The cases a metric row's ``failure_pct`` is computed on (None when the row has no examples): the
        report withholds a rate computed on fewer than its minimum."""
        t = self.groups.get((target, attack, params, prompt))
        return None if t is None else int(t.result()["n_judged"])

    def failure_pct(self, target: str, attack: str, params: str, prompt: str) -> float | None:
        """``failure_pct`` of one metric row; None when the row has no examples (e.g. an attack that failed on
        every record) or none was judged."""
        t = self.groups.get((target, attack, params, prompt))
        if t is None:
            return None
        v = t.result()["failure_pct"]
        return None if isinstance(v, float) and math.isnan(v) else float(v)
