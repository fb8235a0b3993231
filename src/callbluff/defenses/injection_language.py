"""The language stage of the injection pre-filter: a passage in a language none of the guarded answers use.

Why: an instruction written in another language is the simplest way past a detector that knows the answers'
language (Prompt Guard was made multilingual for this reason; AEGIS, arXiv 2509.00088, reports students' injections
in other languages than the course's), and a grader reads it as well as English. A word list per language in the
grammar (:mod:`callbluff.defenses.injection_grammar`, 15 languages) teaches the learned stage those languages only;
there are thousands. What every such injection shares, whatever its language, is that it is not in the language
of the answers the filter guards. So the stage learns, at fit time, which languages the fit's own answers are
written in (:meth:`LanguageProfile.fit`), and flags an answer holding a passage in any other
(:meth:`LanguageProfile.foreign`).

**The choice, and its cost** (stated because it flags passages that are not injections too): a sentence quoted in
another language in an English answer is flagged like an injection. On the answers the filter guards that is rare
(docs/findings/llm-graders.md measures it on all Mohler answers and the ASAP-SAS public leaderboard); a course whose
answers quote other languages should fit the filter on such answers (their language is then guarded) or set
``languages = false``. A flagged answer goes where the filter's ``action`` sends it (``human`` routes it to a
person, which suits this stage).

How a passage's language is told, without a model:

* **other scripts**: at least :data:`MIN_SCRIPT_LETTERS` letters of one non-Latin script (Cyrillic, Greek, Arabic,
  Hebrew, Han, kana, Hangul, Devanagari, Thai, ...; the script is the first word of the letter's Unicode name) in
  one sentence, with a word of at least two such letters: ``script:HANGUL``. A Greek letter in a formula (``Δt``,
  ``λ``) is not a passage;
* **Latin-script languages**: the sentence's words of three letters or more looked up in wordfreq's small word lists
  (the 30,000-60,000 most frequent words of each of :data:`LATIN_LANGUAGES`, with their Zipf frequencies; short
  upper-case words of a mixed-case sentence are left out: acronyms); the sentence is in language L when at least
  four of its words are counted (three could be a name: "Narciso Rodriguez, designer"), at least 75 % of them are L
  words and their mean Zipf frequency in L is at least :data:`MARGIN` above their mean in English (a word a list
  does not hold counts 0). Frequencies, not mere membership, because each list holds the others' common words
  ("die", "ich", "note" are English words too). An English sentence with spelling errors is not another language
  (its misspellings are no language's words). Web addresses and corpus placeholders (``@CAPS1``) are no words. A
  sentence that reads as English as a whole is read again in windows of :data:`WINDOW` words, all but one of them
  words of L: an instruction written inside an English sentence;
* **languages wordfreq has no list for** (fifth round): a sentence no list reads clearly as another language,
  of four words or more, less than :data:`LID_MAX_ENGLISH` of them English, that langid.py (Lui & Baldwin 2012,
  97 languages, character n-grams) names as another language with :data:`LID_MIN_PROB`: ``lid:CODE``;
* **a run inside a sentence** (sixth round): a sentence that reads as English as a whole (an answer without a
  full stop, glued to the request that follows it) is also read as its runs of words that are no English words
  (:func:`_foreign_runs`, :data:`RUN_MIN` words or more), each asked of langid.py and the unlisted test on its own,
  and a long run (:data:`RUN_LONG`) needs a smaller share of words in no list: the request is no longer diluted by
  the answer around it; the seventh round reads runs across sentences too (a request of two short sentences glued
  to an answer) when no sentence gave a label, and takes a long run that langid.py reads as anything but English
  (:data:`RUN_FOREIGN_PROB`) whatever the lists hold;
* **Latin-script languages without a list** (fourth round): a sentence no list reads clearly, with at least
  :data:`MIN_UNLISTED` such words, :data:`UNLISTED_SHARE` of them in no language's list: ``latin:unlisted``
  (Swahili, Yoruba, Hausa, Zulu have no wordfreq list). Like every label, it is guarded when the fit's own answers
  hold it often enough (a course whose answers are full of names or code is not flagged for them).

The labels of the fit's own answers' sentences make the profile: a label is *guarded* when at least
``min_share`` of those answers hold it (0.5 %). English is never flagged: the grader's own instructions are
English, and an English injection is the other stages' job.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

__all__ = ["LATIN_LANGUAGES", "LanguageProfile", "MIN_SCRIPT_LETTERS", "sentence_labels"]

LATIN_LANGUAGES = ("en", "es", "de", "fr", "it", "pt", "nl", "pl", "sv", "ro", "tr", "id", "cs", "fi", "hu", "vi",
                   "ms", "ca", "da", "nb", "sk", "sl", "lt", "lv", "fil", "is", "sh")
"""The Latin-script languages told apart (wordfreq's small lists: every Latin-script language it has)."""
MIN_SCRIPT_LETTERS = 4
MARGIN = 1.0
WINDOW = 6
"""Words (of three letters or more) per window inside a longer sentence; a window must know all but one."""
"""How much higher (mean Zipf frequency of the sentence's words) another language must read than English."""
_NAMES = {"ga": "Irish", "sq": "Albanian", "xh": "Xhosa", "zu": "Zulu", "sw": "Swahili", "cy": "Welsh",
          "eu": "Basque", "mt": "Maltese", "br": "Breton", "lb": "Luxembourgish", "fo": "Faroese", "mg": "Malagasy",
          "qu": "Quechua", "rw": "Kinyarwanda", "af": "Afrikaans", "la": "Latin", "et": "Estonian", "gl": "Galician",
          "es": "Spanish", "de": "German", "fr": "French", "it": "Italian", "pt": "Portuguese", "nl": "Dutch",
          "pl": "Polish", "sv": "Swedish", "ro": "Romanian", "tr": "Turkish", "id": "Indonesian", "cs": "Czech",
          "fi": "Finnish", "hu": "Hungarian", "vi": "Vietnamese", "ms": "Malay", "ca": "Catalan", "da": "Danish",
          "nb": "Norwegian", "sk": "Slovak", "sl": "Slovenian", "lt": "Lithuanian", "lv": "Latvian",
          "fil": "Filipino", "is": "Icelandic", "sh": "Serbo-Croatian", "en": "English"}
_SENT = re.compile(r"(?<=[.!?;:。！？])\s+|\n+|(?<=[。！？])")
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


@lru_cache(maxsize=1)
def _lists() -> dict[str, dict[str, float]]:
    """Each Latin language's small word list as word -> Zipf frequency (log10 per billion words); empty when
    wordfreq is missing (the Latin part is then off)."""
    try:
        from wordfreq import get_frequency_dict
    except ImportError:
        return {}
    out = {}
    for lang in LATIN_LANGUAGES:
        try:
            out[lang] = {w: math.log10(f) + 9 for w, f in get_frequency_dict(lang, wordlist="small").items()}
        except (LookupError, OSError, ValueError):
            continue
    return out


def _script(c: str) -> str:
    try:
        return unicodedata.name(c).split(" ", 1)[0]
    except ValueError:
        return ""


def _scripts(sentence: str) -> set[str]:
    """The non-Latin scripts with a passage in ``sentence`` (module docstring)."""
    counts: Counter[str] = Counter()
    worded: set[str] = set()
    for w in _WORD.findall(sentence):
        per = Counter(_script(c) for c in w if c.isalpha())
        for s, k in per.items():
            if s and s != "LATIN":
                counts[s] += k
                if k >= 2:
                    worded.add(s)
    # Han, kana and Hangul are one writing system's parts for this purpose: a Japanese sentence mixes them
    cjk = {"CJK", "HIRAGANA", "KATAKANA"}
    if sum(counts[s] for s in cjk) >= MIN_SCRIPT_LETTERS and worded & cjk:
        return {"script:CJK"} | {f"script:{s}" for s, k in counts.items()
                                 if s not in cjk and k >= MIN_SCRIPT_LETTERS and s in worded}
    return {f"script:{s}" for s, k in counts.items() if k >= MIN_SCRIPT_LETTERS and s in worded}


_NOT_WORDS = re.compile(r"\S*\w\.(?:com|org|net|edu|gov|io)\b\S*|https?://\S+|@\w+")
"""Web addresses and corpus placeholders (ASAP's ``@CAPS1``): words of no language."""


def _counted(w: str, mixed: bool) -> bool:
    """A word the Latin stage reads: three letters or more, all Latin, not an acronym of a mixed-case sentence."""
    return len(w) > 2 and all(_script(c) == "LATIN" for c in w) and not (mixed and w.isupper())


def _latin_words(sentence: str) -> list[str]:
    sentence = _NOT_WORDS.sub(" ", sentence)
    mixed = any(c.islower() for c in sentence)
    return [w.lower() for w in _WORD.findall(sentence) if _counted(w, mixed)]


def _language_of(words: Sequence[str], min_known: int = 4, share: float = 0.75) -> str | None:
    """``en``, another Latin-script language's code, or None (unclear) for ``words`` (module docstring)."""
    lists = _lists()
    n = len(words)
    if "en" not in lists or n < min_known:
        return None

    def mean(lang: str) -> tuple[float, int]:
        zs = [lists[lang].get(w, 0.0) for w in words]
        return sum(zs) / n, sum(z > 0 for z in zs)

    en, _ = mean("en")
    best, best_mean, best_known = "en", en, 0
    for lang in lists:
        if lang != "en":
            m, k = mean(lang)
            if m > best_mean:
                best, best_mean, best_known = lang, m, k
    if best != "en" and best_known >= min_known and best_known >= share * n and best_mean >= en + MARGIN:
        return best
    return "en" if best == "en" else None


LID_MIN_PROB = 0.99
LID_MAX_ENGLISH = 0.5
"""langid.py's label is asked for a sentence no word list reads clearly as another language and of whose words
less than this share are English (wordfreq); it is taken at :data:`LID_MIN_PROB` or more."""


@lru_cache(maxsize=1)
def _langid() -> Any:
    """langid.py's identifier (Lui & Baldwin 2012, ACL demo: character n-gram naive Bayes over 97 languages, its
    model inside the package), normalised probabilities; None without the package (the stage then skips it)."""
    try:
        from langid.langid import LanguageIdentifier, model
    except ImportError:
        return None
    return LanguageIdentifier.from_modelstring(model, norm_probs=True)


def _identified(sentence: str, words: Sequence[str]) -> str | None:
    """``lid:CODE`` when langid.py names a language other than English with :data:`LID_MIN_PROB` for a sentence of
    four or more words, less than :data:`LID_MAX_ENGLISH` of them English: the languages wordfreq has no list for
    (Irish, Albanian, Xhosa and Zulu, Swahili, Welsh, Basque, Maltese, ...; fifth round). A misspelt English answer
    keeps most of its words English, so it is never asked. :func:`sentence_labels` also asks it about a run of
    consecutive such sentences together (short sentences alone say little)."""
    if len(words) < 4 or not _mostly_not_english(words):
        return None
    idf = _langid()
    if idf is None:
        return None
    lab, prob = idf.classify(sentence)
    return f"lid:{lab}" if lab != "en" and prob >= LID_MIN_PROB else None


UNLISTED = "latin:unlisted"
"""The label of a Latin-script sentence in a language no word list holds (fourth round)."""
MIN_UNLISTED = 5
UNLISTED_SHARE = 0.8


def _unlisted(words: Sequence[str], min_words: int = MIN_UNLISTED, share: float = UNLISTED_SHARE) -> bool:
    """At least :data:`MIN_UNLISTED` words, :data:`UNLISTED_SHARE` of them in no language's list (English's
    included): a sentence in a Latin-script language wordfreq has no list for (Swahili, Yoruba, Hausa, Zulu, ...). A
    misspelt English sentence keeps most of its words ("teh protien is maked by ribosomes": three of five are
    English), so it is not one."""
    lists = _lists()
    if "en" not in lists or len(words) < min_words:
        return False
    unknown = sum(not any(w in lst for lst in lists.values()) for w in words)
    return unknown >= share * len(words)


def _latin(sentence: str, words: Sequence[str] | None = None) -> str | None:
    """The Latin-script language of ``sentence``, when it clearly is one (module docstring): ``en``, another code,
    or None (too short or unclear). A sentence that reads as English as a whole is also read in windows of
    :data:`WINDOW` words (stride half that): an instruction in another language written *inside* an English
    sentence is outweighed by the English around it, not by the words of its own window."""
    words = _latin_words(sentence) if words is None else words
    whole = _language_of(words)
    if whole in (None, "en"):
        lid = _identified(sentence, words)
        if lid:
            return lid
    if whole is None and _unlisted(words):
        return UNLISTED
    if whole not in ("en", None) or len(words) <= WINDOW:
        return whole
    for i in range(0, len(words) - WINDOW + 1, WINDOW // 2):
        lab = _language_of(words[i:i + WINDOW], min_known=WINDOW - 1, share=(WINDOW - 1) / WINDOW)
        if lab not in ("en", None):
            return lab
    return whole


RUN_MIN = 5
"""Words (of three letters or more) that are no English words a run inside a sentence needs before it is asked
about (sixth round)."""


def _foreign_runs(sentence: str) -> list[tuple[str, list[str]]]:
    """The runs of a sentence's words that are no English words (wordfreq's English list), each as (its text from
    its first word to its last, its words of three letters or more), with :data:`RUN_MIN` different such words:
    the part of a sentence that may be another language when the sentence as a whole is not (sixth round). Words
    of one or two letters sit inside a run ("i", "le", "na"); one English word between two of the run's words
    stays in it (another language's word that English happens to spell too: "maze", "don", "note"); two English
    words in a row end it. Acronyms of a mixed-case sentence, web addresses and placeholders are skipped as in
    :func:`_latin_words`."""
    en = _lists().get("en")
    if not en:
        return []
    masked = _NOT_WORDS.sub(lambda m: " " * len(m.group()), sentence)
    mixed = any(c.islower() for c in masked)
    toks: list[tuple[int, int, str, bool]] = []  # (start, end, word, English)
    for m in _WORD.finditer(masked):
        w = m.group()
        if _counted(w, mixed):
            toks.append((m.start(), m.end(), w.lower(), w.lower() in en))
    runs: list[tuple[str, list[str]]] = []
    i = 0
    while i < len(toks):
        if toks[i][3]:
            i += 1
            continue
        j, last = i, i
        while j < len(toks):
            if not toks[j][3]:
                last = j
            elif j + 1 >= len(toks) or toks[j + 1][3]:
                break  # two English words in a row (or an English word last): the run ends before
            j += 1
        words = [w for _, _, w, is_en in toks[i:last + 1] if not is_en]
        if len(set(words)) >= RUN_MIN:  # five different words: "const -> nonconst" repeated is no passage
            runs.append((sentence[toks[i][0]:toks[last][1]], [w for _, _, w, _ in toks[i:last + 1]]))
        i = last + 1
    return runs


RUN_LONG = 7
RUN_LONG_SHARE = 0.7
"""A run of :data:`RUN_LONG` words or more, none English, is ``latin:unlisted`` when :data:`RUN_LONG_SHARE` of them
are in no language's list (a shorter one needs :data:`UNLISTED_SHARE`): seven words in a row that English does not
spell are rare in an English answer, misspelt or not (measured on real answers: docs/findings/llm-graders.md)."""


RUN_MAX_ENGLISH_PROB = 0.05
"""langid.py's probability of English under which a run may be ``latin:unlisted``: a list of technical terms no
word list holds ("interphase, prophase, metaphase"), misspelt or not, reads as English to its character n-grams
(0.95-1.0 on real ASAP-SAS answers), a Zulu, Somali or Samoan request does not (under 0.001)."""


RUN_FOREIGN_PROB = 1e-4
"""langid.py's probability of English under which a long run (:data:`RUN_LONG` words) is ``latin:unlisted`` even
when other languages' lists spell many of its words (seventh round: Hausa's "don", "maki", "gaba" are in some
list): on real answers, runs this un-English were 2 of about 45 (ASAP-AES mojibake of five words and a French
quotation, which a list labels anyway); on Mohler and ASAP-SAS none (docs/findings/llm-graders.md measures the
stage's cost)."""


def _run_label(passage: str, words: Sequence[str]) -> str | None:
    """The label of a run of :func:`_foreign_runs`: langid.py's language (:func:`_identified`), else
    ``latin:unlisted`` (:func:`_unlisted`, or a long run: :data:`RUN_LONG`) when langid.py gives English less than
    :data:`RUN_MAX_ENGLISH_PROB`, or a long run that langid.py gives English less than :data:`RUN_FOREIGN_PROB`, else
    None (always None without langid.py: a run's words alone cannot tell a list
    of technical terms from another language)."""
    idf = _langid()
    if idf is None:
        return None
    lid = _identified(passage, words)
    if lid:
        return lid
    english = dict(idf.rank(passage)).get("en", 0.0)
    if english >= RUN_MAX_ENGLISH_PROB:
        return None
    if _unlisted(words) or _unlisted(words, RUN_LONG, RUN_LONG_SHARE):
        return UNLISTED
    return UNLISTED if len(words) >= RUN_LONG and english < RUN_FOREIGN_PROB else None


def sentence_labels(text: str) -> list[tuple[str, str]]:
    """(label, sentence) for the sentences of ``text`` that have a language label other than plain English: a
    non-Latin script's passage (``script:NAME``) or a Latin-script language (``es``, ``de``, ...)."""
    out: list[tuple[str, str]] = []
    run: list[str] = []  # consecutive unlabelled sentences whose words are mostly not English

    def close_run() -> None:
        passage = " ".join(run)
        lid = _identified(passage, _latin_words(passage)) if len(run) > 1 else None  # one was asked already
        if lid:
            out.append((lid, passage))
        elif run:  # English words around it (a host sentence glued to it) may have hidden it: its runs alone
            foreign_runs(passage)
        run.clear()

    def foreign_runs(sentence: str) -> None:
        for passage, pw in _foreign_runs(sentence):  # another language inside an English sentence (diluted)
            lab = _run_label(passage, pw)
            if lab:
                out.append((lab, passage))
                return

    for s in _SENT.split(text):
        s = s.strip()
        if not s:
            continue
        for lab in sorted(_scripts(s)):
            out.append((lab, s))
        words = _latin_words(s)
        lab = _latin(s, words)
        if lab and lab != "en":
            out.append((lab, s))
            close_run()
        elif _mostly_not_english(words):
            run.append(s)
        else:
            close_run()
            foreign_runs(s)
    close_run()
    if not out:  # seventh round: a run across sentences (an answer glued to a request of two short sentences)
        foreign_runs(" ".join(text.split()))
    return out


def _mostly_not_english(words: Sequence[str]) -> bool:
    """Less than :data:`LID_MAX_ENGLISH` of ``words`` are English (False without wordfreq or without words)."""
    en = _lists().get("en")
    return bool(en) and bool(words) and sum(w in en for w in words) < LID_MAX_ENGLISH * len(words)


def describe(label: str) -> str:
    """``script:HANGUL`` -> "Hangul script"; ``pl`` -> "Polish (pl)"."""
    if label.startswith("script:"):
        return f"{label[7:].title()} script"
    if label == UNLISTED:
        return "a Latin-script language no word list holds (latin:unlisted)"
    if label.startswith("lid:"):
        return f"{_NAMES.get(label[4:], label[4:])} ({label}, named by langid.py)"
    return f"{_NAMES.get(label, label)} ({label})"


@dataclass
class LanguageProfile:
    """The languages of the answers a filter guards (:meth:`fit`) and the test for a passage in another
    (:meth:`foreign`). ``guarded``: the labels of :func:`sentence_labels` the fit's answers use."""

    guarded: frozenset[str] = field(default_factory=frozenset)
    min_share: float = 0.005
    n_fit: int = 0
    shares: dict[str, float] = field(default_factory=dict)

    @classmethod
    def fit(cls, texts: Sequence[str], *, min_share: float = 0.005) -> LanguageProfile:
        """The labels held by at least ``min_share`` of ``texts`` (the fit's own answers) are guarded."""
        held: Counter[str] = Counter()
        n = 0
        for t in texts:
            if not t or not t.strip():
                continue
            n += 1
            held.update({lab for lab, _ in sentence_labels(t)})
        shares = {lab: k / max(n, 1) for lab, k in held.items()}
        guarded = frozenset(lab for lab, s in shares.items() if s >= min_share)
        return cls(guarded, float(min_share), n, {k: round(v, 5) for k, v in sorted(shares.items())})

    def foreign(self, text: str) -> list[tuple[str, str]]:
        """(label, sentence) of each passage of ``text`` in a language the profile does not guard."""
        return [(lab, s) for lab, s in sentence_labels(text) if lab not in self.guarded]

    def flag(self, texts: Iterable[str]) -> list[bool]:
        return [bool(self.foreign(t)) for t in texts]
