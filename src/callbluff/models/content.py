"""``ContentScorer``: the shallow short-answer content scorer of Ding et al. (2020), Sec. 3.1.

Ding et al. attack "the ESCRITO scoring toolkit (Zesch and Horbach, 2018) with an SVM classifier (Cortes
and Vapnik, 1995), as implemented in Weka using the default PolyKernel. As features we used the top 10000
character 2-5 grams, the top 10000 word 1-5 grams, and answer length." (QWK 0.673 on ASAP-SAS.) Here:

* **Features**: :class:`callbluff.models.features.ContentFeaturizer` groups ``char``, ``word_unigram``,
  ``word_2_5``, ``length`` (default, the paper's set) and, for the countermeasures of Sec. 5.1,
  ``dep_triples`` (top 1,000 dependency triples) and ``pos_ngrams``. Binary n-grams; length min-max
  normalised on the training answers (Weka's SMO normalises attributes to [0, 1]).
* **Classifier**: one linear C-SVM per prompt over integer score classes, multi-class by one-vs-one
  voting, which is what Weka's SMO with PolyKernel (exponent 1) does. It is trained with scikit-learn's
  libsvm (:class:`sklearn.svm.SVC`) on the linear kernel matrix and stored as primal weights, one weight
  vector per class pair (:class:`LinearOvO`): prediction is a sparse dot product plus libsvm's voting.
* **Tuning** (the paper is silent; ESCRITO's defaults are Weka's ``C = 1``): with ``tune=True`` the
  cost ``C``, the class weighting (none / ``"balanced"``) and the weight of the length feature (how far the
  normalised length counts against ~hundreds of active binary n-grams) are chosen per prompt by
  stratified k-fold cross-validation **on the training answers only**, maximising pooled out-of-fold QWK.
  Any of these given explicitly is fixed instead. The n-gram vocabularies are selected by frequency on
  all training answers of the prompt before the folds are cut (no labels are used for that).

Scores are the predicted classes (integers on the prompt's scale). Usable directly as a
:class:`~callbluff.targets.base.Target`: ``predict([Input("content", text, prompt_id)])``.
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import product
from typing import Any

import numpy as np
from scipy import sparse

from callbluff.metrics import qwk
from callbluff.models.features import PAPER_GROUPS, ContentFeaturizer, check_groups
from callbluff.models.per_prompt import JoblibPerPromptScorer, PromptTrainingSet
from callbluff.progress import Progress
from callbluff.seeding import derive_seed

__all__ = ["ContentScorer", "LinearOvO"]

log = logging.getLogger(__name__)

DEFAULT_C_GRID: tuple[float, ...] = (0.0003, 0.001, 0.003, 0.01, 0.03, 0.1)
DEFAULT_CLASS_WEIGHT_GRID: tuple[str | None, ...] = (None, "balanced")
DEFAULT_LENGTH_WEIGHT_GRID: tuple[float, ...] = (1.0, 10.0, 30.0)


def _qwk(gold: Sequence[float], pred: Sequence[float], lo: float, hi: float) -> float:
    return float(qwk(gold, pred, score_min=lo, score_max=hi))


# --------------------------------------------------------------------------------------------------
# One-vs-one linear SVM in primal form
# --------------------------------------------------------------------------------------------------


@dataclass
class LinearOvO:
    """A fitted one-vs-one linear SVM: ``coef[p] @ x + intercept[p]`` for each class pair ``p = (i, j)``,
    ``i < j`` in libsvm's order; a positive value votes for ``classes[i]``, otherwise ``classes[j]``; the
    class with most votes wins (ties: the lower class), exactly as libsvm / Weka SMO."""

    classes: np.ndarray
    coef: np.ndarray  # (n_pairs, n_features)
    intercept: np.ndarray  # (n_pairs,)

    @property
    def pairs(self) -> list[tuple[int, int]]:
        k = len(self.classes)
        return [(i, j) for i in range(k) for j in range(i + 1, k)]

    @classmethod
    def constant(cls, label: float, n_features: int) -> LinearOvO:
        return cls(np.array([label]), np.zeros((0, n_features)), np.zeros(0))

    @classmethod
    def fit_gram(cls, gram: np.ndarray, X: sparse.csr_matrix, y: np.ndarray, *, C: float,
                 class_weight: str | None) -> LinearOvO:
        """Fit libsvm's C-SVC on the linear kernel ``gram = X X^T`` and convert to primal weights."""
        from sklearn.svm import SVC

        classes = np.unique(y)
        if len(classes) == 1:
            return cls.constant(float(classes[0]), X.shape[1])
        svc = SVC(kernel="precomputed", C=C, class_weight=class_weight).fit(gram, y)
        return cls.from_svc(svc, X)

    @classmethod
    def from_svc(cls, svc: Any, X: sparse.csr_matrix) -> LinearOvO:
        """Primal weights of a fitted ``SVC(kernel="precomputed")`` whose kernel was ``X X^T``."""
        classes = np.asarray(svc.classes_)
        k = len(classes)
        sv = X[svc.support_]
        starts = np.concatenate([[0], np.cumsum(svc.n_support_)])
        dual = np.asarray(svc.dual_coef_)
        intercept = np.asarray(svc.intercept_, dtype=np.float64)
        if k == 2:
            # sklearn flips the signs of binary SVMs (positive = classes_[1]); back to libsvm's convention
            dual, intercept = -dual, -intercept
        coefs = []
        for i in range(k):
            for j in range(i + 1, k):
                si, sj = slice(starts[i], starts[i + 1]), slice(starts[j], starts[j + 1])
                w = sv[si].T @ dual[j - 1, si] + sv[sj].T @ dual[i, sj]
                coefs.append(np.asarray(w).ravel())
        return cls(classes.astype(np.float64), np.vstack(coefs), intercept)

    def decision(self, X: sparse.spmatrix) -> np.ndarray:
        return np.asarray(X @ self.coef.T) + self.intercept

    def predict(self, X: sparse.spmatrix) -> np.ndarray:
        n = X.shape[0]
        if len(self.classes) == 1:
            return np.full(n, self.classes[0])
        dec = self.decision(X)
        votes = np.zeros((n, len(self.classes)), dtype=np.int64)
        for p, (i, j) in enumerate(self.pairs):
            pos = dec[:, p] > 0
            votes[pos, i] += 1
            votes[~pos, j] += 1
        return self.classes[np.argmax(votes, axis=1)]


