"""File access shared by the loaders: path checks, gzip, decoding with line numbers, JSON with positions,
option parsing, column checks and the eager/lazy :class:`~callbluff.datasets.base.Dataset` builder.

Every failure becomes a :class:`~callbluff.datasets.base.DataError` whose message reads
``FILE: line N: what is wrong. Fix: what to do`` so a user can go straight to the offending byte.

Files are compressed or not by content (the gzip magic bytes ``1f 8b``), not by extension, so a
``.tsv.gz`` that was decompressed in place or a gzip without the suffix both load.
"""

from __future__ import annotations

import codecs
import csv
import difflib
import gzip
import json
import math
import re
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from callbluff.datasets.base import DataError, Dataset
from callbluff.records import Prompt, Record, Task

GZIP_MAGIC = b"\x1f\x8b"
ENCODING_FIX = "if the file uses another encoding, add ?encoding=latin-1 (or cp1252, utf-16 ...) to the spec"


def fail(path: str | Path, where: str | None, problem: str, fix: str | None = None, *,
         line: int | None = None, key: str | None = None) -> DataError:
    """Build (not raise) a :class:`DataError` reading ``path: where: problem. Fix: fix``."""
    msg = f"{path}: {where}: {problem}" if where else f"{path}: {problem}"
    if fix:
        msg += f". Fix: {fix}"
    return DataError(msg, path=str(path), line=line, key=key)


# ---------------------------------------------------------------- files


def resolve_file(path: str | Path, what: str = "data file") -> Path:
    """``path`` as an existing, non-empty regular file, or a DataError saying what is there instead."""
    p = Path(path).expanduser()
    if not p.exists():
        hint = _where_hint(p)
        for alt in _near_names(p):
            if alt.exists():
                hint = f"did you mean {alt}?"
                break
        raise fail(path, None, f"{what} not found", hint)
    if p.is_dir():
        raise fail(path, None, f"is a directory, expected a {what}", "give the path of the file itself")
    if p.stat().st_size == 0:
        raise fail(path, None, f"empty file (0 bytes); expected: {what}",
                   "re-download or re-export the file")
    return p


def resolve_dir(path: str | Path, what: str = "data directory") -> Path:
    p = Path(path).expanduser()
    if not p.exists():
        raise fail(path, None, f"{what} not found", _where_hint(p))
    if not p.is_dir():
        raise fail(path, None, f"is a file, expected a {what}", "give the directory that holds the files")
    return p


def _where_hint(p: Path) -> str:
    """The fix for a missing path, naming the folder actually looked in: a relative path was resolved against the
    current directory; for an absolute one (e.g. a suite's relative path, resolved against the suite's folder),
    the nearest folder on the way that exists."""
    if not p.is_absolute():
        return f"check the path (relative paths are resolved against the current directory {Path.cwd()})"
    folder = p.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if folder == p.parent:
        return f"check the path (looked in {folder}, which has no {p.name})"
    return f"check the path (looked for it under {folder}: {p.parent.relative_to(folder)} is not there)"


def _near_names(p: Path) -> list[Path]:
    """Likely intended names: with/without ``.gz``, and case-insensitive matches in the same directory."""
    out = [p.with_name(p.name[:-3])] if p.name.endswith(".gz") else [p.with_name(p.name + ".gz")]
    parent = p.parent if str(p.parent) else Path(".")
    if parent.is_dir():
        try:
            names = [c.name for c in parent.iterdir()]
        except OSError:
            names = []
        out += [parent / n for n in difflib.get_close_matches(p.name, names, n=2, cutoff=0.75)]
    return out


def check_encoding(encoding: str, path: str | Path) -> str:
    try:
        return codecs.lookup(encoding).name
    except LookupError:
        raise fail(path, None, f"unknown encoding {encoding!r}",
                   "use a Python codec name such as utf-8, latin-1, cp1252 or utf-16") from None


