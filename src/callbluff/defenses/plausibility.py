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
====================  ========================================================================================

The language-model features skip positions whose word or context holds an unknown word, so a misspelling
does not make its correctly spelled neighbours look misplaced (the non-word and unseen features see it).

A classifier (``classifier``: scikit-learn's histogram gradient boosting, the default, or a logistic
regression; balanced classes, standardised features; one thread) learns real answers against the generator
battery's answers (:mod:`callbluff.battery`, generated from the fit part). The real answers are, by
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

A filter saved by a version with other features cannot be applied: it says so and asks to fit it again.

Where a prompt has too few answers for a development split, only the non-word rate is used, with the
configured ``threshold``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Literal

import numpy as np

from callbluff.defenses.filters import AnswerFilter, register_filter
from callbluff.defenses.lexicon import hunspell_words, is_known, nonword_rate, shared_words
from callbluff.resources.corpus import CorpusSpec, generic_corpus
from callbluff.resources.ngram_lm import BOS, DISCOUNT, EOS, UNK
from callbluff.resources.ngrams import EOS_WORD, cached_table, word_tokens
from callbluff.resources.spacy_pipeline import load_english

FEATURES: tuple[str, ...] = ("nonword", "bigram_prompt", "bigram_known", "bigram_english", "trigram_prompt",
                             "unseen_prompt", "similarity", "log_length", "lm_logprob", "lm_gain", "lm_gain_low",
                             "lm_negative", "lm_edges", "pos_logprob", "pos_low", "glued")
CROSS_FOLDS = 5
"""Folds of the out-of-fold real answers (``cross_fit``)."""
LOW_GAINS = 3
"""How many of an answer's lowest context gains ``lm_gain_low`` averages (the seams of stitched n-grams)."""


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
    the prompt's answer space, combined by a classifier (module doc). ``max_real_flagged``: the share of
    out-of-fold real answers the threshold may flag (default 0.02); ``cross_fit``: learn from all training
    answers out-of-fold (default) rather than the development split's only."""

    kind = "plausibility"

    def __init__(self, *, max_real_flagged: float = 0.02, min_answers: int = 2,
                 classifier: Literal["boosting", "logistic"] = "boosting", cross_fit: bool = True,
                 **kw: Any) -> None:
        super().__init__(**kw)
        if not 0 <= max_real_flagged < 1:
            raise ValueError(f"PlausibilityFilter: max_real_flagged={max_real_flagged}; use a value in [0, 1)")
        if classifier not in ("boosting", "logistic"):
            raise ValueError(f"PlausibilityFilter: classifier={classifier!r}; use 'boosting' or 'logistic'")
        self.params.update({"max_real_flagged": float(max_real_flagged), "min_answers": int(min_answers),
                            "classifier": classifier, "cross_fit": bool(cross_fit)})

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
        return self._feature_rows(state, texts, toks, pos_tags(toks), words, english)

    def _feature_rows(self, state: dict[str, Any], texts: Sequence[str], toks: Sequence[Sequence[str]],
                      tags: Sequence[Sequence[str]], words: frozenset[str], english: frozenset[str]) -> np.ndarray:
        sim = self._similarity(state, texts)
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
                source: str, fp: str) -> dict[str, Any]:
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
        state = self._tables(pool, toks, tags, source, fp)
        if len(dev_real) < self.params["min_dev"] or not dev_adv:
            state.update({"threshold": self.params["threshold"], "threshold_from": "configured, non-word rate "
                          "only (too few development answers)"})
            return state
        if cross:
            # real answers: out-of-fold over all the prompt's answers (each against tables of the other folds);
            # adversarials: against the tables of the fit part their generators were fitted on
            nf = len(fit_texts)
            fit_state = self._tables(fit_texts, toks[:nf], tags[:nf], source, fp)
            adv_toks = [word_tokens(t) for t in dev_adv]
            X_adv = self._feature_rows(fit_state, dev_adv, adv_toks, pos_tags(adv_toks), words, english)
            # answers with the same words are one group, held out together: a copy in another fold would make
            # an answer look seen (some prompts hold 9 % such answers; the leaderboard's answers have no copy)
            real_groups = _groups(toks)
            order = np.random.default_rng(self.params["seed"]).permutation(int(real_groups.max()) + 1)
            fold_of = np.empty(len(order), dtype=int)
            fold_of[order] = np.arange(len(order)) % CROSS_FOLDS
            X_real = np.zeros((len(pool), len(FEATURES)))
            for k in range(CROSS_FOLDS):
                held = np.flatnonzero(fold_of[real_groups] == k)
                rest = np.flatnonzero(fold_of[real_groups] != k)
                st_k = self._tables([pool[i] for i in rest], [toks[i] for i in rest], [tags[i] for i in rest],
                                    source, fp)
                X_real[held] = self._feature_rows(st_k, [pool[i] for i in held], [toks[i] for i in held],
                                                  [tags[i] for i in held], words, english)
        else:
            X_real, X_adv = self.features(state, dev_real), self.features(state, dev_adv)
            real_groups = _groups([word_tokens(t) for t in dev_real])
            adv_toks = [word_tokens(t) for t in dev_adv]
        from sklearn.ensemble import HistGradientBoostingClassifier
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        X = np.vstack([X_real, X_adv])
        y = np.r_[np.zeros(len(X_real)), np.ones(len(X_adv))]
        if self.params["classifier"] == "logistic":
            clf: Any = LogisticRegression(class_weight="balanced", max_iter=1000)
        else:
            clf = HistGradientBoostingClassifier(max_iter=200, class_weight="balanced", random_state=0)
        model = make_pipeline(StandardScaler(), clf)
        # the threshold is set on out-of-fold probabilities (5 folds): in-sample ones of a flexible classifier
        # are overconfident and would put it far too low for unseen real answers
        from sklearn.model_selection import StratifiedGroupKFold, cross_val_predict

        folds = StratifiedGroupKFold(5, shuffle=True, random_state=self.params["seed"] % 2**32)
        groups = np.r_[real_groups, _groups(adv_toks) + int(real_groups.max()) + 1]
        with _one_thread():
            oof = cross_val_predict(model, X, y, groups=groups, cv=folds, method="decision_function")
            model.fit(X, y)
        state["model"] = model
        p_real, p_adv = oof[: len(X_real)], oof[len(X_real):]
        allowed = int(math.floor(self.params["max_real_flagged"] * len(X_real)))
        ordered = np.sort(p_real)[::-1]
        threshold = float(ordered[allowed]) if allowed < len(ordered) else 0.0
        state.update({"threshold": threshold, "threshold_from": (
                          "out-of-fold over all training answers" if cross else "development split")
                      + f": at most {self.params['max_real_flagged']:.0%} of real answers flagged",
                      "n_real_threshold": len(X_real),
                      "dev_arr": round(float(np.mean(p_adv > threshold)) * 100, 2),
                      "dev_recall": round(float(np.mean(p_real <= threshold)) * 100, 2)})
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
            if "coefficients" in s:
                out[pid]["coefficients"] = s["coefficients"]
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


    nlp = load_english("tagger")
    docs = (Doc(nlp.vocab, words=list(tk)) if tk else Doc(nlp.vocab, words=[]) for tk in tokens)
    return [[t.tag_ for t in d] for d in nlp.pipe(docs, batch_size=POS_BATCH)]


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
