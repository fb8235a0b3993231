"""Undo what a reader does not see or reads through, before the injection detector reads an answer.

An LLM grader reads through obfuscations a regular expression does not: it decodes base64, reads leetspeak and
letter-spaced words, ignores zero-width characters and sees a Cyrillic "о" as an "o" (Boucher et al. 2022, "Bad
Characters", Sec. 4; Greshake et al. 2023 on encoded indirect injections; the obfuscation families of Prompt
Guard's and AEGIS's (arXiv 2509.00088) evaluation sets). :func:`normalise` turns an answer into the text such a
reader understands, and says which steps changed something, so ``explain`` can name them:

1. ``nfkc``: Unicode NFKC (full-width, mathematical alphanumerics, ligatures become plain letters);
2. ``invisible``: zero-width characters, soft hyphens, word joiners, variation selectors and bidi controls removed
   (:func:`callbluff.defenses.injection.clean`); text inside a right-to-left override (U+202E ... U+202C) is
   reversed first, as it is displayed (``bidi``); the Unicode Tags block is decoded to the ASCII it spells and
   appended (``tags``);
3. ``confusables``: Cyrillic and Greek look-alikes folded to Latin inside words that also hold Latin letters
   (a whole Russian or Greek word stays itself, so a real answer in Russian is not turned into nonsense);
4. ``letter-spaced``: runs of single letters separated by spaces, dots, hyphens or underscores joined into words
   ("G I V E  F U L L" -> "GIVE FULL", "p.l.e.a.s.e" -> "please");
5. ``leetspeak``: digits and symbols inside words that also hold letters read as letters (``0``->o, ``1``->i,
   ``3``->e, ``4``/``@``->a, ``5``/``$``->s, ``7``->t, ``!``->i); a number on its own is left alone (a grade);
6. ``base64`` / ``base32`` / ``hex`` / ``url`` / ``binary`` / ``morse``: blobs that decode to readable text are replaced by that
   text, and the result is normalised again (one level of nesting more): base64, hex bytes, percent-encoding,
   8-bit binary groups (``01000111 01101001 ...``) and International Morse code (letters separated by spaces,
   words by `` / `` or three spaces), the encodings of garak's ``encoding`` probes; HTML character references
   (``entities``: ``&#71;&#105;...``) and ``\\uXXXX`` / ``\\xXX`` escapes (``escapes``: how JSON and Python literals
   write characters) in runs of three or more (fourth round); base85 / Ascii85 blobs and four or more NATO
   spelling-alphabet code words in a row (``nato``: "Papa Alfa Sierra Sierra" -> "pass"; sixth round);
7. ``marks``: combining marks stacked on Latin letters removed (strike-through, underline and "zalgo" overlays:
   the combining blocks U+0300-U+036F, U+0483-U+0489, U+1AB0-U+1AFF, U+1DC0-U+1DFF, U+20D0-U+20FF and
   U+FE20-U+FE2F left after NFC on a Latin letter, digit, space or punctuation), which a reader reads through; an
   accented letter that Unicode composes (é, ñ, ő, ự) is one character after NFC and stays (a mark NFC could not
   compose into it is removed), and marks on other scripts (Devanagari vowel signs) are not touched;
8. ``rot13`` / ``caesar`` / ``reversed`` / ``atbash``: a run of words that are no English words (wordfreq's English
   list) but whose ROT13, other Caesar shift, Atbash or reversal are is replaced by that reading (the classic encodings of garak's
   ``encoding`` probes and Prompt Guard's obfuscation families: a capable grader decodes them). ROT13 and reversal
   need two such words in the run; the other 24 shifts need three (more shifts, more chance that two misspelt
   words both shift into English). A sentence in another language is none of them (its words' shifts and
   reversals are no English words), so it is left alone. The sixth round adds word games read word by word
   (``pig-latin``: "easeplay" -> "please"; ``vowels``: a word without vowels read as the most frequent English word
   with its consonants, "crdt" -> "credit"; ``keyboard``: typed one key to the right or left, "hobr" -> "give"),
   each needing three marked words, and reads the words again after leetspeak (leetspeak under a reversal);
9. seventh round: ``rail-fence`` (a run of tokens that are no English words read back through a rail fence of two
   to five rails, when every word of the reading is English), ``zero-width`` (binary spelt in two kinds of
   zero-width characters, decoded and appended, as the Tags text is) and ``acrostic`` (the first letters of five or
   more lines, cut into common English words, appended: "full marks").

The result is an analysis copy: the grader still receives :func:`~callbluff.defenses.injection.clean` of the
answer (its own letters); only the detector reads this copy.
"""

from __future__ import annotations

import base64
import binascii
import html
import json
import math
import re
import unicodedata
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

__all__ = ["CONFUSABLES", "Normalised", "clean", "hidden_text", "normalise"]

