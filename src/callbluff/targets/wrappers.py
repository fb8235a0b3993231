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


class CachedTarget:
    """``target`` behind ``cache``, every output passed through ``check`` (when given).

    ``stats`` counts, for this wrapper: ``calls`` (``predict`` calls made on the wrapped target; one per batch,
    or one per input for streaming targets), ``inputs`` (inputs sent to it, i.e. cache misses), ``seconds``
    (time inside it), ``errors`` (error outputs returned to callers) and ``cache_hits`` (inputs answered from
    the cache, including duplicates within one call). ``fingerprint`` is the wrapped target's.
    """

    def __init__(self, target: Target, cache: PredictionCache | None, batch_size: int = 32,
                 *, check: Check | None = None) -> None:
        if batch_size < 1:
            raise ValueError(f"CachedTarget: batch_size must be >= 1, got {batch_size}")
        self.target = target
        self.cache = cache
        self.batch_size = int(batch_size)
        self.check = check
        self.fingerprint: str = target.fingerprint
        self.stats = TargetStats()
        usage = inner_usage(target)
        if usage is not None:  # the wrapped target's own accounting (a chat grader's tokens) reaches run.json
            self.stats.usage = usage
        self._lock = threading.Lock()
        self._streaming = callable(getattr(target, "predict_stream", None))
        key = getattr(target, "cache_key", None)
        self._key: Callable[[Input], str] = key if callable(key) else Input.key

    @property
    def name(self) -> str:
        return str(getattr(self.target, "name", self.fingerprint))

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
        return [(o, self._checked(i, o)) for i, o in zip(batch, outs)]

    def _call_stream(self, keys: Sequence[str], batch: Sequence[Input], found: dict[str, Output]) -> None:
        """Stream ``batch`` through the target, committing each valid output the moment it arrives."""
        got: dict[int, Output] = {}
        cache_failed: list[CacheWriteError] = []  # the machine's I/O: re-raised below, never an error row

        def emit(i: int, out: Output) -> None:
            if i in got or not 0 <= i < len(batch):
                return
            checked = self._checked(batch[i], out)
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
            found[k] = got.get(i) or Output(error="target returned no output for this input")

    # -- public ---------------------------------------------------------------------------------------------
    def predict(self, inputs: Sequence[Input]) -> list[Output]:
        """One output per input, in input order: cached where possible, predicted (and cached) otherwise."""
        keys = [self._key(i) for i in inputs]  # the target's cache_key(inp) when it has one, else Input.key
        found: dict[str, Output] = {}
        if self.cache is not None and keys:
            cached = self.cache.get_many(self.fingerprint, keys)
            if cached:
                by_key = dict(zip(keys, inputs))
                found = {k: self._checked(by_key[k], o) for k, o in cached.items()}
        todo: dict[str, Input] = {}  # first occurrence of each missing key; later duplicates reuse its answer
        for k, inp in zip(keys, inputs):
            if k not in found and k not in todo:
                todo[k] = inp
        miss_keys = list(todo)
        for s in range(0, len(miss_keys), self.batch_size):
            bkeys = miss_keys[s:s + self.batch_size]
            batch = [todo[k] for k in bkeys]
            if self._streaming:
                self._call_stream(bkeys, batch, found)
                continue
            pairs = self._call(batch)
            good = [(k, self._storable(raw)) for k, (raw, checked) in zip(bkeys, pairs) if checked.error is None]
            if self.cache is not None and good:
                self.cache.put_many(self.fingerprint, good)  # committed before the next batch is sent
            found.update((k, checked) for k, (_, checked) in zip(bkeys, pairs))
        result = [found[k] for k in keys]
        with self._lock:
            self.stats.cache_hits += len(inputs) - len(todo)
            self.stats.errors += sum(1 for o in result if o.error is not None)
        return result

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
