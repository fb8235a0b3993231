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

Repairs for sentences a reader accepts without a crowd (issue 37; chosen on SQuAD *train* questions with
``scripts/findings/reading_addsent_shaping.py``, never on the findings sample): an adverb between the subject and
its participle goes after the auxiliary (``X was first used``, not ``X first was used``); a passive participle the
parser hangs on the subject is the verb after ``when/where/why/how`` and fronted prepositions (``Shots were fired
at X during ...``); a time answer takes ``on`` before a day and no preposition before ``... ago``
(:func:`_date_prep`); ``what year/month/... N`` outside the subject is a time adverbial (``arrested in 1913``);
``how many N of M`` keeps its ``of`` phrase; ``what percentage of X`` + a number reads ``43% of X``; ``what
else`` drops ``else``; a ``where/when`` question ending in a preposition takes the bare answer (``originates from
A``); ``a``/``an`` agree with the next word; an adjective answer reads ``the A N`` or follows *be*. What a person
would have to rewrite is not made (None): a bare verb or misplaced adjective, adverb or reason phrase
(``answer_kind``), an inverted auxiliary the parse left in place, *do*-support without a verb or subject, a
negated *do* question, ``which N of X``.

Checked against the question's own parse (issue 37, second round; the kinds of error the hand check of the
findings found, each rule read on SQuAD *train* questions, fresh slices of the shaping draw): the main verb must
have the form its inverted auxiliary takes (*be* + ``-ing``/participle, *have* + participle, a modal + the base
form; :func:`_form_fits`), else the parser misread a noun as the verb (``What is impact melt ...?``); a copula
question's subject must read as a noun phrase (:func:`_noun_phrase_subject`: no stranded preposition after a
participle, no adjective or raising verb before an infinitive, no infinitive missing its object, no quote or
bracket left open), else the wh-phrase belongs inside it; ``what``/``which`` parsed as a noun's determiner the
noun run missed gives nothing; an object goes into a verb's clause that has its own subject (``X said the company
should build A``); ``how many`` takes no ordinal or adjective answer, and a counted head is said once (``10% of
X``); an ordinal time answer reads ``the 5th century``; an opening quote before the verb stays with it. Third pass
(the kinds the seed-73 hand check found, read on the same train slices): a possessive wh-phrase (``what city's
Marriott``) and ``how far/long`` with an answer that is not a measure give nothing; a subject ending at a comma is
no noun phrase; a whole clause before the wh-phrase's comma is joined by ``;`` (``X had a nickname; it was A``).

Questions without a wh-word ("Name a ...", yes/no questions) give None: AddSent makes nothing for them, as
the authors' rules (which need a wh-phrase) make nothing. Coverage on SQuAD dev is measured in
``docs/findings/reading.md``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: spaCy is imported where a text is parsed, not at start-up
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
                k = end + 1 + (tags[end + 1] == "DT")  # "what percentage of the habitat"
                end2 = _noun_run(tags, k, n)
                if end2 > k:
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
            if end > w + 2 and end < n - 1 and words[end].lower() == "of":
                # "How many hours of sunshine does X receive?": the counted noun keeps its "of" phrase
                k = end + 1 + (tags[end + 1] == "DT")
                end2 = _noun_run(tags, k, n)
                if end2 > k:
                    end = end2
            kind = "how-many" if nxt == "many" else "how-much"
            return WhPhrase(start, max(end, w + 2), wh, kind, (w + 2, end) if end > w + 2 else None, prep)
        if tags[w + 1] in ("JJ", "JJR", "RB", "RBR") and nxt not in ("else",):
            return WhPhrase(start, w + 2, wh, "how-adj", None, prep)
    return WhPhrase(start, w + 1, wh, "adverb", None, prep)


def _content_end(doc: Doc) -> int:
    """Number of tokens before the trailing punctuation (``?``, ``.``, ``!``, ``,``; not a closing quote or
    bracket)."""
    n = len(doc)
    while n > 0 and (doc[n - 1].is_space or (doc[n - 1].is_punct and set(doc[n - 1].text) <= set("?.!,;:"))):
        n -= 1  # a closing quote or bracket stays ("... star in 'Robopocalypse'?")
    return n


