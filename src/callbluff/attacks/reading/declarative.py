"""Question + answer -> declarative sentence, step (3) of AddSent (Jia & Liang 2017, Sec. 3.1; talk slide 15:
"What city did Tadakatsu move to in 1881?" + "Chicago" -> "Tadakatsu moved the city of Chicago to in 1881.").

The authors' implementation applies 32 conversion rules and 18 wh-phrase rules to a CoreNLP *constituency*
parse. spaCy has no constituency parser, so this module works on spaCy's dependency parse plus the PTB tags,
in three steps (our rules, written for the same wh-types):

1. **The wh-phrase** (:func:`wh_phrase`): the first token tagged ``WDT`` / ``WP`` / ``WP$`` / ``WRB`` and what it
   governs: ``what`` / ``who`` / ``whom`` alone; ``which N`` / ``what N`` / ``whose N`` with their noun run (and
   ``of N`` after ``type/kind/sort/form/part/name``...); ``how many N`` / ``how much (N)``; ``how ADJ``;
   ``when`` / ``where`` / ``why`` / ``how``. A preposition in front (``In what year``, ``To whom``) belongs to
   the phrase.
2. **Its replacement** (:func:`answer_phrase`) from the answer ``A``: ``what/which N`` -> ``the N of A`` (the
   authors' own output, "the year of 1675"); ``whose N`` -> ``A's N``; ``how many N`` -> ``A N``; ``how
   much N`` -> ``A of N``; ``who/whom/what/how much/how ADJ`` -> ``A``; ``when`` / ``where`` -> ``in A``,
   ``why`` -> ``because of A``, ``how`` -> ``by A`` unless ``A`` already starts with a preposition or
   conjunction of that kind (``in 1881``, ``to protect it``, ``by boat``).
3. **Word order**: a wh-phrase that is not fronted (``...declined after what year?``) or that is the subject
   (``Who founded X?``, ``How many people live in X?``, ``Who was born in X?``) is replaced in place.
   Otherwise the auxiliary after it is inverted back: the subject (the tokens up to the auxiliary's head
   verb in the dependency parse) comes first; *do*-support is removed and the main verb takes its tense
   (``did move`` -> ``moved``, lemminflect); other auxiliaries and the copula follow the subject. The
   replacement goes after a stranded preposition (``move to`` -> ``move to the city of A``), after the copula
   when there is no main verb (``The capital of France is A``), after the main verb and its particle for
   objects (``Tesla invented A``), and at the end for adverbials (``when/where/why/how``, fronted
   prepositional phrases).

**Conversion rules** (several candidates per question, Sec. 3.1 step 3; the talk's slide 18 shows the same
fake fact worded several ways, "moved to the city of Chicago" / "moved to Chicago"): ``CONVERSIONS``:
``"authors"`` is the replacement above; ``"bare"`` puts the answer alone where the whole ``which/what N`` or
``whose N`` phrase stood (``moved to Chicago``), and does not apply to other wh-phrases (None). AddSent keeps the
most fluent of the candidates (:mod:`.addsent`).

Word-order repairs of the dependency reading (found on the issue-26 review's examples, not on the findings
sample): with *do*-support the main verb is a base-form verb after the subject, not a noun the parser hung the
auxiliary on (``What do the Animal Locomotion photographs capture?``: ``do`` attached to ``photographs``); a
copula question ending with a bare participle puts the participle after the copula (``What was X called?`` ->
``X was called A``, not ``X called was A``); an object goes after the last verb of an infinitive chain
(``Who does X tend to favor?`` -> ``X tends to favor A``).

Questions without a wh-word ("Name a ...", yes/no questions) give None: AddSent makes nothing for them, as
the authors' rules (which need a wh-phrase) make nothing. Coverage on SQuAD dev is measured in
``docs/findings/reading.md``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from spacy.tokens import Doc, Token

WH_TAGS = frozenset({"WDT", "WP", "WP$", "WRB"})
NOUN_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS"})
NOMINAL_TAGS = NOUN_TAGS | {"JJ", "JJR", "JJS", "CD", "VBN", "VBG", "HYPH", "POS"}
OF_HEADS = frozenset({"type", "types", "kind", "kinds", "sort", "sorts", "form", "forms", "part", "parts", "name",
                      "names", "percentage", "proportion", "number", "amount", "group", "piece", "branch"})
AUX_LEMMAS = frozenset({"be", "do", "have", "can", "could", "will", "would", "shall", "should", "may", "might",
                        "must"})
DO_TENSE = {"did": "VBD", "does": "VBZ", "do": "VBP"}
PREP_STARTS = {
    "when": ("in", "on", "at", "during", "after", "before", "since", "until", "by", "around", "about", "from",
             "between", "over", "within"),
    "where": ("in", "on", "at", "near", "inside", "outside", "from", "to", "into", "under", "over", "between",
              "across", "along", "behind", "within", "throughout"),
    "why": ("because", "to", "so", "due", "in", "for", "as", "since"),
    "how": ("by", "through", "with", "via", "using", "in", "from"),
}
DEFAULT_PREP = {"when": "in", "where": "in", "why": "because of", "how": "by"}
OBJECT_DEPS = frozenset({"dobj", "npadvmod", "attr", "oprd", "dative"})
CONVERSIONS = ("authors", "bare")
"""The conversion rules (module docstring), the authors' wording first."""


