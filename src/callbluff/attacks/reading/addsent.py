"""AddSent and AddOneSent (Jia & Liang 2017, Sec. 3.1 and 3.2): append one grammatical-looking sentence that
resembles the question but does not answer it.

AddSent (Sec. 3.1) has four steps; this module assembles the first three from their own modules and does
the fourth:

1. perturb the question (:mod:`.alterations`: special table, WordNet antonyms, nearby numbers, nearby
   proper / entity nouns and adjectives of the same type in MiniLM vector space, a fallback per type). **A
   question that no rule alters gets no sentence** (the paper's distractor states a fact about a *different*
   question; an unaltered one would answer the original with the fake answer, which the authors' crowd step
   removes): a candidate needs at least one altered word that stays in the sentence (a word of the wh-phrase
   that the answer replaces does not count);
2. make a fake answer of the gold answer's type (:mod:`.fake_answers`, the authors' 26 rules; a reason phrase
   for why-questions);
3. turn the perturbed question and the fake answer into a declarative sentence (:mod:`.declarative`, its
   conversion rules ``CONVERSIONS``; the fake answer's kind says where it may stand, and a wording a person would
   have to rewrite is not made);
4. the paper has crowdworkers fix each sentence's grammar, a second crowd round drop ungrammatical sentences and
   ones that answer the question, then "the model failed if distracted by any of" the (up to a few) verified
   sentences; the adversary queries the model with every candidate and keeps the one with the lowest F1. No
   crowd here (``callbluff annotate export --kind addsent`` asks people, and its import drops what they reject):
   the raw candidates are the combinations of ``question_variants`` perturbed questions (each altered token's
   k-th nearby word), ``fake_answers`` fake answers and the conversion rules, in order of ``variant + answer``
   (the authors' first choice first), at most ``pool``; those failing the structural grammar and word-order
   check (:mod:`.grammar`) are dropped, the rest ranked by a language model's fluency (:mod:`.fluency`,
   SmolLM2-135M, where installed; ``fluency="structural"`` or no model: generation order), and the first
   ``candidates`` kept. A question whose candidates all fail the check gets no sentence. With
   ``acceptability`` set (issue 37; off by default), the language model is also a filter
   (:mod:`.acceptability`): a candidate passing the check but scoring under that SLOR is dropped too, and the
   next passing one of the pool takes its place, so the pool (``pool`` raw candidates) is what coverage draws on;
   a question none of whose candidates passes both gets no sentence (never a rejected one). The filter runs only
   with the model: with ``fluency="structural"`` the setting is refused, and where the model is missing or its
   process died the filter does not run (the structural check alone decides, as without it) and each example's
   ``meta["acceptability_filter"]`` says so (``scorer: structural``, ``score: None``); otherwise it records the
   scorer, the feature, the threshold and the kept sentence's score. The paper is silent on all of this (its
   crowd judged every sentence). They are a
   deterministic function of the record and the parameters (no random choice), so AddOneSent's sentence is
   always one of AddSent's candidates.

Speed (our design; the paper is silent): the candidates of a batch of records are computed together
(:func:`candidates_many`: one ``nlp.pipe`` for the questions, one for the answers' sentences, one batched
sentence split of the paragraphs, one matrix product for the vector neighbours), the same candidates as one
record at a time. The engine's ``prefetch`` hook runs it per chunk and the per-record calls read the result
(:func:`prefetch_candidates`); AddSent and AddOneSent with the same candidate parameters share it.

AddOneSent (Sec. 3.2) appends one kept candidate chosen at random (the record's ``rng``) without querying the
model. Both append the sentence at the end of the paragraph (``position="start"`` puts it first; the paper
appends). A candidate that contains a gold answer (SQuAD-normalised tokens) is dropped, and every returned
example is checked again before it leaves the attack (:func:`check_no_gold`). Each example's meta records
the altered words (``alterations``, never empty), the conversion rule, its grammar check result and
``fluency_scorer``: which scorer ranked it (``smollm2-135m-q4_1`` or ``structural``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np
from pydantic import Field, model_validator

from callbluff.attacks.base import AttackParams, SearchAttack, SearchParams, StaticAttack, register
from callbluff.attacks.reading.alterations import alterations, nearby_lookups, perturbed_words
from callbluff.attacks.reading.declarative import CONVERSIONS, convert, wh_phrase
from callbluff.attacks.reading.acceptability import FEATURE
from callbluff.attacks.reading.acceptability import features as acceptability_features
from callbluff.attacks.reading.acceptability import words as acceptability_words
from callbluff.attacks.reading.fluency import (STRUCTURAL, ModelDied, died_reason, fluency_scorer, scorer_label,
                                              warn_fallback)
from callbluff.attacks.reading.grammar import grammar_problems
from callbluff.attacks.reading.fake_answers import (AnswerToken, answer_kind, answer_tokens_many, fake_answers,
                                                    overlaps_gold)
from callbluff.attacks.reading.lexicon import Lexicon, load_lexicon
from callbluff.metrics.reading import exact_match, f1_score
from callbluff.records import Perturbed, QAExample, Record

if TYPE_CHECKING:  # annotations only: spaCy is imported where a text is parsed, not at start-up
    from spacy.tokens import Doc

PAPER = "Jia & Liang 2017, Adversarial Examples for Evaluating Reading Comprehension Systems"
REQUIRES = ("spacy-parse", "wordnet", "lemminflect", "torch", "squad-train")


class CandidateParams(AttackParams):
    """How AddSent's candidate sentences are made (shared by AddOneSent, so its sentence is one of them)."""

    added_later: ClassVar[frozenset[str]] = frozenset({"acceptability"})
    """Issue 37's filter: off, it leaves the example ids and random streams of earlier runs unchanged."""

    candidates: int = Field(4, ge=1, le=32, description="candidate sentences kept per question (at most)")
    question_variants: int = Field(2, ge=1, le=10, description="perturbed questions (k-th nearby word)")
    fake_answers: int = Field(2, ge=1, le=10, description="fake answers per perturbed question")
    pool: int = Field(8, ge=1, le=100, description="raw candidates made per question before the check and "
                      "the fluency ranking (variants x fake answers x conversion rules, at most)")
    fluency: Literal["auto", "lm", "structural"] = Field(
        "auto", description="rank candidates by the language model (lm: required; auto: where installed, else "
        "the structural check alone, with a warning) or by generation order (structural)")
    acceptability: float | None = Field(
        None, description="language-model filter (issue 37): drop passing candidates whose SLOR under the fluency "
        "model is below this (acceptability.py); None: no filter. Runs only where the model does (not with "
        "fluency='structural', nor where the model is missing)")
    position: Literal["end", "start"] = "end"
    lexicon_corpus: str | None = Field(None, description="SQuAD JSON for the lexicon (default: SQuAD v1.1 train)")
    lexicon_paragraphs: int = Field(2500, ge=10)


    @model_validator(mode="after")
    def _filter_needs_the_model(self) -> CandidateParams:
        if self.acceptability is not None and self.fluency == "structural":
            raise ValueError("acceptability (the language-model filter) needs the model: fluency 'auto' or 'lm', "
                             "not 'structural'")
        return self