def answer_phrase(ph: WhPhrase, answer: str, words: Sequence[str], rule: str = "authors",
                  answer_kind: str = "noun") -> str | None:
    """The text that replaces the wh-phrase (module docstring, step 2) under conversion ``rule``; None when the
    rule does not apply to this wh-phrase. ``answer_kind`` (:data:`ANSWER_KINDS`) is what the fake answer is: an
    adjective answering ``what/which N`` is worded ``the A N`` (``the sort of analysis of deep`` is not English;
    our rule, where the paper's crowd fixed the sentence by hand)."""
    if rule not in CONVERSIONS:
        raise ValueError(f"conversion rule {rule!r}: allowed: {', '.join(CONVERSIONS)}")
    if answer_kind not in ANSWER_KINDS:
        raise ValueError(f"answer kind {answer_kind!r}: allowed: {', '.join(ANSWER_KINDS)}")
    if rule == "bare" and (ph.kind not in ("det", "whose") or _counted(words, ph)):
        return None  # and "what percentage of X" is never the bare number ("In 2001, 6.5 were ...")
    if ph.kind in ("det", "whose") and ph.end < len(words) - 1 and words[ph.end].lower() == "of":
        return None  # "which parts of the laminate": "the parts of A of the laminate" needs a person's rewrite
    a = answer.strip()
    if re.match(r"^\d+(st|nd|rd|th) (century|centuries|millennium)\b", a):
        a = "the " + a  # "during 9th century" -> "during the 9th century"
    first = a.split(" ", 1)[0].lower() if a else ""
    if first in FUNCTION_STARTS and a[:1].isupper():
        a = a[:1].lower() + a[1:]  # a fake date "Between 1510 and 1515" inside a sentence: "between 1510 ..."
    if ph.prep is not None and ph.kind in ("det", "pronoun") and first in PREP_STARTS["when"] + PREP_STARTS["where"] \
            and rule == "authors":
        return a  # "In what years were X carried out?" + "between 1510 and 1515": the answer's own preposition
    if ph.start > 0 and ph.prep is None and words[ph.start - 1].lower() in ("its", "his", "her", "their", "the", "our",
                                                                          "my", "your", "'s", "a", "an"):
        a = re.sub(r"^(the|a|an) ", "", a, flags=re.IGNORECASE)  # "in its what?" + "a hamster": "in its hamster"
    prep = f"{words[ph.prep]} " if ph.prep is not None else ""
    if ph.prep is not None:
        prep = prep[0].lower() + prep[1:] if not words[ph.prep].isupper() else prep
    noun = " ".join(words[ph.noun[0]:ph.noun[1]]) if ph.noun else ""
    if rule == "bare":
        core = a
    elif ph.kind == "det" and answer_kind == "adjective" and ph.noun:
        k = ph.noun[0] + 2 if ph.noun[1] - ph.noun[0] >= 3 and words[ph.noun[0] + 1].lower() == "of" else ph.noun[0]
        core = f"the {a} {' '.join(words[k:ph.noun[1]])}"  # "what type of order" + deep -> "the deep order"
    elif ph.kind == "det" and _counted(words, ph) and _numeric(a):
        pct = "%" if words[ph.noun[0]].lower() in ("percentage", "percent") and not a.endswith("%") else ""
        core = f"{a}{pct} of {' '.join(words[ph.noun[0] + 2:ph.noun[1]])}"  # "what percentage of X" -> "43% of X"
    elif ph.kind == "det" and _ordinal(a) and ph.noun and words[ph.noun[1] - 1].lower() in TIME_NOUNS:
        core = f"the {a} {noun}"  # "the 5th century", not "the century of 5th"
    elif ph.kind == "det":
        core = f"the {noun} of {a}"
    elif ph.kind == "whose":
        core = f"{a}'s {noun}" if not a.endswith("s") else f"{a}' {noun}"
    elif ph.kind == "how-many" and _ordinal(a):
        return None  # "first states would be": an ordinal does not count
    elif ph.kind in ("how-many", "how-much") and ph.noun and ph.noun[1] - ph.noun[0] >= 3 \
            and words[ph.noun[0]].lower() in COUNTED_HEADS and words[ph.noun[0] + 1].lower() == "of" and _numeric(a):
        pct = "%" if words[ph.noun[0]].lower() in ("percentage", "percent") and not a.endswith("%") else ""
        core = f"{a}{pct} of {' '.join(words[ph.noun[0] + 2:ph.noun[1]])}"  # "10% of X", not "10% of percentage of X"
    elif ph.kind == "how-many":
        if noun and a.lower().endswith(noun.lower()):
            core = a  # "19 days", not "days days"
        elif noun and a.endswith("%"):
            core = f"{a} of {noun}"  # "30% of citizens", not "30% citizens"
        else:
            core = f"{a} {noun}".strip()
    elif ph.kind == "how-much":
        core = f"{a} of {noun}" if noun else a
    elif ph.kind == "adverb" and ph.prep is None:
        key = ph.wh if ph.wh in PREP_STARTS else "how"
        core = a if first in PREP_STARTS[key] or answer_kind == "adverb" else \
            f"{_date_prep(a) if key == 'when' else DEFAULT_PREP[key]} {a}"
        core = core.strip()
    else:
        core = a
    return prep + core


