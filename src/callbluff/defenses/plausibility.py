"""Our filter (issue 11; not in Ding et al. 2020): is this answer made of real words, in a plausible order,
about what the prompt's answers are about?

Ding et al.'s filters each look at one thing (Sec. 5.4): the non-word rate misses adversarials made of real
words (word n-grams, content burst, shuffle, language-model text), and the unigram perplexity filter rejects
any unseen word, so it loses half of the real answers. :class:`PlausibilityFilter` combines eight features
of an answer's lower-cased word tokens (:func:`callbluff.resources.ngrams.word_tokens`), each measured
against the prompt's fit-part answers (the development split of :mod:`callbluff.defenses.filters`):

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
====================  ========================================================================================

A classifier (``classifier``: a logistic regression, the default, or scikit-learn's histogram gradient
boosting; balanced classes, standardised features) is trained on the development split: real held-out
answers against the generator battery's answers (:mod:`callbluff.defenses.battery`).
The threshold on its probability is set so that at most ``max_real_flagged`` (2 %) of the development real
answers are flagged, judged by out-of-fold probabilities (5-fold cross-validation on the development split;
the classifier used afterwards is refitted on all of it) (the issue's goal: ARR >= 95 % with <= 2 % of real answers lost). The features ignore
case and punctuation on purpose: the generators write lower-case text without punctuation (as the paper's
Table 2 shows), which a filter could key on, but a student can write that way too.

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
from callbluff.resources.ngrams import word_tokens

FEATURES: tuple[str, ...] = ("nonword", "bigram_prompt", "bigram_known", "bigram_english", "trigram_prompt",
                             "unseen_prompt", "similarity", "log_length")


def _pairs(tokens: Sequence[str], n: int) -> list[str]:
    return [" ".join(tokens[i:i + n]) for i in range(len(tokens) - n + 1)]


@lru_cache(maxsize=4)
def generic_bigrams(corpus: str | None) -> tuple[frozenset[str], str]:
    """Word bigrams of the generic corpus (:mod:`callbluff.resources.corpus`, default SQuAD Wikipedia) and
    its fingerprint, read from the cached word 2-gram table."""
    from callbluff.resources.corpus import CorpusSpec, generic_corpus
    from callbluff.resources.ngrams import EOS_WORD, cached_table

    spec = CorpusSpec(corpus)
    c = generic_corpus(spec)
    t = cached_table(c.documents, c.fingerprint, "word", 2)
    vocab = t.vocab
    out = frozenset(f"{vocab[a]} {vocab[b]}" for a, b in t.grams.tolist()
                    if b >= 0 and vocab[a] != EOS_WORD and vocab[b] != EOS_WORD)
    return out, c.fingerprint


@register_filter
class PlausibilityFilter(AnswerFilter):
    """Non-word rate + word-order plausibility + similarity to the prompt's answer space, combined by a
    classifier trained on a development split (module doc). ``max_real_flagged``: the share of
    development real answers the threshold may flag (default 0.02)."""

    kind = "plausibility"

    def __init__(self, *, max_real_flagged: float = 0.02, min_answers: int = 2,
                 classifier: Literal["boosting", "logistic"] = "logistic", **kw: Any) -> None:
        super().__init__(**kw)
        if not 0 <= max_real_flagged < 1:
            raise ValueError(f"PlausibilityFilter: max_real_flagged={max_real_flagged}; use a value in [0, 1)")
        if classifier not in ("boosting", "logistic"):
            raise ValueError(f"PlausibilityFilter: classifier={classifier!r}; use 'boosting' or 'logistic'")
        self.params.update({"max_real_flagged": float(max_real_flagged), "min_answers": int(min_answers),
                            "classifier": classifier})

    # -- features -------------------------------------------------------------------------------------
    def features(self, state: dict[str, Any], texts: Sequence[str]) -> np.ndarray:
        """The (len(texts), 8) feature matrix of :data:`FEATURES`."""
        from callbluff.defenses.lexicon import hunspell_words, nonword_rate

        words, source = hunspell_words()
        english, fp = generic_bigrams(self.params["corpus"])
        if source != state["dictionary"] or fp != state["corpus"]:
            raise ValueError(f"plausibility filter: the Hunspell dictionary or the generic corpus changed since "
                             f"fit ({source}, corpus {fp}; fitted with {state['dictionary']}, {state['corpus']}); "
                             "fit the filter again")
        toks = [word_tokens(t) for t in texts]
        sim = self._similarity(state, texts)
        rows = []
        for k, tk in enumerate(toks):
            bi, tri = _pairs(tk, 2), _pairs(tk, 3)
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
            ])
        return np.asarray(rows, dtype=float).reshape(len(texts), len(FEATURES))

    @staticmethod
    def _similarity(state: dict[str, Any], texts: Sequence[str]) -> np.ndarray:
        if state.get("tfidf") is None or not texts:
            return np.zeros(len(texts))
        q = state["tfidf"].transform(list(texts))
        return np.asarray((q @ state["space"].T).max(axis=1).todense()).ravel()

    # -- fit / values ---------------------------------------------------------------------------------
    def _fit_prompt(self, fit_texts: list[str], dev_real: list[str], dev_adv: list[str]) -> dict[str, Any]:
        from callbluff.defenses.lexicon import hunspell_words, shared_words

        _, source = hunspell_words()
        _, fp = generic_bigrams(self.params["corpus"])
        toks = [word_tokens(t) for t in fit_texts]
        state: dict[str, Any] = {
            "dictionary": source, "corpus": fp,
            "extra": frozenset(shared_words(fit_texts, self.params["min_answers"])),
            "vocab": frozenset(w for tk in toks for w in tk),
            "bigrams": frozenset(b for tk in toks for b in _pairs(tk, 2)),
            "trigrams": frozenset(b for tk in toks for b in _pairs(tk, 3)),
            "tfidf": None, "space": None, "model": None,
        }
        if any(toks):
            from sklearn.feature_extraction.text import TfidfVectorizer

            vec = TfidfVectorizer(analyzer=word_tokens, sublinear_tf=True)
            state["space"] = vec.fit_transform(fit_texts)
            state["tfidf"] = vec
        if len(dev_real) < self.params["min_dev"] or not dev_adv:
            state.update({"threshold": self.params["threshold"], "threshold_from": "configured, non-word rate "
                          "only (too few development answers)"})
            return state
        from sklearn.ensemble import HistGradientBoostingClassifier
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        X = np.vstack([self.features(state, dev_real), self.features(state, dev_adv)])
        y = np.r_[np.zeros(len(dev_real)), np.ones(len(dev_adv))]
        if self.params["classifier"] == "logistic":
            clf: Any = LogisticRegression(class_weight="balanced", max_iter=1000)
        else:
            clf = HistGradientBoostingClassifier(max_iter=200, class_weight="balanced", random_state=0)
        model = make_pipeline(StandardScaler(), clf)
        # the threshold is set on out-of-fold probabilities (5 folds): in-sample ones of a flexible classifier
        # are overconfident and would put it far too low for unseen real answers
        from sklearn.model_selection import StratifiedKFold, cross_val_predict

        folds = StratifiedKFold(5, shuffle=True, random_state=self.params["seed"] % 2**32)
        oof = cross_val_predict(model, X, y, cv=folds, method="predict_proba")[:, 1]
        model.fit(X, y)
        state["model"] = model
        p_real, p_adv = oof[: len(dev_real)], oof[len(dev_real):]
        allowed = int(math.floor(self.params["max_real_flagged"] * len(dev_real)))
        ordered = np.sort(p_real)[::-1]
        threshold = float(ordered[allowed]) if allowed < len(ordered) else 0.0
        state.update({"threshold": threshold, "threshold_from": f"development split: at most "
                      f"{self.params['max_real_flagged']:.0%} of real answers flagged",
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
        return state["model"].predict_proba(X)[:, 1]

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
