"""Step (2) of AddSent: a fake answer of the same type as the gold answer (Jia & Liang 2017, Sec. 3.1:
"we generate a fake answer that has the same 'type' as the original answer, using a set of roughly 26
heuristic rules"; slide 15: Prague -> Chicago).

The 26 rules of the authors' implementation, tried in order on the gold answer's tokens (their PTB tags and
entity classes come from spaCy's parse of the *context*, where the answer span is; classes are CoreNLP's,
mapped from spaCy's labels by :data:`~callbluff.attacks.reading.lexicon.ENTITY_CLASS`):

``date`` (every token a DATE: years > 50 minus 25, days of month +/- 11, months + 6), ``number`` (a number
token changed: 1000-2500 minus 75, else the leading digit + 5 mod 10; thousand <-> million), then fixed
stand-ins: all-PERSON Jeff Dean, all-LOCATION Chicago, all-ORGANIZATION Stark Industries, all-MISC Jupiter,
abbreviation LSTM; by wh-word: who Jeff Dean, when 1956, where Chicago, how many 42; by the POS of the
first token (VB learn, VBD learned, VBG learning, VBP / VBZ learns) or of the last (NN hamster, NNP Central
Park, NNS hamsters, NNPS Kew Gardens, JJ deep, JJR deeper, JJS deepest, RB silently, VBG learning; nouns keep
the answer's determiner); catch-all aliens.

Fake answers that fit the question's type (issue 37; our rules, where the paper's crowd fixed the wording): a
why-question gets a reason phrase (:func:`ans_why`: a cause "because of the cold weather" or a purpose "to raise
money"), whatever the gold answer's part of speech; the noun stand-ins take the answer's determiner in lower case
and a singular one without a determiner takes "a" ("a hamster"), the proper-noun ones none ("Central Park");
percentages keep their sign. Each rule's answer has a kind (:func:`answer_kind`: noun, adjective, adverb, verb,
reason), so the conversion can refuse a kind that cannot stand where the wh-phrase stood; the POS rules add a
second form (:data:`SECOND_FORM`: the other number of the noun, the gerund of a verb).

Issue 37's second round: a date's number changes inside its token and keeps its affixes (``mid-19th`` ->
``mid-8th``, a decade stays a decade: ``1940s`` -> ``1910s``), and a gold answer that is a whole clause (a finite
verb among more than four tokens) gets no date or number rule (its own words with a number changed cannot fill a
noun's slot).

AddSent makes several candidate sentences, so :func:`fake_answers` returns the rule's answer first and then,
for entity answers, frequent entities of the same class from the lexicon's corpus, and for dates/numbers
the rule applied again to its own output (our choice; the paper's crowd supplied the variety). An answer
that overlaps a gold answer is never returned (checked on normalised tokens).
"""

from __future__ import annotations

import math
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from callbluff.attacks.reading.lexicon import ENTITY_CLASS, Lexicon
from callbluff.metrics.reading import normalize_answer

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")


@dataclass(frozen=True)
class AnswerToken:
    """One token of the gold answer: text, PTB tag, entity class (CoreNLP-style, or "") and the whitespace
    before it."""

    text: str
    tag: str
    cls: str
    before: str = ""


def _join(tokens: Sequence[tuple[str, str]]) -> str:
    return "".join(b + t for t, b in tokens).strip()