class AddSentParams(CandidateParams, SearchParams):
    query_budget: int = Field(4, ge=1)


@dataclass(frozen=True)
class Candidate:
    """One distractor: the sentence, the perturbed question and fake answer it states, and how; its grammar
    problems ([] = passes), its fluency (mean token log-probability, None when not scored) and the scorer."""

    sentence: str
    question: str
    fake_answer: str
    answer_rule: str
    variant: int
    alterations: list[dict[str, Any]]
    conversion: str = "authors"
    problems: tuple[str, ...] = ()
    fluency: float | None = None
    scorer: str = STRUCTURAL
    degraded: str | None = None
    """Why the language model that should have ranked it could not (its process died), else None."""
    acceptability: float | None = None
    """Its SLOR under the language model when the filter ran (:mod:`.acceptability`), else None."""
    rejected: bool = False
    """Dropped by the language-model filter (passes the structural check, SLOR under ``acceptability``)."""


@dataclass(frozen=True)
class Pool:
    """All of a question's raw candidates and the ones kept (passing the check, most fluent first); ``reason``
    says why none is kept (``no wh-phrase``, ``no gold answer``, ``no alteration``, ``no candidate without
    a gold answer``, ``no candidate passes the grammar check``), None when some are."""

    kept: list[Candidate]
    raw: list[Candidate]
    reason: str | None