TIME_NOUNS = frozenset({"year", "years", "month", "months", "day", "days", "century", "centuries", "decade",
                        "decades", "season", "date", "era", "period", "week", "time"})
"""Nouns of a ``what/which N`` phrase that, outside the subject, is a time adverbial needing a preposition."""
FUNCTION_STARTS = frozenset({"the", "a", "an", "between", "in", "on", "at", "during", "about", "around", "over",
                             "under", "more", "less", "than", "nearly", "approximately", "by", "from", "to", "since",
                             "until", "before", "after", "some", "several", "many", "few", "almost", "roughly"})
"""Words that start an answer in lower case inside a sentence."""
ANSWER_KINDS = ("noun", "adjective", "adverb", "verb", "reason")
"""What a fake answer is (:func:`.fake_answers.answer_kind` says which rule makes which): a noun phrase (names,
numbers, dates, nouns, gerunds), an adjective, an adverb of manner, a bare verb, or a reason phrase (``because of
...``, ``to ...``)."""
MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
               "november", "december")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAY_MONTH = re.compile(r"\b\d{1,2}(st|nd|rd|th)?\s+(" + "|".join(MONTH_NAMES) + r")\b|\b(" + "|".join(MONTH_NAMES)
                        + r")\s+\d{1,2}(st|nd|rd|th)?\b(?!\d)", re.IGNORECASE)


def _date_prep(answer: str) -> str:
    """The preposition a time answer takes when the question's ``when`` is replaced (English usage; the paper's
    rules write ``in`` before every date and its crowd fixed the rest): ``on`` before a day (``on 4 November
    1789``, ``on May 5``, ``on Monday``), none before ``... ago`` (``45,000 years ago``), ``in`` otherwise
    (``in 1881``, ``in May 1790``, ``in the 1960s``)."""
    low = answer.lower().strip()
    if re.search(r"\bago\b", low):
        return ""
    if low.split(" ", 1)[0].rstrip(",") in WEEKDAYS or _DAY_MONTH.search(low):
        return "on"
    return "in"


COUNTED_HEADS = frozenset({"percentage", "proportion", "percent", "fraction", "share", "amount", "number"})


def _counted(words: Sequence[str], ph: WhPhrase) -> bool:
    """``what percentage of X`` / ``what proportion of X``: a head that counts the noun after its ``of``."""
    return ph.noun is not None and ph.noun[1] - ph.noun[0] >= 3 and words[ph.noun[0]].lower() in COUNTED_HEADS \
        and words[ph.noun[0] + 1].lower() == "of"


def _numeric(answer: str) -> bool:
    return bool(re.match(r"^[$]?\d[\d,.]*\s*(%|percent)?$", answer.strip()))


def _inflect(lemma: str, tag: str, fallback: str) -> str:
    from lemminflect import getInflection

    forms = getInflection(lemma, tag=tag)
    return forms[0] if forms else fallback


def _join(pieces: Sequence[tuple[str, str]]) -> str:
    text = "".join(t + ws for t, ws in pieces).strip()
    text = re.sub(r"\s+", " ", text)
    text = re.sub(r" ([,;:%])", r"\1", text)
    text = re.sub(r"(\w) ('s?)(?=[\s.,;:]|$)", r"\1\2", text)  # "countries ' colonies" -> "countries' colonies"
    text = re.sub(r"(?<=\w) - (?=\w)", "-", text)  # a noun run said again: "dive - bombers" -> "dive-bombers"
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


def to_declarative(doc: Doc, answer: str, words: Sequence[str] | None = None, rule: str = "authors",
                   answer_kind: str = "noun") -> str | None:
    """The declarative sentence stating ``answer`` to the question ``doc`` (its words replaced by ``words``,
    the perturbed question, when given: the parse of the original question is reused, as the authors reuse
    the constituency parse with ``replace_words``), worded by conversion ``rule`` (:data:`CONVERSIONS`). None
    when the question has no wh-phrase, the answer is empty, the rule does not apply, or the answer's kind
    (``answer_kind``, :data:`ANSWER_KINDS`) cannot stand where the wh-phrase stood (:func:`convert`)."""
    c = convert(doc, answer, words, rule, answer_kind)
    return c.sentence if c is not None else None