_INVISIBLE = ("\u00ad\u180e\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff"
              "\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_STRIP = {ord(c): None for c in _INVISIBLE}
_STRIP.update({cp: None for cp in range(0xFE00, 0xFE10)})
_STRIP.update({cp: None for cp in range(0xE0100, 0xE01F0)})
_STRIP.update({cp: None for cp in range(0xE0000, 0xE0080)})
_TAGS = re.compile("[\U000e0020-\U000e007e]+")

CONFUSABLES = {
    # Cyrillic
    "\u0430": "a", "\u0432": "b", "\u0441": "c", "\u0435": "e", "\u04bb": "h", "\u0456": "i", "\u0458": "j",
    "\u043a": "k", "\u043c": "m", "\u043d": "h", "\u043e": "o", "\u0440": "p", "\u0455": "s", "\u0442": "t",
    "\u0443": "y", "\u0445": "x", "\u0501": "d", "\u051b": "q", "\u051d": "w", "\u04af": "y", "\u0410": "A",
    "\u0412": "B", "\u0421": "C", "\u0415": "E", "\u041d": "H", "\u0406": "I", "\u0408": "J", "\u041a": "K",
    "\u041c": "M", "\u041e": "O", "\u0420": "P", "\u0405": "S", "\u0422": "T", "\u0425": "X", "\u0423": "Y",
    # Greek
    "\u03bf": "o", "\u03b1": "a", "\u03b5": "e", "\u03b9": "i", "\u03ba": "k", "\u03bd": "v", "\u03c1": "p",
    "\u03c4": "t", "\u03c5": "u", "\u03c7": "x", "\u0391": "A", "\u0392": "B", "\u0395": "E", "\u0396": "Z",
    "\u0397": "H", "\u0399": "I", "\u039a": "K", "\u039c": "M", "\u039d": "N", "\u039f": "O", "\u03a1": "P",
    "\u03a4": "T", "\u03a5": "Y", "\u03a7": "X",
}
"""Look-alike letters folded to Latin before matching (a subset of Unicode's confusables: the Cyrillic and Greek
letters that render like Latin ones in common fonts). Only the matched copy is folded; the grader gets the
answer's own letters (a Russian or Greek answer stays intact)."""
def clean(text: str) -> str:
    """NFKC and the invisible characters removed (module docstring): what the grader is sent."""
    return unicodedata.normalize("NFKC", text).translate(_STRIP)


def hidden_text(text: str) -> str:
    """The ASCII that Unicode Tags characters in ``text`` spell (an invisible instruction), "" when none."""
    return " ".join("".join(chr(ord(c) - 0xE0000) for c in m.group()) for m in _TAGS.finditer(text))


_COMBINING = re.compile("(?<=[A-Za-z0-9 .,!?'\u00c0-\u024f\u1e00-\u1eff])[\u0300-\u036f\u0483-\u0489\u1ab0-\u1aff\u1dc0-\u1dff"
                        "\u20d0-\u20ff\ufe20-\ufe2f]+")
_ALPHA_WORD = re.compile(r"[A-Za-z]+(?:'[a-z]+)?")
@lru_cache(maxsize=1)
def _english_zipf() -> dict[str, float]:
    """wordfreq's small English list (the 30,000 most frequent words) as word -> Zipf frequency (log10 per billion
    words), loaded once; empty without wordfreq (the readings that need it are then skipped)."""
    try:
        from wordfreq import get_frequency_dict
        return {w: math.log10(f) + 9 for w, f in get_frequency_dict("en", wordlist="small").items()}
    except (ImportError, OSError, LookupError):
        return {}


@lru_cache(maxsize=1)
def _english_words() -> frozenset[str]:
    """The words of :func:`_english_zipf` (one load of the list)."""
    return frozenset(_english_zipf())


def _shift(k: int) -> Callable[[str], str]:
    """The Caesar shift by ``k`` letters (ROT13 is ``k = 13``), case kept, other characters as they are."""
    low = "abcdefghijklmnopqrstuvwxyz"
    table = str.maketrans(low + low.upper(), low[k:] + low[:k] + (low[k:] + low[:k]).upper())
    return lambda x: x.translate(table)


def _atbash() -> Callable[[str], str]:
    """Atbash (a <-> z, b <-> y, ...), case kept: its own inverse."""
    low = "abcdefghijklmnopqrstuvwxyz"
    table = str.maketrans(low + low.upper(), low[::-1] + low[::-1].upper())
    return lambda x: x.translate(table)


_VOWELS = frozenset("aeiou")


def _pig_latin_word(w: str) -> str:
    """One word of pig latin read back: "easeplay" -> "please" (the leading consonants, one to three, moved to the
    end before "ay"), "answerway" -> "answer" (a word that starts with a vowel gains "way", "yay" or "hay"), and the
    hyphenated form ("ive-gay", "answer-yay"); the first reading that is an English word (wordfreq) is taken, the
    longest cluster first; ``w`` itself when none is."""
    en = _english_words()
    low = w.lower()
    if "-" in low:  # the hyphenated form: "ive-gay" -> "give", "answer-yay" -> "answer"
        stem, _, tail = w.partition("-")
        if not tail.lower().endswith("ay"):
            return w
        cluster = tail[:-2]
        cand = stem if cluster.lower() in ("", "w", "y", "h") else cluster + stem
        return cand.lower() if cand.lower() in en else w
    if not low.endswith("ay") or len(low) < 4:
        return w
    stem = w[:-2]
    for k in (3, 2, 1):
        tail = stem[-k:]
        if len(stem) > k and not (_VOWELS & set(tail.lower().replace("qu", "q"))):
            cand = tail + stem[:-k]
            if cand.lower() in en:
                return cand.lower() if w.islower() else cand.capitalize()
    for suffix in ("way", "yay", "hay"):  # a word that starts with a vowel: "answerway", "answeryay"
        if low.endswith(suffix) and low[:-3] in en:
            return w[:-3]
    return w


_QWERTY = ("`1234567890-=", "qwertyuiop[]\\", "asdfghjkl;'", "zxcvbnm,./")


def _keyboard(step: int) -> Callable[[str], str]:
    """Each key read as the key ``step`` places along its QWERTY row (``-1``: the key to its left), upper-case
    letters too: a text typed with the hands shifted one key over ("hobr" -> "give")."""
    src, dst = "", ""
    for row in _QWERTY:
        for i, c in enumerate(row):
            j = i + step
            if 0 <= j < len(row):
                src += c
                dst += row[j]
    up = [(a.upper(), b.upper()) for a, b in zip(src, dst, strict=True) if a.isalpha() and b.isalpha()]
    table = str.maketrans(src + "".join(a for a, _ in up), dst + "".join(b for _, b in up))
    return lambda x: x.translate(table)


@lru_cache(maxsize=1)
def _skeletons() -> dict[str, str]:
    """English words by their consonant skeleton (a, e, i, o, u removed; y kept), the most frequent word of each
    skeleton (wordfreq's list is in frequency order): "crdt" -> "credit", "th" -> "the"."""
    out: dict[str, str] = {}
    try:
        from wordfreq import iter_wordlist
        words = iter_wordlist("en", wordlist="small")
    except (ImportError, OSError, LookupError):
        return out
    for w in words:
        if w.isalpha() and _VOWELS & set(w):
            out.setdefault("".join(c for c in w if c not in _VOWELS), w)
    return out


def _vowelless_word(w: str) -> str:
    """A word written without its vowels read back by its consonant skeleton (:func:`_skeletons`); ``w`` itself
    when it has a vowel or no English word has its skeleton."""
    low = w.lower()
    if _VOWELS & set(low):
        return w
    return _skeletons().get(low, w)


def _wordwise(fn: Callable[[str], str]) -> Callable[[str], str]:
    """``fn`` applied to each word of a text (the readings that decode word by word)."""
    return lambda x: _ALPHA_WORD.sub(lambda m: fn(m.group()), x)


_PIG_WORD = re.compile(r"[A-Za-z]+(?:-[A-Za-z]*ay)?")
"""A word of pig latin, its hyphenated form too ("ive-gay")."""
_KEY_WORD = re.compile(r"[A-Za-z;,.\[\]'/]*[A-Za-z][A-Za-z;,.\[\]'/]*")
"""A word typed with shifted hands: a key right of a letter may be punctuation ("yp[" is "top")."""

_READINGS: tuple[tuple[str, Callable[[str], str], int, re.Pattern[str]], ...] = (
    ("rot13", _shift(13), 2, _ALPHA_WORD), ("reversed", lambda x: x[::-1], 2, _ALPHA_WORD),
    ("atbash", _atbash(), 3, _ALPHA_WORD),
    *(("caesar", _shift(k), 3, _ALPHA_WORD) for k in range(1, 26) if k != 13),
    ("pig-latin", lambda x: _PIG_WORD.sub(lambda m: _pig_latin_word(m.group()), x), 3, _PIG_WORD),
    ("vowels", _wordwise(_vowelless_word), 3, _ALPHA_WORD),
    ("keyboard", _keyboard(-1), 3, _KEY_WORD), ("keyboard", _keyboard(1), 3, _KEY_WORD))
"""(step name, decoding, marked words a run needs, what a word is) of :func:`_decode_spans`: ROT13 and reversal,
Atbash (fourth round), then the other 24 Caesar shifts (a shift by ``k`` is decoded by shifting by ``k``: an
encoder's shift of 3 is read back by 23); the sixth round's word games: pig latin, vowels removed, and a keyboard
shift either way (each needs three marked words: a misspelt word may happen to read as English one way)."""


def _letters(w: str) -> str:
    """``w`` without what is no letter (a keyboard-shift word's punctuation, a trailing full stop)."""
    return re.sub(r"[^a-z']", "", w.lower()).strip("'")


def _decode_spans(text: str, steps: list[str]) -> str:
    """Runs of words that read as English only through ROT13, another Caesar shift or reversed (module docstring,
    step 8): each word of three letters or more is marked when it is no English word but its decoding is; an English
    word ends a run; words of one or two letters, and words that are English neither way (a rarer word such as
    "rubric" outside wordfreq's 30,000, a name), may sit inside one, at most one of those for every two marked
    words; a run with enough marked words (:data:`_READINGS`) is replaced by its decoding -- the whole run reversed
    for ``reversed``, so its word order comes back too. A run, not a line: an encoded instruction inside an English
    answer is surrounded by English words; a sentence in another language is mostly words that are English neither
    way, so it never makes a run."""
    en = _english_words()
    if not en:
        return text
    pattern = _ALPHA_WORD
    words = list(pattern.finditer(text))
    foreign = sum(len(m.group()) > 2 and m.group().lower() not in en for m in words)
    for name, fn, need, pat in _READINGS:
        if foreign < need:
            continue  # too few words that are no English words for a run of this reading
        if pat is not pattern:
            pattern, words = pat, list(pat.finditer(text))
        marks: list[bool | str | None] = []
        for m in words:
            w = m.group().lower()
            bare = _letters(w)
            if len(bare) <= 2 and len(w) <= 2:
                marks.append(None)  # either way
            elif bare in en and w.strip(".,;'") == bare:
                marks.append(False)
            else:
                marks.append(True if _letters(fn(w)) in en else "?")  # "?": English neither way
        spans: list[tuple[int, int]] = []
        i = 0
        while i < len(words):
            if marks[i] is not True:
                i += 1
                continue
            j, last, hits = i, i, 0
            while j < len(words) and marks[j] is not False:
                if marks[j] is True:
                    last, hits = j, hits + 1
                j += 1
            unknown = sum(marks[k] == "?" for k in range(i, last + 1))
            if hits >= need and unknown <= hits // 2:
                a_, b_ = i, last  # two-letter words at the edges that decode to English belong to the run
                edge = [marks[k] is None and len(m.group()) == 2 and _letters(fn(m.group().lower())) in en
                        for k, m in enumerate(words)]
                while a_ > 0 and edge[a_ - 1]:
                    a_ -= 1
                while b_ + 1 < len(words) and edge[b_ + 1]:
                    b_ += 1
                start, end = words[a_].start(), words[b_].end()
                while start > 0 and not text[start - 1].isspace() and not text[start - 1].isalnum():
                    start -= 1  # the punctuation stuck to the run's first word (a reversed full stop)
                while end < len(text) and not text[end].isspace() and not text[end].isalnum():
                    end += 1
                spans.append((start, end))
            i = j
        if spans:
            out, prev = [], 0
            for a_, b_ in spans:
                seg = text[a_:b_]
                out += [text[prev:a_], fn(seg)]
                prev = b_
            text = "".join(out) + text[prev:]
            steps.append(name)
            words = list(pattern.finditer(text))  # the text changed: its words again, once per decoding
            foreign = sum(len(m.group()) > 2 and m.group().lower() not in en for m in words)
    return text


SEGMENT_MIN_ZIPF = 3.5
"""The Zipf frequency a word of a segmented string (an acrostic) needs: a common word (3.5 is about three in a
million words), so a string of initials does not read as English through rare words ("rassme" -> "ras sme")."""


_SHORT_WORDS = frozenset({"a", "i", "am", "an", "as", "at", "be", "by", "do", "go", "he", "if", "in", "is", "it",
                          "me", "my", "no", "of", "on", "or", "so", "to", "up", "us", "we"})
"""The words of one or two letters :func:`segment` cuts (wordfreq's list also holds texting and abbreviations:
"tu", "ll", "ur")."""


def _cuts(letters: str, min_zipf: float) -> list[tuple[int, float, int] | None]:
    """For every prefix of ``letters``, its best cut into common words: ``(words, -sum of Zipf, start of the last
    word)`` or None (dynamic programming over wordfreq's English list; words of one or two letters only from
    :data:`_SHORT_WORDS`)."""
    zipf = _english_zipf()
    n = len(letters)
    best: list[tuple[int, float, int] | None] = [None] * (n + 1)
    best[0] = (0, 0.0, 0)
    for j in range(1, n + 1):
        for i in range(max(0, j - 15), j):
            prev = best[i]
            if prev is None:
                continue
            w = letters[i:j]
            z = zipf.get(w, 0.0)
            if z < min_zipf or (len(w) <= 2 and w not in _SHORT_WORDS):
                continue
            cand = (prev[0] + 1, prev[1] - z, i)
            if best[j] is None or cand[:2] < best[j][:2]:  # type: ignore[index]
                best[j] = cand
    return best


def _words_of(letters: str, cuts: list[tuple[int, float, int] | None], j: int) -> list[str]:
    out = []
    while j > 0:
        i = cuts[j][2]  # type: ignore[index]
        out.append(letters[i:j])
        j = i
    return out[::-1]


def segment(letters: str, min_zipf: float = SEGMENT_MIN_ZIPF) -> list[str] | None:
    """``letters`` (lower case, no spaces) cut into common English words, the fewest words first, then the most
    frequent (dynamic programming over wordfreq's English list); None when no cut exists. Words of one or two
    letters are those of :data:`_SHORT_WORDS` only."""
    if not letters or not _english_zipf():
        return None
    cuts = _cuts(letters, min_zipf)
    return _words_of(letters, cuts, len(letters)) if cuts[-1] is not None else None


ACROSTIC_LINES = 5
ACROSTIC_LETTERS = 6
ACROSTIC_MAX_LINES = 80
"""An acrostic is read from a text's first 80 lines (a long essay's paragraphs, at most)."""


def _acrostic(text: str) -> str | None:
    """The words the first letters of a text's lines spell, when they do (seventh round): an instruction hidden as
    an acrostic ("Food is made ...", "Using light ...", "Light-dependent ...": "full marks"), which a grader told
    to read the first letters reads and a detector reading sentences does not. At least :data:`ACROSTIC_LINES` lines;
    the longest stretch of :data:`ACROSTIC_LETTERS` initials or more that :func:`segment` cuts into common words,
    each word of three letters on average or more. The first line's initial is also taken from each of its
    capitalised words (an acrostic appended to an answer starts inside the answer's line). None otherwise."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()][:ACROSTIC_MAX_LINES]
    if len(lines) < ACROSTIC_LINES:
        return None
    initials = []
    for ln in lines:
        m = re.search(r"[A-Za-z]", ln)
        initials.append(m.group().lower() if m and m.start() <= 3 else "?")
    firsts = [initials[0]] + [m.group(1).lower() for m in re.finditer(r"(?<![\w'-])([A-Z])[a-z]", lines[0])][-4:]
    zipf = _english_zipf()

    def rank(words: list[str]) -> tuple[int, int, float]:  # the longest reading, then the fewest, commonest words
        return sum(map(len, words)), -len(words), sum(zipf.get(w, 0.0) for w in words)

    best: list[str] | None = None
    for first in dict.fromkeys(firsts):
        s = first + "".join(initials[1:])
        for part in s.split("?"):  # a line without a leading letter breaks the acrostic
            for i in range(len(part) - ACROSTIC_LETTERS + 1):
                if best is not None and len(part) - i < rank(best)[0]:
                    break  # what is left is shorter than the best reading so far
                cuts = _cuts(part[i:], SEGMENT_MIN_ZIPF)  # every prefix of the rest, in one pass
                for j in range(len(part) - i, ACROSTIC_LETTERS - 1, -1):
                    if cuts[j] is None:
                        continue
                    words = _words_of(part[i:], cuts, j)
                    if j / len(words) >= 3 and (best is None or rank(words) > rank(best)):
                        best = words
                    break  # the longest cut from this start is the one to compare
    return " ".join(best) if best else None


_ZW_BITS = re.compile("[\u200b\u200c\u200d\u2060\ufeff\u2062\u2063\u2064]{16,}")


def _zero_width_text(text: str) -> str:
    """Text spelt in zero-width characters as binary (seventh round): a run of sixteen or more invisible characters
    of two kinds (U+200B / U+200C, ...) read as 8-bit ASCII, each kind as 0 and as 1 in turn; a third kind, when
    present, is a separator and dropped. The reading that is printable with a word in it is kept ("" when none):
    the zero-width steganography of Boucher et al. 2022 (Sec. 4) carrying a message, not just breaking words."""
    out = []
    for m in _ZW_BITS.finditer(text):
        run = m.group()
        kinds = sorted(set(run), key=run.count, reverse=True)
        if len(kinds) not in (2, 3):
            continue
        seps = [None] if len(kinds) == 2 else kinds
        for sep in seps:
            bits_of = [k for k in kinds if k != sep][:2]
            body = run.replace(sep, "") if sep else run
            if len(body) < 16 or len(bits_of) < 2:
                continue
            found = None
            for zero, one in ((bits_of[0], bits_of[1]), (bits_of[1], bits_of[0])):
                bits = body.replace(zero, "0").replace(one, "1")
                if len(bits) % 8:
                    continue
                s = _decode_binary(bits)
                if s is not None and _readable(s):
                    found = s
                    break
            if found:
                out.append(found)
                break
    return " ".join(out)


def _rail_fence(cipher: str, rails: int) -> str:
    """The rail fence (zigzag) transposition over ``rails`` rails read back: the cipher is the rails' letters one
    rail after another; each position of the zigzag takes the next letter of its rail."""
    n = len(cipher)
    pattern = [min(i % (2 * rails - 2), 2 * rails - 2 - i % (2 * rails - 2)) for i in range(n)]
    order = sorted(range(n), key=lambda i: (pattern[i], i))
    out = [""] * n
    for c, i in zip(cipher, order, strict=True):
        out[i] = c
    return "".join(out)


_TOKEN_RUN = re.compile(r"\S+")


def _decode_rail_fence(text: str, steps: list[str]) -> str:
    """Runs of three tokens or more that are no English words, sixteen characters or more, replaced by their rail
    fence reading (two to five rails) when that reading is English: four words or more, every word of three letters
    or more an English word, and more moved than the spaces (seventh round; the transposition cipher of classical
    cryptography that red-teaming sets add to their obfuscations). A token is English when it is a word of three
    letters or more in wordfreq's list; the run's first token, or its last one or two, may be left out (a word of
    the answer glued to the cipher)."""
    en = _english_words()
    if not en:
        return text
    toks = list(_TOKEN_RUN.finditer(text))
    english = [bool(re.fullmatch(r"[a-z']+", (w := _letters(m.group()))) and w in en and len(w) > 2)
               for m in toks]
    spans: list[tuple[int, int, str]] = []
    i = 0
    while i < len(toks):
        if english[i]:
            i += 1
            continue
        j = i
        while j < len(toks) and not english[j]:
            j += 1
        edges = [(a_, b_) for a_ in range(i, min(i + 2, j)) for b_ in range(j, max(a_ + 1, j - 2), -1)
                 if b_ - a_ >= 3]  # the whole run first, then without its first token or its last one or two
        found = next(((toks[a_].start(), toks[b_ - 1].end(), dec) for a_, b_ in edges
                      if (dec := _rail_fence_reading(text[toks[a_].start():toks[b_ - 1].end()], en))), None)
        if found:
            spans.append(found)
        i = j
    if not spans:
        return text
    out, prev = [], 0
    for a_, b_, dec in spans:
        out += [text[prev:a_], dec]
        prev = b_
    steps.append("rail-fence")
    return "".join(out) + text[prev:]


def _rail_fence_reading(seg: str, en: frozenset[str]) -> str | None:
    """The first rail fence reading (two to five rails) of ``seg`` that is English (:func:`_decode_rail_fence`), or
    None; a segment under sixteen characters or twelve letters is none."""
    if len(seg) < 16 or sum(c.isalpha() for c in seg) < 12:
        return None
    for rails in range(2, 6):
        dec = _rail_fence(seg, rails)
        if dec.split() == seg.split() or "".join(dec.split()) == "".join(seg.split()):
            continue  # only the spaces moved: a word split by a typo ("ho use"), no transposition
        words = [_letters(w) for w in dec.split()]
        long_ = [w for w in words if len(w) > 2]
        if len(words) >= 4 and len(long_) >= 3 and all(w in en for w in long_):
            return dec
    return None


_RLO = re.compile("\u202e([^\u202c]*)\u202c?")
_LATIN = re.compile(r"[A-Za-z]")


@dataclass(frozen=True)
class Normalised:
    """``text``: what a reader understands; ``steps``: the normalisation steps that changed something."""

    text: str
    steps: tuple[str, ...] = field(default=())


def _unmark(m: re.Match[str]) -> str:
    """A word with overlay marks (step 7) read without any mark: the overlays removed, and the accents NFC had
    composed into its letters too ("G̶ív̗e͐" -> "Give"): an overlay writer's accents are part of the overlay."""
    w = m.group()
    if not _COMBINING.search(w):
        return w
    bare = "".join(c for c in unicodedata.normalize("NFD", w) if not unicodedata.combining(c))
    return unicodedata.normalize("NFC", bare)


def _fold_mixed(text: str) -> str:
    def fold(m: re.Match[str]) -> str:
        w = m.group()
        if _LATIN.search(w):
            return "".join(CONFUSABLES.get(c, c) for c in w)
        return w
    return re.sub(r"\w+", fold, text)


# single letters (or digits) separated by one separator, at least four of them: letter-spaced words
_SPACED = re.compile(r"(?<![\w.\-_·])(?:\w ){3,}\w(?![\w.\-_·])")
_SPACED_SAME = re.compile(r"(?<!\w)\w([.\-_·])\w(?:\1\w)+(?!\w)")
_SPACED_PART = re.compile(r"(?:\w )+\w")
_LEET_MAP = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s",
                           "!": "i", "|": "l", "€": "e"})