def ans_date(answer: str, toks: Sequence[AnswerToken], question: str) -> str | None:
    if not toks or not all(t.cls == "DATE" for t in toks):
        return None
    out = []
    for t in toks:
        if t.tag == "CD" or t.text.isdigit() or re.search(r"\d", t.text):
            m = re.search(r"\d+", t.text)
            value = int(m.group()) if m else 10
            new = str(value - 25) if value > 50 else str(value - 11) if value > 15 else str(value + 11)
            if m:  # "mid-19th" -> "mid-8th", "1990s" -> "1965s": the number changes, its affixes stay (issue 37)
                suffix = t.text[m.end():]
                if re.fullmatch(r"(st|nd|rd|th)", suffix.lower()):
                    suffix = _ordinal_suffix(int(new))
                elif suffix.lower() in ("s", "'s") and value >= 100:
                    new = str(value - 30)  # a decade stays a decade: "1940s" -> "1910s", not "1915s"
                new = t.text[:m.start()] + new + suffix
        elif t.text.lower() in MONTHS:
            new = MONTHS[(MONTHS.index(t.text.lower()) + 6) % 12].title()
        else:
            new = t.text
        out.append((new, t.before))
    new_ans = _join(out)
    return None if new_ans == answer else new_ans


def _ordinal_suffix(n: int) -> str:
    """The English ordinal suffix of ``n`` (``21st``, ``12th``)."""
    if 10 <= n % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def _change_number(w: str) -> str | None:
    if w.endswith("%") and len(w) > 1:  # "93%" -> "43%", the sign kept (it was dropped: "10")
        new = _change_number(w[:-1])
        return None if new is None else new + "%"
    if w in ("thousand", "million", "billion", "trillion"):
        return "million" if w == "thousand" else "thousand"
    try:
        value = float(w.replace(",", ""))
    except ValueError:
        return None
    if math.isinf(value) or math.isnan(value):
        value = 9001
    if 1000 < value < 2500:
        return str(int(value - 75)) if value == int(value) else f"{value - 75:g}"
    chars = list(f"{int(value)}" if value == int(value) else f"{value:g}")
    for i, c in enumerate(chars):
        if c.isdigit():
            chars[i] = str(max((int(c) + 5) % 10, 1))
            break
    return "".join(chars)


def ans_number(answer: str, toks: Sequence[AnswerToken], question: str) -> str | None:
    out, seen = [], False
    for t in toks:
        w, leftover = t.text, ""
        if "-" in w:
            w, leftover = w.split("-", 1)
        new = _change_number(w) if w != "%" else None
        if new is None and t.cls == "NUMBER" and t.tag == "CD":
            new = "10"  # forced, as the authors do for number entities that do not parse
        if new is not None:
            seen = True
            out.append((f"{new}-{leftover}" if leftover else new, t.before))
        else:
            out.append((t.text, t.before))
    return _join(out) if seen else None


def ans_entity_full(cls: str, new: str) -> Callable[[str, Sequence[AnswerToken], str], str | None]:
    def rule(answer: str, toks: Sequence[AnswerToken], question: str) -> str | None:
        return new if toks and all(t.cls == cls for t in toks) else None
    return rule


def ans_abbrev(new: str) -> Callable[[str, Sequence[AnswerToken], str], str | None]:
    def rule(answer: str, toks: Sequence[AnswerToken], question: str) -> str | None:
        return new if answer == answer.upper() and answer != answer.lower() else None
    return rule


def ans_match_wh(wh: str, new: str) -> Callable[[str, Sequence[AnswerToken], str], str | None]:
    def rule(answer: str, toks: Sequence[AnswerToken], question: str) -> str | None:
        return new if question.lower().startswith(wh + " ") else None
    return rule


def ans_pos(tag: str, new: str, end: bool = False,
            add_dt: bool = False) -> Callable[[str, Sequence[AnswerToken], str], str | None]:
    """The authors' POS rule; with ``add_dt`` the stand-in takes the answer's determiner, in lower case (a
    capital "The" inside a sentence is wrong), and a singular common noun without one takes "a" (a bare
    "hamster" is not English: "The term is hamster."; our rule, where the paper's crowd fixed the wording)."""
    def rule(answer: str, toks: Sequence[AnswerToken], question: str) -> str | None:
        if not toks:
            return None
        t = toks[-1] if end else toks[0]
        if t.tag != tag:
            return None
        det = toks[0].text.lower() if toks[0].tag == "DT" else ""
        if add_dt and tag == "NN" and det in ("", "a", "an", "this", "that", "each", "every", "another"):
            det = "a"
        if add_dt and tag == "NNS" and det in ("a", "an", "this", "that", "each", "every", "another"):
            det = ""
        if tag in ("NNP", "NNPS"):
            det = ""  # "Central Park", "Kew Gardens" take no article ("the Central Park of X")
        return f"{det} {new}" if add_dt and det else new
    return rule