BE_FORMS = frozenset({"is", "are", "was", "were", "be", "been", "being", "'s"})


def convert(doc: Doc, answer: str, words: Sequence[str] | None = None, rule: str = "authors",
            answer_kind: str = "noun") -> Conversion | None:
    """:func:`to_declarative` with the answer phrase and its role (:class:`Conversion`).

    What a person would have to rewrite is not made (None; our rules, where the paper's crowd fixed the
    sentence): a bare verb (``they run learn``) anywhere, an adjective except right after a form of *be*
    (``The X was deep``) or in the ``the A N`` wording of ``what/which N``, an adverb anywhere but in place of
    ``how``, and a reason phrase anywhere but in place of ``why`` (a noun there is worded ``because of A``, which
    the grammar check judges: :mod:`.grammar`)."""
    words = list(words) if words is not None else [t.text for t in doc]
    if len(words) != len(doc):
        raise ValueError(f"to_declarative: {len(words)} words for a question of {len(doc)} tokens")
    if not answer.strip():
        return None
    ph = wh_phrase(doc, words)
    if ph is None:
        return None
    if answer_kind == "verb" or (answer_kind == "reason" and not (ph.wh == "why" and ph.kind == "adverb")):
        return None
    if answer_kind == "adverb" and not (ph.wh == "how" and ph.kind == "adverb"):
        return None  # "silently" answers "how", nothing else
    if answer_kind == "adjective" and ph.kind in ("how-many", "how-much"):
        return None  # "it had been deep years": an adjective does not count
    of = next((j for j in range(ph.start, ph.end) if doc[j].lower_ == "of"), ph.end)
    if (ph.end < len(doc) and doc[ph.end].tag_ == "POS") or any(doc[j].tag_ == "POS" for j in range(ph.start, of)):
        return None  # "In what city's Marriott ...": the wh-phrase is a possessor, a person would reword it
    if ph.kind == "how-adj" and not re.search(r"\d", answer) and answer.split(" ", 1)[0].lower() not in NUMBER_WORDS:
        return None  # "How far/long ...?" + "a hamster": a measure answers it, a noun leaves no verb or preposition
    w = ph.end - 1
    if ph.kind == "pronoun" and ph.wh in ("what", "which") and doc[w].dep_ == "det" and doc[w].head.i > w:
        return None  # "Which third-highest-ranking officer ...": the noun run missed the noun "which" determines
    n = _content_end(doc)
    repl = answer_phrase(ph, answer, words, rule, answer_kind)
    if repl is None:
        return None
    ws = [t.whitespace_ or "" for t in doc]
    toks = [(words[i], ws[i]) for i in range(n)]
    if ph.prep is not None and n - 1 > ph.end and doc[n - 1].lower_ == words[ph.prep].lower():
        toks[n - 1] = ("", "")  # "From what pad was X launched from?": the preposition once
    if ph.end < n and words[ph.end].lower() == "else":
        toks[ph.end] = ("", "")  # "what else comprises X" -> "A comprises X"
    if ph.kind == "adverb" and ph.wh in DEFAULT_PREP and n > ph.end + 1 and doc[n - 1].tag_ == "IN" \
            and not any(c.dep_ in ("pobj", "pcomp") for c in doc[n - 1].children):
        prep = DEFAULT_PREP[ph.wh] + " "
        if repl.startswith(prep) and ph.wh in ("where", "when"):
            repl = repl[len(prep):]  # "Where does X originate from?" -> "X originates from A", not "from in A"
    conv = _convert(doc, ph, repl, toks, ws, words, n)
    if answer_kind == "adjective" and conv is not None and not _adjective_fits(conv, ph, rule):
        return None
    return conv


def _adjective_fits(conv: Conversion, ph: WhPhrase, rule: str) -> bool:
    """Whether an adjective answer reads as English where it landed: in ``the A N`` (``what/which N``, authors'
    wording) or right after a form of *be*."""
    if ph.kind == "det" and rule == "authors":
        return True
    k = conv.sentence.find(conv.phrase)
    before = conv.sentence[:k].split()
    return k > 0 and bool(before) and before[-1].lower() in BE_FORMS