_LEET_WORD = re.compile(r"(?<![\w@$!|€])[\w@$!|€]*[A-Za-z][\w@$!|€]*(?![\w@$!|€])")
_UNIT = re.compile(r"\d+(?:mm|cm|km|m|kg|mg|g|ml|l|ms|h|hr|hrs|min|px|kb|mb|gb|tb|hz|khz|mhz|ghz|v|w|kw|j|kj|n|pa|kpa|"
                   r"mol|k|c|f|x|am|pm)", re.I)
"""A number with its unit (14mm, 2kg, 5x, 3pm): a measurement, not leetspeak."""
_ORDINAL = re.compile(r"\d*(?:1st|2nd|3rd|[04-9]th|1[0-9]th)", re.I)
_B64 = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{16,}={0,2}(?![A-Za-z0-9+/=])")
_HEX = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}[ :]?){8,}(?![0-9A-Fa-f])")
_URL = re.compile(r"[^\s%]*(?:%[0-9A-Fa-f]{2}[^\s%]*){3,}")


def _printable(s: str) -> bool:
    """No control or format character but line breaks and tabs."""
    return not any(unicodedata.category(c).startswith("C") and c not in "\n\t" for c in s)


def _worded(s: str | None) -> str | None:
    """``s`` when it is printable with a word of two letters in it: what an unambiguous encoding (binary,
    percent-encoding, character references, escapes) must decode to."""
    return s if s is not None and _printable(s) and re.search(r"[^\W\d_]{2,}", s) else None