# --------------------------------------------------------------------------------------------------
# Per-prompt model
# --------------------------------------------------------------------------------------------------


@dataclass
class _PromptModel:
    featurizer: ContentFeaturizer
    svm: LinearOvO
    weights: dict[str, float]
    score_min: float
    score_max: float
    summary: dict[str, Any] = field(default_factory=dict)


def _folds(y: np.ndarray, k: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    from sklearn.model_selection import KFold, StratifiedKFold

    _, counts = np.unique(y, return_counts=True)
    k = int(min(k, len(y)))
    rs = int(seed % (2**32))
    if counts.min() >= k:
        return list(StratifiedKFold(k, shuffle=True, random_state=rs).split(np.zeros(len(y)), y))
    if counts.min() >= 2:
        return list(StratifiedKFold(int(counts.min()), shuffle=True, random_state=rs).split(np.zeros(len(y)), y))
    return list(KFold(k, shuffle=True, random_state=rs).split(np.zeros(len(y))))


class ContentScorer(JoblibPerPromptScorer):
    """Ding et al.'s shallow content scorer (module doc): one linear SVM per prompt.

    Parameters:
        features: feature groups (names of :data:`callbluff.models.features.CONTENT_GROUPS`, or a
            comma-separated string); default = the paper's ``char, word_unigram, word_2_5, length``.
        C, class_weight, length_weight: fix these; ``None`` = tune on the training data (``tune=True``)
            or use Weka's defaults (``C=1``, no class weights, length weight 1) when ``tune=False``.
        tune: choose the unfixed parameters per prompt by ``cv``-fold cross-validation on train.
        C_grid, class_weight_grid, length_weight_grid: the tuning grid.
        max_char, max_word, max_dep, max_pos: vocabulary sizes (10,000 / 10,000 / 1,000 / 1,000).
        seed: fold assignment (via :func:`callbluff.seeding.derive_seed` per prompt).
    """

    kind = "content-scorer"

    def __init__(
        self,
        features: Iterable[str] | str = PAPER_GROUPS,
        *,
        C: float | None = None,
        class_weight: str | None | bool = None,
        length_weight: float | None = None,
        tune: bool = True,
        cv: int = 5,
        C_grid: Sequence[float] = DEFAULT_C_GRID,
        class_weight_grid: Sequence[str | None] = DEFAULT_CLASS_WEIGHT_GRID,
        length_weight_grid: Sequence[float] = DEFAULT_LENGTH_WEIGHT_GRID,
        max_char: int = 10_000,
        max_word: int = 10_000,
        max_dep: int = 1_000,
        max_pos: int = 1_000,
        seed: int = 13,
    ) -> None:
        groups = check_groups(features.split(",") if isinstance(features, str) else features)
        if class_weight is False or class_weight == "none":
            class_weight = "none"
        if class_weight not in (None, "none", "balanced"):
            raise ValueError(f"ContentScorer: class_weight={class_weight!r}; use None (tune), 'none' or "
                             "'balanced'")
        if cv < 2:
            raise ValueError(f"ContentScorer: cv={cv}; use at least 2 folds")
        self.cfg: dict[str, Any] = {
            "features": list(groups), "C": None if C is None else float(C), "class_weight": class_weight,
            "length_weight": None if length_weight is None else float(length_weight), "tune": bool(tune),
            "cv": int(cv), "C_grid": [float(c) for c in C_grid],
            "class_weight_grid": [None if w in (None, "none") else str(w) for w in class_weight_grid],
            "length_weight_grid": [float(w) for w in length_weight_grid], "max_char": int(max_char),
            "max_word": int(max_word), "max_dep": int(max_dep), "max_pos": int(max_pos), "seed": int(seed),
        }
        self._init_state()

    # -- public ---------------------------------------------------------------------------------------
    @property
    def features(self) -> tuple[str, ...]:
        return tuple(self.cfg["features"])

    def score_texts(self, prompt_id: str, texts: Sequence[str]) -> np.ndarray:
        """Integer scores (as floats) of ``texts`` for prompt ``prompt_id``."""
        m = self._model(prompt_id)
        X = m.featurizer.transform(list(texts), m.weights)
        return np.clip(m.svm.predict(X), m.score_min, m.score_max)

    def decision_function(self, prompt_id: str, texts: Sequence[str]) -> np.ndarray:
        """The pairwise SVM decision values ``(n_texts, n_pairs)`` (pairs: ``LinearOvO.pairs``)."""
        m = self._model(prompt_id)
        return m.svm.decision(m.featurizer.transform(list(texts), m.weights))

    def feature_names(self, prompt_id: str) -> list[str]:
        """``group:feature`` name of every column of prompt ``prompt_id``'s model."""
        return self._model(prompt_id).featurizer.feature_names()

    def coefficients(self, prompt_id: str) -> np.ndarray:
        """Primal weights ``(n_pairs, n_features)`` of prompt ``prompt_id``'s SVMs (feature weights applied)."""
        m = self._model(prompt_id)
        return m.svm.coef

    # -- persistence (save/load: JoblibPerPromptScorer) ---------------------------------------------------
    def _metrics(self) -> dict[str, Any]:
        return {pid: {k: v for k, v in m.summary.items() if k in ("cv_qwk", "n_train", "fit_seconds")}
                for pid, m in self.models.items()}

    def _extra(self) -> dict[str, Any]:
        return {"prompts": {pid: {"score_min": m.score_min, "score_max": m.score_max,
                                  "chosen": m.summary.get("chosen"), "n_features": m.summary.get("n_features")}
                            for pid, m in self.models.items()}}

    @classmethod
    def _init_args(cls, params: Mapping[str, Any]) -> dict[str, Any]:
        p = dict(params)
        return {"features": p["features"], "C": p["C"], "class_weight": p["class_weight"],
                "length_weight": p["length_weight"], "tune": p["tune"], "cv": p["cv"], "C_grid": p["C_grid"],
                "class_weight_grid": p["class_weight_grid"], "length_weight_grid": p["length_weight_grid"],
                "max_char": p["max_char"], "max_word": p["max_word"], "max_dep": p["max_dep"],
                "max_pos": p["max_pos"], "seed": p["seed"]}

    # -- internals ------------------------------------------------------------------------------------
    def _fit_set(self, t: PromptTrainingSet, progress: Progress | None = None) -> _PromptModel:
        return self._fit_prompt(t.prompt_id, t.texts, np.round(t.y), t.score_min, t.score_max, progress)

    def _grid(self) -> list[tuple[float, str | None, float]]:
        c = self.cfg
        tune = c["tune"]
        Cs = [c["C"]] if c["C"] is not None else (c["C_grid"] if tune else [1.0])
        if c["class_weight"] is not None:
            cws: list[str | None] = [None if c["class_weight"] == "none" else c["class_weight"]]
        else:
            cws = list(c["class_weight_grid"]) if tune else [None]
        if "length" not in c["features"]:
            lws = [1.0]
        elif c["length_weight"] is not None:
            lws = [c["length_weight"]]
        else:
            lws = c["length_weight_grid"] if tune else [1.0]
        return list(product(Cs, cws, lws))

    def _fit_prompt(self, pid: str, texts: list[str], y: np.ndarray, lo: float, hi: float,
                    progress: Progress | None = None) -> _PromptModel:
        """One prompt's featurizer and SVM; ``progress`` hears the spaCy analyses per answer, then the
        (fold, setting) SVMs of the cross-validation (stage ``CV``)."""
        t0 = time.perf_counter()
        c = self.cfg
        fz = ContentFeaturizer(c["features"], max_char=c["max_char"], max_word=c["max_word"],
                               max_dep=c["max_dep"], max_pos=c["max_pos"]).fit(texts, progress)
        blocks = fz.blocks(texts)
        # linear kernels add up over feature blocks: K = sum_g weight_g^2 * B_g B_g^T. Only the length block's
        # weight is tuned, so two n x n matrices suffice (the fixed-weight groups summed, and length).
        grams: dict[str, np.ndarray] = {}
        for g, b in blocks.items():
            key = "length" if g == "length" else "base"
            k = np.asarray((b @ b.T).todense())
            grams[key] = grams[key] + k if key in grams else k
        grid = self._grid()
        classes = np.unique(y)
        cv_table: list[dict[str, Any]] = []
        best = grid[0]
        best_qwk = float("nan")
        if len(grid) > 1 and len(classes) > 1:
            from sklearn.svm import SVC

            folds = _folds(y, c["cv"], derive_seed(c["seed"], "content-scorer-cv", pid))
            base = grams.get("base", 0.0)
            length = grams.get("length")
            oof = {cfg: np.zeros(len(y)) for cfg in grid}
            n_fits = len(folds) * len(grid)
            for f, (tr, te) in enumerate(folds):
                for g, cfg in enumerate(grid):
                    if progress is not None:
                        progress(f"CV ({len(folds)} folds x {len(grid)} settings)", f * len(grid) + g, n_fits)
                    C, cw, lw = cfg
                    K = base + lw * lw * length if length is not None else base
                    if len(np.unique(y[tr])) == 1:
                        oof[cfg][te] = y[tr][0]
                        continue
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        svc = SVC(kernel="precomputed", C=C, class_weight=cw).fit(K[np.ix_(tr, tr)], y[tr])
                    oof[cfg][te] = svc.predict(K[np.ix_(te, tr)])
            if progress is not None:
                progress(f"CV ({len(folds)} folds x {len(grid)} settings)", n_fits, n_fits)
            for cfg in grid:
                q = _qwk(y, oof[cfg], lo, hi)
                cv_table.append({"C": cfg[0], "class_weight": cfg[1], "length_weight": cfg[2],
                                 "cv_qwk": round(q, 4)})
                if not q <= best_qwk:  # first maximum in grid order (NaN-safe)
                    best, best_qwk = cfg, q
            t_cv = time.perf_counter() - t0
        else:
            t_cv = 0.0
        C, cw, lw = best
        weights = {"length": lw} if "length" in grams else {}
        X = fz.transform(texts, weights)
        gram = sum((weights.get(g, 1.0) ** 2) * k for g, k in grams.items())
        svm = LinearOvO.fit_gram(gram, X, y, C=C, class_weight=cw)
        summary = {
            "n_train": len(y), "classes": {str(int(k) if float(k).is_integer() else k): int((y == k).sum())
                                           for k in classes},
            "n_features": fz.group_sizes(), "chosen": {"C": C, "class_weight": cw, "length_weight": lw},
            "cv_qwk": None if not cv_table else round(best_qwk, 4), "cv_folds": c["cv"] if cv_table else 0,
            "cv_grid": cv_table, "cv_seconds": round(t_cv, 2),
            "fit_seconds": round(time.perf_counter() - t0, 2),
        }
        log.info("content-scorer prompt %s: %s", pid, {k: summary[k] for k in ("chosen", "cv_qwk", "fit_seconds")})
        return _PromptModel(fz, svm, weights, lo, hi, summary)
