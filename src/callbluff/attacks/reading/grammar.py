"""An offline grammaticality check for AddSent distractors (what the paper's crowd did by hand, Sec. 3.1 step 4:
"crowdworkers ... fix grammatical errors", then a second round filters sentences that are ungrammatical or
answer the question).

No grammar checker runs offline here (LanguageTool needs a Java server and a download), so this is a
*structural* check on spaCy's parse of the sentence alone, stricter than nothing and weaker than a person:
a sentence passes when it is one sentence, ends with ``.``, its root is a verb or auxiliary with a subject
(``nsubj``, ``nsubjpass``, ``csubj``, ``expl``; a noun root directly followed by a past-tense verb the parser
hung on it as ``acl`` counts as subject and verb, spaCy's small model misreading "The lens floated in ..."), no wh-word or question mark is left, no *do*-support
auxiliary is left before a bare verb at the start (``Did X move``), no word is repeated twice in a row, and no
preposition ends the sentence.

**Word order** (the checks above alone passed "The resulting channel of the STUDIOS merger called was
aliens." and "The Bull Mechanized photographs hamsters capture."): a past participle or bare infinitive with
nothing after it directly before the finite verb or copula (``... merger called was``, ``... built mainly to
carry was``) fails; and when the caller says where the
fake answer is (``answer``, the phrase as written in the sentence, and whether it should be the subject), a
non-subject answer must not precede a verb of the main clause (the root and its ``xcomp`` chain) that has
nothing after it (``... tends Jeff Dean to favor.`` fails, ``... viewed Jeff Dean to be the Antichrist.``
passes) and must not sit inside the root's subject (``... photographs hamsters capture.``:
the parser reads "hamsters" as the subject). These are properties of the re-parsed sentence, so they also judge
sentences made by other means. AddSent ranks the candidates that pass by a language model's fluency
(:mod:`.fluency`) where one is installed. The findings report the share of candidates that pass and show
samples of both kinds, so a reader can judge the check itself.
"""

from __future__ import annotations

from typing import Any

SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"})


def grammar_problems(sentence: str, res: Any, answer: str | None = None, answer_is_subject: bool = False,
                     doc: Any = None) -> list[str]:
    """The reasons ``sentence`` fails the structural check ([] when it passes). ``answer``: the fake answer's
    phrase as written in the sentence, checked for its position unless ``answer_is_subject``; ``doc``: the
    sentence's spaCy parse when the caller has it (else ``res.doc``)."""
    problems: list[str] = []
    text = sentence.strip()
    if not text.endswith("."):
        problems.append("no final period")
    if "?" in text:
        problems.append("question mark")
    doc = doc if doc is not None else res.doc(text)
    sents = list(doc.sents)
    if len(sents) != 1:
        problems.append(f"{len(sents)} sentences")
    roots = [t for t in doc if t.dep_ == "ROOT"]
    root = roots[0] if roots else None
    misread = root is not None and root.pos_ in ("NOUN", "PROPN") and root.i + 1 < len(doc) \
        and doc[root.i + 1].head.i == root.i and doc[root.i + 1].dep_ == "acl" and doc[root.i + 1].tag_ in ("VBD", "VBN")
    if misread:
        # "The lens floated in ...": the small parser reads a past tense right after the subject's noun as a
        # participle modifying it; a subject followed by its verb is the sentence's clause, not a fragment
        pass
    elif root is None or root.pos_ not in ("VERB", "AUX"):
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
    if root is not None:
        problems.extend(_word_order(doc, root, text, answer, answer_is_subject))
    return problems


FINITE = frozenset({"VBD", "VBZ", "VBP", "MD"})


def _word_order(doc: Any, root: Any, text: str, answer: str | None, answer_is_subject: bool) -> list[str]:
    """The word-order problems of the module docstring."""
    out: list[str] = []
    for t in doc[:-1]:
        nxt = doc[t.i + 1]
        if (t.tag_ in ("VBN", "VB") and t.i != root.i and not any(c.i > t.i for c in t.children)
                and nxt.tag_ in FINITE and (nxt.i == root.i or nxt.head.i == root.i)):
            out.append(f"bare participle before the verb ({t.text} {nxt.text})")  # "called was", "to carry was"
            break
    if not answer or answer_is_subject:
        return out
    start = text.find(answer)
    span = doc.char_span(start, start + len(answer), alignment_mode="expand") if start >= 0 else None
    if span is None:
        return out
    verbs = [root]
    while (x := next((c for c in verbs[-1].children if c.dep_ == "xcomp"), None)) is not None:
        verbs.append(x)
    late = [v for v in verbs if v.pos_ in ("VERB", "AUX") and v.i >= span.end
            and not any(c.i > v.i and not c.is_punct for c in v.children)]  # "viewed A to be B" is fine
    if late:
        out.append(f"answer before its verb ({late[0].text})")
    subj = next((c for c in root.children if c.dep_ in SUBJECT_DEPS), None)
    if subj is not None and subj.left_edge.i <= span.start and span.end - 1 <= subj.right_edge.i:
        out.append("answer inside the subject")
    return out


def is_grammatical(sentence: str, res: Any) -> bool:
    """Whether ``sentence`` passes :func:`grammar_problems`."""
    return not grammar_problems(sentence, res)
