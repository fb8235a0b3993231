"""run.json, the run's manifest (docs/design.md "Runs"): the suite, seed, versions, target fingerprints and types,
executor, fitted-state hashes, counts, notes and status (``running`` / ``finished`` / ``failed`` /
``interrupted``). Never secrets: the suite is written as validated, and ``${VAR}`` values are never resolved
into it."""

from __future__ import annotations

import functools
import math
import platform
import sys
from datetime import UTC, datetime
from typing import Any

from callbluff import __version__
from callbluff.engine.rows import RUN_FORMAT
from callbluff.engine.store import RunDir
from callbluff.engine.suite import Suite
from callbluff.engine.work import AttackSpec, instantiate


def now() -> str:
    return datetime.now(UTC).isoformat()


def cfg_type(suite: Suite, name: str) -> str:
    """The ``type`` of the suite's target ``name`` (``python`` for a target given from Python)."""
    for t in suite.target:
        if t.name == name:
            return t.type
    return "python"


def version_of(target: Any) -> str | None:
    """The version a target names, for people: what its server's ``version_url`` answered (as text), else its
    declared ``version``; None when it names none (its identity is then a hash alone)."""
    inner = getattr(target, "target", target)  # a CachedTarget wraps the adapter
    served = getattr(inner, "served", None)
    declared = getattr(getattr(inner, "config", None), "version", None)
    return str(served) if served else (str(declared) if declared else None)


class Manifest:
    """The run.json of one execution: written at the start (``running``) and at the end (``finished``, or
    ``failed`` / ``interrupted`` with the cause)."""

    def __init__(self, run: RunDir) -> None:
        self.run = run
        self.meta: dict[str, Any] = {}

    def start(self, *, suite: Suite, fingerprint: str, limit: int | None, task: str, prompts: list[str],
              specs: list[AttackSpec], targets: dict[str, Any], executor: Any,
              previous: dict[str, Any] | None) -> None:
        self.meta = {
            "format": RUN_FORMAT,
            "suite": suite.model_dump(exclude={"base_dir"}),
            "name": suite.name,
            "seed": suite.seed,
            "limit": limit,
            "fingerprint": fingerprint,
            "dataset": {"spec": suite.dataset.spec, "task": task, "prompts": prompts},
            "attacks": [{"name": s.name, "params": instantiate(s).params_dict, "kind": instantiate(s).kind,
                         "expect": instantiate(s).expect, **type(instantiate(s)).describe()} for s in specs],
            "targets": {name: {"fingerprint": t.fingerprint, "type": cfg_type(suite, name),
                               **({"version": v} if (v := version_of(t)) else {})}
                        for name, t in targets.items()},
            "versions": versions(),
            "started": (previous or {}).get("started", now()),
            "resumed": previous is not None,
            "status": "running",
            "executor": {"kind": type(executor).__name__, "workers": executor.workers,
                         **({"address": executor.address} if getattr(executor, "address", None) else {})},
        }
        self.run.write_meta(self.meta)

    def stop(self, e: BaseException, notes: list[str]) -> None:
        """The run ended by ``e``: ``interrupted`` (Ctrl-C) or ``failed`` with its cause."""
        interrupted = isinstance(e, KeyboardInterrupt)
        self.meta.update(status="interrupted" if interrupted else "failed",
                         error=None if interrupted else f"{type(e).__name__}: {e}", notes=notes, stopped=now())
        self.run.write_meta(self.meta)

    def finish(self, *, seconds: float, resumed: int, retried: int, counts: dict[str, Any], notes: list[str],
               states: dict[tuple[AttackSpec, str | None], Any], target_stats: dict[str, Any],
               predictions: dict[str, Any] | None = None) -> None:
        """``resumed`` / ``retried``: the finished chunks skipped and those run again for their failed predictions;
        ``predictions``: per target, what was reused from an earlier run (and from when) and what was asked now
        (:meth:`callbluff.engine.provenance.TargetWatch.provenance`)."""
        self.meta.update(
            status="finished", finished=now(), seconds_this_session=round(seconds, 3),
            chunks_resumed=resumed, chunks_retried=retried, counts=counts, notes=notes,
            fit_states={f"{s.name} {s.params_json} prompt={pid}": instantiate(s).state_hash(st)
                        for (s, pid), st in sorted(states.items(), key=lambda kv: (kv[0][0].name,
                                                                                   kv[0][0].params_json,
                                                                                   str(kv[0][1])))},
            target_stats=target_stats, predictions=predictions or {},
        )
        self.meta.pop("error", None)
        self.run.write_meta(self.meta)


def json_default(o: Any) -> Any:
    """``json.dumps`` default for metrics: NumPy numbers as Python numbers (NaN as null), anything else as str."""
    import numpy as np

    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        v = float(o)
        return None if math.isnan(v) else v
    return str(o)


_VERSIONED = {"numpy": "numpy", "pandas": "pandas", "scikit-learn": "sklearn", "spacy": "spacy", "torch": "torch",
              "transformers": "transformers", "httpx": "httpx"}
"""Distributions whose versions go into run.json, with their import names."""


def versions() -> dict[str, str]:
    """Versions of Python, callbluff and the main libraries (run.json provenance); see :func:`_versions`."""
    return dict(_versions())


@functools.lru_cache(maxsize=1)
def _versions() -> tuple[tuple[str, str], ...]:
    """Read once per process: an already imported module's ``__version__``, else the installed distribution's
    metadata (parsing a large METADATA file, as torch's, costs tens of milliseconds)."""
    import importlib.metadata as md

    out = {"callbluff": __version__, "python": platform.python_version()}
    for dist, module in _VERSIONED.items():
        loaded = getattr(sys.modules.get(module), "__version__", None)
        if isinstance(loaded, str):
            out[dist] = loaded
            continue
        try:
            out[dist] = md.version(dist)
        except md.PackageNotFoundError:
            pass
    return tuple(out.items())
