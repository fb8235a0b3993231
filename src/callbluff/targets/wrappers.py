"""Target wrappers: the prediction cache in front of any target (DESIGN.md "Target": "Wrappers add batching,
retries, timeouts and the SQLite prediction cache").

:class:`CachedTarget` is what the engine and model-in-the-loop attacks talk to: it answers from the cache
what it can, sends only the misses to the wrapped target (in batches of ``batch_size``, duplicates within a
call sent once), stores each batch's successful outputs as soon as the batch returns (so a killed run loses
at most the batch in flight), and never stores errors (so a later run retries them). It also shields callers
from badly behaved targets: an exception or a wrong number of outputs from the wrapped target becomes an
error output per input, never a crash.

With ``write_behind=True`` the cache writes happen on one background thread while the caller goes on (the
next batches are already being predicted while earlier ones are stored), gathered into one transaction per
``write_every`` outputs, which takes the SQLite commits off the critical path for fast targets. :meth:`flush` waits for pending writes and re-raises their errors; ``close``
flushes. A kill loses at most the batches not yet written, which are then predicted again on resume.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import islice
from typing import Any, Self

from callbluff.targets._common import exception_cause
from callbluff.targets.base import Input, Output, Target, TargetStats
from callbluff.targets.cache import PredictionCache


class CachedTarget:
    """``target`` behind ``cache``.

    ``stats`` counts, for this wrapper: ``calls`` (``predict`` calls made on the wrapped target),
    ``inputs`` (inputs sent to it, i.e. cache misses), ``seconds`` (time inside it), ``errors`` (error outputs
    returned to callers) and ``cache_hits`` (inputs answered from the cache, including duplicates within one
    call). ``fingerprint`` is the wrapped target's.
    """

    def __init__(self, target: Target, cache: PredictionCache | None, batch_size: int = 32,
                 *, write_behind: bool = False, write_every: int = 512) -> None:
        if batch_size < 1:
            raise ValueError(f"CachedTarget: batch_size must be >= 1, got {batch_size}")
        self.target = target
        self.cache = cache
        self.batch_size = int(batch_size)
        self.fingerprint: str = target.fingerprint
        self.stats = TargetStats()
        self._writer: ThreadPoolExecutor | None = None
        if write_behind and cache is not None:
            self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="callbluff-cache-writer")
        self._pending: list[Future[int]] = []
        self._unwritten: dict[str, Output] = {}  # outputs handed to the writer and maybe not yet in SQLite
        self._buffer: list[tuple[str, Output]] = []  # write-behind: outputs gathered into one transaction
        self.write_every = max(1, int(write_every))

    @property
    def name(self) -> str:
        return str(getattr(self.target, "name", self.fingerprint))

    def __repr__(self) -> str:
        return f"CachedTarget({self.target!r}, cache={self.cache!r}, batch_size={self.batch_size})"

    def to_config(self) -> dict[str, Any]:
        inner = getattr(self.target, "to_config", None)
        return inner() if callable(inner) else {"type": type(self.target).__name__, "fingerprint": self.fingerprint}

    def _call(self, batch: Sequence[Input]) -> list[Output]:
        self.stats.calls += 1
        self.stats.inputs += len(batch)
        t0 = time.perf_counter()
        try:
            outs = list(self.target.predict(list(batch)))
        except Exception as exc:  # noqa: BLE001 - a target that raises must not end the run
            return [Output(error=f"target raised {exception_cause(exc)}")] * len(batch)
        finally:
            self.stats.seconds += time.perf_counter() - t0
        if len(outs) != len(batch):
            return [Output(error=f"target returned {len(outs)} outputs for {len(batch)} inputs")] * len(batch)
        return [o if isinstance(o, Output) else Output(error=f"target returned {type(o).__name__}, not Output")
                for o in outs]

    def predict(self, inputs: Sequence[Input]) -> list[Output]:
        """One output per input, in input order: cached where possible, predicted (and cached) otherwise."""
        keys = [i.key() for i in inputs]
        found = self.cache.get_many(self.fingerprint, keys) if self.cache is not None and keys else {}
        if self._unwritten:
            found.update({k: self._unwritten[k] for k in keys if k not in found and k in self._unwritten})
        # first occurrence of each missing key is sent; later duplicates reuse its answer
        todo: dict[str, Input] = {}
        for k, inp in zip(keys, inputs):
            if k not in found and k not in todo:
                todo[k] = inp
        self.stats.cache_hits += len(inputs) - len(todo)
        miss_keys = list(todo)
        for s in range(0, len(miss_keys), self.batch_size):
            bkeys = miss_keys[s:s + self.batch_size]
            outs = self._call([todo[k] for k in bkeys])
            good = [(k, o) for k, o in zip(bkeys, outs) if o.error is None]
            if self.cache is not None and good:
                self._store(good)
            found.update(zip(bkeys, outs))
        result = [found[k] for k in keys]
        self.stats.errors += sum(1 for o in result if o.error is not None)
        return result

    def predict_iter(self, inputs: Iterable[Input], chunk_size: int | None = None) -> Iterator[Output]:
        """Stream outputs for a (possibly huge or lazy) iterable of inputs, ``chunk_size`` at a time."""
        size = chunk_size or self.batch_size * 8
        it = iter(inputs)
        while chunk := list(islice(it, size)):
            yield from self.predict(chunk)

    def _store(self, good: list[tuple[str, Output]]) -> None:
        assert self.cache is not None
        if self._writer is None:
            self.cache.put_many(self.fingerprint, good)
            return
        self._pending = [f for f in self._pending if not f.done() or f.exception() is not None]
        if not self._pending and not self._buffer:
            self._unwritten.clear()
        self._unwritten.update(good)
        self._buffer.extend(good)
        if len(self._buffer) >= self.write_every:
            self._submit_buffer()

    def _submit_buffer(self) -> None:
        if self._buffer and self._writer is not None and self.cache is not None:
            batch, self._buffer = self._buffer, []
            self._pending.append(self._writer.submit(self.cache.put_many, self.fingerprint, batch))

    def flush(self) -> None:
        """Wait for background cache writes (``write_behind``); re-raises the first write error."""
        self._submit_buffer()
        pending, self._pending = self._pending, []
        for f in pending:
            f.result()
        self._unwritten.clear()

    def close(self) -> None:
        """Flush pending cache writes and close the wrapped target (the cache is shared: its owner closes it)."""
        try:
            self.flush()
        finally:
            if self._writer is not None:
                self._writer.shutdown(wait=True)
                self._writer = None
            closer = getattr(self.target, "close", None)
            if callable(closer):
                closer()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def chunked(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    """Consecutive lists of ``size`` items (the last may be shorter)."""
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk
