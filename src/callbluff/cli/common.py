"""What several command groups share: ``--param key=value`` parsing, ``--target TYPE:VALUE`` specs and the help
texts of the exit codes and of ``--junit``.

Light at import (the lazy-import rule of :mod:`callbluff.cli`): the attack registry's parser is imported where a
parameter is parsed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from callbluff.console import fail

EXIT_CODES = """Exit codes: 0 success; 1 a target failed: it answered none of its first inputs (the pre-flight stops
the run before any chunk, naming the cause), or the run finished but all of its predictions failed, or more
than --max-error-rate of them (the run directory is complete; see errors.jsonl); 2 bad input (suite, data,
options, a damaged run directory, a run that would measure nothing, a run directory in use by another run,
a local I/O error: the message names the file and the fix or cause); 3 a gate failed: a suite
\\[\\[expect]] table whose metric is outside its bounds (each gate is printed as PASS/FAIL; --junit FILE writes them
as JUnit XML)."""

JUNIT_HELP = "write the suite's \\[\\[expect]] gates as JUnit XML to this file (for CI)"  # escaped: rich markup


def parse_params(items: list[str] | None) -> dict[str, Any]:
    """``key=value`` items (``--param``, ``--target-option``) as a dict; exit 2 naming a malformed item."""
    from callbluff.attacks.base import parse_params as parse

    try:
        return parse(items or [])
    except ValueError as e:
        fail(str(e))
        raise


def target_name(kind: str, value: str, *, path: str | None = None) -> str:
    """A target's name from ``--target TYPE:VALUE``: a saved model, model directory or file (a type registered
    with ``spec_path``) is named after it (``model:models/aes`` -> ``aes``, ``sklearn:clf.joblib`` -> ``clf``);
    other targets by their type."""
    if path:
        p = Path(value.rstrip("/\\"))
        return (p.stem if path == "file" else p.name) or kind
    return kind


def target_from_spec(spec: str, options: list[str] | None) -> dict[str, Any]:
    """``TYPE:VALUE``: VALUE is the key the type registered as its ``spec_key`` (model:DIR, sklearn:FILE, hf:DIR,
    http:URL, openai:BASE_URL, command:"argv", callable:mod:attr, or a third party's type)."""
    from callbluff.engine.target_factory import get_target_type, target_types  # the registry, with `model`

    if ":" not in spec:
        fail(f"--target {spec!r}: expected TYPE:VALUE, e.g. model:models/content-scorer or http://host/score")
    kind, value = spec.split(":", 1)
    if kind in ("http", "https"):  # a URL is an http target
        kind, value = "http", spec
    key = None
    if kind in target_types():
        entry = get_target_type(kind)
        key, path = entry.spec_key, entry.spec_path
    if key is None:
        usable = ", ".join(t for t in target_types() if get_target_type(t).spec_key)
        fail(f"--target {spec!r}: unknown type {kind!r}; allowed: {usable} (http(s): a URL)")
    cfg: dict[str, Any] = {"name": target_name(kind, value, path=path), "type": kind, key: value}
    cfg.update(parse_params(options))
    return cfg