def _convert(doc: Doc, ph: WhPhrase, repl: str, toks: list[tuple[str, str]], ws: list[str], words: list[str],
             n: int) -> Conversion | None:
    """The word-order step (module docstring, step 3) once the replacement ``repl`` is known."""

    prefix_end = 0
    if ph.start > 0 and words[ph.start - 1] == ",":
        prefix_end = ph.start  # "In 1880, what city did ..." keeps its fronted adverbial
        if _independent_clause(doc, prefix_end - 1):
            toks = list(toks)
            toks[prefix_end - 1] = (";", toks[prefix_end - 1][1])  # "X had a nickname, what was it?": no comma splice
    fronted = ph.start == prefix_end
    after = ph.end + (ph.end < n - 1 and words[ph.end].lower() == "else")
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
        if aux.lower_ in DO_TENSE and (aux.dep_ in ("aux", "auxpass") or _do_verb(doc, after, n) is not None
                                       or _last_verb(doc, after, n) is not None):
            subject_question = False  # do-support always means inversion ("Who did Tesla partner with?")
        inverted = not subject_question
    if not inverted and fronted and is_aux and after + 1 < n and (
            (aux.lower_ in DO_TENSE and ph.kind in ("det", "whose", "how-many", "how-much"))
            or (aux.lower_ in ("has", "have", "had") and doc[after + 1].tag_ not in ("VBN", "RB")
                and any(doc[j].tag_ in ("VBN", "VBD") for j in range(after + 2, n)))):
        # "What river did the French cross?" / "What subjects has X written books on?" read as subject questions
        # by the parser: the statement would keep the question's inverted auxiliary; a person would rewrite it
        return None
    if not inverted and fronted and ph.kind == "adverb":
        return None  # "Why besides X would Y ...?": a fronted when/where/why/how without its auxiliary after it
    if not inverted:
        pieces = _insert(toks[:ph.start], ph.start, repl)
        pieces[-1] = (repl, ws[ph.end - 1])
        return _conversion(pieces + toks[ph.end:], repl, fronted)

    # -- inverted question: wh-phrase, auxiliary, subject, verb phrase --
    assert aux is not None
    time_adverbial = ph.kind == "det" and ph.prep is None and bool(ph.noun) \
        and words[ph.noun[1] - 1].lower() in TIME_NOUNS
    if time_adverbial:
        # "What year was X arrested?": the phrase is a time adverbial, "X was arrested in (the year of) 1913"
        core = repl[:1].lower() + repl[1:]
        repl = f"{_date_prep(core) or 'in'} {core}"
    if ph.wh == "how" and ph.kind == "adverb" and aux.lemma_.lower() == "be" and not any(
            doc[j].tag_ in ("VBN", "VBG", "VBD") for j in range(after + 1, n)):
        return None  # "How are predators beneficial to X?" is not answered by "Predators are beneficial by A"
    verb = aux.head if aux.dep_ in ("aux", "auxpass") and aux.head.i > after else None
    if verb is not None and verb.i >= n:
        verb = None
    if verb is not None and aux.lower_ not in DO_TENSE and not _form_fits(aux, verb, words[verb.i]):
        return None  # "What is impact melt that ...?": "is melt" is the parser's misreading, not a verb phrase
    if aux.lower_ in DO_TENSE and (verb is None or verb.tag_ not in ("VB", "VBP")):
        verb = _do_verb(doc, after, n) or verb  # "do" hung on a noun: the base-form verb after the subject
    if aux.lower_ in DO_TENSE and verb is None:
        verb = _last_verb(doc, after, n)  # "When did Levi's Stadium open?": "open" tagged as an adjective
    if after + 1 < n and doc[after + 1].lower_ in ("n't", "not"):
        return None  # "What doesn't X change?": the negation's place is ours to guess; a person would reword it
    if aux.lower_ in DO_TENSE and verb is None:
        return None  # do-support without a verb to carry its tense: the parse is wrong, a person would rewrite it
    rest_start = after + 1
    if verb is not None:
        subj_end = verb.i
        # "What did the man who ... say?": the subject may hold its own verbs; stop at the aux's head
    copula = verb is None
    if verb is None:  # copula / main-verb "be" or "have": the subject is the auxiliary's nsubj subtree
        subj = next((c for c in aux.children if c.dep_ in ("nsubj", "nsubjpass", "expl") and c.i > after), None)
        subj_end = min(n, subj.right_edge.i + 1) if subj is not None else n
        last = n - 1 - (doc[n - 1].tag_ == "IN" and n - 2 > rest_start)  # "What was X made of?"
        if (subj_end == n and last > rest_start and aux.lemma_.lower() == "be"
                and (doc[last].tag_ == "VBN" or (doc[last].tag_ == "VBD" and doc[last].dep_ == "ROOT"))):
            verb = doc[last]  # "What was X called?", "When are X established?": the participle follows "be"
            subj_end = last
        elif aux.lemma_.lower() == "be" and (ph.kind == "adverb" or ph.prep is not None):
            j = _passive_participle(doc, rest_start, n)
            if j is not None:  # "Why were X put in custody?", "During what ceremony were shots fired at Y?"
                verb, subj_end = doc[j], j
            elif subj_end == n:  # "Why was Britain able to keep X?": the subject is the noun phrase after "be"
                k = rest_start
                while k < n and (doc[k].tag_ in PRE_PARTICIPLE - {"RB", "JJ", "JJR", "JJS"} or doc[k].lower_ == "of"
                                 or (doc[k].tag_.startswith("JJ") and k + 1 < n and doc[k + 1].tag_ in NOUN_TAGS)):
                    k += 1
                if rest_start < k < n:
                    subj_end = k
    subject = toks[rest_start:subj_end]
    if not subject:
        return None  # no subject before the verb: the parse is wrong ("When did work on X begin?")
    if copula and not _noun_phrase_subject(doc, rest_start, subj_end):
        return None  # "What were the fighters unable to hold out against?": the wh-phrase belongs inside
    moved: list[tuple[str, str]] = []
    if aux.lower_ not in DO_TENSE or verb is None:
        # "In what century was X first used?" -> "X was first used ...": an adverb between the subject and
        # its verb goes after the auxiliary (with do-support it stays before the verb: "X first used")
        while len(subject) > 1 and doc[rest_start + len(subject) - 1].tag_ in ("RB", "RBR", "RBS") \
                and doc[rest_start + len(subject) - 1].dep_ in ("advmod", "neg"):
            moved.insert(0, (subject[-1][0], " "))
            subject = subject[:-1]
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
        aux_piece = [(aux.text.lower() if not aux.text.isupper() else aux.text, " ")] + moved
    while len(subject) > 1 and subject[-1][0] in OPEN_QUOTES and subject[-1][1] == "":
        subject, tail = subject[:-1], [subject[-1]] + tail  # 'X "go blue"': the quote opens before the verb
        subj_end -= 1
    # where the replacement goes
    body = aux_piece + tail
    stranded = _stranded_prep(doc, subj_end, n, ph)
    if stranded is not None:
        body = _insert(body, len(aux_piece) + (stranded - subj_end) + 1, repl)
    elif ph.kind in ("adverb",) or ph.prep is not None or time_adverbial:
        body = _insert(body, len(body), repl)
    elif verb is None:  # copula: "The capital of France is A"
        body = _insert(body, len(aux_piece), repl)
    else:
        chain = [verb]
        while (nxt_v := next((c for c in chain[-1].children if c.dep_ == "xcomp" and chain[-1].i < c.i < n),
                             None)) is not None:
            chain.append(nxt_v)  # "tend to favor": the object follows the chain's last verb ...
        wh_head = doc[ph.noun[1] - 1] if ph.noun else doc[ph.end - 1]
        free = [v for v in chain if not any(c.dep_ in ("dobj", "attr", "ccomp") and c.i > v.i for c in v.children)]
        last = next((v for v in chain if wh_head.head.i == v.i and wh_head.dep_ in OBJECT_DEPS),
                    free[-1] if free else chain[-1])
        while (cc := next((c for c in last.children if c.dep_ == "ccomp" and last.i < c.i < n
                           and c.tag_.startswith("VB")), None)) is not None \
                and any(x.dep_ in ("nsubj", "nsubjpass") for x in cc.children) \
                and not any(x.dep_ in ("dobj", "attr", "ccomp", "xcomp") and x.i > cc.i for x in cc.children):
            last = cc  # a verb with a clause after it does not take the wh-phrase as its object (issue 37): "What
            # did the report say the company should build?" -> "... say the company should build A"
        # ... and never after a verb that has its own object ("What does it take to know X?": "it takes A
        # to know X", not "it takes to know A X")
        # ... unless the parse hangs the wh-phrase on an earlier one ("How many days does X have to ...?")
        k = len(aux_piece) + (last.i - subj_end) + 1
        while k - len(aux_piece) < len(tail) and doc[subj_end + k - len(aux_piece)].dep_ == "prt":
            k += 1
        body = _insert(body, k, repl)
    prefix = toks[:prefix_end]
    if subject and subject[-1][1] == "":
        subject[-1] = (subject[-1][0], " ")
    return _conversion(prefix + subject + body, repl, False)