def _readable(s: str) -> bool:
    """Decoded bytes that read as text: printable, mostly letters and spaces, with at least two words."""
    if not s or not _printable(s):
        return False
    letters = sum(c.isalpha() or c.isspace() for c in s)
    return letters / len(s) >= 0.7 and len(re.findall(r"[^\W\d_]{2,}", s)) >= 2


_BINARY = re.compile(r"(?<![01])(?:[01]{8}[ ,]?){4,}(?![01])")
_MORSE = re.compile(r"(?<![\w.\-])(?:[.\-·•−–]{1,7}(?: {1,3}| ?/ ?)){3,}[.\-·•−–]{1,7}(?![\w.\-])")
MORSE = {".-": "a", "-...": "b", "-.-.": "c", "-..": "d", ".": "e", "..-.": "f", "--.": "g", "....": "h",
         "..": "i", ".---": "j", "-.-": "k", ".-..": "l", "--": "m", "-.": "n", "---": "o", ".--.": "p",
         "--.-": "q", ".-.": "r", "...": "s", "-": "t", "..-": "u", "...-": "v", ".--": "w", "-..-": "x",
         "-.--": "y", "--..": "z", "-----": "0", ".----": "1", "..---": "2", "...--": "3", "....-": "4",
         ".....": "5", "-....": "6", "--...": "7", "---..": "8", "----.": "9", ".-.-.-": ".", "--..--": ",",
         "..--..": "?", "-.-.--": "!", "-..-.": "/", "---...": ":", ".----.": "'", "-....-": "-"}
