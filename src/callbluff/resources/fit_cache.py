"""Fitted states persisted across runs (attack contract v2's fit step, made once per machine).

An attack whose ``fit`` is costly and depends only on what the key below names opts in by returning a
fingerprint from :meth:`callbluff.attacks.base.Attack.fit_fingerprint` (the versions of the data files and
libraries its fit reads); the engine's ``fit_states`` then looks the state up here before fitting and stores
it after. Attacks that return ``None`` (the default) are fitted on every run, as before.

The key is the SHA-256 of: the attack's name and canonical params, its fingerprint, the prompt (every field),
the prompt's records (every field, in order), and the SHA-256 of the source files of the attack's family
package (:func:`code_fingerprint`: a change there refits). A state is stored as a pickle (fit states must be picklable: they are shipped to workers)
under ``cache_dir("fit-states")`` (or ``$CALLBLUFF_FIT_CACHE_DIR/fit-states``: a benchmark measures a first
run with an empty one); a cached state is the object ``fit`` returned, so examples and their
``meta["fit_state"]`` hash are the same bytes whether the state was fitted or read. ``CALLBLUFF_FIT_CACHE=0``
turns the cache off (every state fitted, nothing written).
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import os
import pickle
import tempfile
from collections.abc import Sequence
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from callbluff.records import Prompt, Record, canonical_json
from callbluff.resources.paths import cache_dir

ENV_SWITCH = "CALLBLUFF_FIT_CACHE"
ENV_DIR = "CALLBLUFF_FIT_CACHE_DIR"
_MISSING = object()


def enabled() -> bool:
    """False when ``$CALLBLUFF_FIT_CACHE`` is ``0``, ``false`` or ``no``."""
    return os.environ.get(ENV_SWITCH, "1").strip().lower() not in ("0", "false", "no", "off")


@lru_cache(maxsize=64)
def code_fingerprint(module: str) -> str:
    """SHA-256 of the ``.py`` files (name and bytes, sorted) of the package that holds ``module`` (an attack's
    family package, e.g. ``callbluff/attacks/essay/``): a cached state is used only by the code that fitted
    it. Code a fit calls outside that package is named by the attack's ``fit_fingerprint``
    (:func:`source_stamp`); the rest of callbluff, edited independently, does not invalidate it."""
    folder = Path(importlib.import_module(module).__file__ or "").resolve().parent
    h = hashlib.sha256()
    for p in sorted(folder.glob("*.py")):
        h.update(p.name.encode() + b"\x00" + p.read_bytes() + b"\x00")
    return h.hexdigest()


def source_stamp(*modules: str) -> str:
    """Short SHA-256 of the source files of ``modules`` (for fingerprints: helper code a fit calls)."""
    h = hashlib.sha256()
    for m in modules:
        h.update(Path(importlib.import_module(m).__file__ or "").read_bytes() + b"\x00")
    return h.hexdigest()[:16]


def versions(*distributions: str) -> str:
    """``name=version`` of installed distributions (``name=absent`` for one not installed), for fingerprints."""
    out = []
    for d in distributions:
        try:
            out.append(f"{d}={version(d)}")
        except PackageNotFoundError:
            out.append(f"{d}=absent")
    return ";".join(out)


def file_stamps(paths: Sequence[Path]) -> str:
    """Resolved path, size and modification time of each file, for fingerprints of data files."""
    return ";".join(f"{p.resolve()}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in paths)


def _as_json(obj: Any) -> Any:
    return dataclasses.asdict(obj) if dataclasses.is_dataclass(obj) and not isinstance(obj, type) else obj


def fit_key(name: str, params_json: str, fingerprint: str, module: str, prompt: Prompt | None,
            records: Sequence[Record]) -> str:
    """The cache key of one fit of the attack ``name`` defined in ``module`` (see the module docstring)."""
    h = hashlib.sha256()
    for part in (name, params_json, fingerprint, code_fingerprint(module), canonical_json(_as_json(prompt))):
        h.update(part.encode("utf-8", "surrogatepass") + b"\x00")
    for r in records:
        h.update(canonical_json(_as_json(r)).encode("utf-8", "surrogatepass") + b"\x01")
    return h.hexdigest()


def cache_root(*parts: str) -> Path:
    """``$CALLBLUFF_FIT_CACHE_DIR/parts`` when set, else ``cache_dir(*parts)``; created on use."""
    root = os.environ.get(ENV_DIR)
    if not root:
        return cache_dir(*parts)
    path = Path(root).joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


def _path(key: str) -> Path:
    return cache_root("fit-states", key[:2]) / f"{key}.pickle"


def load(key: str) -> Any:
    """The state stored under ``key``, or :data:`_MISSING` (also for an unreadable file or cache directory: the
    state is fitted again)."""
    try:
        p = _path(key)
        if not p.is_file():
            return _MISSING
        with p.open("rb") as f:
            return pickle.load(f)
    except Exception:  # noqa: BLE001 - a truncated or foreign file is a miss; the state is fitted again
        return _MISSING


def store(key: str, state: Any) -> bool:
    """Write ``state`` under ``key`` atomically (temporary file + rename; concurrent runs may race safely).
    False when it cannot be written (read-only or full cache directory, a state that does not pickle): the run
    goes on with the state it fitted, the next run fits again."""
    try:
        p = _path(key)
        fd, tmp = tempfile.mkstemp(dir=p.parent, suffix=".tmp")
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as f:
            pickle.dump(state, f, protocol=4)
        os.replace(tmp, p)
        return True
    except (OSError, pickle.PicklingError, TypeError, AttributeError):
        Path(tmp).unlink(missing_ok=True)
        return False


def is_missing(state: Any) -> bool:
    return state is _MISSING