WHY_CAUSE, WHY_PURPOSE = "because of the cold weather", "to raise money"
"""The reason phrases that answer a why-question (our stand-ins, as "Jeff Dean" stands in for a person): a
cause and a purpose."""


def ans_why(answer: str, toks: Sequence[AnswerToken], question: str) -> str | None:
    """A why-question's fake answer is a reason phrase, whatever the gold answer's part of speech (the authors'
    POS rules turn "because it was cheaper" into "learn" or "hamster": "... because of learn."): a purpose
    ("to raise money") when the gold answer is one ("to ..." / "in order to ..."), a cause ("because of the cold
    weather") otherwise."""
    if not re.search(r"\bwhy\b", question.lower()):
        return None
    low = answer.strip().lower()
    return WHY_PURPOSE if low.startswith(("to ", "in order to", "so as to", "so that")) else WHY_CAUSE


def ans_catch_all(new: str) -> Callable[[str, Sequence[AnswerToken], str], str | None]:
    def rule(answer: str, toks: Sequence[AnswerToken], question: str) -> str | None:
        return new
    return rule


ANSWER_RULES: tuple[tuple[str, Callable[[str, Sequence[AnswerToken], str], str | None]], ...] = (
    ("why", ans_why),
    ("date", ans_date),
    ("number", ans_number),
    ("ner-person", ans_entity_full("PERSON", "Jeff Dean")),
    ("ner-location", ans_entity_full("LOCATION", "Chicago")),
    ("ner-organization", ans_entity_full("ORGANIZATION", "Stark Industries")),
    ("ner-misc", ans_entity_full("MISC", "Jupiter")),
    ("abbrev", ans_abbrev("LSTM")),
    ("wh-who", ans_match_wh("who", "Jeff Dean")),
    ("wh-when", ans_match_wh("when", "1956")),
    ("wh-where", ans_match_wh("where", "Chicago")),
    ("wh-how-many", ans_match_wh("how many", "42")),
    ("pos-begin-vb", ans_pos("VB", "learn")),
    ("pos-begin-vbd", ans_pos("VBD", "learned")),
    ("pos-begin-vbg", ans_pos("VBG", "learning")),
    ("pos-begin-vbp", ans_pos("VBP", "learns")),
    ("pos-begin-vbz", ans_pos("VBZ", "learns")),
    ("pos-end-nn", ans_pos("NN", "hamster", end=True, add_dt=True)),
    ("pos-end-nnp", ans_pos("NNP", "Central Park", end=True, add_dt=True)),
    ("pos-end-nns", ans_pos("NNS", "hamsters", end=True, add_dt=True)),
    ("pos-end-nnps", ans_pos("NNPS", "Kew Gardens", end=True, add_dt=True)),
    ("pos-end-jj", ans_pos("JJ", "deep", end=True)),
    ("pos-end-jjr", ans_pos("JJR", "deeper", end=True)),
    ("pos-end-jjs", ans_pos("JJS", "deepest", end=True)),
    ("pos-end-rb", ans_pos("RB", "silently", end=True)),
    ("pos-end-vbg", ans_pos("VBG", "learning", end=True)),
    ("catch-all", ans_catch_all("aliens")),
)
"""The authors' 26 rules in their order (first match wins), after our ``why`` rule (:func:`ans_why`)."""

KIND_OF_RULE = {"why": "reason", "pos-end-jj": "adjective", "pos-end-jjr": "adjective", "pos-end-jjs": "adjective",
                "pos-begin-vb": "verb", "pos-begin-vbd": "verb", "pos-begin-vbp": "verb", "pos-begin-vbz": "verb",
                "pos-end-rb": "adverb"}
