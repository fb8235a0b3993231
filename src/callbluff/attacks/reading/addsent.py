"""AddSent and AddOneSent (Jia & Liang 2017, Sec. 3.1 and 3.2): append one grammatical-looking sentence that
resembles the question but does not answer it.

AddSent (Sec. 3.1) has four steps; this module assembles the first three from their own modules and does
the fourth:

1. perturb the question (:mod:`.alterations`: special table, WordNet antonyms, nearby numbers, nearby
   proper / entity nouns and adjectives of the same type in MiniLM vector space, a fallback per type);
2. make a fake answer of the gold answer's type (:mod:`.fake_answers`, the authors' 26 rules);
3. turn the perturbed question and the fake answer into a declarative sentence (:mod:`.declarative`);
4. the paper has crowdworkers fix each sentence's grammar, then "the model failed if distracted by any of"
   the (up to a few) verified sentences; the adversary queries the model with every candidate and keeps the
   one with the lowest F1. No crowd here: the candidates are the combinations of the first
   ``question_variants`` perturbed questions (each altered token's k-th nearby word) and the first
   ``fake_answers`` fake answers, in order of ``variant + answer`` (the authors' first choice first), at most
   ``candidates``. They are a deterministic function of the record and the parameters (no random choice),
   so AddOneSent's sentence is always one of AddSent's candidates. How many pass an offline grammar check
   is measured in ``docs/findings/reading.md`` (:mod:`.grammar`).

Speed (our design; the paper is silent): the candidates of a batch of records are computed together
(:func:`candidates_many`: one ``nlp.pipe`` for the questions, one for the answers' sentences, one batched
sentence split of the paragraphs, one matrix product for the vector neighbours), the same candidates as one
record at a time. The engine's ``prefetch`` hook runs it per chunk and the per-record calls read the result
(:func:`prefetch_candidates`); AddSent and AddOneSent with the same candidate parameters share it.

AddOneSent (Sec. 3.2) appends one candidate chosen at random (the record's ``rng``) without querying the
model. Both append the sentence at the end of the paragraph (``position="start"`` puts it first; the paper
appends). A candidate that contains a gold answer (SQuAD-normalised tokens) is dropped, and every returned
example is checked again before it leaves the attack (:func:`check_no_gold`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from pydantic import Field
from spacy.tokens import Doc

from callbluff.attacks.base import AttackParams, SearchAttack, SearchParams, StaticAttack, register
from callbluff.attacks.reading.alterations import alterations, nearby_lookups, perturbed_words
from callbluff.attacks.reading.declarative import to_declarative, wh_phrase
from callbluff.attacks.reading.fake_answers import AnswerToken, answer_tokens_many, fake_answers, overlaps_gold
from callbluff.attacks.reading.lexicon import Lexicon, load_lexicon
from callbluff.metrics.reading import exact_match, f1_score
from callbluff.records import Perturbed, QAExample, Record

PAPER = "Jia & Liang 2017, Adversarial Examples for Evaluating Reading Comprehension Systems"
REQUIRES = ("spacy-parse", "wordnet", "lemminflect", "torch", "squad-train")


class CandidateParams(AttackParams):
    """How AddSent's candidate sentences are made (shared by AddOneSent, so its sentence is one of them)."""

    candidates: int = Field(4, ge=1, le=32, description="candidate sentences per question (at most)")
    question_variants: int = Field(2, ge=1, le=10, description="perturbed questions (k-th nearby word)")
    fake_answers: int = Field(2, ge=1, le=10, description="fake answers per perturbed question")
    position: Literal["end", "start"] = "end"
    lexicon_corpus: str | None = Field(None, description="SQuAD JSON for the lexicon (default: SQuAD v1.1 train)")
    lexicon_paragraphs: int = Field(2500, ge=10)


class AddSentParams(CandidateParams, SearchParams):
    query_budget: int = Field(4, ge=1)


@dataclass(frozen=True)
class Candidate:
    """One distractor: the sentence, the perturbed question and fake answer it states, and how."""

    sentence: str
    question: str
    fake_answer: str
    answer_rule: str
    variant: int
    alterations: list[dict[str, Any]]


def candidates(record: QAExample, res: Any, params: CandidateParams) -> list[Candidate]:
    """AddSent's candidate distractors for ``record`` (module docstring); [] when the question has no
    wh-phrase, no gold answer, or every candidate would contain a gold answer. Computed by
    :func:`candidates_many`, or taken from what :func:`prefetch_candidates` computed for the record's batch."""
    key = _cache_key(record, params)
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
            return list(hit)
    out = candidates_many([record], res, params)[0]
    _remember([(key, out)])
    return list(out)