@dataclass(frozen=True)
class WhPhrase:
    """The wh-phrase of a question: token range ``[start, end)``, its wh-word (lower case), the head noun
    words it governs (``which city`` -> ``city``), and its ``kind``: ``pronoun`` (what/who/whom), ``det``
    (which/what N), ``whose``, ``how-many``, ``how-much``, ``how-adj``, ``adverb`` (when/where/why/how)."""

    start: int
    end: int
    wh: str
    kind: str
    noun: tuple[int, int] | None = None  # token range of the governed noun phrase
    prep: int | None = None  # index of a preposition fronted with the phrase


def _noun_run(tags: Sequence[str], i: int, n: int) -> int:
    """End (exclusive) of the nominal run starting at ``i`` that ends on its last noun (or ``i`` if none)."""
    j, last_noun = i, i
    while j < n and tags[j] in NOMINAL_TAGS:
        if tags[j] in NOUN_TAGS or tags[j] == "CD":
            last_noun = j + 1
        j += 1
    return last_noun


def wh_phrase(doc: Doc, words: Sequence[str] | None = None) -> WhPhrase | None:
    """The first wh-phrase of ``doc`` (see the module docstring), or None when the question has no wh-word."""
    words = list(words) if words is not None else [t.text for t in doc]
    n = _content_end(doc)
    tags = [t.tag_ for t in doc]
    w = next((i for i in range(n) if tags[i] in WH_TAGS or words[i].lower() in ("what", "which", "whose")), None)
    if w is None:
        return None
    wh = words[w].lower()
    prep = w - 1 if w > 0 and tags[w - 1] in ("IN", "TO") and doc[w - 1].lower_ not in ("that",) else None
    start = prep if prep is not None else w
    if wh in ("what", "which", "whose"):
        end = _noun_run(tags, w + 1, n)
        if end > w + 1 and tags[w + 1] not in ("VBN", "VBG"):
            if end < n - 1 and words[end].lower() == "of" and words[end - 1].lower() in OF_HEADS:
                end2 = _noun_run(tags, end + 1, n)
                if end2 > end + 1:
                    end = end2
            kind = "whose" if wh == "whose" else "det"
            return WhPhrase(start, end, wh, kind, (w + 1, end), prep)
        return WhPhrase(start, w + 1, wh, "pronoun", None, prep)
    if wh in ("who", "whom"):
        return WhPhrase(start, w + 1, wh, "pronoun", None, prep)
    if wh == "how" and w + 1 < n:
        nxt = words[w + 1].lower()
        if nxt in ("many", "much"):
            end = _noun_run(tags, w + 2, n)
            kind = "how-many" if nxt == "many" else "how-much"
            return WhPhrase(start, max(end, w + 2), wh, kind, (w + 2, end) if end > w + 2 else None, prep)
        if tags[w + 1] in ("JJ", "JJR", "RB", "RBR") and nxt not in ("else",):
            return WhPhrase(start, w + 2, wh, "how-adj", None, prep)
    return WhPhrase(start, w + 1, wh, "adverb", None, prep)