def _open_binary(p: Path) -> Any:
    with open(p, "rb") as fh:
        magic = fh.read(2)
    if magic == GZIP_MAGIC:
        return gzip.open(p, "rb")
    if p.name.endswith(".gz"):
        raise fail(p, None, f"named .gz but is not gzip-compressed (starts with {magic!r})",
                   "re-download the file, or rename it without .gz if it is plain text")
    return open(p, "rb")


def _gzip_fail(p: Path, after_line: int, exc: BaseException) -> DataError:
    return fail(p, f"line {after_line + 1}" if after_line else None,
                f"corrupt or truncated gzip data after {after_line} complete lines ({type(exc).__name__}: {exc})",
                "re-download the file, or check it with `gzip -t`", line=after_line + 1)


def iter_lines(path: str | Path, encoding: str = "utf-8", keepends: bool = False) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` for each line (1-based, newline and ``\\r`` removed).

    Decoding is per line, so an undecodable byte is reported with its line and column. A UTF-8 byte
    order mark at the start is dropped. ``keepends=True`` keeps the line terminator (what the ``csv``
    module needs to keep line breaks inside quoted fields). ``path`` must already have passed :func:`resolve_file`.
    """
    p = Path(path)
    enc = check_encoding(encoding, p)
    decode = codecs.getdecoder(enc)
    if enc.startswith(("utf-16", "utf-32")):
        # multi-byte newlines: decode the whole file, then split
        text = read_text(p, encoding)
        parts = text.split("\n")
        last = len(parts) - 1
        for n, line in enumerate(parts, 1):
            if n - 1 == last and not line:
                break
            yield n, (line + "\n" if n - 1 < last else line) if keepends else line.rstrip("\r")
        return
    n = 0
    with _open_binary(p) as fh:
        it = iter(fh)
        while True:
            try:
                raw = next(it)
            except StopIteration:
                break
            except (OSError, EOFError, zlib.error) as exc:
                raise _gzip_fail(p, n, exc) from None
            n += 1
            try:
                line = decode(raw)[0]
            except UnicodeDecodeError as exc:
                bad = raw[exc.start:exc.end]
                raise fail(p, f"line {n}, column {exc.start + 1}",
                           f"cannot decode byte(s) {bad!r} as {encoding} ({exc.reason})", ENCODING_FIX,
                           line=n) from None
            if n == 1 and line.startswith("\ufeff"):
                line = line[1:]
            yield n, line if keepends else line.rstrip("\n").rstrip("\r")
    if n == 0:
        raise fail(p, None, "empty file (no data after decompression)", "re-download or re-export the file")


# Essays can exceed the csv module's default 128 KiB field limit.
csv.field_size_limit(2**31 - 1)


def iter_csv(path: str | Path, encoding: str = "utf-8", delimiter: str = ",",
             quoting: int = csv.QUOTE_MINIMAL) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line, fields)`` for each CSV record, ``line`` being the 1-based line where it starts.

    Quoted fields may span lines; malformed quoting (e.g. an unclosed quote at the end of the file)
    raises naming the line. Blank lines are skipped.
    """
    lines = iter_lines(path, encoding, keepends=True)
    reader = csv.reader((text for _, text in lines), delimiter=delimiter, quoting=quoting, strict=True)
    prev = 0
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise fail(path, f"line {prev + 1}", f"CSV syntax error ({exc}) in the record starting here",
                       "close the quote or escape quotes inside fields by doubling them (\"\"); for files "
                       "written without CSV quoting add ?quoting=none", line=prev + 1) from None
        start, prev = prev + 1, reader.line_num
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        yield start, row


def read_text(path: str | Path, encoding: str = "utf-8") -> str:
    """Whole decoded text of a (possibly gzipped) file; decode errors name line and column."""
    p = Path(path)
    enc = check_encoding(encoding, p)
    with _open_binary(p) as fh:
        try:
            raw = fh.read()
        except (OSError, EOFError, zlib.error) as exc:
            raise _gzip_fail(p, 0, exc) from None
    if not raw.strip():
        raise fail(p, None, "empty file (no data after decompression)" if raw == b"" else
                   "file holds only whitespace", "re-download or re-export the file")
    try:
        text = raw.decode(enc)
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        bad = raw[exc.start:exc.end]
        raise fail(p, f"line {line}, column {col}", f"cannot decode byte(s) {bad!r} as {encoding} ({exc.reason})",
                   ENCODING_FIX, line=line) from None
    return text.removeprefix("\ufeff")


def load_json(path: str | Path, encoding: str = "utf-8") -> Any:
    """Parse a JSON file; a syntax error (e.g. a truncated file) names its line and column, a lone surrogate
    (:func:`check_surrogates`) its line and key."""
    text = read_text(path, encoding)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        truncated = exc.pos >= len(text.rstrip())
        what = "JSON ends unexpectedly (file truncated?)" if truncated else "invalid JSON"
        raise fail(path, f"line {exc.lineno}, column {exc.colno}", f"{what}: {exc.msg}",
                   "re-download or re-export the file; check it with `python -m json.tool FILE`",
                   line=exc.lineno) from None
    check_surrogates(path, text, doc)
    return doc


# A ``\uD800``-``\uDFFF`` escape that is not half of a high-low pair: JSON accepts it, Python decodes it to a
# lone surrogate, which is no Unicode text (it cannot be encoded as UTF-8: the cache, the Parquet files, a
# target's request would fail far from the file). Searched in the raw JSON first, so clean text costs one scan.
_LONE_ESCAPE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
                          r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _surrogate_key(obj: Any, key: str = "") -> tuple[str, str] | None:
    """The key path (``text``, ``[3].answers[0]``) and the string of the first lone surrogate in ``obj``."""
    if isinstance(obj, str):
        return (key, obj) if _SURROGATE.search(obj) else None
    items: Iterable[tuple[str, Any]] = ()
    if isinstance(obj, Mapping):
        items = ((f"{key}.{k}" if key else str(k), v) for k, v in obj.items())
        for k in obj:  # a key is user text too
            if isinstance(k, str) and _SURROGATE.search(k):
                return (f"{key}.{k!a}" if key else ascii(k)), k
    elif isinstance(obj, list):
        items = ((f"{key}[{i}]", v) for i, v in enumerate(obj))
    for k, v in items:
        found = _surrogate_key(v, k)
        if found is not None:
            return found
    return None


def check_surrogates(path: str | Path, raw: str, obj: Any, *, line: int | None = None,
                     where: str | None = None, key: str = "") -> None:
    """Refuse a lone UTF-16 surrogate in ``obj`` (decoded from the JSON text ``raw``; ``line``: the line
    ``raw`` is, for JSON Lines; ``where`` and ``key``: a JSON value inside a row's cell) with a
    :class:`DataError` naming the file, the line and the key, and the fix."""
    m = _LONE_ESCAPE.search(raw) if "\\u" in raw else None
    if m is None:
        return
    found = _surrogate_key(obj, key)
    if found is None:  # e.g. an escaped backslash before "ud800": text, not an escape
        return
    key, value = found
    if line is None and where is None:
        line = raw.count("\n", 0, m.start()) + 1
    bad = _SURROGATE.search(value)
    assert bad is not None
    raise fail(path, where or f"line {line}", f"key {key!r} holds a lone UTF-16 surrogate {m.group(0)} (character "
               f"{bad.start() + 1} of {ascii(value[max(0, bad.start() - 20):bad.start() + 20])}), which is not "
               "text and cannot be written as UTF-8",
               "remove it or complete the pair: a \\uD800-\\uDBFF escape must be followed by a \\uDC00-\\uDFFF "
               "one (e.g. \\ud83d\\ude00); re-export the data with a JSON writer that keeps text as UTF-8",
               line=line, key=key)


# ---------------------------------------------------------------- options


class Options:
    """Loader options from a spec query (strings) or Python keywords (any type), checked for typos."""

    def __init__(self, loader: str, path: str | Path, options: Mapping[str, Any]) -> None:
        self.loader = loader
        self.path = str(path)
        self.raw = dict(options)
        self.used: set[str] = set()

    def _err(self, name: str, problem: str, fix: str) -> DataError:
        return DataError(f"{self.loader}:{self.path}: option {name!r}: {problem}. Fix: {fix}",
                         path=self.path, key=name)

    def has(self, name: str) -> bool:
        self.used.add(name)
        return name in self.raw and self.raw[name] is not None and self.raw[name] != ""

    def text(self, name: str, default: str | None = None) -> str | None:
        self.used.add(name)
        v = self.raw.get(name)
        return default if v is None or v == "" else str(v)

    def choice(self, name: str, choices: Sequence[str], default: str) -> str:
        v = (self.text(name, default) or default).strip().lower()
        if v not in choices:
            raise self._err(name, f"{v!r} is not one of {', '.join(choices)}", f"use {name}={choices[0]}")
        return v

    def flag(self, name: str, default: bool = False) -> bool:
        self.used.add(name)
        v = self.raw.get(name)
        if v is None or v == "":
            return default
        if isinstance(v, bool):
            return v
        s = str(v).strip().lower()
        if s in ("1", "true", "yes", "on"):
            return True
        if s in ("0", "false", "no", "off"):
            return False
        raise self._err(name, f"{v!r} is not a boolean", f"use {name}=true or {name}=false")

    def number(self, name: str) -> float | None:
        self.used.add(name)
        v = self.raw.get(name)
        if v is None or v == "":
            return None
        try:
            return float(v)
        except (TypeError, ValueError):
            raise self._err(name, f"{v!r} is not a number", f"use e.g. {name}=0") from None

    def str_list(self, name: str, default: Sequence[str] = ()) -> list[str]:
        """Comma-separated string, or a list/tuple, or a single scalar."""
        self.used.add(name)
        v = self.raw.get(name)
        if v is None or v == "":
            return list(default)
        items = v if isinstance(v, (list, tuple, set, frozenset)) else str(v).split(",")
        return [str(x).strip() for x in items if str(x).strip()]

    def int_list(self, name: str) -> list[int] | None:
        if not self.has(name):
            return None
        out = []
        for s in self.str_list(name):
            try:
                out.append(int(float(s)))
            except ValueError:
                raise self._err(name, f"{s!r} is not an integer", f"use e.g. {name}=1,2") from None
        return out

    def finish(self) -> None:
        """Reject options nobody read (typos), naming the closest known one."""
        unknown = sorted(set(self.raw) - self.used)
        if unknown:
            name = unknown[0]
            close = difflib.get_close_matches(name, sorted(self.used), n=1)
            fix = f"did you mean {close[0]!r}?" if close else f"known options: {', '.join(sorted(self.used))}"
            raise self._err(name, "unknown option", fix)


# ---------------------------------------------------------------- columns and values


def check_columns(path: str | Path, where: str, found: Sequence[str], expected: Iterable[str],
                  what: str = "column") -> dict[str, int]:
    """Index of each expected column in ``found``; missing ones raise listing expected vs found and
    naming a probably renamed column (case-insensitive or close spelling)."""
    index = {name: i for i, name in enumerate(found)}
    expected = list(expected)
    missing = [c for c in expected if c not in index]
    if missing:
        spare = [c for c in found if c not in expected]
        fix = rename_hints(missing, spare) or "check that this is the right file and format"
        raise fail(path, where, f"missing {what}(s) {', '.join(map(repr, missing))}: expected "
                   f"{list(expected)}, found {list(found)}", fix, key=missing[0])
    return {c: index[c] for c in expected}


def rename_hints(missing: Iterable[str], found: Sequence[str], mapped: bool = False) -> str:
    """Hints for near-miss column names (``'Essay' looks like a renamed 'essay'``; with ``mapped``, for a
    misspelt column mapping, ``did you mean 'answer' instead of 'answr'?``), else ``""``."""
    hints = []
    lower = {c.lower().strip(): c for c in found}
    for m in missing:
        cand = lower.get(m.lower()) or next(iter(difflib.get_close_matches(m, list(found), n=1, cutoff=0.6)), None)
        if cand is not None:
            hints.append(f"did you mean {cand!r} instead of {m!r}?" if mapped else
                         f"{cand!r} looks like a renamed {m!r}: rename it back")
    if len(found) == 1 and any(ch in found[0] for ch in "\t,;|"):
        hints.append(f"only one column {found[0][:40]!r} was found: is the delimiter right? (?delimiter=tab)")
    return "; ".join(hints)


def parse_number(path: str | Path, where: str, column: str, value: Any, *, line: int | None = None) -> float:
    """A score as float; a non-numeric value raises naming the column and value."""
    if isinstance(value, bool):
        raise fail(path, where, f"{column} is a boolean ({value!r}), expected a number",
                   "store scores as numbers", line=line, key=column)
    if isinstance(value, (int, float)):
        x = float(value)
    else:
        s = str(value).strip()
        try:
            x = float(s)
        except ValueError:
            raise fail(path, where, f"{column} is {s!r}, not a number",
                       "fix the value, or map the right column to the score", line=line, key=column) from None
    if not math.isfinite(x):
        raise fail(path, where, f"{column} is {value!r}, not a finite number",
                   "fix or drop the row", line=line, key=column)
    return x


def fmt_num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def strip_csv_quotes(field: str) -> str:
    """Undo the CSV quoting left in a field read with quoting disabled (ASAP releases).

    A field that starts *and* ends with ``"`` was written by a CSV writer: drop the outer quotes and turn
    the doubled ``""`` inside back into ``"``. Anything else is returned unchanged (one ASAP-AES essay,
    10534, starts with a quotation mark that has no partner; it stays as released).
    """
    if len(field) >= 2 and field[0] == '"' and field[-1] == '"':
        return field[1:-1].replace('""', '"')
    return field


# ---------------------------------------------------------------- dataset builder


def build_dataset(spec: str, task: Task, prompts: dict[str, Prompt], make_records: Callable[[], Iterator[Record]],
                  *, lazy: bool = False, meta: dict[str, Any] | None = None) -> Dataset:
    """A Dataset over ``make_records``.

    Eager (default): the records are parsed once now (every error surfaces at load time) and kept.
    Lazy: one validating pass now (counts, errors) without keeping records; each iteration re-reads the
    file, so memory stays flat for data larger than RAM.
    """
    meta = meta if meta is not None else {}  # the same dict the generator may add warnings to
    if lazy:
        meta["count"] = sum(1 for _ in make_records())
        factory = make_records
    else:
        records = tuple(make_records())
        meta["count"] = len(records)
        factory = records.__iter__  # type: ignore[assignment]
    return Dataset(spec=spec, task=task, prompts=prompts, records_factory=factory, meta=meta)


#: Files at least this large stream (``lazy``) unless their spec says ``lazy=false``.
LAZY_AUTO_BYTES = 64 * 2**20


def lazy_default(path: str | Path) -> bool:
    """The default of a loader's ``lazy`` option: true for a file of :data:`LAZY_AUTO_BYTES` or more. Keeping the
    records of a large file would make memory grow with the data (a million short answers hold about 1 GB as
    records); a smaller file is parsed once and kept, which saves the validating pass a lazy dataset makes."""
    try:
        return Path(path).stat().st_size >= LAZY_AUTO_BYTES
    except OSError:
        return False


class IdChecker:
    """Raise on a repeated record id (ids must be stable and unique to trace adversarial examples)."""

    def __init__(self, path: str | Path, column: str) -> None:
        self.path, self.column = path, column
        self.seen: dict[str, str] = {}

    def __call__(self, rid: str, where: str, line: int | None = None) -> None:
        if not rid:
            raise fail(self.path, where, f"empty id in {self.column}", "give every row an id", line=line,
                       key=self.column)
        first = self.seen.get(rid)
        if first is not None:
            raise fail(self.path, where, f"duplicate id {rid!r} in {self.column} (first seen at {first})",
                       "ids must be unique; remove the duplicate row", line=line, key=self.column)
        self.seen[rid] = where