"""International Morse code (ITU-R M.1677-1), letters, digits and common punctuation."""


def _decode_binary(blob: str) -> str | None:
    """Four or more 8-bit groups are unambiguous (as percent-encoding is), so the decoded text need only be
    printable with a word of two letters in it ("Score: 5/5")."""
    bits = re.sub(r"[ ,]", "", blob)
    try:
        s = bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits) - 7, 8)).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None
    return _worded(s)


def _decode_morse(blob: str) -> str | None:
    """Morse letters separated by one space, words by ``/`` or by two spaces or more; the middle dot, bullet and
    dashes some writers use for dots and dashes are read as ``.`` and ``-``. Every letter must be Morse."""
    norm = blob.translate(str.maketrans({"·": ".", "•": ".", "−": "-", "–": "-"})).strip()
    words = [w for w in re.split(r" ?/ ?| {2,}", norm) if w.strip()]
    out = []
    for w in words:
        letters = [MORSE.get(c) for c in w.split(" ") if c]
        if not letters or any(x is None for x in letters):
            return None
        out.append("".join(letters))  # type: ignore[arg-type]
    s = " ".join(out)
    return s if _readable(s) else None


NATO = ("alfa", "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliett",
        "juliet", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango",
        "uniform", "victor", "whiskey", "whisky", "x-ray", "xray", "yankee", "zulu")