"""What each rule's fake answer is where it is not a noun phrase (:data:`.declarative.ANSWER_KINDS`)."""
SECOND_FORM = {"pos-end-nn": ("hamsters", "pos-end-nn-plural"), "pos-end-nns": ("a hamster", "pos-end-nns-singular"),
               "pos-begin-vb": ("learning", "pos-begin-vb-gerund"), "pos-begin-vbd": ("learning", "pos-begin-vbd-gerund"),
               "pos-begin-vbp": ("learning", "pos-begin-vbp-gerund"),
               "pos-begin-vbz": ("learning", "pos-begin-vbz-gerund")}
"""A second fake answer for the POS rules, the other number of the noun, or the gerund of a verb (a noun phrase:
a bare verb cannot stand where a wh-pronoun stood): a sentence whose verb agrees with one number, or that needs a
noun, still gets a candidate (our choice)."""


def answer_kind(rule: str) -> str:
    """The kind of the fake answer made by ``rule`` (``noun`` unless :data:`KIND_OF_RULE` says otherwise)."""
    base = rule.removesuffix("-again")
    return KIND_OF_RULE.get(base, "reason" if base.startswith("why") else "noun")


TAGGED_CACHE_SIZE = 1024
"""Answer sentences whose tagged parse is kept (questions on one paragraph often share the sentence)."""
_TAGGED: OrderedDict[str, Any] = OrderedDict()
_TAGGED_LOCK = threading.Lock()


def _tagged_many(texts: Sequence[str], res: Any) -> list[Any]:
    """spaCy's tags and entities of each of ``texts`` (the full pipeline minus the parser and lemmatizer, which
    the answer rules do not read: the same tags and entities at about half the cost), the ones not among the
    last :data:`TAGGED_CACHE_SIZE` texts parsed in one ``nlp.pipe`` (the same parses as one call per text)."""
    with _TAGGED_LOCK:
        found = {t: _TAGGED[t] for t in texts if t in _TAGGED}
        for t in found:
            _TAGGED.move_to_end(t)
    todo = [t for t in dict.fromkeys(texts) if t not in found]
    if todo:
        disable = [p for p in ("parser", "lemmatizer") if p in res.nlp.pipe_names]
        parsed = dict(zip(todo, res.nlp.pipe(todo, disable=disable, batch_size=64), strict=True))
        found.update(parsed)
        with _TAGGED_LOCK:
            _TAGGED.update(parsed)
            while len(_TAGGED) > TAGGED_CACHE_SIZE:
                _TAGGED.popitem(last=False)
    return [found[t] for t in texts]


def _answer_sentence(context: str, start: int, answer: str, res: Any) -> tuple[int, int, int] | None:
    """``(s0, s1, start)``: the character range of the sentence of ``context`` holding the answer (widened to
    the answer's end) and the answer's start; the first occurrence of ``answer`` when the dataset's offset is
    wrong or missing; None when the context does not contain it."""
    if start < 0 or context[start:start + len(answer)] != answer:
        start = context.find(answer)
    if start < 0:
        return None
    s0, s1 = 0, len(context)
    for a, b in res.sentence_spans(context):
        if a <= start < b or (a <= start < b + 1):
            s0, s1 = a, max(b, start + len(answer))
            break
    return s0, s1, start


def answer_tokens(context: str, start: int, answer: str, res: Any) -> list[AnswerToken]:
    """The tokens of the answer span ``[start, start + len(answer))`` of ``context``, tagged by spaCy's full
    parse of the *sentence* holding it (one sentence, not the paragraph: 5-10x cheaper, same tags and entities
    but for entities that cross sentences); when the span is not where the dataset says (or missing), the
    first occurrence of ``answer`` in the context."""
    return answer_tokens_many([(context, start, answer)], res)[0]