def _content_end(doc: Doc) -> int:
    """Number of tokens before the trailing punctuation (``?``, ``.``)."""
    n = len(doc)
    while n > 0 and (doc[n - 1].is_punct or doc[n - 1].is_space):
        n -= 1
    return n


def answer_phrase(ph: WhPhrase, answer: str, words: Sequence[str], rule: str = "authors") -> str | None:
    """The text that replaces the wh-phrase (module docstring, step 2) under conversion ``rule``; None when the
    rule does not apply to this wh-phrase."""
    if rule not in CONVERSIONS:
        raise ValueError(f"conversion rule {rule!r}: allowed: {', '.join(CONVERSIONS)}")
    if rule == "bare" and ph.kind not in ("det", "whose"):
        return None
    a = answer.strip()
    first = a.split(" ", 1)[0].lower() if a else ""
    prep = f"{words[ph.prep]} " if ph.prep is not None else ""
    if ph.prep is not None:
        prep = prep[0].lower() + prep[1:] if not words[ph.prep].isupper() else prep
    noun = " ".join(words[ph.noun[0]:ph.noun[1]]) if ph.noun else ""
    if rule == "bare":
        core = a
    elif ph.kind == "det":
        core = f"the {noun} of {a}"
    elif ph.kind == "whose":
        core = f"{a}'s {noun}" if not a.endswith("s") else f"{a}' {noun}"
    elif ph.kind == "how-many":
        core = a if noun and a.lower().endswith(noun.lower()) else f"{a} {noun}".strip()  # "19 days", not "days days"
    elif ph.kind == "how-much":
        core = f"{a} of {noun}" if noun else a
    elif ph.kind == "adverb" and ph.prep is None:
        key = ph.wh if ph.wh in PREP_STARTS else "how"
        core = a if first in PREP_STARTS[key] else f"{DEFAULT_PREP[key]} {a}"
    else:
        core = a
    return prep + core


def _inflect(lemma: str, tag: str, fallback: str) -> str:
    from lemminflect import getInflection

    forms = getInflection(lemma, tag=tag)
    return forms[0] if forms else fallback


def _join(pieces: Sequence[tuple[str, str]]) -> str:
    text = "".join(t + ws for t, ws in pieces).strip()
    text = re.sub(r"\s+", " ", text)
    text = re.sub(r" ([,;:%])", r"\1", text)
    return text


def _lower_first(word: str, tag: str, ent: bool) -> str:
    if tag in ("NNP", "NNPS") or ent or word == "I" or (len(word) > 1 and word.isupper()):
        return word
    return word[:1].lower() + word[1:]


@dataclass(frozen=True)
class Conversion:
    """A declarative sentence, the answer phrase as written in it, and whether that phrase is the sentence's
    subject (the wh-phrase was the question's subject: ``Who founded X?`` -> ``A founded X``)."""

    sentence: str
    phrase: str
    subject: bool


def to_declarative(doc: Doc, answer: str, words: Sequence[str] | None = None, rule: str = "authors") -> str | None:
    """The declarative sentence stating ``answer`` to the question ``doc`` (its words replaced by ``words``,
    the perturbed question, when given: the parse of the original question is reused, as the authors reuse
    the constituency parse with ``replace_words``), worded by conversion ``rule`` (:data:`CONVERSIONS`). None
    when the question has no wh-phrase, the answer is empty or the rule does not apply."""
    c = convert(doc, answer, words, rule)
    return c.sentence if c is not None else None


