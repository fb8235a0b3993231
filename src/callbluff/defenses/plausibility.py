"""Our filter (not in Ding et al. 2020): is this answer made of real words, in a plausible order,
about what the prompt's answers are about?

Ding et al.'s filters each look at one thing (Sec. 5.4): the non-word rate misses adversarials made of real
words (word n-grams, content burst, shuffle, language-model text), and the unigram perplexity filter rejects
any unseen word, so it loses half of the real answers. :class:`PlausibilityFilter` combines sixteen features
of an answer's lower-cased word tokens (:func:`callbluff.resources.ngrams.word_tokens`), each measured
against the prompt's training answers (when learning: out-of-fold, see below):

====================  ========================================================================================
``nonword``           non-word rate (Hunspell + the prompt's shared words, :mod:`callbluff.defenses.lexicon`)
``bigram_prompt``     share of adjacent word pairs never seen in the prompt's answers (word order)
``bigram_known``      share of pairs of two words the prompt's answers use, never seen side by side there
                      (the seams of answers stitched from the prompt's own n-grams)
``bigram_english``    share of pairs seen neither there nor in the generic corpus (word order, any English)
``trigram_prompt``    share of word triples never seen in the prompt's answers
``unseen_prompt``     share of words the prompt's answers never use
``similarity``        1 - the highest TF-IDF cosine to one of the prompt's answers (answer space)
``log_length``        log(1 + number of words)
``lm_logprob``        mean log-probability per token (and end of answer) under the prompt's word trigram
                      model (:class:`WordTrigramLM`, interpolated Kneser-Ney; words shared by fewer than
                      ``min_answers`` answers are one ``<unk>`` word)
``lm_gain``           mean *context gain*: log P(word | two words before) - log P(word), i.e. what the
                      word's place adds to its probability (word order apart from word choice)
``lm_gain_low``       mean of the 3 lowest context gains (the worst seams of stitched n-grams)
``lm_negative``       share of tokens with a negative context gain (shuffled answers: most)
``lm_edges``          mean context gain of the first word and of the end of the answer (an n-gram cut
                      out of an answer starts and ends where answers do not)
``pos_logprob``       mean log-probability per tag of the answer's part-of-speech sequence (spaCy's tagger
                      only, batched) under a Kneser-Ney trigram model of the prompt's answers' tags
``pos_low``           mean of its 3 lowest tag log-probabilities (a seam that breaks the syntax)
``glued``             share of non-words that are two or more known words run together (a student's missing
                      spaces, "transcriptiontranslation"; random characters rarely are)
``topic``             1 - the mean cosine of the answer's MiniLM sentence vector
                      (:func:`callbluff.resources.minilm.encode_texts`, :data:`TOPIC_MODE`) to its :data:`TOPIC_K` nearest answers
                      of the prompt (topic relevance: a fluent answer to another question is far from all of
                      them)
``topic_margin``      that mean for the nearest *other* prompt of the dataset (a sample of :data:`OTHER_REFS`
                      answers each, when the filter is fitted with other prompts' answers) minus the prompt's
                      own (0 without other prompts)
====================  ========================================================================================

The language-model features skip positions whose word or context holds an unknown word, so a misspelling
does not make its correctly spelled neighbours look misplaced (the non-word and unseen features see it).

A classifier (``classifier``: scikit-learn's histogram gradient boosting, the default, or a logistic
regression; balanced classes, standardised features; one thread) learns real answers against the generator
battery's answers (:mod:`callbluff.countermeasures.battery`, generated from the fit part). The real answers are, by
default (``cross_fit``), all the prompt's training answers, each measured out-of-fold (5 folds: against
tables and language models of the other answers; answers with the same words are held out together, as are
they in the classifier's folds), so the classifier and the threshold see five times more real answers than
the development split holds; the adversarials are measured against the fit part their
generators saw; the tables kept for applying the filter are those of all the answers. (``cross_fit=False``:
the development split's real answers against the fit part, as before.) An answer's value is the
classifier's decision value (log-odds; probabilities saturate at 1 and would tie). The threshold is set so
that at most ``max_real_flagged`` (2 %) of those real answers are flagged, judged by out-of-fold decision
values (5-fold cross-validation; the classifier used afterwards is refitted on all of them) (the issue's goal:
ARR >= 95 % with <= 2 % of real answers lost). The features ignore case and punctuation on purpose: the
generators write lower-case text without punctuation (as the paper's Table 2 shows), which a filter could
key on, but a student can write that way too. The tagger, too, sees the lower-cased tokens without
punctuation, whatever the answer.

What counts as real (the negative class): the prompt's answers and, when the filter is fitted with a ``noise``
function (:func:`callbluff.countermeasures.battery.noisy_real`: grammar errors by Kumar et al.'s ModGrammar rules and real
misspellings, each from its own seed), noised copies of them, each measured out-of-fold with its source answer
(same fold, same group), so spelling and grammar noise is learnt as real. The threshold is set on the *clean*
real answers only. What counts as adversarial: the battery's answers and, when the filter is fitted on several
prompts at once, :data:`OFF_TOPIC` real answers of each other prompt (the wrong-question bluff,
:class:`callbluff.attacks.content.offtopic.OffTopic`), disjoint from that prompt's :data:`OTHER_REFS` reference
answers.

The threshold must hold on answers the filter never saw, so it is set with a margin (``bound``, a z value,
default 1.645): at most ``max_real_flagged - bound * sqrt(m (1 - m) / n)`` of the n out-of-fold real answers
are flagged (m = ``max_real_flagged``), i.e. the one-sided 95 % upper bound of the share flagged is at most m.
The fit judges the rule out of sample on the classifier's own folds (``oof_folds``: per fold, the threshold
the rule picks from the other folds' out-of-fold values, and the share of the fold's real answers and noised
copies above it); :func:`nested_real_loss` measures, at five times the cost, what the whole fit gives on answers it
never saw (grouped K-fold over the
training answers, the groups being answers with the same words; the filter is fitted per prompt and used on new
answers to a known prompt, so the folds are answer folds within a prompt, not prompts).

A filter saved by a version with other features cannot be applied: it says so and asks to fit it again.

Where a prompt has too few answers for a development split, only the non-word rate is used, with the
configured ``threshold``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any, Literal, Self

import numpy as np

from callbluff.defenses.filters import AnswerFilter, Battery, register_filter
from callbluff.defenses.lexicon import hunspell_words, is_known, nonword_rate, shared_words
from callbluff.resources.corpus import CorpusSpec, generic_corpus
from callbluff.resources.ngram_lm import BOS, DISCOUNT, EOS, UNK
from callbluff.resources.ngrams import EOS_WORD, cached_table, word_tokens
from callbluff.progress import PROMPTS, Progress
from callbluff.records import Prompt, ScoredResponse
from callbluff.resources.spacy_pipeline import load_english
from callbluff.seeding import derive_seed

Noise = Callable[[Sequence[ScoredResponse], Prompt, int], Sequence[tuple[int, str]]]
"""``noise(records, prompt, seed)`` -> noised copies of real answers as (index in ``records``, text) pairs
(:func:`callbluff.countermeasures.battery.noisy_real`)."""

FEATURES: tuple[str, ...] = ("nonword", "bigram_prompt", "bigram_known", "bigram_english", "trigram_prompt",
                             "unseen_prompt", "similarity", "log_length", "lm_logprob", "lm_gain", "lm_gain_low",
                             "lm_negative", "lm_edges", "pos_logprob", "pos_low", "glued", "topic", "topic_margin")
CROSS_FOLDS = 5
"""Folds of the out-of-fold real answers (``cross_fit``)."""
LOW_GAINS = 3
"""How many of an answer's lowest context gains ``lm_gain_low`` averages (the seams of stitched n-grams)."""
TOPIC_K = 5
"""How many nearest answers the ``topic`` features average over (one near copy does not make an answer on topic)."""
TOPIC_MODE = "static"
"""MiniLM vectors of the topic features: its input embeddings, mean-pooled (``"static"``), not its last layer:
the contextual pass costs about 50 ms per answer on a busy 2-core machine, and the findings filter some 100,000
answers; a topic is carried by the words, which the static vectors hold."""
OTHER_REFS = 300
"""Reference answers kept per other prompt for ``topic_margin`` (a seeded sample)."""
OFF_TOPIC = 60
"""Off-topic negatives per other prompt in fitting (a seeded sample disjoint from the reference answers)."""