def prefetch_candidates(records: Sequence[Record], res: Any, params: CandidateParams) -> None:
    """Compute the candidates of a batch of records at once (:func:`candidates_many`) and keep them for the
    per-record calls of :func:`candidates` that follow (the last :data:`CACHE_SIZE` records' are kept; at
    most that many are computed here). Records of another type are ignored."""
    todo: dict[tuple[Any, ...], QAExample] = {}
    with _CACHE_LOCK:
        for r in records:
            if isinstance(r, QAExample) and len(todo) < CACHE_SIZE:
                key = _cache_key(r, params)
                if key not in _CACHE:
                    todo[key] = r
    recs = list(todo.values())
    for b in range(0, len(recs), BATCH):
        part = recs[b:b + BATCH]
        _remember(list(zip(list(todo)[b:b + BATCH], candidates_many(part, res, params), strict=True)))


def candidates_many(records: Sequence[QAExample], res: Any, params: CandidateParams) -> list[list[Candidate]]:
    """:func:`candidates` of each record, computed together: the questions parsed in one ``nlp.pipe``, the
    answers' sentences found and tagged in one batch each (:func:`.answer_tokens_many`), the vector neighbours
    of every question word the alterations look up in one matrix product (:meth:`.Lexicon.nearby_many`).
    The same candidates as one record at a time (the parses and neighbours do not depend on the batch)."""
    todo = [i for i, r in enumerate(records) if r.answers and r.question.strip()]
    out: list[list[Candidate]] = [[] for _ in records]
    if not todo:
        return out
    parsed = _question_docs([records[i].question for i in todo], res)
    keep = [(i, d) for i, d in zip(todo, parsed, strict=True) if wh_phrase(d) is not None]
    if not keep:
        return out
    todo, qdocs = [i for i, _ in keep], [d for _, d in keep]
    lex = load_lexicon(params.lexicon_corpus, paragraphs=params.lexicon_paragraphs)
    lex.nearby_many([w for d in qdocs for w in nearby_lookups(d, params.question_variants)], 100)
    toks = answer_tokens_many([(records[i].context, records[i].answer_starts[0] if records[i].answer_starts
                                else -1, records[i].answers[0]) for i in todo], res)
    for i, qdoc, answer_toks in zip(todo, qdocs, toks):
        out[i] = _assemble(records[i], qdoc, answer_toks, lex, params)
    return out


def _assemble(record: QAExample, qdoc: Doc, toks: list[AnswerToken], lex: Lexicon,
              params: CandidateParams) -> list[Candidate]:
    """Steps 1-3 for one record whose question (``qdoc``) has a wh-phrase, given its answer's tokens."""
    alts = alterations(qdoc, lex, k=params.question_variants)
    fakes = fake_answers(record.answers[0], toks, record.question, record.answers, lex, k=params.fake_answers)
    combos = sorted(((v, f) for v in range(params.question_variants) for f in range(len(fakes))),
                    key=lambda vf: (vf[0] + vf[1], vf[0]))
    out: list[Candidate] = []
    seen: set[str] = set()
    for v, f in combos:
        words = perturbed_words(qdoc, alts, v)
        sentence = to_declarative(qdoc, fakes[f][0], words)
        if not sentence or sentence in seen or overlaps_gold(sentence, record.answers):
            continue
        seen.add(sentence)
        question = "".join(w + t.whitespace_ for w, t in zip(words, qdoc))
        out.append(Candidate(sentence, question, fakes[f][0], fakes[f][1], v,
                             [{"i": a.i, "from": a.original, "to": a.words[min(v, len(a.words) - 1)],
                               "rule": a.rule} for a in alts]))
        if len(out) >= params.candidates:
            break
    return out


def _question_docs(questions: Sequence[str], res: Any) -> list[Doc]:
    """The full parses of ``questions``: one question through ``res.doc`` (cached there), several in one
    ``nlp.pipe`` (the same parses)."""
    if len(questions) == 1:
        return [res.doc(questions[0])]
    uniq = list(dict.fromkeys(questions))
    parsed = dict(zip(uniq, res.nlp.pipe(uniq, batch_size=64), strict=True))
    return [parsed[q] for q in questions]


CACHE_SIZE = 8192
"""Records whose candidates are kept per process (a few hundred bytes each)."""
BATCH = 512
"""Records per :func:`candidates_many` call in :func:`prefetch_candidates` (bounds the parses held at once)."""
_CACHE: OrderedDict[tuple[Any, ...], list[Candidate]] = OrderedDict()
_CACHE_LOCK = threading.Lock()


def _cache_key(record: QAExample, params: CandidateParams) -> tuple[Any, ...]:
    """What the candidates depend on: the candidate parameters (not AddSent's search ones, so AddSent and
    AddOneSent share) and the record's question, context and answers."""
    return (tuple(getattr(params, f) for f in CandidateParams.model_fields), record.id, record.question,
            record.context, tuple(record.answers), tuple(record.answer_starts))


