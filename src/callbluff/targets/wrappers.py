"""Target wrappers: the prediction cache in front of any target (DESIGN.md "Target": "Wrappers add batching,
retries, timeouts and the SQLite prediction cache").

:class:`CachedTarget` is what the engine and model-in-the-loop attacks talk to. It answers from the cache what it
can, sends only the misses to the wrapped target (in batches of ``batch_size``, duplicates within a call sent
once), checks every output (:class:`~callbluff.targets.validate.OutputCheck`: declared kind, the prompt's scale,
secrets scrubbed) and shields callers from badly behaved targets: an exception, a ``sys.exit(n)`` or a wrong number of outputs
from the wrapped target becomes an error output per input, never a crash.

Durability: a prediction the target has returned is committed to SQLite *before the next call to that
target is sent*, so a run killed at any moment repeats at most the calls that were in flight:

* a target with ``predict_stream(inputs, emit)`` (HTTP, command) hands over each output as it arrives and it is
  committed at once, inside ``emit``: a kill repeats at most ``concurrency`` HTTP requests (one batch request
  each in batch mode) or one command round trip;
* any other target returns a whole batch, committed in one transaction before the next batch is sent: a kill
  repeats at most one batch.

Only valid outputs are cached (errors never are, so a later run retries them). The key of an input is the wrapped
target's ``cache_key(inp)`` when it defines one (a chat grader's: model + rendered messages + sampling settings,
so a changed rubric is asked again), else :meth:`Input.key`. Commits use WAL with
``synchronous = NORMAL``: a committed prediction survives the process being killed.

Provenance: every answer read from the cache comes with the time it was stored; those stored before this
wrapper was made (an earlier run's) are counted as reused, with the earliest and latest of their times
(:attr:`CachedTarget.reused`), so a run can say how much of what it reports was not asked now.

Circuit breaker: after ``max_consecutive_failures`` failed predictions in a row (counted as the target's outputs
arrive; cache hits and output-check refusals do not count, and any valid output resets the count) the wrapper
stops asking the target: every input still to predict becomes an error row naming the breaker and the last
cause, and is not cached, so a later run asks it again. A streak within one prompt of a target that has answered
before stops that prompt only (a per-prompt scorer without a model for it); a streak across prompts, or of a
target that never answered, stops the target. A batch already sent finishes first; while the target is failing,
batches are cut to the failures still allowed, so at most one batch runs past the bound.

Thread safety: several threads may call :meth:`predict` at once (concurrent model-in-the-loop searches); the
cache gives each thread its own SQLite connection and statistics are updated under a lock. The wrapped target
must itself be safe to call from several threads if it is used that way (HTTP and command targets are).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import islice
from typing import Any, Self

from callbluff.iterutil import chunked  # noqa: F401  (re-exported: callbluff.targets.chunked)
from callbluff.targets._common import TARGET_FAILURES, raised_cause
from callbluff.targets.base import Input, Output, Target, TargetStats
from callbluff.targets.cache import CacheWriteError, PredictionCache

Check = Callable[[Input, Output], Output]


def inner_usage(target: Any) -> dict[str, Any] | None:
    """The ``stats.usage`` dict of ``target`` or of the target it wraps (following ``.target``), if any."""
    seen = 0
    while target is not None and seen < 16:
        usage = getattr(getattr(target, "stats", None), "usage", None)
        if isinstance(usage, dict):
            return usage
        target, seen = getattr(target, "target", None), seen + 1
    return None


class Reused:
    """A count of answers with the earliest and latest time they were made (seconds since the epoch)."""

    __slots__ = ("n", "first", "last")

    def __init__(self, n: int = 0, first: float | None = None, last: float | None = None) -> None:
        self.n, self.first, self.last = n, first, last

    def add(self, n: int, first: float | None, last: float | None) -> None:
        if n <= 0 or first is None or last is None:
            return
        self.n += n
        self.first = first if self.first is None else min(self.first, first)
        self.last = last if self.last is None else max(self.last, last)

    def to_dict(self) -> dict[str, Any]:
        return {"n": self.n, "first": self.first, "last": self.last}


class CachedTarget:
    """``target`` behind ``cache``, every output passed through ``check`` (when given).

    ``stats`` counts, for this wrapper: ``calls`` (``predict`` calls made on the wrapped target; one per batch,
    or one per input for streaming targets), ``inputs`` (inputs sent to it, i.e. cache misses), ``seconds``
    (time inside it), ``errors`` (error outputs returned to callers) and ``cache_hits`` (inputs answered from
    the cache, including duplicates within one call). ``fingerprint`` (the cache's namespace) is the wrapped
    target's unless given (:func:`callbluff.engine.plan.cache_behind_filter`).
    """

    def __init__(self, target: Target, cache: PredictionCache | None, batch_size: int = 32,
                 *, check: Check | None = None, max_consecutive_failures: int = 0,
                 fingerprint: str | None = None) -> None:
        if batch_size < 1:
            raise ValueError(f"CachedTarget: batch_size must be >= 1, got {batch_size}")
        self.target = target
        self.cache = cache
        self.batch_size = int(batch_size)
        self.check = check
        self.fingerprint: str = target.fingerprint if fingerprint is None else fingerprint
        self.stats = TargetStats()
        usage = inner_usage(target)
        if usage is not None:  # the wrapped target's own accounting (a chat grader's tokens) reaches run.json
            self.stats.usage = usage
        self._lock = threading.Lock()
        self._streaming = callable(getattr(target, "predict_stream", None))
        key = getattr(target, "cache_key", None)
        self._key: Callable[[Input], str] = key if callable(key) else Input.key
        self.max_consecutive_failures = max(0, int(max_consecutive_failures))
        self.stopped: str | None = None  # why the breaker stopped the target (None: it runs)
        self.stopped_prompts: dict[str | None, str] = {}  # prompts the breaker stopped alone, with why
        self._streak = 0
        self._streak_prompts: set[str | None] = set()
        self._answered = False
        self._answers = 0  # valid outputs the wrapped target returned (before the output check)
        self._last_cause = ""
        self.since = time.time()  # answers stored before this are reused from an earlier run
        self.reused = Reused()
        self._window = Reused()  # every valid answer since the last take_window(): for chunk statuses

    @property
    def name(self) -> str:
        return str(getattr(self.target, "name", self.fingerprint))

    @property
    def cache_key(self) -> Any:
        """The wrapped target's ``cache_key`` (a chat grader's request identity), so a wrapper above this one keys
        its own cache the same way; AttributeError when it has none."""
        return self.target.cache_key

    def add_counts(self, counts: Mapping[str, float]) -> None:
        """Add the counters of a copy of this wrapper that ran elsewhere (a Ray search task: ``calls``,
        ``inputs``, ``seconds``, ``errors``, ``cache_hits`` and the check's ``clipped``) to this one's."""
        with self._lock:
            for k in ("calls", "inputs", "seconds", "errors", "cache_hits"):
                setattr(self.stats, k, getattr(self.stats, k) + counts[k])
            if self.check is not None:
                self.check.clipped += int(counts.get("clipped", 0))

    def __repr__(self) -> str:
        return f"CachedTarget({self.target!r}, cache={self.cache!r}, batch_size={self.batch_size})"

    def bind_prompts(self, prompts: Mapping[str, Any]) -> None:
        """Hand the dataset's prompts to the wrapped target (a chat grader renders them into its messages)."""
        bind = getattr(self.target, "bind_prompts", None)
        if callable(bind):
            bind(prompts)

    def to_config(self) -> dict[str, Any]:
        inner = getattr(self.target, "to_config", None)
        return inner() if callable(inner) else {"type": type(self.target).__name__, "fingerprint": self.fingerprint}

    def take_window(self) -> dict[str, Any]:
        """The valid answers returned since the last call (how many, and the earliest and latest time each was
        made: stored in the cache, or asked now), and start a new window: a chunk's status keeps this, so a
        later run that skips the finished chunk can say its predictions are reused and from when."""
        with self._lock:
            w, self._window = self._window, Reused()
        return w.to_dict()

    def _failed(self, inp: Input, raw: Output) -> None:
        """Count one output of the wrapped target for the circuit breaker (under the lock). At the bound, a
        streak within one prompt of a target that has answered before stops that prompt alone (a scorer with no
        model for it, a filter that does not know it: the other prompts still get asked); a streak across
        prompts, or of a target that never answered, stops the target."""
        if raw.error is None:
            self._streak = 0
            self._streak_prompts.clear()
            self._answered = True
            self._answers += 1
            return
        self._streak += 1
        self._streak_prompts.add(inp.prompt_id)
        scrub = getattr(self.check, "scrub", None)  # the cause is quoted in the breaker's and pre-flight's messages
        self._last_cause = scrub(raw.error) if callable(scrub) else raw.error
        n = self.max_consecutive_failures
        if not n or self._streak < n or self.stopped is not None:
            return
        if len(self._streak_prompts) == 1 and self._answered:
            [pid] = self._streak_prompts
            if pid not in self.stopped_prompts:
                self.stopped_prompts[pid] = (
                    f"not asked: target {self.name} was stopped for prompt {pid} after {n} failed predictions in "
                    f"a row there (max_consecutive_failures = {n}); last cause: {self._last_cause}")
            return
        self.stopped = (f"not asked: target {self.name} was stopped after {n} failed predictions in a row "
                        f"(max_consecutive_failures = {n}); last cause: {self._last_cause}")

    def _allowance(self) -> int:
        """How many inputs the next call may take: a full batch, or while the target is failing, the failures
        the breaker still allows (so a dead target is not sent a whole batch more)."""
        n = self.max_consecutive_failures
        if not n or not self._streak:
            return self.batch_size
        return max(1, min(self.batch_size, n - self._streak))

    # -- the wrapped target ---------------------------------------------------------------------------------
    def _checked(self, inp: Input, out: Any) -> Output:
        if not isinstance(out, Output):
            return Output(error=f"target returned {type(out).__name__}, not Output")
        return self.check(inp, out) if self.check is not None else out

    def _storable(self, raw: Any) -> Output:
        """What goes in the cache for a valid output: as the target gave it (unclipped), secrets scrubbed."""
        scrub = getattr(self.check, "scrub_output", None)
        return scrub(raw) if scrub is not None else raw

    def _call(self, batch: Sequence[Input]) -> list[tuple[Output, Output]]:
        t0 = time.perf_counter()
        try:
            outs = list(self.target.predict(list(batch)))
        except TARGET_FAILURES as exc:  # a target that raises (or calls sys.exit) must not end the run
            outs = [Output(error=raised_cause(exc))] * len(batch)
        finally:
            with self._lock:
                self.stats.calls += 1
                self.stats.inputs += len(batch)
                self.stats.seconds += time.perf_counter() - t0
        if len(outs) != len(batch):
            outs = [Output(error=f"target returned {len(outs)} outputs for {len(batch)} inputs")] * len(batch)
        with self._lock:
            for i, o in zip(batch, outs):
                self._failed(i, o if isinstance(o, Output) else Output(error="not an Output"))
        return [(o, self._checked(i, o)) for i, o in zip(batch, outs)]

    def _call_stream(self, keys: Sequence[str], batch: Sequence[Input], found: dict[str, Output]) -> None:
        """Stream ``batch`` through the target, committing each valid output the moment it arrives."""
        got: dict[int, Output] = {}
        cache_failed: list[CacheWriteError] = []  # the machine's I/O: re-raised below, never an error row

        def emit(i: int, out: Output) -> None:
            if i in got or not 0 <= i < len(batch):
                return
            checked = self._checked(batch[i], out)
            with self._lock:
                self._failed(batch[i], out if isinstance(out, Output) else Output(error="not an Output"))
            if checked.error is None and self.cache is not None:
                try:
                    self.cache.put_many(self.fingerprint, [(keys[i], self._storable(out))])
                except CacheWriteError as e:
                    cache_failed.append(e)
                    raise
            got[i] = checked

        t0 = time.perf_counter()
        try:
            self.target.predict_stream(list(batch), emit)  # type: ignore[attr-defined]
        except TARGET_FAILURES as exc:  # a target that raises (or calls sys.exit) must not end the run
            cause = raised_cause(exc)
            for i in range(len(batch)):
                got.setdefault(i, Output(error=cause))
        finally:
            with self._lock:
                self.stats.calls += len(batch)
                self.stats.inputs += len(batch)
                self.stats.seconds += time.perf_counter() - t0
        if cache_failed:
            raise cache_failed[0]
        for i, k in enumerate(keys):
            if i not in got:
                got[i] = Output(error="target returned no output for this input")
                with self._lock:
                    self._failed(batch[i], got[i])
            found[k] = got[i]

    # -- public ---------------------------------------------------------------------------------------------
    def predict(self, inputs: Sequence[Input]) -> list[Output]:
        """One output per input, in input order: cached where possible, predicted (and cached) otherwise."""
        keys = [self._key(i) for i in inputs]  # the target's cache_key(inp) when it has one, else Input.key
        found: dict[str, Output] = {}
        if self.cache is not None and keys:
            cached = self.cache.get_many_dated(self.fingerprint, keys)
            if cached:
                by_key = dict(zip(keys, inputs))
                found = {k: self._checked(by_key[k], o) for k, (o, _) in cached.items()}
                self._dated(keys, cached, found)
        todo: dict[str, Input] = {}  # first occurrence of each missing key; later duplicates reuse its answer
        for k, inp in zip(keys, inputs):
            if k not in found and k not in todo:
                todo[k] = inp
        pending = list(todo)
        while pending:
            if self.stopped is not None:  # the breaker: the rest are error rows, never sent, never cached
                found.update((k, Output(error=self.stopped)) for k in pending)
                break
            if self.stopped_prompts:  # the prompts it stopped alone
                stopped = {k for k in pending if todo[k].prompt_id in self.stopped_prompts}
                found.update((k, Output(error=self.stopped_prompts[todo[k].prompt_id])) for k in stopped)
                pending = [k for k in pending if k not in stopped]
                if not pending:
                    break
            take = self._allowance()
            bkeys, pending = pending[:take], pending[take:]
            batch = [todo[k] for k in bkeys]
            if self._streaming:
                self._call_stream(bkeys, batch, found)
            else:
                pairs = self._call(batch)
                good = [(k, self._storable(raw)) for k, (raw, checked) in zip(bkeys, pairs) if checked.error is None]
                if self.cache is not None and good:
                    self.cache.put_many(self.fingerprint, good)  # committed before the next batch is sent
                found.update((k, checked) for k, (_, checked) in zip(bkeys, pairs))
            now = time.time()
            with self._lock:
                self._window.add(sum(1 for k in bkeys if found[k].error is None), now, now)
        result = [found[k] for k in keys]
        with self._lock:
            self.stats.cache_hits += len(inputs) - len(todo)
            self.stats.errors += sum(1 for o in result if o.error is not None)
        return result

    def preflight(self, inputs: Sequence[Input]) -> str | None:
        """Ask ``inputs`` (a run's first few, in one call; valid answers are cached as any other): None when the
        target answered one of them, else the cause of its last failure. An answer the output check refuses (a
        score outside the prompt's scale) counts as an answer: the target is reachable, and that input's error
        row says what was wrong with it, and so does one the cache held (the target answered it before). A few
        inputs, not one, so that one input a target cannot handle does not stop a run. What counts is the
        target's own answers, not a count of failures: the same text three times is asked once (the cache
        sends a repeated input once), and its one failure is the whole call's."""
        answers = self._answers
        held = bool(self.cache.get_many_dated(self.fingerprint, [self._key(i) for i in inputs])) \
            if self.cache is not None and inputs else False
        clipped = getattr(self.check, "clipped", None)
        reused = Reused(self.reused.n, self.reused.first, self.reused.last)
        outs = self.predict(list(inputs))
        # the chunk that holds these inputs reads them from the cache again: that read is the one counted
        # (clipped, reused), not this one
        if clipped is not None:
            self.check.clipped = clipped  # type: ignore[union-attr]
        with self._lock:
            self.reused = reused
        if any(o.error is None for o in outs) or held or self._answers > answers:
            return None
        return self._last_cause or (outs[0].error if outs else None)

    def _dated(self, keys: Sequence[str], cached: Mapping[str, tuple[Output, float]],
               checked: Mapping[str, Output]) -> None:
        """Count the inputs answered by a valid cache hit: in this window, and as reused when stored before this
        run (an input asked twice counts twice, as it is two rows)."""
        times = [cached[k][1] for k in keys if k in cached and checked[k].error is None]
        if not times:
            return
        old = [t for t in times if t < self.since]
        with self._lock:
            self._window.add(len(times), min(times), max(times))
            if old:
                self.reused.add(len(old), min(old), max(old))

    def predict_iter(self, inputs: Iterable[Input], chunk_size: int | None = None) -> Iterator[Output]:
        """Stream outputs for a (possibly huge or lazy) iterable of inputs, ``chunk_size`` at a time."""
        size = chunk_size or self.batch_size * 8
        it = iter(inputs)
        while chunk := list(islice(it, size)):
            yield from self.predict(chunk)

    def close(self) -> None:
        """Close the wrapped target (the cache is shared: its owner closes it)."""
        closer = getattr(self.target, "close", None)
        if callable(closer):
            closer()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