"""The NATO (ICAO) spelling alphabet's code words, with their common variant spellings."""
_NATO_WORD = "(?:" + "|".join(re.escape(w) for w in NATO) + ")"
_NATO = re.compile(r"(?i)(?<![\w-])" + _NATO_WORD + r"(?:(?:\s*/\s*|[ ,]\s*|\s+)" + _NATO_WORD + r"){3,}(?![\w-])")


def _decode_nato(blob: str) -> str | None:
    """Four or more NATO code words in a row spell letters ("Papa Alfa Sierra Sierra / Mike Echo" -> "pass me"):
    ``/`` (or two spaces, or a comma) separates words; the result must read as text (two words, sixth round)."""
    words = [w for w in re.split(r"\s*/\s*|\s{2,}|\s*,\s*", blob.strip()) if w.strip()]
    out = ["".join(c[0] for c in w.lower().split()) for w in words]
    s = " ".join(out)
    return s if _readable(s) else None


_B85 = re.compile(r"(?<!\S)[0-9A-Za-z!#$%&()*+\-;<=>?@^_`{|}~]{20,}(?!\S)")


def _decode_b85(blob: str) -> str | None:
    """Base85 (``b85encode``'s alphabet, as git and Python write it) or Ascii85 (``<~ ... ~>`` optional), twenty
    characters or more with a character base64 does not use; the decoded bytes must read as text (sixth round)."""
    if not re.search(r"[!#$%&()*\-;<=>?@^_`{|}~]", blob):
        return None
    for dec in (base64.b85decode, lambda b: base64.a85decode(b, adobe=b.startswith(b"<~"))):
        try:
            s = dec(blob.encode("ascii")).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            continue
        if _readable(s):
            return s
    return None


