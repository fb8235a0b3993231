"""Dataset specs (``NAME:PATH``), the loader registry and the :class:`Dataset` container.

A spec string such as ``asap-aes:../data/training_set_rel3.tsv.gz`` or ``jsonl:answers.jsonl`` is usable in
the CLI, in TOML suites and from Python (:func:`load`). Options follow the path after ``?`` in query-string
form, e.g. ``asap-aes:train.tsv?prompts=1,2`` or ``jsonl:x.jsonl?text=answer&score=grade``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from callbluff.records import Prompt, Record, Task


class DataError(ValueError):
    """Bad input data: the message names the file, the line/row or key, what is wrong and the fix.

    The optional keyword attributes repeat the location for programs: ``path`` (the file), ``line``
    (1-based line or row number, when the problem has one) and ``key`` (column / JSON key path).
    """

    def __init__(
        self, message: str, *, path: str | None = None, line: int | None = None, key: str | None = None
    ) -> None:
        super().__init__(message)
        self.path = path
        self.line = line
        self.key = key


@dataclass
class Dataset:
    """Records of one task plus the prompts they answer. Iterating streams the records in file order."""

    spec: str
    task: Task
    prompts: dict[str, Prompt]
    records_factory: Callable[[], Iterator[Record]]
    meta: dict[str, Any] = field(default_factory=dict)

    def __iter__(self) -> Iterator[Record]:
        return self.records_factory()

    def records(self) -> list[Record]:
        return list(self)

    def __len__(self) -> int:
        n = self.meta.get("count")
        if n is None:
            n = sum(1 for _ in self)
            self.meta["count"] = n
        return int(n)

    def prompt_of(self, record: Record) -> Prompt | None:
        pid = getattr(record, "prompt_id", None)
        return self.prompts.get(pid) if pid is not None else None


Loader = Callable[..., Dataset]
_LOADERS: dict[str, Loader] = {}
"""Spec prefix -> loader. The built-in loaders register themselves when ``callbluff.datasets`` is imported, which
Python does before any of its submodules (this one included), so the registry is full whenever it is read."""


def register_loader(name: str) -> Callable[[Loader], Loader]:
    """Register ``fn(path: str, **options) -> Dataset`` under spec prefix ``name``."""

    def deco(fn: Loader) -> Loader:
        _LOADERS[name] = fn
        return fn

    return deco


def loader_names() -> list[str]:
    return sorted(_LOADERS)


def parse_spec(spec: str) -> tuple[str, str, dict[str, str]]:
    """Split ``NAME:PATH?k=v&k2=v2`` into (name, path, options)."""
    if ":" not in spec:
        raise DataError(f"dataset spec {spec!r}: expected NAME:PATH with NAME one of {', '.join(loader_names())}")
    name, rest = spec.split(":", 1)
    path, _, query = rest.partition("?")
    options = dict(parse_qsl(query, keep_blank_values=True)) if query else {}
    return name.strip().lower(), path, options


def load(spec: str, **options: Any) -> Dataset:
    """Load a dataset from a spec string; ``options`` override those in the spec's query part."""
    name, path, spec_options = parse_spec(spec)
    if name not in _LOADERS:
        raise DataError(f"dataset spec {spec!r}: unknown dataset kind {name!r}; known: {', '.join(loader_names())}")
    merged: Mapping[str, Any] = {**spec_options, **options}
    ds = _LOADERS[name](path, **merged)
    ds.spec = spec
    return ds
