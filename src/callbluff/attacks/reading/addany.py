"""AddAny and AddCommon (Jia & Liang 2017, Sec. 3.3; the search as reproduced by Lopez Crespo 2020, "Adversarial
Search on Albert model", Sec. 3): append ``d`` words chosen by querying the model, regardless of grammar.

The search (talk slides 34-40; Lopez Crespo Sec. 3, "megaepoch" pseudo-code):

* ``d = n_words`` (10) words, ended by a period (``period``, as the authors' implementation appends
  ``"w1 ... wd."``), are initialised at random from common English words (the ``common_words``
  most frequent words of ``wordfreq``, 1,000 in the paper) and placed at ``position`` (``end``: appended to
  the paragraph, as the paper; ``start``; ``random``: at a sentence boundary drawn once per record);
* an *epoch* visits every index of ``d`` in random order; at each index the candidates are
  ``candidates`` random common words (20, as Lopez Crespo's pseudo-code; the authors' implementation samples 10,
  its ``--sample-num`` default) plus, for AddAny only, the question's words; **all candidates of
  one index are scored in one batched target call** (:meth:`~callbluff.attacks.oracle.Oracle.ask`); the
  word that lowers the objective most replaces the current one (none is kept if none lowers it);
* ``epochs`` (3) epochs make a *mega-epoch*; when the model is still not fooled, a new mega-epoch restarts
  from fresh random words (``restarts`` extra mega-epochs, Lopez Crespo's restarts against local minima);
  with ``restart_when_stuck`` (default, *our choice*: Lopez Crespo restarts because the search "may be stuck at
  a local minimum") a mega-epoch ends early when a whole epoch did not lower the objective: the search sits in
  such a minimum, and the fresh mega-epoch gets the queries its remaining epochs would have spent there;
  the best words over all mega-epochs are returned;
* the search stops early as soon as any queried candidate's prediction has F1 0 (the model is fooled: that
  candidate is the result, even when another candidate of the same batch lowers the objective more), and when
  the ``query_budget`` is spent;
* the words returned are the most damaging ones queried: the lowest prediction F1, ties broken by the
  objective (*our choice*: the search moves by the objective, as the paper, but the adversary reports its
  worst case, as AddSent keeps its lowest-F1 candidate).

Objective (``objective``): ``"expected_f1"`` (default, the authors' implementation: the expected F1 over the
model's ranked spans, weights a softmax of their scores; a target without ranked candidates falls back to the
prediction's F1), ``"f1"`` (the F1 of the prediction against the gold answers, Lopez Crespo) or
``"margin"`` (*ours*, not the papers'): the best score of a ranked span that overlaps a gold answer (F1 > 0)
minus the best score of one that does not (F1 = 0), or minus the lowest listed score when no wrong span is
listed; the model is fooled exactly when it is negative. Why it exists: against a confident transformer reader
the expected F1 is flat. Its top spans are all variants of the gold span (a reader lists spans from its 20 best
start and end tokens), so the added words enter the list only once they nearly win, and until then the greedy
step follows noise among the gold variants (on a SQuAD dev question the objective moved 0.69 -> 0.68 over 834
queries while "when did newcastle first indoor market open in september." fools the reader outright). The
margin moves as soon as a wrong span gains on the gold one, e.g. when question words are placed; it needs a
wrong span among the ranked ones, so a reader that lists more of them (e.g. ``top_k = 50``) guides it better
(docs/findings/reading.md measures both objectives and settings). Failed
predictions never win. A candidate word that would make the distractor contain a gold answer
(SQuAD-normalised tokens) is skipped, so no distractor ever states the answer.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field

from callbluff.attacks.base import SearchAttack, SearchParams, register
from callbluff.attacks.reading.addsent import PAPER, check_no_gold
from callbluff.attacks.reading.fake_answers import overlaps_gold
from callbluff.metrics.reading import f1_score
from callbluff.records import Perturbed, QAExample
from callbluff.targets.base import Output

_WORD = re.compile(r"[a-z]+")


class AddAnyParams(SearchParams):
    query_budget: int = Field(1000, ge=1)
    n_words: int = Field(10, ge=1, le=100, description="d: words added to the paragraph")
    candidates: int = Field(20, ge=1, le=1000, description="random common words tried per index (20: Lopez "
                            "Crespo's pseudo-code; 10: the authors' implementation's default)")
    epochs: int = Field(3, ge=1, le=50)
    restarts: int = Field(2, ge=0, le=50, description="extra mega-epochs from fresh words when not fooled")
    restart_when_stuck: bool = Field(True, description="start the next mega-epoch as soon as a whole epoch "
                                     "changes no word (a local minimum), instead of finishing the epochs")
    common_words: int = Field(1000, ge=10, le=100_000, description="size of the common-word list (wordfreq)")
    position: Literal["end", "start", "random"] = "end"
    objective: Literal["expected_f1", "f1", "margin"] = Field(
        "expected_f1", description="what the greedy step lowers: expected_f1 (the authors': expected F1 over the "
        "ranked spans), f1 (the prediction's F1), margin (ours: the gold span's score lead over the best wrong "
        "span; it moves where the expected F1 over a confident reader's spans is flat, see the module docstring)")
    early_stop: bool = Field(True, description="stop once the prediction's F1 is 0")
    period: bool = Field(True, description="end the added words with a period, as the authors' implementation "
                         "appends them (\"w1 ... wd.\")")


@lru_cache(maxsize=8)
def common_words(n: int) -> tuple[str, ...]:
    """The ``n`` most frequent English words of ``wordfreq`` that are purely alphabetic (in frequency order)."""
    from wordfreq import top_n_list

    out: list[str] = []
    for w in top_n_list("en", n * 2):
        if _WORD.fullmatch(w) and w not in out:
            out.append(w)
        if len(out) >= n:
            break
    return tuple(out)


def question_words(question: str) -> list[str]:
    """The question's words, lower-cased, letters and digits only, in order, without repeats."""
    return list(dict.fromkeys(re.findall(r"[a-z0-9]+", question.lower())))