def convert(doc: Doc, answer: str, words: Sequence[str] | None = None, rule: str = "authors") -> Conversion | None:
    """:func:`to_declarative` with the answer phrase and its role (:class:`Conversion`)."""
    words = list(words) if words is not None else [t.text for t in doc]
    if len(words) != len(doc):
        raise ValueError(f"to_declarative: {len(words)} words for a question of {len(doc)} tokens")
    if not answer.strip():
        return None
    ph = wh_phrase(doc, words)
    if ph is None:
        return None
    n = _content_end(doc)
    repl = answer_phrase(ph, answer, words, rule)
    if repl is None:
        return None
    ws = [t.whitespace_ or "" for t in doc]
    toks = [(words[i], ws[i]) for i in range(n)]

    prefix_end = 0
    if ph.start > 0 and words[ph.start - 1] == ",":
        prefix_end = ph.start  # "In 1880, what city did ..." keeps its fronted adverbial
    fronted = ph.start == prefix_end
    after = ph.end
    aux = doc[after] if after < n else None
    is_aux = aux is not None and (aux.lemma_.lower() in AUX_LEMMAS or aux.lower_ in DO_TENSE) and aux.tag_ != "TO"
    inverted = False
    if fronted and is_aux and after + 1 < n:
        nxt = doc[after + 1]
        # "Who was born in X?" / "Which company has the largest share?": the wh-phrase is the subject (any
        # word of it parsed as one: "What type of teaching would help ...?" hangs "type", not "teaching");
        # a fronted prepositional phrase ("In what state is X located?") never is
        subject_question = ph.prep is None and (
            any(doc[j].dep_ in ("nsubj", "nsubjpass", "csubj") for j in range(ph.start, ph.end))
            or nxt.tag_ in ("VBN", "VBG", "VBD"))
        if aux.lower_ in DO_TENSE and aux.dep_ in ("aux", "auxpass"):
            subject_question = False  # do-support always means inversion
        inverted = not subject_question
    if not inverted:
        pieces = _insert(toks[:ph.start], ph.start, repl)
        pieces[-1] = (repl, ws[ph.end - 1])
        return _conversion(pieces + toks[ph.end:], repl, fronted)

    # -- inverted question: wh-phrase, auxiliary, subject, verb phrase --
    assert aux is not None
    verb = aux.head if aux.dep_ in ("aux", "auxpass") and aux.head.i > after else None
    if verb is not None and verb.i >= n:
        verb = None
    if aux.lower_ in DO_TENSE and (verb is None or verb.tag_ not in ("VB", "VBP")):
        verb = _do_verb(doc, after, n) or verb  # "do" hung on a noun: the base-form verb after the subject
    rest_start = after + 1
    if verb is not None:
        subj_end = verb.i
        # "What did the man who ... say?": the subject may hold its own verbs; stop at the aux's head
    else:  # copula / main-verb "be" or "have": the subject is the auxiliary's nsubj subtree
        subj = next((c for c in aux.children if c.dep_ in ("nsubj", "nsubjpass", "expl") and c.i > after), None)
        subj_end = min(n, subj.right_edge.i + 1) if subj is not None else n
        if (subj_end == n and n - 1 > rest_start and aux.lemma_.lower() == "be"
                and (doc[n - 1].tag_ == "VBN" or (doc[n - 1].tag_ == "VBD" and doc[n - 1].dep_ == "ROOT"))):
            verb = doc[n - 1]  # "What was X called?", "When are X established?": the participle follows "be"
            subj_end = n - 1
    subject = toks[rest_start:subj_end]
    if subject:
        first = doc[rest_start]
        subject[0] = (_lower_first(subject[0][0], first.tag_, first.ent_type_ != ""), subject[0][1])
    tail = toks[subj_end:n]
    if aux.lower_ in DO_TENSE and verb is not None:
        vtext = _inflect(verb.lemma_ if verb.tag_.startswith("VB") else verb.text.lower(), DO_TENSE[aux.lower_],
                         words[verb.i])
        if words[verb.i] != doc[verb.i].text:  # a perturbed verb keeps its new form
            vtext = words[verb.i]
        tail = [(vtext, ws[verb.i])] + tail[1:]
        aux_piece: list[tuple[str, str]] = []
    else:
        aux_piece = [(aux.text.lower() if not aux.text.isupper() else aux.text, " ")]
    # where the replacement goes
    body = aux_piece + tail
    stranded = _stranded_prep(doc, subj_end, n, ph)
    if stranded is not None:
        body = _insert(body, len(aux_piece) + (stranded - subj_end) + 1, repl)
    elif ph.kind in ("adverb",) or ph.prep is not None:
        body = _insert(body, len(body), repl)
    elif verb is None:  # copula: "The capital of France is A"
        body = _insert(body, len(aux_piece), repl)
    else:
        chain = [verb]
        while (nxt_v := next((c for c in chain[-1].children if c.dep_ == "xcomp" and chain[-1].i < c.i < n),
                             None)) is not None:
            chain.append(nxt_v)  # "tend to favor": the object follows the chain's last verb ...
        wh_head = doc[ph.noun[1] - 1] if ph.noun else doc[ph.end - 1]
        last = next((v for v in chain if wh_head.head.i == v.i and wh_head.dep_ in OBJECT_DEPS), chain[-1])
        # ... unless the parse hangs the wh-phrase on an earlier one ("How many days does X have to ...?")
        k = len(aux_piece) + (last.i - subj_end) + 1
        while k - len(aux_piece) < len(tail) and doc[subj_end + k - len(aux_piece)].dep_ == "prt":
            k += 1
        body = _insert(body, k, repl)
    prefix = toks[:prefix_end]
    if subject and subject[-1][1] == "":
        subject[-1] = (subject[-1][0], " ")
    return _conversion(prefix + subject + body, repl, False)