def _pairs(tokens: Sequence[str], n: int) -> list[str]:
    return [" ".join(tokens[i:i + n]) for i in range(len(tokens) - n + 1)]


class WordTrigramLM:
    """An interpolated Kneser-Ney word trigram model (Chen and Goodman 1998, Sec. 2.7; one discount 0.75) of
    lower-cased word tokens, each answer padded with two ``<s>`` and ended by ``</s>``; its unigram level is
    interpolated with a uniform distribution over the vocabulary plus one unknown word, so no token has
    probability 0. Plain dictionaries: a prompt's answers (some 60,000 tokens) count in well under a second.

    Not :class:`callbluff.resources.ngram_lm.KneserNeyTrigramLM` (LMGenerate's generic model, same smoothing,
    same markers and discount): that one *samples* from a large corpus split into sentences, with its unigram
    level undiscounted; this one *scores* already tokenised sequences (words with ``<unk>``, or POS tags) and
    needs every token's probability, so its unigram level keeps mass for unseen tokens.

    :meth:`token_scores` gives, per token, the log-probability in context and the *context gain*: that
    log-probability minus the token's unigram log-probability, i.e. what the two words before it add. The
    gain separates word order from word choice: a rare but well placed word has a low probability and a
    positive gain; a common word in a place the answers never put it has a negative gain."""

    def __init__(self, answers: Sequence[Sequence[str]], discount: float = DISCOUNT) -> None:
        from collections import Counter, defaultdict

        d = discount
        c3: Counter[tuple[str, str, str]] = Counter()
        for tk in answers:
            seq = [BOS, BOS, *tk, EOS]
            c3.update(zip(seq, seq[1:], seq[2:]))
        ctx3: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])  # count, types
        n2: Counter[tuple[str, str]] = Counter()  # continuation count N1+(. v w)
        for (u, v, w), c in c3.items():
            s = ctx3[(u, v)]
            s[0] += c
            s[1] += 1
            n2[(v, w)] += 1
        ctx2: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
        n1: Counter[str] = Counter()
        for (v, w), c in n2.items():
            s = ctx2[v]
            s[0] += c
            s[1] += 1
            n1[w] += 1
        self.d = d
        self.c3, self.ctx3, self.n2, self.ctx2 = dict(c3), dict(ctx3), dict(n2), dict(ctx2)
        total1 = sum(n1.values())
        v = len(n1) + 1  # + the unknown word
        # unigram: continuation counts, discounted, interpolated with uniform over the vocabulary
        self.p1 = {w: (max(c - d, 0.0) + d * len(n1) / v) / total1 for w, c in n1.items()} if total1 else {}
        self.p_unk = (d * len(n1) / v) / total1 if total1 else 1.0

    def _p1(self, w: str) -> float:
        return self.p1.get(w, self.p_unk)

    def _p2(self, v: str, w: str) -> float:
        p1 = self._p1(w)
        s = self.ctx2.get(v)
        if s is None:
            return p1
        return (max(self.n2.get((v, w), 0) - self.d, 0.0) + self.d * s[1] * p1) / s[0]

    def prob(self, u: str, v: str, w: str) -> float:
        p2 = self._p2(v, w)
        s = self.ctx3.get((u, v))
        if s is None:
            return p2
        return (max(self.c3.get((u, v, w), 0) - self.d, 0.0) + self.d * s[1] * p2) / s[0]

    def token_scores(self, tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(log-probability, context gain) of each token of ``tokens`` and of the closing ``</s>``."""
        seq = [BOS, BOS, *tokens, EOS]
        lp = np.array([math.log(self.prob(seq[i - 2], seq[i - 1], seq[i])) for i in range(2, len(seq))])
        uni = np.array([math.log(self._p1(w)) for w in seq[2:]])
        return lp, lp - uni


@lru_cache(maxsize=4)
def generic_bigrams(corpus: str | None) -> tuple[frozenset[str], str]:
    """Word bigrams of the generic corpus (:mod:`callbluff.resources.corpus`, default SQuAD Wikipedia) and
    its fingerprint, read from the cached word 2-gram table."""
    spec = CorpusSpec(corpus)
    c = generic_corpus(spec)
    t = cached_table(c.documents, c.fingerprint, "word", 2)
    vocab = t.vocab
    out = frozenset(f"{vocab[a]} {vocab[b]}" for a, b in t.grams.tolist()
                    if b >= 0 and vocab[a] != EOS_WORD and vocab[b] != EOS_WORD)
    return out, c.fingerprint


@register_filter
class PlausibilityFilter(AnswerFilter):
    """Non-word rate + word-order plausibility (word and part-of-speech language models) + similarity to
    the prompt's answer space + topic relevance (MiniLM), combined by a classifier (module doc).
    ``max_real_flagged``: the share of real answers the threshold may flag (default 0.02), held with the margin
    ``bound`` (a z value, default 1.645: a one-sided 95 % bound; 0: none); ``cross_fit``: learn from all
    training answers out-of-fold (default) rather than the development split's only; ``off_topic``: off-topic
    negatives per other prompt (:data:`OFF_TOPIC`; 0: none)."""

    kind = "plausibility"

    def __init__(self, *, max_real_flagged: float = 0.02, min_answers: int = 2,
                 classifier: Literal["boosting", "logistic"] = "boosting", cross_fit: bool = True,
                 bound: float = 1.645, off_topic: int = OFF_TOPIC, **kw: Any) -> None:
        super().__init__(**kw)
        if not 0 <= max_real_flagged < 1:
            raise ValueError(f"PlausibilityFilter: max_real_flagged={max_real_flagged}; use a value in [0, 1)")
        if classifier not in ("boosting", "logistic"):
            raise ValueError(f"PlausibilityFilter: classifier={classifier!r}; use 'boosting' or 'logistic'")
        if bound < 0 or off_topic < 0:
            raise ValueError(f"PlausibilityFilter: bound={bound}, off_topic={off_topic}; use values >= 0")
        self.params.update({"max_real_flagged": float(max_real_flagged), "min_answers": int(min_answers),
                            "classifier": classifier, "cross_fit": bool(cross_fit), "bound": float(bound),
                            "off_topic": int(off_topic)})
        self._context: dict[str, Any] = {}

    def fit(self, records: Sequence[ScoredResponse], prompts: Mapping[str, Prompt], *,
            adversarial: Mapping[str, Sequence[str]] | None = None, battery: Battery | None = None,
            noise: Noise | None = None, others: Sequence[ScoredResponse] | None = None,
            progress: Progress | None = None) -> Self:
        """As :meth:`AnswerFilter.fit` (``progress`` included), and: ``noise(records, prompt, seed)`` gives noised copies of a prompt's
        real answers as (index in ``records``, text) pairs (:func:`callbluff.countermeasures.battery.noisy_real`), learnt as
        real; the answers of the other prompts (those of ``records`` and of ``others``: e.g. the dataset's other
        prompts when fitting on one) give the ``topic_margin`` references and off-topic negatives."""
        by_prompt: dict[str, list[ScoredResponse]] = {}
        for r in [*records, *(others or [])]:
            by_prompt.setdefault(str(r.prompt_id), []).append(r)
        todo = sorted(prompts.items())
        inner = None
        if progress is not None:
            progress(PROMPTS, 0, len(todo))

            def inner(stage: str, done: int, total: int | None) -> None:  # the prompt count is kept out here
                if stage != PROMPTS:
                    progress(stage, done, total)
        for k, (pid, prompt) in enumerate(todo, 1):
            own = [r for r in records if str(r.prompt_id) == pid]
            refs, off = _other_answers(by_prompt, pid, self.params["seed"], self.params["off_topic"])
            noised: dict[str, list[str]] = {}
            if noise is not None and own:
                for i, text in noise(own, prompt, self.params["seed"]):
                    if text != own[i].text:
                        noised.setdefault(own[i].text, []).append(text)
            self._context = {"other_emb": {q: embed(t).astype(np.float16) for q, t in refs.items()},
                             "off_topic": off, "noised": noised}
            try:
                super().fit(own, {pid: prompt}, adversarial=adversarial, battery=battery, progress=inner)
            finally:
                self._context = {}
            self.states[pid].update({"n_noised": sum(map(len, noised.values())), "n_off_topic": len(off),
                                     "other_prompts": sorted(refs)})
            if progress is not None:
                progress(PROMPTS, k, len(todo))
        return self

    # -- features -------------------------------------------------------------------------------------
    def features(self, state: dict[str, Any], texts: Sequence[str]) -> np.ndarray:
        """The (len(texts), len(FEATURES)) feature matrix of :data:`FEATURES`."""
        if state.get("features") != FEATURES:
            raise ValueError(f"plausibility filter: fitted with the features {list(state.get('features', FEATURES[:8]))}"
                             f", this version computes {list(FEATURES)} (a filter saved by an older callbluff); fit "
                             "it again (`callbluff filter fit --kind plausibility`)")
        words, source = hunspell_words()
        english, fp = generic_bigrams(self.params["corpus"])
        if source != state["dictionary"] or fp != state["corpus"]:
            raise ValueError(f"plausibility filter: the Hunspell dictionary or the generic corpus changed since "
                             f"fit ({source}, corpus {fp}; fitted with {state['dictionary']}, {state['corpus']}); "
                             "fit the filter again")
        toks = [word_tokens(t) for t in texts]
        return self._feature_rows(state, texts, toks, pos_tags(toks), words, english, embed(texts))

    def _feature_rows(self, state: dict[str, Any], texts: Sequence[str], toks: Sequence[Sequence[str]],
                      tags: Sequence[Sequence[str]], words: frozenset[str], english: frozenset[str],
                      emb: np.ndarray) -> np.ndarray:
        sim = self._similarity(state, texts)
        own = _topk_mean(emb, state["emb"])
        other = np.zeros(len(texts)) if not state.get("other_emb") else np.max(
            [_topk_mean(emb, e) for e in state["other_emb"].values()], axis=0)
        lm: WordTrigramLM = state["lm"]
        rows = []
        for k, tk in enumerate(toks):
            bi, tri = _pairs(tk, 2), _pairs(tk, 3)
            lmt = _lm_tokens(tk, state["extra"])
            lp, gain = lm.token_scores(lmt)
            known = _known_positions(lmt)
            kg = gain[known] if known.any() else gain
            rows.append([
                nonword_rate(tk, words, state["extra"]),
                _unseen(bi, state["bigrams"]),
                _unseen([b for b in bi if all(w in state["vocab"] for w in b.split(" "))], state["bigrams"],
                        of=len(bi)),
                _unseen([b for b in bi if b not in state["bigrams"]], english, of=len(bi)),
                _unseen(tri, state["trigrams"]),
                _unseen(tk, state["vocab"]),
                1.0 - sim[k],
                math.log1p(len(tk)),
                float((lp[known] if known.any() else lp).mean()),
                float(kg.mean()),
                float(np.sort(kg)[:LOW_GAINS].mean()),
                float(np.mean(kg < 0)),
                _edges(gain, known),
                *_pos_scores(state["pos_lm"], tags[k]),
                _glued_rate(tk, words, state["extra"]),
                1.0 - own[k],
                (other[k] - own[k]) if state.get("other_emb") else 0.0,
            ])
        return np.asarray(rows, dtype=float).reshape(len(texts), len(FEATURES))

    @staticmethod
    def _similarity(state: dict[str, Any], texts: Sequence[str]) -> np.ndarray:
        if state.get("tfidf") is None or not texts:
            return np.zeros(len(texts))
        q = state["tfidf"].transform(list(texts))
        return np.asarray((q @ state["space"].T).max(axis=1).todense()).ravel()

    # -- fit / values ---------------------------------------------------------------------------------
    def _tables(self, texts: Sequence[str], toks: Sequence[Sequence[str]], tags: Sequence[Sequence[str]],
                source: str, fp: str, emb: np.ndarray) -> dict[str, Any]:
        """What the features measure an answer against: the answers' words, n-grams, language models and
        TF-IDF space."""
        extra = frozenset(shared_words(texts, self.params["min_answers"]))
        state: dict[str, Any] = {
            "features": FEATURES, "dictionary": source, "corpus": fp, "extra": extra,
            "vocab": frozenset(w for tk in toks for w in tk),
            "bigrams": frozenset(b for tk in toks for b in _pairs(tk, 2)),
            "trigrams": frozenset(b for tk in toks for b in _pairs(tk, 3)),
            "lm": WordTrigramLM([_lm_tokens(tk, extra) for tk in toks]),
            "pos_lm": WordTrigramLM(tags),
            "tfidf": None, "space": None, "model": None,
            "emb": emb.astype(np.float16), "other_emb": self._context.get("other_emb", {}),
        }
        if any(toks):
            from sklearn.feature_extraction.text import TfidfVectorizer

            vec = TfidfVectorizer(analyzer=word_tokens, sublinear_tf=True)
            state["space"] = vec.fit_transform(list(texts))
            state["tfidf"] = vec
        return state

    def _fit_prompt(self, fit_texts: list[str], dev_real: list[str], dev_adv: list[str]) -> dict[str, Any]:
        words, source = hunspell_words()
        english, fp = generic_bigrams(self.params["corpus"])
        cross = self.params["cross_fit"] and len(dev_real) >= self.params["min_dev"] and bool(dev_adv)
        pool = fit_texts + dev_real if cross else fit_texts
        toks = [word_tokens(t) for t in pool]
        tags = pos_tags(toks)  # tagged once, shared by every table below
        emb = embed(pool)
        state = self._tables(pool, toks, tags, source, fp, emb)
        if len(dev_real) < self.params["min_dev"] or not dev_adv:
            state.update({"threshold": self.params["threshold"], "threshold_from": "configured, non-word rate "
                          "only (too few development answers)"})
            return state
        noised: dict[str, list[str]] = self._context.get("noised", {})
        off_topic: list[str] = self._context.get("off_topic", [])
        adv = list(dev_adv) + off_topic
        adv_toks = [word_tokens(t) for t in adv]
        if cross:
            # real answers: out-of-fold over all the prompt's answers (each against tables of the other folds),
            # each noised copy in its source answer's fold; adversarials: against the tables of the fit part
            # their generators were fitted on (off-topic answers: any table of the prompt, none holds them)
            nf = len(fit_texts)
            fit_state = self._tables(fit_texts, toks[:nf], tags[:nf], source, fp, emb[:nf])
            X_adv = self._feature_rows(fit_state, adv, adv_toks, pos_tags(adv_toks), words, english, embed(adv))
            # answers with the same words are one group, held out together: a copy in another fold would make
            # an answer look seen
            real_groups = _groups(toks)
            order = np.random.default_rng(self.params["seed"]).permutation(int(real_groups.max()) + 1)
            fold_of = np.empty(len(order), dtype=int)
            fold_of[order] = np.arange(len(order)) % CROSS_FOLDS
            X_real = np.zeros((len(pool), len(FEATURES)))
            n_texts = [n for t in pool for n in noised.get(t, [])]
            n_src = np.array([i for i, t in enumerate(pool) for _ in noised.get(t, [])], dtype=int)
            X_noised = np.zeros((len(n_texts), len(FEATURES)))
            n_toks = [word_tokens(t) for t in n_texts]
            n_tags = pos_tags(n_toks)
            n_emb = embed(n_texts)
            for k in range(CROSS_FOLDS):
                held = np.flatnonzero(fold_of[real_groups] == k)
                rest = np.flatnonzero(fold_of[real_groups] != k)
                st_k = self._tables([pool[i] for i in rest], [toks[i] for i in rest], [tags[i] for i in rest],
                                    source, fp, emb[rest])
                X_real[held] = self._feature_rows(st_k, [pool[i] for i in held], [toks[i] for i in held],
                                                  [tags[i] for i in held], words, english, emb[held])
                nh = np.flatnonzero(fold_of[real_groups[n_src]] == k) if len(n_src) else np.zeros(0, dtype=int)
                if len(nh):
                    X_noised[nh] = self._feature_rows(st_k, [n_texts[i] for i in nh], [n_toks[i] for i in nh],
                                                      [n_tags[i] for i in nh], words, english, n_emb[nh])
            noised_groups = real_groups[n_src] if len(n_src) else np.zeros(0, dtype=int)
        else:
            X_real, X_adv = self.features(state, dev_real), self.features(state, adv)
            real_groups = _groups([word_tokens(t) for t in dev_real])
            n_texts = [n for t in dev_real for n in noised.get(t, [])]
            n_src = np.array([i for i, t in enumerate(dev_real) for _ in noised.get(t, [])], dtype=int)
            X_noised = self.features(state, n_texts) if n_texts else np.zeros((0, len(FEATURES)))
            noised_groups = real_groups[n_src] if len(n_src) else np.zeros(0, dtype=int)
        from sklearn.ensemble import HistGradientBoostingClassifier
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        X = np.vstack([X_real, X_noised, X_adv])
        y = np.r_[np.zeros(len(X_real) + len(X_noised)), np.ones(len(X_adv))]
        if self.params["classifier"] == "logistic":
            clf: Any = LogisticRegression(class_weight="balanced", max_iter=1000)
        else:
            clf = HistGradientBoostingClassifier(max_iter=200, class_weight="balanced", random_state=0)
        model = make_pipeline(StandardScaler(), clf)
        # the threshold is set on out-of-fold decision values (5 folds): in-sample ones of a flexible classifier
        # are overconfident and would put it far too low for unseen real answers; a noised copy is in its source
        # answer's group
        from sklearn.model_selection import StratifiedGroupKFold, cross_val_predict

        folds = StratifiedGroupKFold(5, shuffle=True, random_state=self.params["seed"] % 2**32)
        groups = np.r_[real_groups, noised_groups, _groups(adv_toks) + int(real_groups.max()) + 1]
        with _one_thread():
            oof = cross_val_predict(model, X, y, groups=groups, cv=folds, method="decision_function")
            model.fit(X, y)
        state["model"] = model
        nr, nn = len(X_real), len(X_noised)
        p_real, p_noised, p_adv = oof[:nr], oof[nr:nr + nn], oof[nr + nn:]
        threshold, allowed = bounded_threshold(p_real, self.params["max_real_flagged"], self.params["bound"])
        p_dev, p_off = p_adv[:len(dev_adv)], p_adv[len(dev_adv):]
        # the threshold rule judged out of sample (nested over the same folds): per fold, a threshold chosen by the
        # rule on the other folds' out-of-fold values flags this share of the fold's real answers / noised copies
        oof_folds = []
        for _, test_idx in folds.split(X, y, groups):
            held = test_idx[test_idx < nr]
            held_n = test_idx[(test_idx >= nr) & (test_idx < nr + nn)] - nr
            rest = np.setdiff1d(np.arange(nr), held)
            t_k, _ = bounded_threshold(p_real[rest], self.params["max_real_flagged"], self.params["bound"])
            oof_folds.append({"n_real": int(len(held)),
                              "real_flagged_pct": round(float(np.mean(p_real[held] > t_k)) * 100, 3),
                              "noised_flagged_pct": round(float(np.mean(p_noised[held_n] > t_k)) * 100, 3)
                              if len(held_n) else None})
        state.update({"threshold": threshold, "threshold_from": (
                          "out-of-fold over all training answers" if cross else "development split")
                      + f": at most {allowed} of {nr} real answers flagged (the {self.params['bound']:g}-sigma bound "
                        f"of {self.params['max_real_flagged']:.0%})",
                      "n_real_threshold": nr,
                      "dev_arr": round(float(np.mean(p_dev > threshold)) * 100, 2),
                      "dev_recall": round(float(np.mean(p_real <= threshold)) * 100, 2),
                      "dev_noised_flagged": round(float(np.mean(p_noised > threshold)) * 100, 2) if nn else None,
                      "dev_off_topic": round(float(np.mean(p_off > threshold)) * 100, 2) if len(p_off) else None,
                      "oof_folds": oof_folds})
        if hasattr(clf, "coef_"):
            state["coefficients"] = dict(zip(FEATURES, np.round(clf.coef_[0], 3).tolist(), strict=True))
        return state

    def _values_of(self, state: dict[str, Any], texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros(0)
        X = self.features(state, texts)
        if state.get("model") is None:
            return X[:, 0]
        with _one_thread():
            return state["model"].decision_function(X)

    def summary(self) -> dict[str, dict[str, Any]]:
        out = super().summary()
        for pid, s in self.states.items():
            for key in ("coefficients", "dev_noised_flagged", "dev_off_topic", "n_noised", "n_off_topic",
                        "other_prompts", "n_real_threshold", "oof_folds"):
                if key in s:
                    out[pid][key] = s[key]
        return out


def bounded_threshold(real: np.ndarray, share: float, bound: float) -> tuple[float, int]:
    """(threshold, how many of ``real`` it flags): flag above the threshold at most ``k`` of the n real values,
    ``k = floor(n (share - bound sqrt(share (1 - share) / n)))`` (at least 0), so that the one-sided
    normal-approximation upper bound of the share a new real answer is flagged with stays at ``share``."""
    n = len(real)
    if n == 0:
        return 0.0, 0
    k = max(0, int(math.floor(n * (share - bound * math.sqrt(share * (1 - share) / n)))))
    ordered = np.sort(real)[::-1]
    return (float(ordered[k]) if k < n else float(ordered[-1]) - 1.0), k


_EMBEDDED: dict[str, np.ndarray] = {}
"""Sentence vectors by text, this process (the cross-fit and nested runs see the same answers many times)."""


def embed(texts: Sequence[str]) -> np.ndarray:
    """MiniLM sentence vectors (:func:`callbluff.resources.minilm.encode_texts`, :data:`TOPIC_MODE`; lower-cased:
    the filter ignores case, see the module doc) of ``texts``, ``(len(texts), 384)``, remembered per text in this process."""
    from callbluff.resources.minilm import encode_texts

    keys = [t.lower() for t in texts]
    todo = sorted({k for k in keys if k not in _EMBEDDED})
    if todo:
        for k, v in zip(todo, encode_texts(todo, mode=TOPIC_MODE), strict=True):
            _EMBEDDED[k] = v
    if not keys:
        return np.zeros((0, 384), dtype=np.float32)
    return np.stack([_EMBEDDED[k] for k in keys]).astype(np.float32)


def _topk_mean(emb: np.ndarray, refs: np.ndarray) -> np.ndarray:
    """Per row of ``emb``, the mean cosine to its :data:`TOPIC_K` nearest rows of ``refs`` (unit vectors)."""
    if len(emb) == 0 or len(refs) == 0:
        return np.zeros(len(emb))
    sims = emb @ refs.astype(np.float32).T
    k = min(TOPIC_K, sims.shape[1])
    return np.sort(np.partition(sims, sims.shape[1] - k, axis=1)[:, -k:], axis=1).mean(axis=1)


def _other_answers(by_prompt: Mapping[str, Sequence[ScoredResponse]], pid: str, seed: int,
                   off_topic: int) -> tuple[dict[str, list[str]], list[str]]:
    """For prompt ``pid``: per other prompt, :data:`OTHER_REFS` reference answers, and ``off_topic`` off-topic
    negatives per other prompt drawn from the rest (seeded per pair of prompts, disjoint; a prompt with fewer
    answers than both need keeps at least half of them as references)."""
    refs: dict[str, list[str]] = {}
    off: list[str] = []
    for q, recs in sorted(by_prompt.items()):
        texts = [r.text for r in recs if r.text.strip()]
        if q == pid or not texts:
            continue
        order = np.random.default_rng(derive_seed(seed, "filter-other-prompt", pid, q)).permutation(len(texts))
        n_ref = min(OTHER_REFS, max(len(texts) - off_topic, (len(texts) + 1) // 2))  # small prompts: both halves
        refs[q] = [texts[i] for i in order[:n_ref]]
        off += [texts[i] for i in order[n_ref:n_ref + off_topic]]
    return refs, off


def nested_real_loss(make: Callable[[], PlausibilityFilter], records: Sequence[ScoredResponse], prompt: Prompt, *,
                     battery: Battery | None = None, adversarial: Sequence[str] | None = None,
                     noise: Noise | None = None, others: Sequence[ScoredResponse] = (),
                     folds: int = 5, seed: int = 0) -> list[dict[str, Any]]:
    """Grouped K-fold estimate of what a filter (``make()``, fitted as it is: threshold and all) flags among real
    answers it never saw: the prompt's ``records`` cut into ``folds`` folds (answers with the same words in one
    fold, seeded by ``seed``); per fold, a filter fitted on the other folds (its own inner cross-fitting and
    threshold on those answers only) flags the held fold's answers and their noised copies. The development adversarials: ``battery`` run on each fold's fit part, or the fixed
    ``adversarial`` texts (cheaper; generated from all the answers, they make the estimate, if anything,
    pessimistic: n-grams of the held answers then look adversarial). One dict per fold:
    ``real_flagged_pct``, ``noised_flagged_pct`` (None without ``noise``), ``n_real``, ``n_noised``,
    ``threshold``."""
    recs = [r for r in records if str(r.prompt_id) == prompt.id]
    groups = _groups([word_tokens(r.text) for r in recs])
    order = np.random.default_rng(derive_seed(seed, "nested-real-loss", prompt.id)).permutation(int(groups.max()) + 1)
    fold_of = np.empty(len(order), dtype=int)
    fold_of[order] = np.arange(len(order)) % folds
    out = []
    for k in range(folds):
        held = [r for r, g in zip(recs, groups, strict=True) if fold_of[g] == k]
        rest = [r for r, g in zip(recs, groups, strict=True) if fold_of[g] != k]
        adv = {prompt.id: list(adversarial)} if adversarial is not None else None
        f = make().fit(rest, {prompt.id: prompt}, adversarial=adv, battery=battery, noise=noise, others=others)
        flags = f.flag(prompt.id, [r.text for r in held])
        noised = [t for _, t in noise(held, prompt, derive_seed(seed, "nested-held-noise", k))] if noise else []
        nflags = f.flag(prompt.id, noised) if noised else np.zeros(0, dtype=bool)
        out.append({"fold": k, "n_real": len(held), "real_flagged_pct": float(np.mean(flags) * 100),
                    "n_noised": len(noised),
                    "noised_flagged_pct": float(np.mean(nflags) * 100) if len(noised) else None,
                    "threshold": f.states[prompt.id]["threshold"]})
    return out


def _unseen(items: Sequence[str], seen: frozenset[str], of: int | None = None) -> float:
    """Share of ``items`` not in ``seen`` (out of ``of`` when given); 0 when there is nothing to count."""
    total = len(items) if of is None else of
    if total == 0:
        return 0.0
    return sum(x not in seen for x in items) / total


POS_BATCH = 512


def pos_tags(tokens: Sequence[Sequence[str]]) -> list[list[str]]:
    """Fine-grained part-of-speech tags (spaCy's tagger only, :func:`callbluff.resources.spacy_pipeline.
    load_english` ``mode="tagger"``) of each answer's word tokens, tagged as they are: lower-cased, without
    punctuation, as every answer is seen by the filter. Batched with ``nlp.pipe``."""
    from spacy.tokens import Doc


    keys = [tuple(tk) for tk in tokens]
    todo = list(dict.fromkeys(k for k in keys if k not in _TAGGED))
    if todo:
        nlp = load_english("tagger")
        docs = (Doc(nlp.vocab, words=list(tk)) if tk else Doc(nlp.vocab, words=[]) for tk in todo)
        for k, d in zip(todo, nlp.pipe(docs, batch_size=POS_BATCH), strict=True):
            _TAGGED[k] = [t.tag_ for t in d]
    out = [list(_TAGGED[k]) for k in keys]
    if len(_TAGGED) > 400_000:  # a bound on the memory of a long process
        _TAGGED.clear()
    return out


_TAGGED: dict[tuple[str, ...], list[str]] = {}
"""Tags by token sequence, this process (the cross-fit and nested fits tag the same answers many times)."""


def _pos_scores(pos_lm: WordTrigramLM, tags: Sequence[str]) -> tuple[float, float]:
    """(mean, mean of the :data:`LOW_GAINS` lowest) log-probability of an answer's tag sequence."""
    lp, _ = pos_lm.token_scores(tags)
    return float(lp.mean()), float(np.sort(lp)[:LOW_GAINS].mean())


def _groups(toks: Sequence[Sequence[str]]) -> np.ndarray:
    """A group id per answer: answers with the same word tokens share one (in order of first appearance)."""
    ids: dict[tuple[str, ...], int] = {}
    return np.array([ids.setdefault(tuple(tk), len(ids)) for tk in toks], dtype=int).reshape(len(toks))


def _lm_tokens(tokens: Sequence[str], known: frozenset[str]) -> list[str]:
    """``tokens`` with every word outside ``known`` (the prompt's words shared by answers) as ``<unk>``: a
    misspelling is one unknown word to the language model, which has seen many in the prompt's answers."""
    return [w if w in known else UNK for w in tokens]


def _one_thread() -> Any:
    """Limit OpenMP/BLAS to one thread: histogram boosting's threads on a busy shared machine are slower
    (measured: about 20 times) than one thread, for the small development sets here."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1)


def _known_positions(lm_tokens: Sequence[str]) -> np.ndarray:
    """Per scored position of :meth:`WordTrigramLM.token_scores` (each token, then ``</s>``): True when the
    token and the two before it are known words (or the padding), so a misspelling (an unknown word) does not
    lower the word-order figures of its neighbours."""
    seq = [BOS, BOS, *lm_tokens, EOS]
    return np.array([UNK not in seq[i - 2:i + 1] for i in range(2, len(seq))], dtype=bool)


def _edges(gain: np.ndarray, known: np.ndarray) -> float:
    """Mean context gain of the answer's first word and of its end (``</s>``), each where known."""
    ends = [gain[i] for i in (0, len(gain) - 1) if known[i]]
    return float(np.mean(ends)) if ends else 0.0


def _glued_rate(tokens: Sequence[str], dictionary: frozenset[str], extra: frozenset[str]) -> float:
    """Share of ``tokens`` that are non-words made of two or more known words run together (a student's
    missing spaces: "transcriptiontranslation"), which random characters and character n-grams rarely are."""
    if not tokens:
        return 0.0
    return sum(not is_known(w, dictionary, extra) and _splits(w, dictionary, extra) for w in tokens) / len(tokens)


GLUE_MIN = 3
"""Shortest piece of a glued word (shorter dictionary entries such as "ab" or "ew" would split nearly anything)."""


def _splits(word: str, dictionary: frozenset[str], extra: frozenset[str]) -> bool:
    """``word`` is two or more known words (each at least :data:`GLUE_MIN` letters) without spaces."""
    n = len(word)
    if n < 2 * GLUE_MIN or n > 60:
        return False
    ok = [0] * (n + 1)  # ok[i]: most pieces a split of word[:i] can have (0: none; -1 marks the start)
    ok[0] = -1
    for i in range(GLUE_MIN, n + 1):
        for j in range(0, i - GLUE_MIN + 1):
            if ok[j] and is_known(word[j:i], dictionary, extra):
                ok[i] = max(ok[i], (0 if ok[j] == -1 else ok[j]) + 1)
    return ok[n] >= 2
