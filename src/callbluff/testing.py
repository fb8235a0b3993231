"""The attack conformance kit: run ``check_attack`` on your attack before you ship it.

In the spirit of scikit-learn's ``check_estimator`` / ``parametrize_with_checks``: every registered attack
(built-in or third-party) must pass the checks of the contract in :mod:`callbluff.attacks.base` that apply
to its kind (:func:`yield_checks`)::

    from callbluff.testing import check_attack
    check_attack(MyAttack)                      # small built-in hand-made records of MyAttack.task
    check_attack(MyAttack(percent=20), records=my_records, prompts=my_prompts)

or, one pytest test per check::

    from callbluff.testing import parametrize_attack_checks

    @parametrize_attack_checks([MyAttack])
    def test_my_attack(attack, check):
        check(attack)

The checks: the declaration is valid (``expect``, ``requires``, ``kind``, ``Params``) and its requirements
are installed; the docstring cites a paper section; params round-trip and ids are stable; the same seed
gives the same bytes, and record order and chunking change nothing; ``meta`` is plain JSON; the attack and
its fit state pickle and each example carries the state's hash; records of another type are refused and
records it does not apply to yield ``[]``; source records are never modified; every example's text differs
from its source; a search attack never makes the target answer more than its budget (checked on the
target's side against a deterministic fake target); a prompt generator makes at most ``count`` answers with
``source_id = "prompt:<id>"``, the same however the range is split. The attack must make at least one
example from the records given, otherwise the checks would prove nothing.

An attack gets only the checks that apply to it: the fit-state checks if it declares ``needs_fit``, the
budget check if it is a search, the count check if it is a prompt generator (no check passes by returning
early). A check that applies but that an attack legitimately cannot pass is listed, with the reason, in
``expected_failures={attack name: {check name: reason}}``: ``parametrize_attack_checks`` marks it a strict
``xfail`` and ``check_attack`` requires it to fail, so an entry that starts passing is reported.
"""

from __future__ import annotations

import copy
import hashlib
import json
import pickle
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from dataclasses import dataclass, field
from typing import Any

from callbluff.attacks.base import (
    Attack,
    PromptGenerator,
    SearchAttack,
    StaticAttack,
    registered,
    state_hash,
    unregister,
    validate_attack_class,
)
from callbluff.records import Perturbed, Prompt, Record, record_to_dict
from callbluff.resources.context import Resources, default_resources
from callbluff.resources.requirements import check_requirements
from callbluff.engine.generate import Generation
from callbluff.engine.search import SearchContext, search_one
from callbluff.engine.work import AttackSpec
from callbluff.targets.base import Candidate, Input, Output
from callbluff.tasks import all_tasks, get_task

__all__ = [
    "AttackCheckError", "DeterministicTarget", "attack_checks", "check_attack", "default_records",
    "parametrize_attack_checks", "registered", "unregister", "yield_checks",
]

CITATION = re.compile(r"\b(Sec\.|Section|Sections|Table|Algorithm|Figure|Fig\.|Eq\.|Appendix)\s*[A-Z]?\d|§\s*\d")


class AttackCheckError(AssertionError):
    """An attack breaks the contract; the message names the check, the record and the fix."""


# -- built-in hand-made records ----------------------------------------------------------------------

def default_records(task: str) -> tuple[list[Record], dict[str, Prompt]]:
    """Small hand-made records (and prompts) of ``task``, so third-party authors can run the kit anywhere: the
    task descriptor's :meth:`~callbluff.tasks.base.Task.kit_records`."""
    try:
        return get_task(task).kit_records()
    except KeyError as e:
        raise ValueError(f"no built-in records for task {task!r}: {e.args[0]}") from None


def _other_type_record(attack: Attack) -> Record:
    """A record the attack cannot take (for the record-type check)."""
    types = attack.record_type if isinstance(attack.record_type, tuple) else (attack.record_type,)
    for spec in all_tasks():  # the first kit record of each task, by task name
        candidate = spec.kit_records()[0][0]
        if not isinstance(candidate, types):
            return candidate
    raise AttackCheckError(f"{attack.name}: record_type {types} accepts every record kind; narrow it")


