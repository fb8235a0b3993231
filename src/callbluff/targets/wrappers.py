"""Target wrappers: the prediction cache in front of any target (DESIGN.md "Target": "Wrappers add batching,
retries, timeouts and the SQLite prediction cache").

:class:`CachedTarget` is what the engine and model-in-the-loop attacks talk to: it answers from the cache
what it can, sends only the misses to the wrapped target (in batches of ``batch_size``, duplicates within a
call sent once), stores each batch's successful outputs as soon as the batch returns (so a killed run loses
at most the batch in flight), and never stores errors (so a later run retries them). It also shields callers
from badly behaved targets: an exception or a wrong number of outputs from the wrapped target becomes an
error output per input, never a crash.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
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

    def __init__(self, target: Target, cache: PredictionCache | None, batch_size: int = 32) -> None:
        if batch_size < 1:
            raise ValueError(f"CachedTarget: batch_size must be >= 1, got {batch_size}")
        self.target = target
        self.cache = cache
        self.batch_size = int(batch_size)
        self.fingerprint: str = target.fingerprint
        self.stats = TargetStats()

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
                self.cache.put_many(self.fingerprint, good)
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

    def close(self) -> None:
        """Close the wrapped target (the cache is shared and closed by its owner)."""
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
