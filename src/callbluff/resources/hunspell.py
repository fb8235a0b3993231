"""The system Hunspell dictionary (Debian ``hunspell-en-us``): where it is and all its word forms.

Used by the essay scorer's spelling feature (:mod:`callbluff.models.features`), the non-word-rate filter
(:mod:`callbluff.defenses.lexicon`) and the ``hunspell`` requirement (:mod:`callbluff.resources.requirements`).
"""

from __future__ import annotations

import re
from pathlib import Path

HUNSPELL_DIRS = ("/usr/share/hunspell", "/usr/share/myspell/dicts", "/usr/share/myspell",
                 "/Library/Spelling")
"""Where system Hunspell dictionaries live (Debian ``hunspell-en-us``, macOS)."""


def hunspell_files(lang: str = "en_US") -> tuple[Path, Path] | None:
    """The ``.dic`` and ``.aff`` files of ``lang`` in the first of :data:`HUNSPELL_DIRS` that has both."""
    for d in HUNSPELL_DIRS:
        dic, aff = Path(d) / f"{lang}.dic", Path(d) / f"{lang}.aff"
        if dic.is_file() and aff.is_file():
            return dic, aff
    return None


def expand_hunspell(dic: Path, aff: Path) -> set[str]:
    """All word forms of a Hunspell dictionary: stems plus single-flag prefix/suffix expansions.

    Handles the plain ``PFX``/``SFX`` rules of ``en_US.aff`` (strip, add, condition; cross products of one
    prefix and one suffix where both allow it). Compound rules (ordinal numbers) are ignored: numbers are
    never counted as misspellings anyway.
    """
    rules: dict[str, tuple[str, bool, list[tuple[str, str, re.Pattern[str]]]]] = {}
    for line in aff.read_text(encoding="utf-8", errors="replace").splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[0] in ("PFX", "SFX"):
            kind, flag = parts[0], parts[1]
            if parts[2] in ("Y", "N") and flag not in rules:
                rules[flag] = (kind, parts[2] == "Y", [])
                continue
            if flag in rules and len(parts) >= 5:
                strip = "" if parts[2] == "0" else parts[2]
                add = "" if parts[3] == "0" else parts[3].split("/")[0]
                cond = parts[4]
                pat = re.compile(("^" + cond) if kind == "PFX" else (cond + "$")) if cond != "." else re.compile("")
                rules[flag][2].append((strip, add, pat))

    def apply(word: str, flag: str) -> list[str]:
        kind, _, rs = rules[flag]
        out = []
        for strip, add, pat in rs:
            if kind == "SFX":
                if pat.search(word) and (not strip or word.endswith(strip)):
                    out.append((word[: len(word) - len(strip)] if strip else word) + add)
            elif pat.search(word) and (not strip or word.startswith(strip)):
                out.append(add + (word[len(strip):] if strip else word))
        return out

    words: set[str] = set()
    lines = dic.read_text(encoding="utf-8", errors="replace").splitlines()
    for line in lines[1:]:
        entry = line.split("\t")[0].strip()
        if not entry:
            continue
        stem, _, flags = entry.partition("/")
        words.add(stem.lower())
        sfx = [f for f in flags if f in rules and rules[f][0] == "SFX"]
        pfx = [f for f in flags if f in rules and rules[f][0] == "PFX"]
        suffixed = [w for f in sfx for w in apply(stem, f)]
        words.update(w.lower() for w in suffixed)
        for f in pfx:
            words.update(w.lower() for w in apply(stem, f))
            if rules[f][1]:
                for s in sfx:
                    if rules[s][1]:
                        for w in apply(stem, s):
                            words.update(x.lower() for x in apply(w, f))
    return words