PRE_PARTICIPLE = NOMINAL_TAGS | {"DT", "PRP$", "RB", "PDT", "NNP", "NNPS"}
OPEN_QUOTES = frozenset({'"', "'", "\u201c", "\u2018", "``"})
ORDINALS = frozenset({"first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
                      "last", "next"})


NUMBER_WORDS = frozenset({"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                          "twelve", "twenty", "thirty", "forty", "fifty", "hundred", "thousand", "several",
                          "about", "over", "nearly", "almost", "around", "approximately", "more", "less"})
SUBORDINATORS = frozenset({"if", "while", "although", "though", "when", "after", "before", "as", "since", "because",
                           "unless", "until", "once", "whereas", "besides", "despite", "in", "on", "at", "by", "for",
                           "from", "during", "with", "without", "according", "like", "unlike", "along", "apart"})


def _independent_clause(doc: Doc, comma: int) -> bool:
    """Whether the question's words before the comma at ``comma`` are a whole clause (a finite verb with its
    subject, not opened by a subordinator or preposition): the statement then joins it with ``;`` (a comma
    splice is not English)."""
    if comma <= 0 or doc[0].lower_ in SUBORDINATORS:
        return False
    return any(t.tag_ in ("VBD", "VBZ", "VBP") and any(c.dep_ in ("nsubj", "nsubjpass") and c.i < t.i
                                                        for c in t.children) for t in doc[:comma])


