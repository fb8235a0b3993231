"""An offline grammaticality check for AddSent distractors (what the paper's crowd did by hand, Sec. 3.1 step 4:
"crowdworkers ... fix grammatical errors", then a second round filters sentences that are ungrammatical or
answer the question).

No grammar checker runs offline here (LanguageTool needs a Java server and a download), so this is a
*structural* check on spaCy's parse of the sentence alone, stricter than nothing and weaker than a person:
a sentence passes when it is one sentence, ends with ``.``, its root is a verb or auxiliary with a subject
(``nsubj``, ``nsubjpass``, ``csubj``, ``expl``), no wh-word or question mark is left, no *do*-support
auxiliary is left before a bare verb at the start (``Did X move``), no word is repeated twice in a row, and no
preposition ends the sentence. The findings report the share of candidates that pass and show samples of
both kinds, so a reader can judge the check itself.
"""

from __future__ import annotations

from typing import Any

SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"})


def grammar_problems(sentence: str, res: Any) -> list[str]:
    """The reasons ``sentence`` fails the structural check ([] when it passes)."""
    problems: list[str] = []
    text = sentence.strip()
    if not text.endswith("."):
        problems.append("no final period")
    if "?" in text:
        problems.append("question mark")
    doc = res.doc(text)
    sents = list(doc.sents)
    if len(sents) != 1:
        problems.append(f"{len(sents)} sentences")
    roots = [t for t in doc if t.dep_ == "ROOT"]
    root = roots[0] if roots else None
    if root is None or root.pos_ not in ("VERB", "AUX"):
        problems.append(f"root is not a verb ({root.text}/{root.pos_})" if root is not None else "no root")
    elif not any(c.dep_ in SUBJECT_DEPS for c in root.children):
        problems.append("no subject")
    if any(t.tag_ in ("WDT", "WP", "WP$", "WRB") and t.i == 0 for t in doc):
        problems.append("starts with a wh-word")
    if len(doc) > 1 and doc[0].lower_ in ("did", "does", "do") and doc[1].pos_ in ("PROPN", "NOUN", "DET", "PRON"):
        problems.append("inverted do-support")
    words = [t.lower_ for t in doc if not t.is_punct]
    if any(a == b for a, b in zip(words, words[1:])):
        problems.append("repeated word")
    content = [t for t in doc if not t.is_punct]
    if content and content[-1].tag_ in ("IN", "TO") and content[-1].dep_ != "prt":
        problems.append("ends with a preposition")
    return problems


def is_grammatical(sentence: str, res: Any) -> bool:
    """Whether ``sentence`` passes :func:`grammar_problems`."""
    return not grammar_problems(sentence, res)
