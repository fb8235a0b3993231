"""The Ray executor: a run's work as Ray tasks, on a local Ray runtime or a cluster.

Who does what (docs/scale-out.md has the diagram):

- **Ray tasks** run the pure work: generation of each record chunk's static examples
  (:func:`~callbluff.engine.generate.generate_examples` over pieces of the chunk), prompt-level generator pieces,
  and the target's predictions for the cache misses of in-process targets (callable, sklearn, reference and
  Hugging Face models: :class:`RemoteTarget`, the target shipped once through the object store, each batch
  split over the workers). Results come back to the driver *in input order*, so the output never depends on
  the executor, the number of workers or which task finished first.
- **The driver** alone reads the data, looks up and writes the prediction cache (SQLite), writes the chunk
  parts and, at the end, merges them and computes the metrics. Nothing a task does is written anywhere by
  the task, so a killed driver leaves exactly what a killed local run leaves, and resuming (same ``--out``)
  works the same way: finished chunks are kept, committed predictions come from the cache.
- **Model-in-the-loop searches** against in-process targets run as Ray tasks over pieces of each chunk's records
  (:func:`~callbluff.engine.search.run_search_piece`): the search, its candidate generation and the target's
  predictions all run in the worker, the target loaded once per worker process. Their queries go through the
  run's prediction cache served by **one cache actor** (:class:`ActorCache`) pinned to the driver's node, which
  opens the driver's SQLite file: each batch's outputs are committed by the actor before the worker sends the
  next query, exactly as a local run commits them, so resuming repeats no committed call. The driver merges the
  cache journal before and after a chunk's searches, so each side sees what the other committed.
- Targets that stream their outputs (HTTP, command: I/O-bound, already concurrent and committed one output
  at a time) are called from the driver, as locally, and so are searches against them (driver threads,
  ``output.search_concurrency`` at once).

Start-up: a local runtime (``ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)``, object
store 300 MB) takes ~10 s; ``address`` joins a running cluster instead (``ray start --head`` /
``--ray-address auto`` or ``ray://host:10001``), and an already initialised runtime (tests) is reused.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from callbluff.iterutil import map_threads, split_evenly
from callbluff.targets.base import Input, Output
from callbluff.targets.cache import PredictionCache

T = TypeVar("T")
R = TypeVar("R")

OBJECT_STORE_BYTES = 300 * 1024 * 1024
"""Object store of a local runtime: chunks and their examples are small; the default (30% of RAM) is not."""


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ValueError("--executor ray needs Ray: pip install 'callbluff[ray]' (or pip install 'ray>=2.30'); "
                         "or use --executor local") from None
    return ray


def _call(fn: Callable[[Any], Any], item: Any) -> Any:
    return fn(item)


def _predict(target: Any, inputs: list[Input]) -> list[Output]:
    return list(target.predict(inputs))


class RayExecutor:
    """:class:`~callbluff.engine.executor.Executor` on Ray: ``map`` as Ray tasks (at most ``2 * workers`` in
    flight, results in input order); ``map_all`` with all of them in flight (uneven work such as searches);
    ``map_concurrent`` in driver threads (see the module docstring)."""

    def __init__(self, workers: int = 2, address: str | None = None) -> None:
        if workers < 1:
            raise ValueError(f"--workers must be >= 1, got {workers}")
        ray = _import_ray()
        self.workers = workers
        self.address = address
        self._started = False
        if not ray.is_initialized():
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
            if address:
                ray.init(address=address, log_to_driver=False)
            else:
                ray.init(address="local", num_cpus=workers, include_dashboard=False, log_to_driver=False,
                         object_store_memory=OBJECT_STORE_BYTES)
            self._started = True
        self._ray = ray
        self._call = ray.remote(num_cpus=1, max_retries=2)(_call)
        self._predict = ray.remote(num_cpus=1, max_retries=2)(_predict)
        self._caches: dict[str, ActorCache] = {}
        self.workers_fork = False  # Ray's workers are processes of their own (or other machines)
        self.tasks = {"map": 0, "map_all": 0, "predict": 0}  # tasks submitted, by kind (tests, diagnostics)

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        """``fn`` over ``items`` as Ray tasks, at most ``2 * workers`` in flight; results in input order."""
        ray = self._ray
        fn_ref = ray.put(fn)
        window: deque[Any] = deque()
        for item in items:
            window.append(self._call.remote(fn_ref, item))
            self.tasks["map"] += 1
            if len(window) >= 2 * self.workers:
                yield ray.get(window.popleft())
        while window:
            yield ray.get(window.popleft())

    def map_all(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """``fn`` over ``items`` as Ray tasks, all submitted at once (Ray queues them on free workers, so a long
        task never holds back the others); results in input order."""
        ray = self._ray
        fn_ref = ray.put(fn)
        refs = [self._call.remote(fn_ref, item) for item in items]
        self.tasks["map_all"] += len(refs)
        return list(ray.get(refs))

    def map_beside(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """Every item as a Ray task (:meth:`map_all`): Ray's workers do not fork from this process, so running
        the first item here would leave nothing they could use."""
        return self.map_all(fn, items)

    def map_concurrent(self, fn: Callable[[T], R], items: Iterable[T], concurrency: int) -> Iterator[R]:
        return map_threads(fn, items, concurrency)

    def put(self, obj: Any) -> Any:
        """``obj`` in the object store (shared by many tasks without being sent with each)."""
        return self._ray.put(obj)

    def cache_proxy(self, cache: Any) -> ActorCache | None:
        """The run's prediction cache served to tasks by one actor on this node (one per cache file)."""
        if cache is None:
            return None
        key = str(cache.path)
        if key not in self._caches:
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            here = self._ray.get_runtime_context().get_node_id()
            actor = self._ray.remote(num_cpus=0)(_CacheActor).options(
                scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=here, soft=False)).remote(key)
            self._caches[key] = ActorCache(actor)
        return self._caches[key]

    def remote_target(self, target: Any) -> Any:
        """``target`` with its predictions as Ray tasks (:class:`RemoteTarget`) when it is an in-process
        target that can be shipped to workers; streaming (HTTP, command) targets are returned as they are."""
        if callable(getattr(target, "predict_stream", None)):
            return target
        try:
            ref = self._ray.put(target)
        except Exception:  # noqa: BLE001 - cannot be pickled (e.g. holds a live handle): predict in the driver
            return target
        return RemoteTarget(target, ref, self)

    def close(self) -> None:
        for proxy in self._caches.values():
            try:
                self._ray.get(proxy.actor.close.remote())
                self._ray.kill(proxy.actor)
            except Exception:  # noqa: BLE001 - the runtime may already be gone
                pass
        self._caches.clear()
        if self._started:
            self._ray.shutdown()
            self._started = False

    def __enter__(self) -> RayExecutor:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RemoteTarget:
    """A target whose ``predict`` runs as Ray tasks: the batch is cut into up to ``workers`` contiguous pieces,
    one task each, outputs joined in input order. Everything else (fingerprint, name, config, close) is the
    wrapped target's; the prediction cache stays in the driver (:class:`~callbluff.targets.CachedTarget`)."""

    def __init__(self, target: Any, ref: Any, executor: RayExecutor) -> None:
        self.inner = target
        self._ref = ref
        self._executor = executor
        self.fingerprint = target.fingerprint
        self.name = getattr(target, "name", target.fingerprint)
        self.config = getattr(target, "config", None)

    @property
    def ref(self) -> Any:
        """The wrapped target's object-store reference (search tasks deserialise it once per worker)."""
        return self._ref

    def predict(self, inputs: Sequence[Input]) -> list[Output]:
        ex = self._executor
        pieces = split_evenly(list(inputs), ex.workers)
        refs = [ex._predict.remote(self._ref, list(p)) for p in pieces]
        ex.tasks["predict"] += len(refs)
        return [out for piece in ex._ray.get(refs) for out in piece]

    def to_config(self) -> dict[str, Any]:
        inner = getattr(self.inner, "to_config", None)
        return inner() if callable(inner) else {"type": type(self.inner).__name__, "fingerprint": self.fingerprint}

    def close(self) -> None:
        closer = getattr(self.inner, "close", None)
        if callable(closer):
            closer()


