"""The targets' identity, pre-flight and provenance: the :class:`TargetWatch` the engine holds makes a
target's identity part of every chunk's fingerprint (a changed model is asked again), sends each target one call
before any chunk (a dead server is one message, not thousands of error rows) and says which predictions a run
reused and from when (run.json ``predictions``, the terminal's "reused N predictions" line)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from itertools import islice
from typing import Any

from callbluff.engine.chunk_id import ChunkId
from callbluff.engine.manifest import version_of
from callbluff.engine.store import RunDir
from callbluff.engine.suite import Suite
from callbluff.records import Record, canonical_json
from callbluff.tasks import get_task
from callbluff.terminal import reuse_sentence
from callbluff.targets.base import TargetUnavailable
from callbluff.targets.wrappers import CachedTarget, Reused


class TargetWatch:
    """One run's watch over its targets: their identity in every chunk's fingerprint (:meth:`identify`), the
    pre-flight (:meth:`preflight`, once per run) and what the run reused (:meth:`reused_chunk`,
    :meth:`provenance`). What it finds worth saying goes to ``notes`` (the run's list, shared)."""

    def __init__(self, run: RunDir, suite: Suite, *, fingerprint: str, notes: list[str] | None = None) -> None:
        self.run = run
        self.suite = suite
        self.fingerprint = fingerprint
        self.notes = notes if notes is not None else []
        self.reused: dict[str, Reused] = {}
        self.preflown = False

    def identify(self, targets: dict[str, CachedTarget], previous: dict[str, Any] | None) -> None:
        """Make the targets' identities part of every chunk's fingerprint, so that a chunk finished with another
        version of a target is recomputed (its predictions asked again: the cache is keyed by the identity), and
        say which target changed since the directory's last run."""
        fps = {name: t.fingerprint for name, t in sorted(targets.items())}
        self.run.fingerprint = hashlib.sha256(
            canonical_json([self.fingerprint, fps]).encode()).hexdigest()[:16]
        old = {n: t for n, t in ((previous or {}).get("targets") or {}).items() if isinstance(t, dict)}
        before = {n: t.get("fingerprint") for n, t in old.items()}
        for name, fp in fps.items():
            if name in before and before[name] != fp:
                was, now = old[name].get("version"), version_of(targets[name])
                named = (f"; version {was} -> {now}" if was and now and was != now else
                         f"; now version {now}" if now else "")
                self.notes.append(f"target {name} changed since this directory's last run (identity {before[name]} "
                                  f"-> {fp}{named}): its predictions are asked again, none is reused from the old one")
        self.reused = {name: Reused() for name in targets}

    def preflight(self, task: str, records: Iterable[Record], targets: dict[str, CachedTarget]) -> None:
        """Each target answers one of ``PREFLIGHT`` inputs (:func:`preflight_records` of ``records``: the run's, or those of
        the first chunk to run on a resume) in one call before any chunk (answers are cached, so the chunk does not ask them
        again), or, when it answers none, in a second call of the same inputs (a command that fails its first
        inputs while it warms up answers that one), or the run stops with the cause: a dead server, a wrong URL,
        an expired token or a crashing command is one message, not thousands of error rows. Once per run;
        ``output.preflight = false`` turns it off (the stop message says so)."""
        if self.preflown or not self.suite.output.preflight:
            return
        self.preflown = True
        first = preflight_records(records)
        if not first:
            return
        descriptor = get_task(task)
        inputs = [descriptor.original_input(r) for r in first]
        for name, t in targets.items():
            cause = t.preflight(inputs)
            if cause is not None:  # once more: a target warming up (a command loading its model) answers later
                cause = t.preflight(inputs)
            if cause is not None:
                ids = ", ".join(r.id for r in first)
                raise TargetUnavailable(
                    f"target {name} did not answer its first call (record{'s' if len(first) > 1 else ''} {ids}), "
                    f"nor the same inputs asked again: {cause}. The run stopped before any chunk; fix the target "
                    "or its settings (url, headers, argv, model path) and run again, or, for a target that needs "
                    "more inputs than that to warm up, turn this check off with `preflight = false` under "
                    "[output] in the suite")

    def reused_chunk(self, idx: ChunkId) -> None:
        """A finished chunk skipped on resume: its valid predictions were made by an earlier run."""
        made = self.run.chunk_status(idx).get("made")
        for name, m in (made or {}).items() if isinstance(made, dict) else ():
            if name in self.reused and isinstance(m, dict):
                self.reused[name].add(int(m.get("answers") or 0), m.get("first"), m.get("last"))

    def provenance(self, targets: dict[str, CachedTarget]) -> dict[str, dict[str, Any]]:
        """run.json ``predictions``: per target, how many predictions were reused (from the cache, or in finished
        chunks of an earlier run) and when they were made, how many inputs were asked now, and the circuit
        breaker's message when it stopped the target."""
        out: dict[str, dict[str, Any]] = {}
        for name, t in targets.items():
            r = Reused()
            r.add(t.reused.n, t.reused.first, t.reused.last)
            r.add(self.reused[name].n, self.reused[name].first, self.reused[name].last)
            out[name] = {"reused": r.n, "reused_first": r.first, "reused_last": r.last, "asked": t.stats.inputs,
                         **({"stopped": t.stopped} if t.stopped else {})}
            out[name]["line"] = reuse_sentence(None, out[name])
        return out


PREFLIGHT = 3
"""Inputs the pre-flight sends each target (in one call): it stops the run only when all of them fail."""
PREFLIGHT_SCAN = 10_000
"""Records the pre-flight looks through for inputs of different prompts."""


def preflight_records(records: Iterable[Record]) -> list[Record]:
    """The pre-flight's records: the first record of each of the first ``PREFLIGHT`` prompts among the first
    ``PREFLIGHT_SCAN`` records (a per-prompt scorer without a model for the first prompt still answers another),
    filled up with the first records when there are fewer prompts."""
    chosen: dict[Any, Record] = {}
    head: list[Record] = []
    for r in islice(iter(records), PREFLIGHT_SCAN):
        if len(head) < PREFLIGHT:
            head.append(r)
        chosen.setdefault(getattr(r, "prompt_id", None), r)
        if len(chosen) == PREFLIGHT:
            break
    picked = list(chosen.values())
    picked += [r for r in head if all(r is not p for p in picked)][:PREFLIGHT - len(picked)]
    return picked