def answer_tokens_many(spans: Sequence[tuple[str, int, str]], res: Any) -> list[list[AnswerToken]]:
    """:func:`answer_tokens` of each ``(context, start, answer)``: the paragraphs split into sentences in one
    batch (``res.prefetch_spans``), the answers' sentences tagged in one ``nlp.pipe``; the same tokens as one
    call each."""
    if len(spans) > 1:
        res.prefetch_spans([c for c, _, _ in spans])
    where = [_answer_sentence(c, s, a, res) for c, s, a in spans]
    sentences = [c[w[0]:w[1]] for (c, _, _), w in zip(spans, where) if w is not None]
    docs = iter(_tagged_many(sentences, res))
    out: list[list[AnswerToken]] = []
    for (_, _, answer), w in zip(spans, where):
        if w is None:
            out.append([])
            continue
        doc = next(docs)
        span = doc.char_span(w[2] - w[0], w[2] - w[0] + len(answer), alignment_mode="expand")
        toks = []
        for k, t in enumerate(span if span is not None else ()):
            before = "" if k == 0 else span.doc[t.i - 1].whitespace_
            toks.append(AnswerToken(t.text, t.tag_, ENTITY_CLASS.get(t.ent_type_, ""), before))
        out.append(toks)
    return out


def overlaps_gold(text: str, golds: Sequence[str]) -> bool:
    """Whether ``text`` contains a gold answer, compared as SQuAD-normalised token sequences (so "1880." and
    "the 1880" contain "1880"; an empty normalised gold is ignored)."""
    toks = normalize_answer(text).split()
    for g in golds:
        gt = normalize_answer(g).split()
        if not gt:
            continue
        for i in range(len(toks) - len(gt) + 1):
            if toks[i:i + len(gt)] == gt:
                return True
    return False


def fake_answers(answer: str, toks: Sequence[AnswerToken], question: str, golds: Sequence[str],
                 lex: Lexicon | None, k: int = 3) -> list[tuple[str, str]]:
    """Up to ``k`` fake answers ``(text, rule)``: the first matching rule's answer, then same-class
    alternatives (module docstring). None overlaps a gold answer (nor contains one)."""
    out: list[tuple[str, str]] = []

    def add(text: str | None, rule: str) -> None:
        if text and text.strip() and not overlaps_gold(text, golds) and not overlaps_gold(answer, [text]) \
                and all(text != o for o, _ in out):
            out.append((text.strip(), rule))

    first_rule = ""
    clause = len(toks) > 4 and any(t.tag in ("VBD", "VBZ", "VBP", "MD") for t in toks)
    for name, rule in ANSWER_RULES:
        if clause and name in ("date", "number"):
            continue  # a whole clause with a number changed ("X was mentioned in 378") cannot fill a noun's slot
        new = rule(answer, toks, question)
        if new and not overlaps_gold(new, golds):
            add(new, name)
            first_rule = name
            break
    classes = {t.cls for t in toks}
    if first_rule == "why":
        add(WHY_CAUSE if out and out[0][0] == WHY_PURPOSE else WHY_PURPOSE, "why-other")
    elif first_rule in SECOND_FORM:
        add(*SECOND_FORM[first_rule])
    elif first_rule in ("date", "number"):
        cur = out[0][0] if out else answer
        for _ in range(4 * k):
            if len(out) >= k:
                break
            fake_toks = [AnswerToken(w, "CD" if any(c.isdigit() for c in w) else "NN",
                                     "DATE" if first_rule == "date" else "NUMBER", " " if i else "")
                         for i, w in enumerate(cur.split(" "))]
            nxt = (ans_date if first_rule == "date" else ans_number)(cur, fake_toks, question)
            if not nxt or nxt == cur:
                break
            add(nxt, first_rule + "-again")
            cur = nxt
    elif lex is not None and len(classes) == 1 and next(iter(classes)) in lex.entities:
        for ent in lex.entities[next(iter(classes))]:
            if len(out) >= k:
                break
            add(ent, "lexicon-" + next(iter(classes)).lower())
    if not out:
        add("aliens", "catch-all")
    return out[:k]