class _CacheActor:
    """The run's :class:`~callbluff.targets.cache.PredictionCache` opened in an actor on the driver's node (the
    same SQLite file as the driver's; SQLite's WAL mode and busy timeout arbitrate the two connections)."""

    def __init__(self, path: str) -> None:
        self.cache = PredictionCache(path)

    def get_many(self, fingerprint: str, keys: list[str]) -> dict[str, Output]:
        return self.cache.get_many(fingerprint, keys)

    def get_many_dated(self, fingerprint: str, keys: list[str]) -> dict[str, tuple[Output, float]]:
        return self.cache.get_many_dated(fingerprint, keys)

    def put_many(self, fingerprint: str, items: list[tuple[str, Output]]) -> int:
        return self.cache.put_many(fingerprint, items)

    def close(self) -> None:
        self.cache.close()


class ActorCache:
    """The prediction-cache interface :class:`~callbluff.targets.wrappers.CachedTarget` uses (``get_many``,
    ``get_many_dated``, ``put_many``), answered by the cache actor; picklable (it holds the actor's handle), so tasks get it. A
    ``put_many`` returns once the actor has committed the rows."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor

    def get_many(self, fingerprint: str, keys: Iterable[str]) -> dict[str, Output]:
        import ray

        return ray.get(self.actor.get_many.remote(fingerprint, list(keys)))

    def get_many_dated(self, fingerprint: str, keys: Iterable[str]) -> dict[str, tuple[Output, float]]:
        import ray

        return ray.get(self.actor.get_many_dated.remote(fingerprint, list(keys)))

    def put_many(self, fingerprint: str, items: Any) -> int:
        import ray

        pairs = list(items.items()) if isinstance(items, dict) else list(items)
        return int(ray.get(self.actor.put_many.remote(fingerprint, pairs)))