_ENTITIES = re.compile(r"(?:&#[0-9]{2,7};|&#[xX][0-9A-Fa-f]{2,6};|&[A-Za-z]{2,8};){3,}")
_U_ESCAPES = re.compile(r"(?:\\u[0-9A-Fa-f]{4}|\\x[0-9A-Fa-f]{2}){3,}")


def _decode_entities(blob: str) -> str | None:
    """Three or more HTML character references in a row (``&#71;&#105;&#118;`` or ``&#x47;``, named ones such as
    ``&nbsp;``): a browser, and a model that reads HTML, shows the characters they name."""
    s = html.unescape(blob)
    return None if s == blob else _worded(s)


def _decode_u_escapes(blob: str) -> str | None:
    """Three or more ``\\uXXXX`` / ``\\xXX`` escapes in a row, as JSON and Python string literals write characters
    (surrogate pairs joined)."""
    try:
        s = json.loads('"' + re.sub(r"\\x([0-9A-Fa-f]{2})", r"\\u00\1", blob) + '"')
    except ValueError:
        return None
    return _worded(s)


_B32 = re.compile(r"(?<![A-Za-z0-9=])[A-Z2-7]{16,}={0,6}(?![A-Za-z0-9=])")


def _decode_b32(blob: str) -> str | None:
    """Base32 (RFC 4648: upper-case letters and the digits 2-7, ``=`` padding), sixteen characters or more."""
    try:
        s = base64.b32decode(blob + "=" * (-len(blob) % 8)).decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None
    return s if _readable(s) else None


