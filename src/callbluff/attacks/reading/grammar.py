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

**Agreement and local phrases** (added on SQuAD *train* questions' candidates, ``scripts/findings/
reading_addsent_shaping.py``; never on the findings sample): a plural common-noun subject with a singular verb or
the reverse (``Hamsters has come``; quantity and collective heads such as ``%``, ``number``, ``data`` are not
judged); an auxiliary before the subject (``... has Michael Neal written books``); two finite verbs in a row
(``lines that are is electrified``); ``because of`` followed by a verb, an adjective or a bare singular noun
(``because of learn``, ``because of hamster``); a sentence ending in a preposition and a bare adjective or verb
(``... by deepest.``); an unbalanced quote or bracket. The conversion itself (:mod:`.declarative`) no longer makes
most of these; the check rejects what it still cannot fix.

**Word order** (the checks above alone passed "The resulting channel of the STUDIOS merger called was
aliens." and "The Bull Mechanized photographs hamsters capture."): a past participle or bare infinitive with
nothing after it directly before the finite verb or copula (``... merger called was``, ``... built mainly to
carry was``) fails; and when the caller says where the
fake answer is (``answer``, the phrase as written in the sentence, and whether it should be the subject), a
non-subject answer must not precede a verb of the main clause (the root and its ``xcomp`` chain) that has
nothing after it (``... tends Jeff Dean to favor.`` fails, ``... viewed Jeff Dean to be the Antichrist.``
passes) and must not sit inside the root's subject (``... photographs hamsters capture.``:
the parser reads "hamsters" as the subject). These are properties of the re-parsed sentence, so they also judge
sentences made by other means. Since issue 37's second round the fake answer must not stand right before a noun
phrase or pronoun of the question (``It takes learning a person to ...``: a slot the parse misplaced), and the
phrase-level errors of :func:`_phrases_issue37b` fail (``many of hamsters``, ``in least types of``, ``10% of
percentage of``, ``the 21 century``, ``X torn his ...``), as does a quote set apart from its words and a singular
common noun with a base-form present verb (``A hamster allow``); and (third pass) a preposition left before
another (``stayed ... in during``), ``not`` before a finite verb (``X not does``), a single comma between the
subject and its verb (``X name, was A``). AddSent ranks the candidates that pass by a language model's fluency
(:mod:`.fluency`) where one is installed. The findings report the share of candidates that pass and show
samples of both kinds, so a reader can judge the check itself.
"""

from __future__ import annotations

import re
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
        problems.extend(_agreement(doc, root))
        problems.extend(_inverted(doc, root))
    problems.extend(_phrases(doc, text))
    problems.extend(_phrases_issue37b(doc))
    return problems


NUMBERLESS = frozenset({
    "%", "percent", "lot", "lots", "number", "majority", "minority", "half", "third", "quarter", "rest", "part",
    "none", "all", "most", "some", "total", "variety", "group", "couple", "range", "set", "pair", "kind", "type",
    "sort", "series", "species", "data", "media", "news", "means", "headquarters", "physics", "mathematics",
    "economics", "politics", "ethics", "staff", "police", "people", "family", "team", "government", "public",
    "committee", "crew", "army", "navy", "board", "council", "band", "audience", "class", "population", "percentage",
    "proportion", "fraction", "share", "amount", "remainder", "bulk", "portion"})
"""Subject heads whose verb may take either number (quantities, collectives, ``-s`` words that are singular):
the agreement check leaves them alone."""
SINGULAR_VERBS = frozenset({"is", "was", "has", "does", "'s"})
PLURAL_VERBS = frozenset({"are", "were", "have", "do"})


def _agreement(doc: Any, root: Any) -> list[str]:
    """Subject-verb agreement of every clause: a plural common noun (``NNS``) or two conjoined subjects (``X and
    Y has``) with a singular verb (``Hamsters has come``, ``... felt hamsters was happening``), a singular common
    noun (``NN``) or a one-word name (``NNP``: ``Jeff Dean were``) with a plural one; a pronoun, a plural name and
    quantity or collective heads (:data:`NUMBERLESS`) are not judged."""
    for verb in doc:
        subj = next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")), None)
        if subj is None or subj.tag_ not in ("NN", "NNS", "NNP") or subj.lower_ in NUMBERLESS:
            continue
        finite = next((t for t in [*(c for c in verb.children if c.dep_ in ("aux", "auxpass") and c.i < verb.i),
                                   verb] if t.tag_ in ("VBZ", "VBP", "VBD")), None)
        if finite is None:
            continue
        low = finite.lower_
        # by the word, not the tag alone: the parser tags a misread noun or bare infinitive VBZ / VBP
        singular = low in SINGULAR_VERBS or (finite.tag_ == "VBZ" and low.endswith("s") and low not in PLURAL_VERBS)
        plural = low in PLURAL_VERBS or (finite.tag_ == "VBP" and finite is verb and low == finite.lemma_.lower()
                                         and not low.endswith("s") and subj.tag_ == "NN" and subj.i < verb.i)
        # issue 37: "A hamster allow the TVs ...": a singular common noun with a base-form present verb
        conj = any(c.dep_ == "conj" for c in subj.children)
        if (conj and singular) or (not conj and ((subj.tag_ == "NNS" and singular) or
                                                 (subj.tag_ in ("NN", "NNP") and plural))):
            return [f"subject and verb disagree ({subj.text} {finite.text})"]
    return []


def _inverted(doc: Any, root: Any) -> list[str]:
    """Question word order left in a statement: an auxiliary of the main verb before its subject (``... has
    Michael Neal written books``, ``... did the Parisian cross``, ``... does New York receive``)."""
    for verb in doc:
        subj = next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")), None)
        if subj is None:
            continue
        aux = next((c for c in verb.children if c.dep_ in ("aux", "auxpass") and c.i < subj.left_edge.i
                    and c.tag_ != "TO"), None)
        if aux is not None:
            return [f"auxiliary before its subject ({aux.text} ... {subj.text})"]
    return []


AUX_WORDS = frozenset({"is", "are", "was", "were", "has", "have", "had", "do", "does", "did"})
STRANDABLE = frozenset({"from", "to", "into", "for", "with", "by", "of", "at", "on", "about"})
REASON_BAD_TAGS = frozenset({"VB", "VBD", "VBP", "VBZ", "JJ", "JJR", "JJS", "RB", "IN", "TO", "MD"})


def _phrases(doc: Any, text: str) -> list[str]:
    """Local phrases a person would rewrite: two finite verbs in a row (``lines that are is electrified``,
    ``X skip does``); ``because of`` followed by a verb, an adjective or a singular common noun without a
    determiner (``because of learn``, ``because of hamster``); a preposition whose object is a bare adjective or
    verb at the end of the sentence (``by deepest.``); an opened quote or bracket never closed."""
    out: list[str] = []
    toks = [t for t in doc if not t.is_space]
    for a, b in zip(toks, toks[1:]):
        if a.tag_ in FINITE and (b.tag_ == "MD" or b.lower_ in AUX_WORDS) \
                and not (a.lower_ in ("is", "was", "are", "were") and b.tag_ == "MD"):
            out.append(f"two finite verbs in a row ({a.text} {b.text})")
            break
    for i, t in enumerate(toks[:-2]):
        if t.lower_ == "because" and toks[i + 1].lower_ == "of":
            nxt = toks[i + 2]
            if nxt.tag_ in REASON_BAD_TAGS or (nxt.tag_ == "NN" and not any(c.dep_ in ("det", "poss") for c in
                                                                            nxt.children)):
                out.append(f"because of + {nxt.tag_} ({nxt.text})")
    content = [t for t in toks if not t.is_punct]
    if len(content) >= 2 and content[-2].tag_ == "IN" and content[-2].dep_ != "prt" \
            and content[-1].tag_ in ("JJ", "JJR", "JJS", "VB", "RB", "RBS") and not content[-1].text[:1].isupper():
        out.append(f"preposition before a bare {content[-1].tag_} ({content[-2].text} {content[-1].text})")
    for t in toks[:-1]:
        if t.dep_ == "prep" and t.tag_ == "IN" and not any(True for _ in t.children) and not t.nbor(1).is_punct:
            out.append(f"preposition without an object ({t.text} {t.nbor(1).text})")  # "came from in", "from was"
            break
    for i, t in enumerate(toks[:-2]):
        if t.lower_ in ("do", "does", "did") and toks[i + 1].lower_ not in ("not", "n't") and toks[i + 1].tag_ != "VB" \
                and any(toks[j].tag_ == "VB" and toks[j - 1].tag_ != "TO" for j in range(i + 2, min(len(toks), i + 8))):
            out.append(f"inverted do-support ({t.text} ... )")  # "25% of X does Finland produce by itself"
            break
    for a, b in zip(toks, toks[1:]):
        if (a.tag_ in ("IN", "TO") and a.lower_ in STRANDABLE and b.lower_ in ("in", "on", "at", "during")) or (
                a.tag_ in ("IN", "TO") and a.lower_ in STRANDABLE and b.tag_ in FINITE):
            out.append(f"preposition without an object ({a.text} {b.text})")  # "came from in Chicago"
            break
    for a, b in zip(toks, toks[1:]):
        if a.lower_ in DANGLING_PREPS and a.tag_ in ("IN", "TO", "RP", "RB") and a.dep_ != "prt" \
                and b.lower_ in LATER_PREPS and b.tag_ == "IN":
            out.append(f"preposition without an object ({a.text} {b.text})")  # "stayed ... in during"
            break
    for a, b in zip(toks, toks[1:]):
        if a.lower_ == "not" and b.tag_ in ("VBZ", "VBD", "VBP") and b.lower_ not in ("is", "are", "was", "were"):
            out.append(f"negation before a finite verb ({a.text} {b.text})")  # "X not does learning"
            break
    for a, b in zip(toks, toks[1:]):
        if a.text == "," and not any(t.text == "," for t in toks[:a.i]) and (b.dep_ == "ROOT" or (b.dep_ in ("aux", "auxpass") and b.head.dep_ == "ROOT")) \
                and b.tag_ in FINITE and any(c.dep_ in SUBJECT_DEPS and c.i < a.i for c in
                                             (b if b.dep_ == "ROOT" else b.head).children):
            out.append(f"comma between subject and verb ({b.text})")  # "X rapper name, was Central Park"
            break
    if any(t.lower_ in ("what", "how") and t.i > 0 for t in toks):
        out.append("a wh-word is left")
    opened = len(re.findall(r"(?:^|\s)'(?=\w)", text))
    closed = len(re.findall(r"(?<=\w)'(?=[\s.,;:!?)]|$)", text))
    if re.search(r"(?:^|\s)[\"'\u201c\u2018]\s|\s[\"\u201d](?=[.,;:!?]?$)", text):
        out.append("quote set apart from its words")  # "' prostomiums' come", "... is any hamster \"."
    if text.count("(") != text.count(")") or text.count("[") != text.count("]") or text.count('"') % 2 \
            or opened > closed:
        out.append("unbalanced quote or bracket")
    return out


FINITE = frozenset({"VBD", "VBZ", "VBP", "MD"})
DANGLING_PREPS = frozenset({"in", "on", "at", "to", "from", "for", "with", "by", "into", "of"})
LATER_PREPS = frozenset({"during", "in", "on", "at", "after", "before", "since", "until", "by"})
NP_STARTS = frozenset({"NN", "NNS", "NNP", "NNPS", "DT", "PRP$", "CD", "JJ", "JJS", "JJR", "PDT", "PRP"})
"""Tags that start (or continue) a noun phrase: the fake answer must not stand right before one."""
QUANTIFIERS = frozenset({"many", "much", "few", "fewer", "several", "most", "some", "all", "none", "each", "both",
                         "any", "one", "either", "neither", "half", "more", "less", "least", "fewest"})
"""Words that take ``of`` + a determined noun phrase (``many of the hamsters``), never ``of`` + a bare common noun
(``many of hamsters``)."""
COUNT_HEADS = frozenset({"percentage", "percent", "proportion", "%"})


def _phrases_issue37b(doc: Any) -> list[str]:
    """Phrase-level errors the issue-37 hand check found (kinds, not sentences; each rule read on SQuAD *train*
    candidates with ``scripts/findings/reading_addsent_shaping.py``): a quantifier + ``of`` + a bare common noun
    (``many of hamsters``); a superlative in a noun phrase without a determiner (``in least types of``, after the
    ``most`` -> ``least`` flip); a counted noun said twice (``10% of percentage of X``, ``Tribunal of Tribunal``);
    a bare cardinal before ``century`` (``the 21 century``); a past participle used as a finite verb with a
    subject and no auxiliary (``Christopher Clark torn his ...``)."""
    out: list[str] = []
    toks = [t for t in doc if not t.is_space]
    for a, b, c in zip(toks, toks[1:], toks[2:]):
        if a.lower_ in QUANTIFIERS and b.lower_ == "of" and (c.tag_ in ("NN", "NNS") or (
                c.tag_.startswith("JJ") and c.head.tag_ in ("NN", "NNS") and c.head.i > c.i)) \
                and not any(x.dep_ in ("det", "poss", "nummod", "predet") for x in (c.head if c.tag_.startswith("JJ")
                                                                                     else c).children):
            out.append(f"quantifier + of + a bare noun ({a.text} of {c.text})")
            break
    for t in toks:
        if t.tag_ not in ("JJS", "RBS") or t.lower_ == "most" and t.dep_ in ("amod", "det"):
            continue  # "most hamsters" is a quantifier
        noun = t.head if t.dep_ in ("amod", "det") else t.head.head if (t.dep_ == "advmod" and t.head.dep_ == "amod") \
            else None
        if noun is None or noun.tag_ not in ("NN", "NNS") or noun.i < t.i:
            continue
        if t.i > 0 and doc[t.i - 1].lower_ == "at":
            continue  # "at least"
        if not any(x.dep_ in ("det", "poss", "nummod", "predet") and x.i < t.i for x in noun.children) and not (
                t.i > 0 and doc[t.i - 1].tag_ in ("DT", "PRP$", "POS")):
            out.append(f"superlative without a determiner ({t.text} {noun.text})")
            break
    for a, b, c in zip(toks, toks[1:], toks[2:]):
        if b.lower_ == "of" and (a.lower_ == c.lower_ and a.tag_ in ("NN", "NNS", "NNP", "NNPS") or (
                a.lower_ in COUNT_HEADS and c.lower_ in COUNT_HEADS)):
            out.append(f"counted noun repeated ({a.text} of {c.text})")
            break
    for a, b in zip(toks, toks[1:]):
        if a.text.isdigit() and b.lower_ in ("century", "centuries"):
            out.append(f"cardinal before century ({a.text} {b.text})")
            break
    for t in toks:
        if t.tag_ in ("VBN", "VBD") and any(c.dep_ in ("nsubj", "nsubjpass") for c in t.children) \
                and not any(c.dep_ in ("aux", "auxpass") for c in t.children) and _participle_only(t):
            out.append(f"participle without an auxiliary ({t.text})")
            break
    return out


def _participle_only(t: Any) -> bool:
    """Whether ``t``'s word is a past participle of its verb and never its past tense (``torn``, ``written``)."""
    from lemminflect import getAllInflections

    forms = getAllInflections(t.lemma_.lower(), upos="VERB")
    low = t.lower_
    return low in forms.get("VBN", ()) and low not in forms.get("VBD", ())


def _word_order(doc: Any, root: Any, text: str, answer: str | None, answer_is_subject: bool) -> list[str]:
    """The word-order problems of the module docstring."""
    out: list[str] = []
    for t in doc[:-1]:
        nxt = doc[t.i + 1]
        if (t.tag_ in ("VBN", "VB") and t.i != root.i and not any(c.i > t.i for c in t.children)
                and nxt.tag_ in FINITE and (nxt.i == root.i or nxt.head.i == root.i)):
            out.append(f"bare participle before the verb ({t.text} {nxt.text})")  # "called was", "to carry was"
            break
    if not answer:
        return out
    start = text.find(answer)
    span = doc.char_span(start, start + len(answer), alignment_mode="expand") if start >= 0 else None
    if span is None:
        return out
    if span.end < len(doc) and doc[span.end].tag_ in NP_STARTS:
        # issue 37: "It takes learning a person to ...", "feels Jeff Dean the church's policy ...", "Jeff Dean
        # third-lowest-ranking officer": the answer landed in front of a noun phrase of the question, a slot the
        # parse misplaced (an indirect object, "gave A the award", is rejected too: rare, and not told apart)
        out.append(f"answer followed by a noun phrase ({doc[span.end].text})")
    if answer_is_subject:
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