# -- a deterministic fake target -----------------------------------------------------------------------

class DeterministicTarget:
    """A fake system under test: outputs are a hash of the input, so searches are reproducible; it counts
    every input it is asked (the budget check trusts this count, not the oracle's)."""

    fingerprint = "callbluff-testing-deterministic"

    def __init__(self, prompts: Mapping[str, Prompt] | None = None) -> None:
        self.prompts = dict(prompts or {})
        self.inputs = 0
        self.calls = 0

    @staticmethod
    def _h(*parts: str | None) -> int:
        return int.from_bytes(hashlib.sha256("\x00".join(p or "" for p in parts).encode()).digest()[:8], "big")

    def predict(self, inputs: Sequence[Input]) -> list[Output]:
        self.calls += 1
        self.inputs += len(inputs)
        out = []
        for x in inputs:
            h = self._h(x.task, x.prompt_id, x.context, x.text)
            if get_task(x.task).scoring:
                p = self.prompts.get(x.prompt_id or "")
                lo, hi = (p.score_min, p.score_max) if p else (0.0, 1.0)
                out.append(Output(score=float(lo + h % (int(hi - lo) + 1))))
            else:
                words = re.findall(r"\w+", x.context or x.text) or ["none"]
                ranked = [words[(h + k) % len(words)] for k in range(3)]
                out.append(Output(answer=ranked[0], candidates=tuple(Candidate(w, 1.0 / (k + 1))
                                                                     for k, w in enumerate(ranked))))
        return out


# -- running an attack the way the engine does ----------------------------------------------------------

@dataclass
class _Context:
    records: list[Record]
    prompts: dict[str, Prompt]
    seed: int = 0
    res: Resources = field(default_factory=default_resources)
    task: str | None = None
    """The records' task (the kit's hand-made records of one of the attack's tasks); None: the attack's ``task``."""
    snapshot: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.snapshot = self.dump()

    def dump(self) -> list[dict[str, Any]]:
        """A deep copy of every record and prompt as plain data (meta included)."""
        return copy.deepcopy([record_to_dict(r) for r in self.records] + [record_to_dict(p) for p in self.prompts.values()])


def _prompt_of(record: Record, prompts: Mapping[str, Prompt]) -> Prompt | None:
    pid = getattr(record, "prompt_id", None)
    return prompts.get(pid) if pid is not None else None


def _groups(records: Sequence[Record], prompts: Mapping[str, Prompt]) -> dict[str | None, list[Record]]:
    out: dict[str | None, list[Record]] = {}
    for r in records:
        out.setdefault(getattr(r, "prompt_id", None), []).append(r)
    return out


def _fit(attack: Attack, ctx: _Context) -> dict[str | None, Any]:
    """Fit state per prompt (None: records without a prompt), fitted on that prompt's records."""
    if not attack.needs_fit:
        return {}
    states = {pid: attack.fit(recs, ctx.prompts.get(pid) if pid else None, ctx.res)
              for pid, recs in sorted(_groups(ctx.records, ctx.prompts).items(), key=lambda kv: str(kv[0]))}
    return states


def _run(attack: Attack, ctx: _Context, records: Sequence[Record] | None = None,
         states: dict[str | None, Any] | None = None,
         target: DeterministicTarget | None = None) -> list[Perturbed]:
    """Every example of ``attack`` on ``records`` (default: all), made as the engine makes them: static attacks
    and generators through the one generation path (:class:`~callbluff.engine.generate.Generation`), searches
    through the engine's search runner (:func:`~callbluff.engine.search.search_one`) against ``target`` (a
    :class:`DeterministicTarget` by default). Exceptions propagate (the checks report them)."""
    states = _fit(attack, ctx) if states is None else states
    records = ctx.records if records is None else records
    spec = AttackSpec.of(attack)
    by_spec = {(spec, pid): st for pid, st in states.items()}
    if isinstance(attack, SearchAttack):
        t = target or DeterministicTarget(ctx.prompts)
        out: list[Perturbed] = []
        search = SearchContext(spec, "kit", ctx.seed, ctx.prompts, by_spec, task=ctx.task, raise_errors=True)
        for r in records:
            found, _, _ = search_one(search, r, t, None, ctx.res)
            out.extend(ex for ex, _ in found)
        return out
    if not isinstance(attack, (StaticAttack, PromptGenerator)):
        raise AttackCheckError(f"{attack.name}: not a StaticAttack, SearchAttack or PromptGenerator")
    gen = Generation([spec], ctx.prompts, seed=ctx.seed, res=ctx.res, chunk_size=max(1, len(records)),
                     failures="raise")
    gen.states = by_spec
    if isinstance(attack, PromptGenerator):
        pids = {getattr(r, "prompt_id", None) for r in records} - {None}
        return [ex for chunk in gen.generator_chunks(prompt_ids=pids) for ex in chunk.examples]
    return [ex for chunk in gen.record_chunks(records, ahead=False) for ex in chunk.examples]


