"""Saving and loading scikit-learn based reference models: a directory with ``model.joblib`` (the fitted
state) and ``model.json`` (what it is and how it was made).

``model.json`` keys written by :func:`save_dir`: ``kind`` (dispatch key of :func:`callbluff.models.load_model`),
``format`` (this layout's version), ``data`` (the training data spec), ``params`` (constructor parameters,
feature set included), ``metrics`` (clean figures per prompt, e.g. cross-validated QWK on the training
data), ``versions`` (callbluff, scikit-learn, numpy, scipy, spaCy, joblib, python), ``trained_at`` (UTC,
ISO 8601), ``fingerprint`` and ``state_sha256``.

The fingerprint of a model is ``KIND:`` + the first 16 hex digits of SHA-256 over the exact bytes of
``model.joblib`` and the canonical JSON of its parameters, so it changes whenever the weights or the
configuration change and is identical before saving, after saving and after loading (the bytes hashed
are the bytes written and read). :func:`state_bytes` produces those bytes.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import io
import json
import os
import platform
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from callbluff.records import canonical_json

MODEL_JSON = "model.json"
MODEL_JOBLIB = "model.joblib"
FORMAT = 1

__all__ = ["MODEL_JOBLIB", "MODEL_JSON", "fingerprint_of", "load_dir", "read_meta", "save_dir",
           "state_bytes", "versions", "write_meta"]


SKLEARN_PACKAGES = ("callbluff", "scikit-learn", "numpy", "scipy", "joblib", "spacy", "wordfreq")


def versions(packages: Sequence[str] = SKLEARN_PACKAGES) -> dict[str, str]:
    """Python's version and those of ``packages`` (what a saved model depends on; missing ones left out)."""
    import importlib.metadata as md

    out = {"python": platform.python_version()}
    for pkg in packages:
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            continue
    return out


def utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def state_bytes(state: Any) -> bytes:
    """The ``model.joblib`` bytes of ``state`` (joblib pickle, zlib level 3)."""
    import joblib

    buf = io.BytesIO()
    joblib.dump(state, buf, compress=("zlib", 3))
    return buf.getvalue()


def fingerprint_of(kind: str, blob: bytes, params: Mapping[str, Any]) -> str:
    h = hashlib.sha256(blob)
    h.update(canonical_json(dict(params)).encode())
    return f"{kind}:{h.hexdigest()[:16]}"


def save_dir(path: str | os.PathLike[str], *, kind: str, blob: bytes, params: Mapping[str, Any],
             data: str | None, metrics: Mapping[str, Any], extra: Mapping[str, Any] | None = None,
             trained_at: str | None = None) -> Path:
    """Write ``model.joblib`` (= ``blob``) and ``model.json`` into directory ``path`` (created)."""
    out = Path(path)
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / (MODEL_JOBLIB + ".tmp")
    tmp.write_bytes(blob)
    os.replace(tmp, out / MODEL_JOBLIB)
    meta = {"kind": kind, "format": FORMAT, "data": data, "params": dict(params), "metrics": dict(metrics),
            "versions": versions(), "trained_at": trained_at or utc_now(),
            "fingerprint": fingerprint_of(kind, blob, params),
            "state_sha256": hashlib.sha256(blob).hexdigest(), **dict(extra or {})}
    return write_meta(out, meta)


def write_meta(path: str | os.PathLike[str], meta: Mapping[str, Any]) -> Path:
    """Write ``meta`` as ``model.json`` into directory ``path`` (created), atomically; returns the directory."""
    out = Path(path)
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / (MODEL_JSON + ".tmp")
    tmp.write_text(json.dumps(meta, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, out / MODEL_JSON)
    return out


def read_meta(path: str | os.PathLike[str], kind: str | None = None) -> dict[str, Any]:
    """``model.json`` of a saved model directory (checking ``kind`` when given)."""
    root = Path(path)
    f = root / MODEL_JSON
    if not f.is_file():
        what = f"a {kind}" if kind else "a callbluff model"
        raise FileNotFoundError(f"{f}: no {MODEL_JSON}; {root} is not {what} directory. Fix: train one with "
                                "`callbluff train ... --out DIR` or Model.save(DIR) and pass that DIR")
    try:
        meta = json.loads(f.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{f}: line {e.lineno}: not valid JSON ({e.msg}); re-save the model") from e
    if not isinstance(meta, dict) or "kind" not in meta:
        raise ValueError(f"{f}: key 'kind' missing; re-save the model with its save() method")
    if kind is not None and meta["kind"] != kind:
        raise ValueError(f"{f}: key 'kind' is {meta['kind']!r}, expected {kind!r}; load it with "
                         "callbluff.models.load_model(DIR), which picks the right class")
    return meta


def load_dir(path: str | os.PathLike[str], kind: str) -> tuple[Any, bytes, dict[str, Any]]:
    """(state, the ``model.joblib`` bytes, ``model.json``) of a directory written by :func:`save_dir`."""
    import joblib

    meta = read_meta(path, kind)
    f = Path(path) / MODEL_JOBLIB
    if not f.is_file():
        raise FileNotFoundError(f"{f}: missing (model.json is there); copy the whole model directory")
    blob = f.read_bytes()
    want = meta.get("state_sha256")
    if want and hashlib.sha256(blob).hexdigest() != want:
        raise ValueError(f"{f}: content does not match key 'state_sha256' of {MODEL_JSON} (file changed or "
                         "truncated); re-copy or re-train the model")
    return joblib.load(io.BytesIO(blob)), blob, meta