def _decode_b64(blob: str) -> str | None:
    try:
        raw = base64.b64decode(blob + "=" * (-len(blob) % 4), validate=True)
        s = raw.decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None
    return s if _readable(s) else None


def _decode_hex(blob: str) -> str | None:
    try:
        s = bytes.fromhex(re.sub(r"[ :]", "", blob)).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None
    return s if _readable(s) else None


def _decode_url(blob: str) -> str | None:
    """Percent-encoding is unambiguous (three or more ``%XX`` escapes), so the decoded text need only be printable
    with a letter in it: "SCORE: 100%" is two-thirds digits and punctuation, and a reader still reads it."""
    s = urllib.parse.unquote_plus(blob)
    return None if s == blob else _worded(s)


def _despace(text: str, steps: list[str]) -> str:
    def join(m: re.Match[str]) -> str:
        run = m.group()
        letters = sum(c.isalpha() for c in run)
        if letters < 0.6 * sum(c.isalnum() for c in run):  # "3 4 5 6" is a list of numbers, not a word
            return run
        return re.sub(r"[ .\-_·]", "", run)
    out_parts = []
    for part in re.split(r"( {2,}|\n)", text):  # words written with two or more spaces between them
        if part.isspace() or not part:
            out_parts.append(part if part == "\n" else " " if part else part)
        elif _SPACED_PART.fullmatch(part.strip()):
            out_parts.append(join(_SPACED_PART.fullmatch(part.strip())))  # type: ignore[arg-type]
        else:
            out_parts.append(_SPACED.sub(join, _SPACED_SAME.sub(join, part)))
    out = "".join(out_parts)
    if out.split() != text.split():
        steps.append("letter-spaced")
        return out
    return text


def _deleet(text: str, steps: list[str]) -> str:
    def fix(m: re.Match[str]) -> str:
        w = m.group()
        if not re.search(r"[0-9@$!|€]", w) or _ORDINAL.fullmatch(w) or re.fullmatch(r"\d{2,}s|[A-Za-z]+\d{2,}|@?[A-Z]+\d+", w) or _UNIT.fullmatch(w):
            return w  # 1st, 22nd, 1990s, base64, CO2, ASAP's @CAPS1 placeholders, 14mm and 2kg: numbers and names
        inner = w.rstrip("!") or w  # a word's trailing exclamation marks are punctuation
        tail = w[len(inner):]
        return inner.translate(_LEET_MAP) + tail
    out = _LEET_WORD.sub(fix, text)
    if out != text:
        steps.append("leetspeak")
    return out


def _decode_blobs(text: str, steps: list[str]) -> str:
    out = text
    for name, pat, dec in (("entities", _ENTITIES, _decode_entities), ("escapes", _U_ESCAPES, _decode_u_escapes),
                           ("url", _URL, _decode_url), ("binary", _BINARY, _decode_binary),
                           ("morse", _MORSE, _decode_morse), ("base32", _B32, _decode_b32),
                           ("base64", _B64, _decode_b64),
                           ("hex", _HEX, _decode_hex), ("base85", _B85, _decode_b85), ("nato", _NATO, _decode_nato)):
        def sub(m: re.Match[str], dec=dec, name=name) -> str:
            s = dec(m.group())
            if s is None:
                return m.group()
            steps.append(name)
            return " " + s + " "
        out = pat.sub(sub, out)
    return out


def normalise(text: str, depth: int = 2) -> Normalised:
    """The copy of ``text`` a reader understands (module docstring) with the steps that changed it."""
    steps: list[str] = []
    t = text
    if "\u202e" in t:
        t2 = _RLO.sub(lambda m: m.group(1)[::-1], t)
        if t2 != t:
            steps.append("bidi")
            t = t2
    hidden = hidden_text(t)
    zw = _zero_width_text(t)
    n = unicodedata.normalize("NFKC", t)
    if n != t:
        steps.append("nfkc")
    c = clean(n)
    if c != n:
        steps.append("invisible")
    if hidden:
        steps.append("tags")
        c = c + " " + hidden
    if zw:
        steps.append("zero-width")
        c = c + "\n" + zw
    f = _fold_mixed(c)
    if f != c:
        steps.append("confusables")
    nfc = unicodedata.normalize("NFC", f)
    if _COMBINING.search(nfc):
        steps.append("marks")
        f = re.sub(r"\S+", _unmark, nfc)
    d = _decode_blobs(f, steps)
    d = _decode_spans(d, steps)
    d = _decode_rail_fence(d, steps)
    d = _despace(d, steps)
    leet = _deleet(d, steps)
    if leet != d:  # leetspeak under another reading ("r3w5n4" reversed): the word readings again (sixth round)
        leet = _decode_spans(leet, steps)
    d = leet
    if depth > 1 and d != f and any(s in steps for s in ("base64", "base32", "hex", "url", "binary", "morse",
                                                           "entities", "escapes", "base85", "nato")):
        inner = normalise(d, depth - 1)
        d = inner.text
        steps += [s for s in inner.steps if s not in steps]
    acrostic = _acrostic(d) if depth > 1 else None
    if acrostic:
        steps.append("acrostic")
        d = d + "\n" + acrostic
    d = "\n".join(" ".join(line.split()) for line in d.splitlines())
    return Normalised(d, tuple(dict.fromkeys(steps)))