def objective(out: Output, golds: tuple[str, ...], kind: str) -> tuple[float, float]:
    """``(objective, f1)`` of one prediction; ``(inf, inf)`` for a failed prediction."""
    if not out.ok or out.answer is None:
        return float("inf"), float("inf")
    f1 = f1_score(out.answer, golds)
    if kind == "f1" or not out.candidates:
        return f1, f1
    if kind == "margin":
        if any(c.score is None for c in out.candidates):
            return f1, f1
        right, wrong = [], []
        for c in out.candidates:
            (right if f1_score(c.text, golds) > 0 else wrong).append(float(c.score))
        if not right:
            return -float("inf") if f1 == 0 else f1, f1
        return max(right) - (max(wrong) if wrong else min(right)), f1
    scores = np.array([c.score if c.score is not None else 0.0 for c in out.candidates[:10]], dtype=float)
    p = np.exp(scores - scores.max())
    p /= p.sum()
    return float(sum(pi * f1_score(c.text, golds) for pi, c in zip(p, out.candidates[:10]))), f1


class _WordSearch(SearchAttack):
    """The shared search of AddAny and AddCommon (module docstring)."""

    task = "reading"
    family = "addany"
    paper = PAPER
    Params = AddAnyParams
    record_type = QAExample
    requires = ("wordfreq",)
    expect = "same-answer"
    field = "context"
    use_question_words: ClassVar[bool] = True

    def _place(self, record: QAExample, rng: np.random.Generator, res: Any) -> int:
        """Character offset where the words go (chosen once per record)."""
        pos = self.params.position
        if pos == "end":
            return len(record.context)
        if pos == "start":
            return 0
        bounds = sorted({0, len(record.context)} | {e for _, e in res.sentence_spans(record.context)})
        return int(bounds[int(rng.integers(len(bounds)))])

    def _added(self, words: list[str]) -> str:
        """The distractor: the words, ended by a period when ``period``."""
        return " ".join(words) + ("." if self.params.period else "")

    def _text(self, context: str, at: int, words: list[str]) -> tuple[str, int]:
        added = self._added(words)
        left, right = context[:at], context[at:]
        pre = "" if not left or left[-1].isspace() else " "
        post = "" if not right or right[0].isspace() else " "
        return f"{left}{pre}{added}{post}{right}", len(left) + len(pre)

    def search(self, record: QAExample, oracle: Any, rng: np.random.Generator, res: Any, prompt: Any = None,
               state: Any = None) -> list[Perturbed]:
        p = self.params
        golds = tuple(record.answers)
        if not golds:
            return []
        common = common_words(p.common_words)
        pool = [w for w in common if not overlaps_gold(w, golds)]
        qwords = [w for w in question_words(record.question) if not overlaps_gold(w, golds)] \
            if self.use_question_words else []
        at = self._place(record, rng, res)
        best: tuple[float, float, list[str]] | None = None  # (F1, objective, words): what is returned
        history: list[list[float]] = []  # [queries so far, best F1 so far]
        megas = 0

        def consider(f1: float, obj: float, trial: list[str]) -> bool:
            """Keep ``trial`` when it is the most damaging so far; True when the model is fooled (F1 = 0)."""
            nonlocal best
            if best is None or (f1, obj) < best[:2]:
                best = (f1, obj, list(trial))
            return p.early_stop and best[0] == 0

        for _mega in range(p.restarts + 1):
            megas += 1
            words = [pool[int(i)] for i in rng.choice(len(pool), size=p.n_words, replace=len(pool) < p.n_words)]
            if overlaps_gold(" ".join(words), golds):
                continue
            outs = oracle.ask([self._text(record.context, at, words)[0]])
            if not outs:
                break
            cur_obj, cur_f1 = objective(outs[0], golds, p.objective)
            done = consider(cur_f1, cur_obj, words)
            history.append([oracle.used, best[0]])
            for _epoch in range(p.epochs if not done else 0):
                epoch_start = cur_obj
                for i in rng.permutation(p.n_words):
                    i = int(i)
                    drawn = [pool[int(j)] for j in rng.choice(len(pool), size=min(p.candidates, len(pool)),
                                                              replace=False)]
                    cands = [w for w in dict.fromkeys(drawn + qwords) if w != words[i]]
                    texts, kept = [], []
                    for w in cands:
                        trial = words[:i] + [w] + words[i + 1:]
                        if overlaps_gold(" ".join(trial), golds):
                            continue
                        texts.append(self._text(record.context, at, trial)[0])
                        kept.append(w)
                    if not texts:
                        continue
                    outs = oracle.ask(texts)
                    if not outs:
                        done = True
                        break
                    scored = [(*objective(o, golds, p.objective), k) for k, o in enumerate(outs)]
                    # the most damaging candidate of this index (lowest F1, then objective) may fool the model
                    # even when another candidate lowers the objective more: the search is over then
                    f_low, o_low, k_low = min((f, o, k) for o, f, k in scored)
                    done = consider(f_low, o_low, words[:i] + [kept[k_low]] + words[i + 1:])
                    if not done:  # the greedy step of the paper: the word that lowers the objective most
                        o_best, f_best, k_best = min(scored)
                        if (o_best, f_best) < (cur_obj, cur_f1):
                            words[i] = kept[k_best]
                            cur_obj, cur_f1 = o_best, f_best
                    history.append([oracle.used, best[0]])
                    if done or oracle.exhausted:
                        done = True
                        break
                if done:
                    break
                if p.restart_when_stuck and cur_obj >= epoch_start and _mega < p.restarts:
                    break  # a whole epoch did not lower the objective: the next mega-epoch starts afresh
            if done or oracle.exhausted:
                break
        if best is None or not np.isfinite(best[0]):
            return []
        text, start = self._text(record.context, at, best[2])
        distractor = self._added(best[2])
        check_no_gold(record, distractor, self.name)
        return [self.perturbed(record, text, distractor=distractor, distractor_start=start,
                               objective=round(float(best[1]), 6), f1=round(float(best[0]), 6),
                               mega_epochs=megas, history=history)]


@register
class AddAny(_WordSearch):
    """AddAny (Jia & Liang 2017, Sec. 3.3): ``d`` words from common words *and the question's words*, chosen
    greedily one index at a time by querying the model (module docstring: epochs, restarts, batching)."""

    name = "AddAny"
    description = "Append 10 words (common + question words) chosen by querying the model."
    use_question_words = True


@register
class AddCommon(_WordSearch):
    """AddCommon (Jia & Liang 2017, Sec. 3.3): AddAny with candidates from the common words only."""

    name = "AddCommon"
    description = "Append 10 common words chosen by querying the model."
    use_question_words = False
