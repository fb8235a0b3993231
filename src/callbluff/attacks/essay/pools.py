"""Text pools of the Add adversaries (Kumar et al. 2020, Sec. 3.3 AddSong, AddSpeech, AddTruth, AddLies).

A pool is a JSON list of strings, a text file with one entry per line, or a CSV column (``.gz`` files are
read compressed). The pools shipped with callbluff live in ``callbluff/data/pools`` (sources and licences in
the README there). Entries become the units that are added: as they are (``entry``), split into spaCy
sentences (``sentence``) or into lyric lines (``line``).
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
from importlib.resources import files
from pathlib import Path
from typing import Literal

from callbluff.resources.context import Resources

PoolSplit = Literal["entry", "sentence", "line"]

#: Lyric lines: line breaks, or a sentence end glued to the next capitalised line ("tide.My hand").
_LINE_BREAK = re.compile(r"\s*\n\s*|(?<=[.!?])(?=[A-Z])")


def default_pool_path(name: str) -> Path:
    """The shipped pool ``name`` (e.g. ``songs.json``)."""
    return Path(str(files("callbluff") / "data" / "pools" / name))


def _read_text(p: Path) -> str:
    raw = p.read_bytes()
    if p.suffix == ".gz":
        raw = gzip.decompress(raw)
    return raw.decode("utf-8-sig")


def read_pool(path: str | Path, column: str = "text") -> list[str]:
    """The non-blank entries of the pool file ``path`` (JSON list, CSV column ``column``, else one per line).

    Errors name the file, the entry and the fix."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"pool {p}: no such file; pass pool= a JSON list of strings, a text file with one "
                                "entry per line, or a CSV with a text column")
    kind = p.name.removesuffix(".gz").rsplit(".", 1)[-1].lower()
    text = _read_text(p)
    if kind == "json":
        try:
            data = json.loads(text)
        except ValueError as e:
            raise ValueError(f"pool {p}: not valid JSON ({e}); expected a JSON list of strings") from None
        if not isinstance(data, list):
            raise ValueError(f"pool {p}: the JSON is a {type(data).__name__}, expected a list of strings")
        for i, x in enumerate(data):
            if not isinstance(x, str):
                raise ValueError(f"pool {p}: entry {i} is a {type(x).__name__} ({str(x)[:40]!r}), expected a string")
        entries = data
    elif kind == "csv":
        reader = csv.DictReader(io.StringIO(text))
        if column not in (reader.fieldnames or []):
            raise ValueError(f"pool {p}: no column {column!r} (columns: {', '.join(reader.fieldnames or [])}); "
                             "pass column=NAME")
        entries = [row[column] or "" for row in reader]
    else:
        entries = text.splitlines()
    out = [e.strip() for e in entries if e and e.strip()]
    if not out:
        raise ValueError(f"pool {p}: no non-blank entry; fill the pool or pass another pool=")
    return out


def split_entries(entries: list[str], split: PoolSplit, res: Resources) -> list[str]:
    """The units of ``entries``: the entries themselves, their spaCy sentences, or their lyric lines."""
    if split == "entry":
        return [" ".join(e.split()) for e in entries]
    out: list[str] = []
    for e in entries:
        if split == "sentence":
            out.extend(e[a:b] for a, b in res.spans(e).sentences)
        else:
            out.extend(x.strip() for x in _LINE_BREAK.split(e) if x and x.strip())
    return [" ".join(x.split()) for x in out if any(c.isalnum() for c in x)]


def load_pool_items(pool: str | None, column: str, split: PoolSplit, default: str, res: Resources,
                    who: str) -> list[str]:
    """The units an attack draws from: pool file ``pool`` (None: the shipped ``default``), split."""
    path = default_pool_path(default) if pool is None else Path(pool).expanduser()
    try:
        items = split_entries(read_pool(path, column), split, res)
    except (OSError, ValueError) as e:
        raise type(e)(f"{who}: {e}") from None
    if not items:
        raise ValueError(f"{who}: pool {path} has no usable {split} (no letters or digits); pass another pool=")
    return items


def load_pool_entries(pool: str | None, column: str, split: PoolSplit, default: str, res: Resources,
                      who: str) -> list[list[str]]:
    """The pool's entries (songs, speech excerpts), each as its units (``split``): what the released-form
    additions append whole. Entries without a usable unit are left out."""
    path = default_pool_path(default) if pool is None else Path(pool).expanduser()
    try:
        entries = [units for e in read_pool(path, column) if (units := split_entries([e], split, res))]
    except (OSError, ValueError) as e:
        raise type(e)(f"{who}: {e}") from None
    if not entries:
        raise ValueError(f"{who}: pool {path} has no usable {split} (no letters or digits); pass another pool=")
    return entries
