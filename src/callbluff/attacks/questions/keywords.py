"""Keywords of a question: DPAEG's dependency-parse extraction (Algorithm 1, Sec. 3.3) and the two
baselines of Sec. 4.4.1 (random words, all content words).

Algorithm 1 pushes the head of the question on a stack; for each popped word P it adds P when P is a
content word, adds P's children whose relation to P is in the relation set R and that are content words,
and pushes the head of every clause that modifies P. Our copy of the paper lost R (its Figure 3, drawn from
de Marneffe & Manning's Stanford dependencies: argument and modifier relations). The choices made here:

* ``DEFAULT_RELATIONS`` (configurable): ``nsubj, nsubjpass, dobj, iobj, dative, attr, acomp, amod, advmod,
  compound, nmod, npadvmod, appos, oprd, poss, nummod`` plus ``pobj`` reached through ``prep`` / ``agent``.
  ``dative`` is the label spaCy's English models give indirect objects (Stanford ``iobj``); ``poss`` and
  ``nummod`` are Stanford modifier relations ("Canada's capital", "Super Bowl 50").
* The relations are followed below the head's children: a child in R is itself searched for children in
  R. Without this the paper's own example (Fig. 2, "Who played the voice of Aladdin": keywords played,
  voice, Aladdin) could not reach Aladdin, a ``pobj`` under ``voice``. A ``conj`` of a word taken through R
  is taken like it ("Pride and Prejudice").
* Clauses (``relcl, ccomp, advcl, acl, xcomp``, configurable) are pushed as new heads wherever they hang.
* A content word is a token whose universal POS is NOUN, PROPN, VERB, ADJ, ADV or NUM, that is not a
  wh-word (tags ``W*``: who, what, how...) nor a form of be / have / do, and that has a letter or digit
  (Sec. 3.3: "function words are not used as keywords").

Keywords are returned in question order, each once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

DEFAULT_RELATIONS: tuple[str, ...] = (
    "nsubj", "nsubjpass", "dobj", "iobj", "dative", "attr", "acomp", "amod", "advmod", "compound", "nmod",
    "npadvmod", "appos", "oprd", "poss", "nummod",
)
PREPOSITIONS: tuple[str, ...] = ("prep", "agent")
"""Relations looked through to their ``pobj`` (Sec. 3.3: "of" is the prep of "voice", "Aladdin" its pobj)."""
CLAUSES: tuple[str, ...] = ("relcl", "ccomp", "advcl", "acl", "xcomp")
CONTENT_POS: tuple[str, ...] = ("NOUN", "PROPN", "VERB", "ADJ", "ADV", "NUM")
LIGHT_LEMMAS = frozenset({"be", "have", "do"})


@dataclass(frozen=True)
class Keyword:
    """A keyword of a question: its text, character span, POS (universal and fine tag) and token index."""

    text: str
    start: int
    end: int
    pos: str
    tag: str
    i: int

    def to_json(self) -> dict[str, object]:
        return {"text": self.text, "start": self.start, "end": self.end, "pos": self.pos}


Lemma = Callable[["Token"], str]
"""How a token's lemma is read: ``Token.lemma_`` by default; DPAEG passes ``Resources.lemma``, which computes
it for the few tokens that need it when the parse left the lemmatizer out."""


def _lemma_attr(tok: Token) -> str:
    return tok.lemma_


def is_content(tok: Token, content_pos: Sequence[str] = CONTENT_POS, lemma: Lemma = _lemma_attr) -> bool:
    """Sec. 3.3 content word (see the module docstring for the exact rule)."""
    return (tok.pos_ in content_pos and not tok.tag_.startswith("W") and lemma(tok).lower() not in LIGHT_LEMMAS
            and any(c.isalnum() for c in tok.text))


def _keyword(tok: Token) -> Keyword:
    return Keyword(tok.text, tok.idx, tok.idx + len(tok.text), tok.pos_, tok.tag_, tok.i)


def dependency_keywords(doc: Doc, relations: Iterable[str] = DEFAULT_RELATIONS,
                        clauses: Iterable[str] = CLAUSES,
                        content_pos: Sequence[str] = CONTENT_POS, lemma: Lemma = _lemma_attr) -> list[Keyword]:
    """Algorithm 1 on a parsed question (one head per sentence; a question of several sentences contributes
    the keywords of each)."""
    rel, cl = frozenset(relations), frozenset(clauses)
    found: dict[int, Token] = {}
    stack: list[Token] = [s.root for s in reversed(list(doc.sents))]
    pushed = {t.i for t in stack}

    def take(tok: Token) -> None:
        """``tok`` reached through R: add it when a content word, then search its own children."""
        if is_content(tok, content_pos, lemma):
            found.setdefault(tok.i, tok)
        visit(tok)

    def visit(p: Token) -> None:
        for c in p.children:
            if c.dep_ in rel:
                take(c)
            elif c.dep_ in PREPOSITIONS:
                for g in c.children:
                    if g.dep_ == "pobj":
                        take(g)
            elif c.dep_ == "conj" and p.i in found:
                take(c)
            elif c.dep_ in cl and c.i not in pushed:
                pushed.add(c.i)
                stack.append(c)

    while stack:
        head = stack.pop()
        if is_content(head, content_pos, lemma):
            found.setdefault(head.i, head)
        visit(head)
    return [_keyword(found[i]) for i in sorted(found)]


def content_keywords(doc: Doc, content_pos: Sequence[str] = CONTENT_POS, lemma: Lemma = _lemma_attr) -> list[Keyword]:
    """Sec. 4.4.1 baseline: every content word of the question."""
    return [_keyword(t) for t in doc if is_content(t, content_pos, lemma)]


def random_keywords(doc: Doc, rng: np.random.Generator, n: int) -> list[Keyword]:
    """Sec. 4.4.1 baseline: "randomly selects one or more words from the question". Choice: ``n`` distinct
    words (tokens with a letter or digit, function words included), drawn uniformly with ``rng``; the
    attacks pass the number of keywords Algorithm 1 finds, so the baselines differ in which words, not in
    how many."""
    words = [t for t in doc if any(c.isalnum() for c in t.text)]
    if not words:
        return []
    k = max(1, min(n, len(words)))
    picked = sorted(int(i) for i in rng.choice(len(words), size=k, replace=False))
    return [_keyword(words[i]) for i in picked]