def _ordinal(answer: str) -> bool:
    """Whether the answer starts with an ordinal (``first``, ``21st``): it cannot answer ``how many``."""
    first = answer.strip().split(" ", 1)[0].lower()
    return first in ORDINALS or bool(re.fullmatch(r"\d+(st|nd|rd|th)", first))


def _form_fits(aux: Token, verb: Token, word: str) -> bool:
    """Whether the question's main verb has the form its (inverted) auxiliary takes, checked against the
    question's own tags and the verb's inflections (lemminflect): *be* + ``-ing`` or a past participle, *have* +
    a past participle, a modal + the base form. The parser hangs an auxiliary on a noun or adjective it misread
    as a verb ("What is impact melt ...?"); such a reading gives no sentence (issue 37)."""
    from lemminflect import getAllInflections, getInflection

    last = max((c for c in verb.children if c.dep_ in ("aux", "auxpass") and aux.i < c.i < verb.i), default=None,
               key=lambda c: c.i)
    aux = last if last is not None else aux  # "has been producing": the form follows the last auxiliary
    lemma, low = aux.lemma_.lower(), word.lower()
    forms = getAllInflections(verb.lemma_.lower(), upos="VERB") if word == verb.text else {}
    if forms:  # a regular verb's participle is listed only under its past tense
        forms["VBN"] = tuple(getInflection(verb.lemma_.lower(), tag="VBN"))
    vbn = verb.tag_ == "VBN" or low in forms.get("VBN", ())
    if aux.tag_ == "MD":
        return verb.tag_ in ("VB", "VBP") or low in forms.get("VB", ())
    if lemma == "be":
        return vbn or verb.tag_ == "VBG" or (low.endswith("ing") and verb.tag_.startswith("VB"))
    if lemma == "have":
        return vbn or (verb.tag_ == "VBD" and not forms)
    return True


def _noun_phrase_subject(doc: Doc, lo: int, hi: int) -> bool:
    """Whether question tokens ``[lo, hi)``, the subject of a copula question, read as a noun phrase: not ending
    in a preposition or particle (its object is the wh-phrase: "... formerly limited to"), and no adjective taking
    an infinitive ("... unable to hold out"): both put the wh-phrase inside the subject, not after *be*."""
    if doc[hi - 1].text == ",":
        return False  # "What was X nick name, as known by ...?": the subject ends at the comma the parse misread
    if doc[hi - 1].tag_ in ("IN", "RP", "TO"):
        head = doc[hi - 1].head  # "one thing a vault depends on" is a relative clause with its own subject
        if not (head.tag_ in ("VBZ", "VBD", "VBP") and any(c.dep_ in ("nsubj", "nsubjpass") for c in head.children)):
            return False
    text = [doc[j].text for j in range(lo, hi)]
    if sum(t in ('"', "\u201c", "\u201d", "``", "''") for t in text) % 2 or text.count("(") != text.count(")"):
        return False  # 'Another term for X's "subject': the answer would land inside the quote or bracket
    return not any(doc[j].tag_ == "TO" and doc[j + 1].tag_ == "VB" and (doc[j - 1].tag_ in ("JJ", "JJR", "JJS") or (
        doc[j - 1].tag_ in ("VBN", "VBD") and doc[j + 1].lower_ in ("have", "be")) or (
        doc[j + 1].lemma_.lower() in OBJECT_VERBS and not any(c.dep_ in ("dobj", "ccomp", "xcomp", "attr")
                                                               for c in doc[j + 1].children)))
                   for j in range(lo + 1, hi - 1))  # "wrestlers expected to do for decades": "do" lacks its object


