"""Issue 37, fourth pass: checks of an AddSent candidate against what its question asked (Jia & Liang 2017,
Sec. 3.1 step 4: "crowdworkers ... filter out sentences that are ungrammatical"; the paper's crowd fixed these by
hand, our rules reject what they cannot fix). Shaped on SQuAD v1.1 *train* questions only
(``scripts/findings/reading_addsent_shaping.py``, seed 11, questions 1500-1899 of its draw), never on the
findings' dev sample. Three small rules:

- :func:`position_problems`: the fake answer sits, in the sentence's own spaCy parse, in a role that fits the
  question's wh-phrase (subject for a subject wh-phrase, not the main clause's subject otherwise, an adverbial of a
  verb for when/where/how long/how far), and the clause is whole (no verb with two subjects, no finite verb
  stranded without a subject, no ``to`` before a finite verb or participle);
- :func:`misspelled_words`: the question's own non-dictionary words that are not names (an error carried over
  from the question);
- the slot check of alterations lives in :func:`.alterations._fits_slot` (part of speech, morphology, article
  use of the replacement word).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"})
FINITE_TAGS = frozenset({"VBD", "VBZ", "VBP"})
ADVERBIAL_WH = frozenset({"when", "where"})
CLAUSE_DEPS_WITHOUT_SUBJECT = frozenset({"conj", "xcomp", "acl", "amod", "pcomp", "ROOT", "relcl", "compound",
                                         "auxpass", "aux", "parataxis"})
"""Dependencies a finite-tagged verb may carry without a subject of its own (a conjunct shares its subject; the
parser tags some participles VBD)."""


def answer_span(doc: Any, phrase: str) -> Any:
    """The tokens of ``phrase`` (the answer as written) in ``doc``, or None when it is not found."""
    start = doc.text.find(phrase) if phrase else -1
    return doc.char_span(start, start + len(phrase), alignment_mode="expand") if start >= 0 else None


def position_problems(doc: Any, phrase: str, wh: str, kind: str, subject: bool) -> list[str]:
    """Jia & Liang Sec. 3.1 step 3 turns the question into a statement with the answer *in place of the
    wh-phrase*; this checks that place in the sentence's parse (``doc``), given the fake answer as written
    (``phrase``), the question's wh-word and kind (:class:`.declarative.WhPhrase`) and whether the conversion made
    the answer the subject. Problems ([] = passes):

    - the main verb has two subjects (``Learning can rubisco do``: an object wh-phrase put in front);
    - a finite verb with no subject outside a conjunct, relative clause or participle (``... in courses
      receive.``: a verb the conversion stranded), or ``to`` before a finite verb or a participle (``to formed``);
    - a subject wh-phrase whose answer is not a subject; an object or adverbial wh-phrase whose answer is the main
      clause's subject;
    - when/where/how long/how far: the answer is not attached to a verb or predicate (a preposition's object, a
      measure or an adverb of it), e.g. ``... the city's Corona in 1905`` hung inside a noun phrase of the
      subject."""
    out = clause_problems(doc)
    span = answer_span(doc, phrase)
    if span is None or len(span) == 0:
        return out
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None:
        return out
    r = span.root
    main = [root] + [c for c in root.children if c.dep_ == "conj" and c.pos_ in ("VERB", "AUX")]
    main_subjects = [c for v in main for c in v.children if c.dep_ in SUBJECT_DEPS]
    is_main_subject = any(span.start <= s.i < span.end for s in main_subjects) or (
        r.dep_ in SUBJECT_DEPS and r.head in main)
    if subject:
        if not (r.dep_ in SUBJECT_DEPS or is_main_subject or _copula_attr(r)):
            out.append(f"subject answer is not a subject ({r.text}/{r.dep_})")
    elif is_main_subject:
        out.append(f"answer is the main subject ({r.text}/{r.dep_})")
    if not subject and (wh in ADVERBIAL_WH or kind == "how-adj") and not _adverbial(r):
        out.append(f"adverbial answer not attached to a verb ({r.text}/{r.dep_}<{r.head.text})")
    return out


def _copula_attr(t: Any) -> bool:
    """``The capital is A``: an answer after a copula stands for the subject of ``What is the capital?``."""
    return t.dep_ in ("attr", "acomp") and t.head.lemma_ == "be"


def _adverbial(t: Any) -> bool:
    """Whether token ``t`` (the answer's head) is an adverbial of a verb or predicate: a preposition's object (or
    the preposition) hung on a verb, adjective or copula's attribute, a measure or adverb of a verb."""
    if t.dep_ == "pobj":
        t = t.head
    if t.dep_ in ("prep", "npadvmod", "advmod", "dobj", "attr", "oprd", "advcl", "nummod", "acomp", "pcomp"):
        head = t.head
        if head.pos_ in ("VERB", "AUX", "ADJ"):
            return True
        # "X was a city in 1905": the parser hangs the phrase on the copula's attribute or the verb's object
        return head.dep_ in ("attr", "dobj", "acomp", "oprd") and head.head.pos_ in ("VERB", "AUX")
    return t.dep_ == "ROOT"


def clause_problems(doc: Any) -> list[str]:
    """The clause-level problems of :func:`position_problems` (two subjects, a stranded finite verb, ``to`` +
    a finite verb or participle)."""
    out: list[str] = []
    for v in doc:
        subs = [c for c in v.children if c.dep_ in ("nsubj", "nsubjpass")]
        if len(subs) >= 2:
            out.append(f"verb with two subjects ({subs[0].text}, {subs[1].text} {v.text})")
            break
    for v in doc:
        if v.tag_ in FINITE_TAGS and v.pos_ in ("VERB", "AUX") and v.dep_ not in CLAUSE_DEPS_WITHOUT_SUBJECT \
                and not any(c.dep_ in SUBJECT_DEPS for c in v.children) \
                and not any(c.dep_ == "mark" or c.tag_ in ("WDT", "WP", "WRB") for c in v.children):
            out.append(f"finite verb without a subject ({v.text}/{v.dep_})")
            break
    for a, b in zip(doc, doc[1:]):
        if a.tag_ == "TO" and b.tag_ in ("VBD", "VBZ", "VBN"):
            out.append(f"to + {b.tag_} ({a.text} {b.text})")
            break
    return out


WORD = re.compile(r"^[a-z]+(?:-[a-z]+)*$")
RARE_ZIPF = 1.0
"""wordfreq Zipf frequency below which a word out of the Hunspell dictionary counts as misspelt (our choice:
technical words such as ``rubisco`` or ``prostomium`` have some frequency; ``reformilated``, ``equtions`` none)."""


@lru_cache(maxsize=1)
def _dictionary() -> frozenset[str]:
    from callbluff.resources.hunspell import expand_hunspell, hunspell_files

    files = hunspell_files()
    return frozenset(w.lower() for w in expand_hunspell(*files)) if files else frozenset()


@lru_cache(maxsize=50_000)
def is_misspelt(word: str) -> bool:
    """Whether lower-case ``word`` is in neither the Hunspell en_US dictionary nor (above :data:`RARE_ZIPF`)
    wordfreq's English list; a hyphenated word is judged by its parts. False when no dictionary is installed."""
    words = _dictionary()
    if not words:
        return False
    from wordfreq import zipf_frequency

    return any(p not in words and zipf_frequency(p, "en") < RARE_ZIPF for p in word.split("-") if p)


def misspelled_words(qdoc: Any) -> frozenset[str]:
    """Jia & Liang's crowd fixed errors the question carried (Sec. 3.1 step 4); ours cannot, so a candidate that
    keeps one is dropped (:mod:`.addsent`). The question's lower-case alphabetic words of 3+ letters that are not
    names (no capital, not tagged ``NNP``/``NNPS``, no entity) and are misspelt (:func:`is_misspelt`)."""
    return frozenset(t.text for t in qdoc if len(t.text) >= 3 and WORD.match(t.text) and t.tag_ not in ("NNP", "NNPS")
                     and not t.ent_type_ and is_misspelt(t.text))