def _fresh(attack: Attack, **override: Any) -> Attack:
    return type(attack)(**{**attack.params_dict, **override})


def _bytes(examples: Sequence[Perturbed]) -> dict[str, str]:
    out: dict[str, str] = {}
    for ex in examples:
        if ex.id in out:
            raise AttackCheckError(f"{ex.attack}: two examples share the id {ex.id}; number them with index=")
        out[ex.id] = json.dumps(ex.to_dict(), sort_keys=True, default=repr)
    return out


def _fail(attack: Attack, check: str, message: str) -> AttackCheckError:
    return AttackCheckError(f"{attack.name} fails {check}: {message}")


# -- the checks ------------------------------------------------------------------------------------------

def check_declaration(attack: Attack, ctx: _Context) -> None:
    """Class attributes follow the contract: kind, Params base, expect, requires, record_type."""
    try:
        validate_attack_class(type(attack))
    except TypeError as e:
        raise _fail(attack, "check_declaration", str(e)) from None


def check_requirements_installed(attack: Attack, ctx: _Context) -> None:
    """Everything in ``requires`` is usable here (else the other checks cannot run)."""
    problems = check_requirements(attack.requires)
    if problems:
        raise _fail(attack, "check_requirements_installed", "; ".join(problems))


def check_docstring_cites_section(attack: Attack, ctx: _Context) -> None:
    """The class docstring cites the paper section (or table, algorithm) it implements."""
    doc = type(attack).__doc__ or ""
    if not CITATION.search(doc):
        raise _fail(attack, "check_docstring_cites_section", "the class docstring must cite where the attack "
                    "comes from, e.g. 'Kumar et al. 2020, Sec. 3.2' or 'Table 1'")


def check_makes_examples(attack: Attack, ctx: _Context) -> None:
    """The attack makes at least one example from the records given (otherwise nothing below is tested)."""
    if not _run(attack, ctx):
        raise _fail(attack, "check_makes_examples", f"no example from the {len(ctx.records)} records given; "
                    "pass records= (and prompts=) it applies to")


def check_params_round_trip(attack: Attack, ctx: _Context) -> None:
    """``Params(**params_dict) == params``; a rebuilt attack makes examples with the same ids and params."""
    d = attack.params_dict
    if json.loads(json.dumps(d)) != d:
        raise _fail(attack, "check_params_round_trip", f"params_dict {d} is not plain JSON")
    if type(attack).Params(**d) != attack.params:
        raise _fail(attack, "check_params_round_trip", f"Params(**{d}) != {attack.params!r}")
    first, again = _run(attack, ctx), _run(_fresh(attack), ctx)
    if [e.id for e in first] != [e.id for e in again]:
        raise _fail(attack, "check_params_round_trip", "a rebuilt attack with the same params makes other ids")
    for ex in first:
        if dict(ex.params) != d or ex.attack != attack.name:
            raise _fail(attack, "check_params_round_trip", f"example {ex.id} carries attack={ex.attack!r} "
                        f"params={dict(ex.params)}; build examples with self.perturbed(...) / self.generated(...)")


def check_deterministic(attack: Attack, ctx: _Context) -> None:
    """Same seed, same bytes (fresh instances; no global random state)."""
    a, b = _bytes(_run(_fresh(attack), ctx)), _bytes(_run(_fresh(attack), ctx))
    if a != b:
        diff = next((k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)), "?")
        raise _fail(attack, "check_deterministic", f"two runs with the same seed differ (example {diff}); draw "
                    "every random choice from the rng argument, never from random / np.random globals")