def candidates(record: QAExample, res: Any, params: CandidateParams) -> list[Candidate]:
    """AddSent's kept candidate distractors for ``record`` (module docstring); [] when the question has no
    wh-phrase, no gold answer, no alteration, or no candidate survives. Computed by :func:`candidates_many`, or
    taken from what :func:`prefetch_candidates` computed for the record's batch."""
    return list(candidate_pool(record, res, params).kept)


def candidate_pool(record: QAExample, res: Any, params: CandidateParams) -> Pool:
    """The record's :class:`Pool` (raw candidates, kept ones, why none): the cached one when the record's batch
    was prefetched."""
    key = _cache_key(record, params)
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
            return hit
    out = pools_many([record], res, params)[0]
    _remember([(key, out)])
    return out


def prefetch_candidates(records: Sequence[Record], res: Any, params: CandidateParams) -> None:
    """Compute the candidates of a batch of records at once (:func:`pools_many`) and keep them for the
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
        _remember(list(zip(list(todo)[b:b + BATCH], pools_many(part, res, params), strict=True)))


def candidates_many(records: Sequence[QAExample], res: Any, params: CandidateParams) -> list[list[Candidate]]:
    """:func:`candidates` of each record, computed together (:func:`pools_many`)."""
    return [list(p.kept) for p in pools_many(records, res, params)]


def pools_many(records: Sequence[QAExample], res: Any, params: CandidateParams) -> list[Pool]:
    """:func:`candidate_pool` of each record, computed together: the questions parsed in one ``nlp.pipe``, the
    answers' sentences found and tagged in one batch each (:func:`.answer_tokens_many`), the vector neighbours
    of every question word the alterations look up in one matrix product (:meth:`.Lexicon.nearby_many`), the
    raw sentences parsed for the grammar check in one ``nlp.pipe``. The same candidates as one record at a time
    (the parses, neighbours and fluency scores do not depend on the batch)."""
    out = [Pool([], [], "no gold answer" if not r.answers else "no wh-phrase") for r in records]
    todo = [i for i, r in enumerate(records) if r.answers and r.question.strip()]
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
    raws: dict[int, tuple[list[_Raw], str | None]] = {}
    for i, qdoc, answer_toks in zip(todo, qdocs, toks):
        raws[i] = _assemble(records[i], qdoc, answer_toks, lex, params)
    sentences = list(dict.fromkeys(r.candidate.sentence for rs, _ in raws.values() for r in rs))
    docs = dict(zip(sentences, res.nlp.pipe(sentences, batch_size=64), strict=True)) if sentences else {}
    scorer = None if params.fluency == "structural" else fluency_scorer(required=params.fluency == "lm")
    died = died_reason() if params.fluency != "structural" and scorer is None else None
    label = scorer_label(scorer)
    for i, (rs, reason) in raws.items():
        out[i] = _rank(rs, reason, docs, res, scorer, label, params, died)
    return out


@dataclass(frozen=True)
class _Raw:
    """A candidate before step 4 (no problems, fluency or scorer yet) and its answer phrase, which the grammar
    check reads."""

    candidate: Candidate
    phrase: str
    subject: bool


def _assemble(record: QAExample, qdoc: Doc, toks: list[AnswerToken], lex: Lexicon,
              params: CandidateParams) -> tuple[list[_Raw], str | None]:
    """Steps 1-3 for one record whose question (``qdoc``) has a wh-phrase, given its answer's tokens: the raw
    candidates, and why there are none."""
    alts = alterations(qdoc, lex, k=params.question_variants)
    if not alts:
        return [], "no alteration"
    fakes = fake_answers(record.answers[0], toks, record.question, record.answers, lex, k=params.fake_answers)
    combos = sorted(((v, f, c) for v in range(params.question_variants) for f in range(len(fakes))
                     for c in range(len(CONVERSIONS))), key=lambda vfc: (vfc[0] + vfc[1], vfc[0], vfc[2]))
    out: list[_Raw] = []
    seen: set[str] = set()
    reasons: set[str] = set()
    for v, f, c in combos:
        words = perturbed_words(qdoc, alts, v)
        rule = CONVERSIONS[c]
        ph = wh_phrase(qdoc, words)
        assert ph is not None  # the record was kept for having one
        kept = [a for a in alts if _survives(a.i, ph, rule)]
        if not kept:
            reasons.add("no alteration")  # every altered word is one the answer replaces
            continue
        conv = convert(qdoc, fakes[f][0], words, rule, answer_kind(fakes[f][1]))
        if conv is None or not conv.sentence or conv.sentence in seen:
            continue
        if overlaps_gold(conv.sentence, record.answers):
            reasons.add("no candidate without a gold answer")
            continue
        seen.add(conv.sentence)
        question = "".join(w + t.whitespace_ for w, t in zip(words, qdoc))
        changes = [{"i": a.i, "from": a.original, "to": a.words[min(v, len(a.words) - 1)], "rule": a.rule}
                   for a in kept]
        out.append(_Raw(Candidate(conv.sentence, question, fakes[f][0], fakes[f][1], v, changes, rule),
                        conv.phrase, conv.subject))
        if len(out) >= params.pool:
            break
    if out:
        return out, None
    return [], ("no alteration" if "no alteration" in reasons else "no candidate without a gold answer"
                if reasons else "no conversion")


def _survives(i: int, ph: Any, rule: str) -> bool:
    """Whether question token ``i`` stays in the sentence converted by ``rule``: outside the wh-phrase, or the
    noun the authors' rule keeps ("the city of A")."""
    if i < ph.start or i >= ph.end:
        return True
    return rule == "authors" and ph.noun is not None and ph.noun[0] <= i < ph.noun[1]


