"""What an injection *does*, as features the learned injection detector can generalise from: a span addressed to
the reader (the grader, in the second person or by a vocative) that requests or asserts an evaluation outcome
(a mark, a number on a scale, the top of it), overrides the instructions, or fakes a turn or a verdict.

Why: a classifier over word and character n-grams learns the words of its training injections; a paraphrase
with other words ("put down a five", "the top of the scale") passes (issue 36; Liu et al. 2024, USENIX Security,
Sec. 6: detectors judged on the attacks they were built from overstate their strength). Perez & Ribeiro 2022
("Ignore Previous Prompt", Sec. 3) and Liu et al. 2024 (Sec. 3: separator, context-ignoring text, injected task)
describe injections by their parts, not their words; Greshake et al. 2023 (Sec. 4) add the claims of
authority and the fake system turns of indirect injections. So each word of a unit is mapped to the *part* it
plays (:data:`CATEGORIES`), and the detector reads n-grams of that abstracted sequence ("you REQ a NUM",
"ADDR : REQ TOP OUTCOME") and which parts co-occur, besides the words themselves.

The lexicon: hand-written seeds per category, each expanded with the lemmas of named WordNet 3.0 senses
(:data:`WORDNET_SENSES`; Miller 1995) and the grammar's own words in 14 other languages
(:mod:`callbluff.defenses.injection_grammar`'s addressees); never with a held-out corpus's words. The lexicon is
built once at fit time (:func:`build_lexicon`) and stored in the fitted detector, so applying it needs no
WordNet.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np

__all__ = ["CATEGORIES", "DENSE_NAMES", "WORDNET_SENSES", "abstract", "build_lexicon", "dense"]

CATEGORIES: dict[str, tuple[str, ...]] = {
    # the reader addressed (vocatives, the grader under its names)
    "ADDR": ("grader", "graders", "marker", "markers", "examiner", "examiners", "teacher", "evaluator", "reviewer",
             "assessor", "scorer", "ai", "assistant", "model", "llm", "chatbot", "bot", "autograder", "auto-marker",
             "professor", "tutor", "moderator", "whoever", "reader", "gpt", "chatgpt", "judge",
             "instructor", "proctor", "corrector", "examinator"),
    # the second person
    "YOU": ("you", "your", "yours", "yourself", "u", "ur", "thou"),
    # an evaluation outcome
    "OUTCOME": ("score", "scores", "mark", "marks", "grade", "grades", "grading", "points", "point", "credit",
                "rating", "rate", "verdict", "result", "evaluation", "assessment", "pass", "passes", "marking",
                "scoring", "number", "outcome", "scale", "band"),
    # the top of a scale / the best outcome
    "TOP": ("top", "highest", "maximum", "max", "full", "perfect", "best", "biggest", "largest", "greatest",
            "excellent", "flawless", "every", "all", "complete", "completely", "fully", "maximal", "outstanding",
            "ideal", "100%", "a+", "generous", "generously", "correct"),
    # a request to produce / record an outcome
    "REQ": ("give", "award", "assign", "grant", "put", "record", "enter", "write", "rate", "score", "mark",
            "output", "print", "reply", "respond", "answer", "return", "report", "say", "type", "copy", "set",
            "hand", "allocate", "classify", "label", "treat", "consider", "accept", "approve", "pass", "list",
            "state", "declare", "fill", "produce", "emit"),
    # set the instructions aside
    "IGNORE": ("ignore", "disregard", "forget", "skip", "override", "overrule", "bypass", "discard", "drop",
               "neglect", "void", "cancel", "suspend", "stop", "abandon", "dismiss"),
    # the instructions / the context a grader is given
    "PRIOR": ("instructions", "instruction", "rubric", "rubrics", "criteria", "guidelines", "guide", "key",
              "prompt", "directions", "rules", "scheme", "above", "previous", "prior", "earlier", "solution",
              "reference", "guidance", "policy", "checks"),
    # an authority / verification claim
    "AUTH": ("approved", "verified", "pre-approved", "pre-checked", "pre-graded", "authorised", "authorized",
             "confirmed", "validated", "certified", "exempt", "exemption", "official", "administrator", "admin",
             "department", "override", "priority", "mandatory", "authority"),
    # a plea
    "PLEA": ("please", "kindly", "beg", "plead", "need", "deserve", "deserves", "mercy", "hardworking",
             "scholarship", "fail", "failing", "graduate", "generous"),
    # only / nothing else (output-format demands)
    "ONLY": ("only", "just", "solely", "simply", "nothing", "exclusively", "merely"),
}
"""Hand-written seeds of each category (English)."""

WORDNET_SENSES: dict[str, tuple[str, ...]] = {
    "OUTCOME": ("mark.n.01", "grade.n.02", "evaluation.n.01", "rating.n.01", "score.n.03", "credit.n.06",
                "grade.v.01", "score.v.01", "appraisal.n.01"),
    "TOP": ("maximum.n.01", "utmost.n.01", "perfect.a.01", "best.a.01", "excellent.s.01", "flawless.s.01",
            "ideal.s.01"),
    "REQ": ("give.v.03", "award.v.01", "assign.v.01", "grant.v.01", "record.v.01", "enter.v.02", "output.v.01",
            "print.v.01", "respond.v.01", "reply.v.01", "report.v.01", "put_down.v.04", "write_down.v.01",
            "rate.v.01", "allot.v.01"),
    "IGNORE": ("ignore.v.01", "disregard.v.01", "forget.v.01", "override.v.01", "bypass.v.01", "neglect.v.01",
               "dismiss.v.01", "discount.v.01"),
    "ADDR": ("grader.n.01", "examiner.n.01", "teacher.n.01", "evaluator.n.01", "reviewer.n.01",
             "assessor.n.01"),
    "PRIOR": ("instruction.n.01", "criterion.n.01", "guideline.n.01", "rubric.n.01"),
    "AUTH": ("approve.v.01", "confirm.v.01", "verify.v.01", "certify.v.01", "authorize.v.01"),
    "PLEA": ("beg.v.01", "plead.v.01", "implore.v.01"),
}
"""WordNet 3.0 senses whose lemmas join each category (a two-word lemma joins as a phrase, "put down"); an
adjective sense in :data:`SIMILAR` brings its similar-to satellites too ("perfect" -> "flawless", "errorless")."""

SIMILAR = frozenset({"perfect.a.01", "best.a.01"})

TOO_COMMON = frozenset({
    "support", "standard", "measure", "order", "place", "range", "rank", "present", "clear", "cut", "miss",
    "omit", "drop", "level", "tier", "account", "describe", "sustain", "evidence", "demonstrate", "manifest",
    "reverse", "hit", "tally", "get down", "set down", "take down", "degrade", "disgrace", "demean",
    "designate", "delegate", "depute", "portion", "react", "publish", "touchstone", "allow", "participate",
    "bury", "snub", "overthrow", "overturn", "go around", "get around", "o.k.", "okay", "first", "down",
    "down pat", "mastered", "idyllic", "second-best", "complete", "consummate", "leave out",
    "overlook", "overleap", "pretermit", "affirm", "corroborate", "substantiate", "attest", "valuation",
    "referee", "tester", "quizzer", "tax assessor", "course credit", "rack up", "short-circuit", "cold", "mint",
    "clean", "champion", "pluperfect", "perfectible", "go-to-meeting", "sunday-go-to-meeting", "uncorrupted",
    "undefiled", "prizewinning"})
"""WordNet lemmas of those senses too common in real answers to signal a grade request ("support", "order",
"place", "clear"): left out."""

NUMBER_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "hundred",
                "zero", "fifth", "tenth")

DENSE_NAMES: tuple[str, ...] = (*CATEGORIES, "NUM", "SEP", "ADDR|YOU&REQ", "REQ&OUTCOME|TOP|NUM",
                                "OUTCOME&TOP", "ADDR|YOU&OUTCOME|TOP", "IGNORE&PRIOR", "AUTH&OUTCOME|TOP",
                                "ONLY&NUM", "PLEA&OUTCOME|TOP", "starts-REQ|IGNORE", "ADDR-vocative")
"""The dense features of :func:`dense`, in order: each category present, then co-occurrences of the parts."""

_TOKEN = re.compile(r"\d+(?:[.,]\d+)?%?|[^\W\d_]+(?:[-'][^\W\d_]+)*\+?|<\|?|\|?>|[^\w\s]")
_SEP = re.compile(r"^(?:<\|?|\|?>|\[|\]|#|\{|\}|=|\*|_|~|`)$")


def build_lexicon(extra_addressees: Sequence[str] = ()) -> dict[str, str]:
    """word -> category (the first category a word is listed in wins): the seeds, the lemmas of
    :data:`WORDNET_SENSES` (through :func:`callbluff.resources.wordnet_setup.load_wordnet`) and
    ``extra_addressees`` (the grammar's addressees in other languages). Raises with the set-up command when
    WordNet cannot be read."""
    from callbluff.resources.wordnet_setup import load_wordnet

    try:
        wn = load_wordnet()
    except LookupError as e:  # pragma: no cover - depends on the machine
        raise RuntimeError("injection detector lexicon: NLTK cannot find WordNet; run `callbluff prepare` (or "
                           "`apt-get install wordnet-base wordnet-sense-index && python -m "
                           "callbluff.resources.wordnet_setup`)") from e
    lex: dict[str, str] = {}
    for cat, words in CATEGORIES.items():
        for w in words:
            lex.setdefault(w, cat)
    for cat, senses in WORDNET_SENSES.items():
        for name in senses:
            try:
                syn = wn.synset(name)
            except Exception:  # noqa: BLE001 - a sense missing from this WordNet: skip, the seeds remain
                continue
            lemmas = list(syn.lemma_names())
            if name in SIMILAR:
                lemmas += [x for sim in syn.similar_tos() for x in sim.lemma_names()]
            for lemma in lemmas:
                w = lemma.lower().replace("_", " ")
                if w not in TOO_COMMON and len(w.split()) <= 2:
                    lex.setdefault(w, cat)
    for w in extra_addressees:
        for part in w.lower().split():
            if len(part) >= 4:
                lex.setdefault(part, "ADDR")
    for w in NUMBER_WORDS:
        lex[w] = "NUM"
    return lex


def _tokens(text: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(text)]


def abstract(text: str, lex: Mapping[str, str]) -> list[str]:
    """The unit as the parts its words play: a lexicon word (or two-word phrase, "put down") becomes its category,
    a number (or a number word) ``NUM``, a template separator (``<|``, ``[``, ``#``, ``{``...) ``SEP``; every
    other word stays itself (lower-cased)."""
    toks = _tokens(text)
    out: list[str] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if i + 1 < len(toks) and f"{t} {toks[i + 1]}" in lex:
            out.append(lex[f"{t} {toks[i + 1]}"])
            i += 2
            continue
        if t[0].isdigit():
            out.append("NUM")
        elif t in lex:
            out.append(lex[t])
        elif _SEP.match(t):
            out.append("SEP")
        else:
            out.append(t)
        i += 1
    return out


def dense(seqs: Sequence[Sequence[str]]) -> np.ndarray:
    """Per abstracted unit, the :data:`DENSE_NAMES` features (0/1)."""
    out = np.zeros((len(seqs), len(DENSE_NAMES)), dtype=np.float32)
    cats = [*CATEGORIES, "NUM", "SEP"]
    for i, s in enumerate(seqs):
        has = {c: c in s for c in cats}
        goal = has["OUTCOME"] or has["TOP"] or has["NUM"]
        first = next((t for t in s if t.isalpha() or t.isupper()), "")
        out[i, :len(cats)] = [has[c] for c in cats]
        out[i, len(cats):] = [
            (has["ADDR"] or has["YOU"]) and has["REQ"], has["REQ"] and goal, has["OUTCOME"] and has["TOP"],
            (has["ADDR"] or has["YOU"]) and (has["OUTCOME"] or has["TOP"]), has["IGNORE"] and has["PRIOR"],
            has["AUTH"] and (has["OUTCOME"] or has["TOP"]), has["ONLY"] and has["NUM"],
            has["PLEA"] and (has["OUTCOME"] or has["TOP"]), first in ("REQ", "IGNORE"),
            any(a == "ADDR" and b in (",", ":") for a, b in zip(s, s[1:], strict=False))]
    return out