def check_order_and_chunking(attack: Attack, ctx: _Context) -> None:
    """Records in reverse order, or split in two chunks run by separate instances, give the same examples."""
    base = _bytes(_run(_fresh(attack), ctx))
    states = _fit(attack, ctx)
    reverse = _bytes(_run(_fresh(attack), ctx, list(reversed(ctx.records)), states))
    half = len(ctx.records) // 2
    chunks = {**_bytes(_run(_fresh(attack), ctx, ctx.records[:half], states)),
              **_bytes(_run(_fresh(attack), ctx, ctx.records[half:], states))}
    if isinstance(attack, PromptGenerator):
        count = attack.params.count
        cut = max(1, count // 3)
        chunks = {}
        for pid in sorted({getattr(r, "prompt_id", None) for r in ctx.records} - {None}):
            p = ctx.prompts[pid]
            for lo, hi in ((0, cut), (cut, count)):
                chunks.update(_bytes(_fresh(attack).examples_for(p, states.get(pid), ctx.seed, ctx.res, lo, hi)))
    for label, other in (("in reverse order", reverse), ("in two chunks", chunks)):
        if other != base:
            diff = next((k for k in sorted(set(base) | set(other)) if base.get(k) != other.get(k)), "?")
            raise _fail(attack, "check_order_and_chunking", f"records {label} give different examples (first: "
                        f"{diff}); an example may depend only on its record, its prompt, the fit state and the seed")


def check_meta_json(attack: Attack, ctx: _Context) -> None:
    """``meta`` is plain JSON (str keys; str, numbers, bools, None, lists, dicts) and survives a round trip."""
    for ex in _run(attack, ctx):
        try:
            text = json.dumps(dict(ex.meta), allow_nan=False)
        except (TypeError, ValueError) as e:
            raise _fail(attack, "check_meta_json", f"example {ex.id}: meta is not JSON ({e})") from None
        if json.loads(text) != dict(ex.meta):
            raise _fail(attack, "check_meta_json", f"example {ex.id}: meta changes in a JSON round trip (tuples, "
                        "non-str keys or numpy numbers?); store lists, str keys and Python numbers")


def check_pickles(attack: Attack, ctx: _Context) -> None:
    """The attack pickles (workers get a copy) and the copy makes the same bytes."""
    try:
        copy_ = pickle.loads(pickle.dumps(attack))
    except Exception as e:  # noqa: BLE001 - reported as the failure
        raise _fail(attack, "check_pickles", f"the attack does not pickle ({type(e).__name__}: {e})") from None
    if _bytes(_run(copy_, ctx)) != _bytes(_run(attack, ctx)):
        raise _fail(attack, "check_pickles", "an unpickled copy makes different examples")


def check_fit_state(attack: Attack, ctx: _Context) -> None:
    """(Attacks that fit.) Fit states pickle, their hash is stable, fitting twice gives the same hash, and it
    is every example's ``meta["fit_state"]``."""
    states = _fit(attack, ctx)
    for pid, state in states.items():
        try:
            back = pickle.loads(pickle.dumps(state))
        except Exception as e:  # noqa: BLE001
            raise _fail(attack, "check_fit_state", f"fit state of prompt {pid} does not pickle ({e})") from None
        if state_hash(back) != state_hash(state):
            raise _fail(attack, "check_fit_state", f"fit state of prompt {pid} hashes differently after pickling")
        if state_hash(attack.fit(*_fit_args(ctx, pid, attack))) != state_hash(state):
            raise _fail(attack, "check_fit_state", f"fit on prompt {pid} is not deterministic")
    for ex in _run(attack, ctx, states=states):
        pid = ex.prompt_id
        if ex.meta.get("fit_state") != state_hash(states.get(pid)):
            raise _fail(attack, "check_fit_state", f"example {ex.id}: meta['fit_state'] is "
                        f"{ex.meta.get('fit_state')!r}, expected the state's hash {state_hash(states.get(pid))}")


def _fit_args(ctx: _Context, pid: str | None, attack: Attack) -> tuple[list[Record], Prompt | None, Resources]:
    recs = _groups(ctx.records, ctx.prompts).get(pid, [])
    return recs, ctx.prompts.get(pid) if pid else None, ctx.res


def check_not_applicable(attack: Attack, ctx: _Context) -> None:
    """A record of another type is refused with a TypeError; a record the attack does not apply to gives []."""
    if isinstance(attack, PromptGenerator):
        wrong = Prompt("kit-wrong-task", next(t.name for t in all_tasks() if not attack.serves(t.name)))
        try:
            attack.examples_for(wrong, None if not attack.needs_fit else object(), ctx.seed, ctx.res)
        except TypeError:
            return
        raise _fail(attack, "check_not_applicable", "examples_for accepted a prompt of another task")
    other = _other_type_record(attack)
    try:
        _run(attack, ctx, [other], states={})
    except TypeError:
        pass
    except Exception as e:  # noqa: BLE001 - reported as the failure
        raise _fail(attack, "check_not_applicable", f"a {type(other).__name__} record raised {type(e).__name__}: "
                    f"{e} instead of the TypeError of check_record; let examples() check the record type") from None
    else:
        raise _fail(attack, "check_not_applicable", f"accepted a {type(other).__name__}; let examples() check the "
                    "record type (do not override it)")
    states = _fit(attack, ctx)
    for r in ctx.records:
        if not attack.applies_to(r, _prompt_of(r, ctx.prompts)):
            got = _run(attack, ctx, [r], states)
            if got:
                raise _fail(attack, "check_not_applicable", f"record {r.id}: applies_to is False but {len(got)} "
                            "examples were made")


def check_sources_unchanged(attack: Attack, ctx: _Context) -> None:
    """Running the attack modifies no source record (nor its meta) and no prompt."""
    _run(attack, ctx)
    if ctx.dump() != ctx.snapshot:  # taken when the checks were set up, before any of them ran
        raise _fail(attack, "check_sources_unchanged", "a source record or prompt was modified; copy before editing")


def check_examples_differ_from_source(attack: Attack, ctx: _Context) -> None:
    """Every example's text differs from the source field it replaces (generators: a non-blank text)."""
    by_id = {r.id: r for r in ctx.records}
    for ex in _run(attack, ctx):
        if not isinstance(ex.text, str) or not ex.text.strip():
            raise _fail(attack, "check_examples_differ_from_source", f"example {ex.id} has a blank text")
        if isinstance(attack, PromptGenerator):
            continue
        src = by_id.get(ex.source_id)
        if src is None:
            raise _fail(attack, "check_examples_differ_from_source", f"example {ex.id}: unknown source {ex.source_id}")
        if not hasattr(src, ex.field):
            raise _fail(attack, "check_examples_differ_from_source", f"example {ex.id}: field {ex.field!r} is not a "
                        f"field of {type(src).__name__}")
        if getattr(src, ex.field) == ex.text:
            raise _fail(attack, "check_examples_differ_from_source", f"example {ex.id} equals its source; return "
                        "no example when nothing can change")


def check_search_budget(attack: Attack, ctx: _Context) -> None:
    """(Search attacks.) Never makes the target answer more than ``query_budget`` inputs per record (counted
    on the target's side) and reports what it spent through the oracle."""
    for budget in sorted({1, 3, int(attack.params.query_budget)}):
        small = _fresh(attack, query_budget=budget)
        states = _fit(small, ctx)
        for r in ctx.records:
            target = DeterministicTarget(ctx.prompts)
            _run(small, ctx, [r], states, target=target)
            if target.inputs > budget:
                raise _fail(attack, "check_search_budget", f"record {r.id}: the target answered {target.inputs} "
                            f"inputs with query_budget={budget}; ask only through oracle.ask")


def check_generator_count(attack: Attack, ctx: _Context) -> None:
    """(Prompt generators.) At most ``count`` answers per prompt, each ``prompt:<id>`` with a distinct index
    in ``[0, count)`` and non-blank text."""
    count = attack.params.count
    states = _fit(attack, ctx)
    for pid in sorted({getattr(r, "prompt_id", None) for r in ctx.records} - {None}):
        got = attack.examples_for(ctx.prompts[pid], states.get(pid), ctx.seed, ctx.res)
        idx = [e.index for e in got]
        if len(got) > count or len(set(idx)) != len(idx) or any(not 0 <= i < count for i in idx):
            raise _fail(attack, "check_generator_count", f"prompt {pid}: {len(got)} answers with indices {idx[:10]}"
                        f"... for count={count}")
        for e in got:
            if e.source_id != f"prompt:{pid}" or e.prompt_id != pid or not e.text.strip():
                raise _fail(attack, "check_generator_count", f"answer {e.id}: source_id {e.source_id!r}, prompt_id "
                            f"{e.prompt_id!r}, text {e.text[:30]!r}; build it with self.generated(prompt, text, i)")


# -- which checks an attack gets (by kind and declared capabilities) -------------------------------------

Check = Callable[[Attack, _Context], None]

COMMON_CHECKS: tuple[Check, ...] = (
    check_declaration, check_requirements_installed, check_docstring_cites_section, check_makes_examples,
    check_params_round_trip, check_deterministic, check_order_and_chunking, check_meta_json, check_pickles,
    check_not_applicable, check_sources_unchanged, check_examples_differ_from_source,
)
"""The checks every attack gets, whatever its kind (in the order :func:`check_attack` runs them)."""

FIT_CHECKS: tuple[Check, ...] = (check_fit_state,)
"""The checks of attacks that declare ``needs_fit`` (every prompt generator does)."""

SEARCH_CHECKS: tuple[Check, ...] = (check_search_budget,)
"""The checks of search attacks (:class:`~callbluff.attacks.base.SearchAttack`)."""

GENERATOR_CHECKS: tuple[Check, ...] = (check_generator_count,)
"""The checks of prompt-level generators (:class:`~callbluff.attacks.base.PromptGenerator`)."""

CHECKS: tuple[Check, ...] = COMMON_CHECKS + FIT_CHECKS + SEARCH_CHECKS + GENERATOR_CHECKS
"""Every check of the kit; an attack gets the ones :func:`yield_checks` yields for it."""


def yield_checks(attack: Attack) -> Iterator[Check]:
    """The checks that apply to ``attack``: the common ones, then those of its declared capabilities
    (``needs_fit``) and of its kind (search, prompt generator), as scikit-learn's ``_yield_all_checks``
    yields by estimator kind. A check that cannot apply is never yielded, so no check passes by returning
    early; a check that applies but that the attack legitimately cannot pass belongs in ``expected_failures``
    (see :func:`parametrize_attack_checks`)."""
    yield from COMMON_CHECKS
    if attack.needs_fit:
        yield from FIT_CHECKS
    if isinstance(attack, SearchAttack):
        yield from SEARCH_CHECKS
    if isinstance(attack, PromptGenerator):
        yield from GENERATOR_CHECKS


def _instance(attack: Attack | type[Attack]) -> Attack:
    return attack() if isinstance(attack, type) else attack


def attack_checks(attack: Attack | type[Attack], records: Sequence[Record] | None = None,
                  prompts: Mapping[str, Prompt] | None = None, seed: int = 0,
                  res: Resources | None = None) -> Iterator[tuple[str, Callable[[], None]]]:
    """``(check name, check)`` pairs for ``attack`` (a class is built with its default params), one for each
    check that applies to it (:func:`yield_checks`); each check raises :class:`AttackCheckError` naming what
    is wrong. ``records`` / ``prompts`` default to the kit's hand-made records of each task the attack serves (a
    check then runs on each task's records in turn)."""
    inst = _instance(attack)
    shared = res or default_resources()
    if records is None:
        contexts = []
        for name in inst.served():
            task_records, default_prompts = default_records(name)
            contexts.append(_Context(list(task_records), {**default_prompts, **(prompts or {})}, seed, shared, name))
    else:
        contexts = [_Context(list(records), dict(prompts or {}), seed, shared)]
    for check in yield_checks(inst):
        yield check.__name__, partial(_on_each, check, inst, contexts)


def _on_each(check: Callable[[Attack, _Context], None], attack: Attack, contexts: Sequence[_Context]) -> None:
    """``check`` on each of ``contexts`` in turn (the hand-made records of each task the attack serves)."""
    for ctx in contexts:
        check(attack, ctx)


ExpectedFailures = Mapping[str, Mapping[str, str]]
"""``{attack name: {check name: reason}}``: checks an attack is known to fail, and why."""


def _expected(attacks: Sequence[Attack], expected_failures: ExpectedFailures | None) -> dict[str, dict[str, str]]:
    """``expected_failures`` validated against ``attacks``: every attack it names is among them and every
    check it names is one that attack gets, so a stale or misspelt entry is an error, not a silent no-op."""
    out = {name: dict(checks) for name, checks in (expected_failures or {}).items()}
    by_name = {a.name: a for a in attacks}
    for name, checks in out.items():
        if name not in by_name:
            raise ValueError(f"expected_failures names attack {name!r}, which is not among the attacks checked "
                             f"({', '.join(sorted(by_name)) or 'none'})")
        applicable = {c.__name__ for c in yield_checks(by_name[name])}
        for check, reason in checks.items():
            if check not in applicable:
                raise ValueError(f"expected_failures[{name!r}] names {check!r}, which is not run on {name} "
                                 f"(its checks: {', '.join(c.__name__ for c in yield_checks(by_name[name]))})")
            if not isinstance(reason, str) or not reason.strip():
                raise ValueError(f"expected_failures[{name!r}][{check!r}]: give the reason as a non-empty string")
    return out


def check_attack(attack: Attack | type[Attack], records: Sequence[Record] | None = None,
                 prompts: Mapping[str, Prompt] | None = None, seed: int = 0, *,
                 expected_failures: ExpectedFailures | None = None) -> None:
    """Run every check that applies to ``attack``; raises :class:`AttackCheckError` at the first failure.

    ``expected_failures`` (``{attack name: {check name: reason}}``) lists checks the attack is known to fail
    and why: each of those must raise :class:`AttackCheckError`, and one that passes is itself a failure
    (remove the entry), like a strict ``xfail``."""
    inst = _instance(attack)
    expected = _expected([inst], expected_failures).get(inst.name, {})
    for name, check in attack_checks(inst, records, prompts, seed):
        if name not in expected:
            check()
            continue
        try:
            check()
        except AttackCheckError:
            continue
        raise AttackCheckError(f"{inst.name} passes {name}, listed in expected_failures ({expected[name]}); "
                               "remove the entry")


def parametrize_attack_checks(attacks: Sequence[Attack | type[Attack]], records: Sequence[Record] | None = None,
                              prompts: Mapping[str, Prompt] | None = None, seed: int = 0, *,
                              expected_failures: ExpectedFailures | None = None) -> Any:
    """A ``pytest.mark.parametrize("attack, check", ...)`` over every (attack, check that applies to it)
    pair, ids ``<Attack>-<check>``; the test body is ``check(attack)``.

    ``expected_failures`` (``{attack name: {check name: reason}}``) marks those cases
    ``xfail(strict=True, raises=AttackCheckError, reason=...)``: the test fails if the check starts passing,
    or if it fails by any error other than the kit's. Naming an attack not in ``attacks``, or a check that
    attack does not get, raises ``ValueError``."""
    import pytest

    insts = [_instance(a) for a in attacks]
    expected = _expected(insts, expected_failures)
    params, ids = [], []
    for inst in insts:
        for name, check in attack_checks(inst, records, prompts, seed):
            reason = expected.get(inst.name, {}).get(name)
            marks = [pytest.mark.xfail(strict=True, raises=AttackCheckError, reason=reason)] if reason else []
            params.append(pytest.param(inst, _Bound(check), marks=marks))
            ids.append(f"{inst.name}-{name}")
    return pytest.mark.parametrize("attack, check", params, ids=ids)


@dataclass
class _Bound:
    """A check already bound to its attack; ``check(attack)`` runs it (the pytest idiom of scikit-learn)."""

    run: Callable[[], None]

    def __call__(self, attack: Attack | None = None) -> None:
        self.run()