def _remember(items: list[tuple[tuple[Any, ...], list[Candidate]]]) -> None:
    with _CACHE_LOCK:
        for key, cands in items:
            _CACHE[key] = cands
            _CACHE.move_to_end(key)
        while len(_CACHE) > CACHE_SIZE:
            _CACHE.popitem(last=False)


def insert(context: str, sentence: str, position: str) -> tuple[str, int]:
    """The context with ``sentence`` added at ``position`` and the sentence's character offset in it."""
    if position == "start":
        return f"{sentence} {context}", 0
    sep = "" if not context or context[-1].isspace() else " "
    return f"{context}{sep}{sentence}", len(context) + len(sep)


def check_no_gold(record: QAExample, distractor: str, attack: str) -> None:
    """ValueError when ``distractor`` contains a gold answer of ``record`` (asserted for every example)."""
    if overlaps_gold(distractor, record.answers):
        raise ValueError(f"{attack}: distractor for {record.id} contains a gold answer {record.answers!r}: "
                         f"{distractor!r} (a bug: candidates containing gold answers must be dropped)")


def _example(attack: Any, record: QAExample, c: Candidate, n: int, index_in: int, **extra: Any) -> Perturbed:
    check_no_gold(record, c.sentence, attack.name)
    text, offset = insert(record.context, c.sentence, attack.params.position)
    return attack.perturbed(record, text, distractor=c.sentence, distractor_start=offset,
                            perturbed_question=c.question, fake_answer=c.fake_answer, answer_rule=c.answer_rule,
                            question_variant=c.variant, alterations=[dict(a) for a in c.alterations],
                            candidate=index_in,
                            n_candidates=n, **extra)


@register
class AddOneSent(StaticAttack):
    """AddOneSent (Jia & Liang 2017, Sec. 3.2): one AddSent candidate sentence, chosen at random, appended to
    the paragraph; "a model-independent adversary" (no query). Candidates as in Sec. 3.1 steps 1-3 (module
    docstring); the choice uses the record's ``rng``. Records whose question has no wh-phrase get no example."""

    name = "AddOneSent"
    task = "reading"
    family = "addsent"
    paper = PAPER
    description = "Append one random AddSent distractor sentence (no model queries)."
    Params = CandidateParams
    record_type = QAExample
    requires = REQUIRES
    expect = "same-answer"
    field = "context"

    def prefetch(self, records: Sequence[Record], res: Any) -> None:
        """The candidates of the engine's batch of records, computed at once (:func:`prefetch_candidates`)."""
        prefetch_candidates(records, res, self.params)

    def generate(self, record: QAExample, rng: np.random.Generator, res: Any, prompt: Any = None,
                 state: Any = None) -> list[Perturbed]:
        cands = candidates(record, res, self.params)
        if not cands:
            return []
        i = int(rng.integers(len(cands)))
        return [_example(self, record, cands[i], len(cands), i)]


@register
class AddSent(SearchAttack):
    """AddSent (Jia & Liang 2017, Sec. 3.1): the candidate distractor sentences of steps 1-3 are all sent to
    the model (one batched query, ``query_budget`` >= ``candidates`` to see them all) and the one with the
    lowest F1 (then EM) against the gold answers is kept: "the model failed if distracted by any" candidate.
    Ties keep the earlier candidate. The F1 of every candidate is in ``meta["candidate_f1"]``."""

    name = "AddSent"
    task = "reading"
    family = "addsent"
    paper = PAPER
    description = "Append the AddSent distractor sentence that lowers the model's F1 most."
    Params = AddSentParams
    record_type = QAExample
    requires = REQUIRES
    expect = "same-answer"
    field = "context"

    def prefetch(self, records: Sequence[Record], res: Any) -> None:
        """The candidates of a batch of records, computed at once (:func:`prefetch_candidates`)."""
        prefetch_candidates(records, res, self.params)

    def search(self, record: QAExample, oracle: Any, rng: np.random.Generator, res: Any, prompt: Any = None,
               state: Any = None) -> list[Perturbed]:
        cands = candidates(record, res, self.params)
        if not cands:
            return []
        texts = [insert(record.context, c.sentence, self.params.position)[0] for c in cands]
        outs = oracle.ask(texts)
        scored: list[tuple[float, float, int]] = []
        f1s: list[float | None] = []
        for i, out in enumerate(outs):
            if out.ok and out.answer is not None:
                f, e = f1_score(out.answer, record.answers), exact_match(out.answer, record.answers)
                scored.append((f, e, i))
                f1s.append(round(f, 4))
            else:
                f1s.append(None)
        best = min(scored)[2] if scored else 0
        return [_example(self, record, cands[best], len(cands), best, candidate_f1=f1s)]