def _rank(raws: list[_Raw], reason: str | None, docs: dict[str, Doc], res: Any, scorer: Any, label: str,
          params: CandidateParams, died: str | None = None) -> Pool:
    """Step 4 without a crowd: the structural check on every raw candidate, the fluency of those passing, the
    ``candidates`` most fluent kept (generation order without a scorer; ties keep generation order)."""
    problems = [tuple(grammar_problems(r.candidate.sentence, res, answer=r.phrase, answer_is_subject=r.subject,
                                       doc=docs.get(r.candidate.sentence))) for r in raws]
    n_pass = sum(not p for p in problems)
    filtering = scorer is not None and params.acceptability is not None and n_pass > 0
    rank = scorer is not None and (n_pass > params.candidates or filtering)  # the model decides what is left out
    fluent: dict[str, float] = {}
    slor: dict[str, float] = {}
    degraded = (f"AddSent ranked by the structural check: {died}"
                if died and (n_pass > params.candidates or params.acceptability is not None) else None)
    if rank:
        passing_sentences = [r.candidate.sentence for r, pr in zip(raws, problems) if not pr]
        try:
            if filtering:  # one evaluation per sentence gives both the filter's SLOR and the ranking's mean
                feats = [acceptability_features(acceptability_words(s, pc))
                         for s, pc in zip(passing_sentences, scorer.pieces(passing_sentences), strict=True)]
                fluent = {s: f["mean"] for s, f in zip(passing_sentences, feats)}
                slor = {s: f[FEATURE] for s, f in zip(passing_sentences, feats)}
            else:
                fluent = dict(zip(passing_sentences, scorer.scores(passing_sentences), strict=True))
        except ModelDied as e:  # the documented fallback (.fluency): the structural ranking, said in the meta
            if params.fluency == "lm":
                raise RuntimeError(f"AddSent fluency='lm': {e}") from e
            warn_fallback(str(e))
            rank, filtering, degraded = False, False, f"AddSent ranked by the structural check: {e}"
            fluent, slor = {}, {}
    checked: list[Candidate] = []
    for r, pr in zip(raws, problems):
        flu = fluent.get(r.candidate.sentence) if rank and not pr else None
        acc = slor.get(r.candidate.sentence) if filtering and not pr else None
        checked.append(replace(r.candidate, problems=pr, fluency=None if flu is None else round(flu, 6),
                               scorer=label if rank else STRUCTURAL, degraded=degraded,
                               acceptability=None if acc is None else round(acc, 6),
                               rejected=acc is not None and params.acceptability is not None
                               and acc < params.acceptability))
    passing = [(k, c) for k, c in enumerate(checked) if not c.problems and not c.rejected]
    if rank:
        passing.sort(key=lambda kc: (-(kc[1].fluency if kc[1].fluency is not None else float("-inf")), kc[0]))
    kept = [c for _, c in passing[:params.candidates]]
    if not kept and reason is None:
        reason = ("no candidate passes the language-model filter" if n_pass else
                  "no candidate passes the grammar check")
    return Pool(kept, checked, reason)


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
_CACHE: OrderedDict[tuple[Any, ...], Pool] = OrderedDict()
_CACHE_LOCK = threading.Lock()