def _do_verb(doc: Doc, after: int, n: int) -> Token | None:
    """The main verb of a *do*-support question whose auxiliary the parser attached elsewhere: the sentence's
    root when it is a base-form verb after the auxiliary, else the first base-form verb after the subject's
    first word; None when there is none."""
    root = doc[after].sent.root
    if after + 1 < root.i < n and root.tag_ in ("VB", "VBP"):
        return root
    return next((doc[j] for j in range(after + 2, n) if doc[j].tag_ == "VB"), None)


def _conversion(pieces: list[tuple[str, str]], phrase: str, subject: bool) -> Conversion:
    text = _finish(pieces)
    if subject and text.lower().startswith(phrase.lower()):
        phrase = text[:len(phrase)]  # the sentence's capital
    return Conversion(text, phrase, subject)


def _insert(pieces: list[tuple[str, str]], k: int, text: str) -> list[tuple[str, str]]:
    """``pieces`` with ``text`` inserted at ``k``, a space on both sides."""
    out = list(pieces)
    if k > 0 and out[k - 1][1] == "":
        out[k - 1] = (out[k - 1][0], " ")
    return out[:k] + [(text, " ")] + out[k:]


def _stranded_prep(doc: Doc, lo: int, hi: int, ph: WhPhrase) -> int | None:
    """Index of a preposition in ``[lo, hi)`` that has lost its object to the fronted wh-phrase: it ends the
    clause or is followed by another preposition / adverbial (``move to in 1880``, ``stand for``)."""
    if ph.prep is not None or ph.kind == "adverb":
        return None
    for j in range(lo, hi):
        t = doc[j]
        if t.tag_ not in ("IN", "TO", "RP") or t.dep_ in ("mark",):
            continue
        has_obj = any(c.dep_ in ("pobj", "pcomp") and c.i > j for c in t.children)
        nxt = doc[j + 1] if j + 1 < hi else None
        if nxt is None or (not has_obj and nxt.tag_ in ("IN", "TO", ",", "RB")):
            if t.tag_ == "RP" and nxt is not None:
                continue
            return j
    return None


def _finish(pieces: list[tuple[str, str]]) -> str:
    text = _join(pieces)
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text.rstrip(" ,;:") + "."