OBJECT_VERBS = frozenset({"do", "make", "take", "get", "give", "use", "find", "provide", "achieve", "accomplish",
                          "produce", "create", "build", "become", "call", "name", "consider", "bring", "put", "want"})
"""Verbs that need an object: one without it in a copula question's subject is missing the wh-phrase."""  # "unable to hold out", "X said to have been renamed"


def _passive_participle(doc: Doc, start: int, n: int) -> int | None:
    """In a ``when/where/why/how`` or fronted-preposition question with *be* (``Why were X put in custody?``),
    the passive participle that follows the subject, which the small parser often hangs on the subject as a
    modifier: the first ``VBN`` (or a ``VBD`` right after a noun) preceded only by noun-phrase words; None
    when there is none."""
    for j in range(start + 1, n):
        t = doc[j]
        if t.tag_ == "VBN" or (t.tag_ == "VBD" and doc[j - 1].tag_ in NOUN_TAGS | {"RB"}):
            return j
        if t.tag_ not in PRE_PARTICIPLE and t.tag_ != "IN":  # "the Dissolution of the Monasteries carried out",
            return None  # "the viaduct along 155th Street constructed"
    return None


def _last_verb(doc: Doc, after: int, n: int) -> Token | None:
    """The first word after the subject's first word that ends the question or stands before a preposition
    ("partner with"), when English has it as a verb (lemminflect knows its verb forms) though the parser did not
    tag it one: the main verb of a *do*-support question; None otherwise."""
    from lemminflect import getAllInflections

    for t in doc[after + 2:n]:
        if (t.i == n - 1 or doc[t.i + 1].tag_ in ("IN", "RP", "TO")) and t.is_alpha \
                and t.tag_ not in ("NNP", "NNPS", "DT", "IN", "PRP", "CD", "POS", "CC") \
                and getAllInflections(t.lower_, upos="VERB"):
            return t  # "Who did Tesla partner with in 1886?": "partner" before its preposition
    return None


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
        if nxt is None or (not has_obj and nxt.tag_ in ("IN", "TO", ",", "RB", "WRB")):
            if t.tag_ == "RP" and nxt is not None:
                continue
            return j
    return None


def _finish(pieces: list[tuple[str, str]]) -> str:
    text = _join(pieces)
    if not text:
        return text
    text = _articles(text[0].upper() + text[1:])
    text = re.sub(r"\?(?=[\"'\u201d\u2019]\s*$)", "", text)  # 'Who wrote "Walking in X?"' ends its quote, not a question
    return text.rstrip(" ,;:.") + "."


_ARTICLE = re.compile(r"\b([Aa]n?) (\w+)")
AN_EXCEPTIONS = ("univers", "union", "unit", "uniq", "unif", "unic", "unil", "unanim", "use", "usu", "usa", "uti",
                 "ura", "ure", "uro", "eu", "one", "once", "ubiq")
A_EXCEPTIONS = ("hour", "honest", "honor", "honour", "heir")


def _articles(text: str) -> str:
    """``a`` / ``an`` agreeing with the next word's first sound (an altered word or a fake answer can follow
    the question's article: "a unsuccessful" -> "an unsuccessful"); letters' sounds by spelling, with the
    usual exceptions (``a university``, ``an hour``)."""
    def fix(m: re.Match[str]) -> str:
        art, word = m.group(1), m.group(2)
        low = word.lower()
        if word.isupper():
            vowel = low[0] in "aefhilmnorsx"  # an abbreviation is read letter by letter: "an FBI agent"
        else:
            vowel = (low[0] in "aeiou" and not low.startswith(AN_EXCEPTIONS)) or low.startswith(A_EXCEPTIONS)
        if low[0].isdigit():
            vowel = low.startswith(("8", "11", "18"))
        new = ("an" if vowel else "a")
        new = new.capitalize() if art[0].isupper() else new
        return f"{new} {word}"
    return _ARTICLE.sub(fix, text)