def _cache_key(record: QAExample, params: CandidateParams) -> tuple[Any, ...]:
    """What the candidates depend on: the candidate parameters (not AddSent's search ones, so AddSent and
    AddOneSent share) and the record's question, context and answers."""
    return (tuple(getattr(params, f) for f in CandidateParams.model_fields), record.id, record.question,
            record.context, tuple(record.answers), tuple(record.answer_starts))


def _remember(items: list[tuple[tuple[Any, ...], Pool]]) -> None:
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
    if not c.alterations:
        raise ValueError(f"{attack.name}: distractor for {record.id} comes from an unaltered question: "
                         f"{c.sentence!r} (a bug: a candidate needs an altered word)")
    return attack.perturbed(record, text, distractor=c.sentence, distractor_start=offset,
                            perturbed_question=c.question, fake_answer=c.fake_answer, answer_rule=c.answer_rule,
                            question_variant=c.variant, alterations=[dict(a) for a in c.alterations],
                            conversion=c.conversion, grammar_problems=list(c.problems), fluency=c.fluency,
                            fluency_scorer=c.scorer, candidate=index_in, n_candidates=n,
                            **({"degraded": c.degraded} if c.degraded else {}),
                            **({"acceptability_filter": m} if (m := _filter_meta(attack.params, c)) else {}),
                            **extra)


def _filter_meta(params: CandidateParams, c: Candidate) -> dict[str, Any] | None:
    """What the example's meta records of the language-model filter: None when it was not asked for; else the
    scorer that decided (the model's name, or ``structural`` when the model was missing or died and the filter did
    not run), the feature, the threshold and the candidate's score (None when the filter did not run)."""
    if params.acceptability is None:
        return None
    return {"scorer": c.scorer if c.acceptability is not None else STRUCTURAL, "feature": FEATURE,
            "threshold": params.acceptability, "score": c.acceptability}


@register
class AddOneSent(StaticAttack):
    """AddOneSent (Jia & Liang 2017, Sec. 3.2): one AddSent candidate sentence, chosen at random among the kept
    ones (the paper: among the crowd-verified ones), appended to the paragraph; "a model-independent adversary"
    (no query). Candidates as in Sec. 3.1 (module docstring); the choice uses the record's ``rng``. Records whose
    question has no wh-phrase or no alteration, or whose candidates all fail the check, get no example."""

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

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        if self.params.fluency == "lm":  # required, not optional: the engine checks it before the run
            self.requires = REQUIRES + ("smollm2-lm",)

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

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        if self.params.fluency == "lm":  # required, not optional: the engine checks it before the run
            self.requires = REQUIRES + ("smollm2-lm",)

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
