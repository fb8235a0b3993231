"""``EssayScorer``: an EASE-like feature-engineering essay scorer (Kumar et al. 2020, Sec. 2.2).

Kumar et al. attack EASE, "an open-source feature-engineering model maintained by EdX ... based on many
features such as tags, prompt-word overlap, n-gram based features, etc." (third of 154 teams in the
ASAP-AES competition). EASE itself is not packaged for Python 3; this is a re-implementation of the same
idea with scikit-learn, one model per prompt:

1. **Bag of n-grams**: TF-IDF of word 1-2-grams (sublinear tf, ``min_df=2``, at most ``max_ngrams``)
   and a ridge regression on it (``alpha`` chosen per prompt by efficient leave-one-out CV over
   ``alphas``). Its out-of-fold prediction on the training essays (``cv`` folds, seeded) is one feature of
   stage 2, as EASE feeds its bag-of-words evidence to the final model.
2. **EASE-like statistics** (:func:`callbluff.models.features.essay_statistics`): length, sentence and
   word statistics, POS-tag proportions (spaCy tagger), spelling errors (Hunspell ``en_US`` when present),
   prompt / source overlap (when the :class:`~callbluff.records.Prompt` has ``text`` / ``source``).
3. **Regressor**: gradient-boosted trees (scikit-learn ``GradientBoostingRegressor``, as EASE uses
   scikit-learn gradient boosting) on [n-gram prediction, statistics]; ``stack="ridge"`` uses a ridge
   regression on standardised features instead.

Predictions are rounded half up and clipped to the prompt's scale (``round=False`` in
:meth:`EssayScorer.score_texts` gives the raw value). Usable directly as a Target for task ``essay``.
Randomness (fold assignment, tree subsampling) comes from ``seed`` only.
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from callbluff.datasets import DataError, load
from callbluff.metrics import qwk
from callbluff.models import persist
from callbluff.models.features import ESSAY_STAT_NAMES, WORD_TOKEN_PATTERN, essay_statistics, spelling_vocabulary
from callbluff.models.per_prompt import JoblibPerPromptScorer, PromptTrainingSet, natural_key
from callbluff.progress import Progress
from callbluff.records import ScoredResponse
from callbluff.seeding import derive_seed

__all__ = ["EssayScorer", "holdout_split", "train_essay_scorer"]

log = logging.getLogger(__name__)


def _qwk(gold: Sequence[float], pred: Sequence[float], lo: float, hi: float) -> float:
    return float(qwk(gold, pred, score_min=lo, score_max=hi))


def _round_clip(values: np.ndarray, lo: float, hi: float) -> np.ndarray:
    return np.clip(np.floor(np.asarray(values, dtype=np.float64) + 0.5), lo, hi)


@dataclass
class _PromptModel:
    vectorizer: Any
    ridge: Any
    scaler: Any
    regressor: Any
    score_min: float
    score_max: float
    prompt_text: str
    source: str
    summary: dict[str, Any] = field(default_factory=dict)


class EssayScorer(JoblibPerPromptScorer):
    """EASE-like essay scorer (module doc): n-gram ridge + essay statistics -> gradient boosting.

    Parameters:
        ngram_range, max_ngrams, min_df: the TF-IDF bag of word n-grams.
        alphas: ridge penalties tried (leave-one-out CV on train).
        stack: ``"gbr"`` (gradient boosting, default) or ``"ridge"`` for the final regressor.
        n_estimators, learning_rate, max_depth, subsample: the gradient boosting.
        pos, spelling: compute the POS-proportion / spelling statistics (both need resources: spaCy,
            a dictionary); ``pos_max_chars``: POS-tag only the first N characters of an essay.
        cv: folds for the out-of-fold n-gram feature and the reported CV QWK; seed: all randomness.
    """

    kind = "essay-scorer"

    def __init__(
        self,
        *,
        ngram_range: tuple[int, int] = (1, 2),
        max_ngrams: int = 50_000,
        min_df: int = 2,
        alphas: Sequence[float] = (0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0),
        stack: Literal["gbr", "ridge"] = "gbr",
        n_estimators: int = 300,
        learning_rate: float = 0.05,
        max_depth: int = 3,
        subsample: float = 0.8,
        pos: bool = True,
        spelling: bool = True,
        pos_max_chars: int | None = 3000,
        cv: int = 5,
        cv_metrics: bool = True,
        seed: int = 13,
    ) -> None:
        if stack not in ("gbr", "ridge"):
            raise ValueError(f"EssayScorer: stack={stack!r}; use 'gbr' or 'ridge'")
        if cv < 2:
            raise ValueError(f"EssayScorer: cv={cv}; use at least 2 folds")
        self.cfg: dict[str, Any] = {
            "ngram_range": [int(ngram_range[0]), int(ngram_range[1])], "max_ngrams": int(max_ngrams),
            "min_df": int(min_df), "alphas": [float(a) for a in alphas], "stack": stack,
            "n_estimators": int(n_estimators), "learning_rate": float(learning_rate), "max_depth": int(max_depth),
            "subsample": float(subsample), "pos": bool(pos), "spelling": bool(spelling),
            "pos_max_chars": None if pos_max_chars is None else int(pos_max_chars), "cv": int(cv),
            "cv_metrics": bool(cv_metrics), "seed": int(seed),
        }
        self._init_state()

    # -- public ---------------------------------------------------------------------------------------
    def score_texts(self, prompt_id: str, texts: Sequence[str], *, rounded: bool = True) -> np.ndarray:
        """Scores of ``texts`` on prompt ``prompt_id``'s scale (rounded half up and clipped by default)."""
        m = self._model(prompt_id)
        texts = list(texts)
        if not texts:
            return np.zeros(0)
        ngram = m.ridge.predict(m.vectorizer.transform(texts))
        raw = m.regressor.predict(self._stage2(m, ngram, self._stats(texts, m.prompt_text, m.source)))
        return _round_clip(raw, m.score_min, m.score_max) if rounded else raw

    def feature_names(self) -> list[str]:
        """Names of the stage-2 features (``ngram_ridge`` then :data:`ESSAY_STAT_NAMES`)."""
        return ["ngram_ridge", *ESSAY_STAT_NAMES]

    # -- persistence (save/load: JoblibPerPromptScorer) ---------------------------------------------------
    def _metrics(self) -> dict[str, Any]:
        keys = ("cv_qwk", "ngram_cv_qwk", "n_train", "fit_seconds")
        return {pid: {k: m.summary.get(k) for k in keys} for pid, m in self.models.items()}

    def _extra(self) -> dict[str, Any]:
        return {"prompts": {pid: {"score_min": m.score_min, "score_max": m.score_max,
                                  "alpha": m.summary.get("alpha"), "has_prompt_text": bool(m.prompt_text),
                                  "has_source": bool(m.source)} for pid, m in self.models.items()},
                "spelling_vocabulary": spelling_vocabulary()[1] if self.cfg["spelling"] else None}

    @classmethod
    def _init_args(cls, params: Mapping[str, Any]) -> dict[str, Any]:
        p = dict(params)
        p["ngram_range"] = tuple(p["ngram_range"])
        return p

    # -- internals ------------------------------------------------------------------------------------
    def _fit_set(self, t: PromptTrainingSet, progress: Progress | None = None) -> _PromptModel:
        if len(t.y) < self.cfg["cv"] * 2:
            raise ValueError(f"EssayScorer.fit: prompt {t.prompt_id!r} has {len(t.y)} essays; need at least "
                             f"{self.cfg['cv'] * 2} (2 per fold, cv={self.cfg['cv']})")
        pr = t.prompt
        return self._fit_prompt(t.prompt_id, t.texts, t.y, t.score_min, t.score_max,
                                (pr.text if pr else "") or "", (pr.source if pr else "") or "", progress)

    def _stats(self, texts: Sequence[str], prompt_text: str, source: str,
               progress: Progress | None = None) -> np.ndarray:
        c = self.cfg
        return essay_statistics(texts, prompt_text=prompt_text, source=source, pos=c["pos"],
                                spelling=c["spelling"], pos_max_chars=c["pos_max_chars"], progress=progress)

    def _stage2(self, m: _PromptModel, ngram: np.ndarray, stats: np.ndarray) -> np.ndarray:
        X = np.column_stack([ngram, stats])
        return m.scaler.transform(X) if m.scaler is not None else X

    def _new_regressor(self, pid: str) -> Any:
        c = self.cfg
        if c["stack"] == "ridge":
            from sklearn.linear_model import RidgeCV

            return RidgeCV(alphas=c["alphas"] + [100.0, 300.0])
        from sklearn.ensemble import GradientBoostingRegressor

        return GradientBoostingRegressor(n_estimators=c["n_estimators"], learning_rate=c["learning_rate"],
                                         max_depth=c["max_depth"], subsample=c["subsample"],
                                         random_state=derive_seed(c["seed"], "essay-gbr", pid) % (2**32))

    def _fit_prompt(self, pid: str, texts: list[str], y: np.ndarray, lo: float, hi: float, prompt_text: str,
                    source: str, progress: Progress | None = None) -> _PromptModel:
        """One prompt's two stages; ``progress`` hears the statistics and spaCy tags per essay, then the
        stacking regressor's CV folds (stage ``CV``)."""
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import Ridge, RidgeCV
        from sklearn.model_selection import KFold
        from sklearn.preprocessing import StandardScaler

        c = self.cfg
        t0 = time.perf_counter()
        vec = TfidfVectorizer(ngram_range=tuple(c["ngram_range"]), sublinear_tf=True,
                              min_df=min(c["min_df"], max(1, len(texts) // 10)), max_features=c["max_ngrams"],
                              token_pattern=WORD_TOKEN_PATTERN, dtype=np.float64)
        A = vec.fit_transform(texts)
        ridge = RidgeCV(alphas=c["alphas"]).fit(A, y)
        alpha = float(ridge.alpha_)
        folds = list(KFold(c["cv"], shuffle=True,
                           random_state=derive_seed(c["seed"], "essay-cv", pid) % (2**32)).split(texts))
        oof = np.zeros(len(y))
        for tr, te in folds:
            oof[te] = Ridge(alpha=alpha).fit(A[tr], y[tr]).predict(A[te])
        t1 = time.perf_counter()
        stats = self._stats(texts, prompt_text, source, progress)
        t_stats = time.perf_counter() - t1
        X = np.column_stack([oof, stats])
        scaler = StandardScaler().fit(X) if c["stack"] == "ridge" else None
        Xs = scaler.transform(X) if scaler is not None else X
        cv_qwk = None
        if c["cv_metrics"]:
            pred = np.zeros(len(y))
            for f, (tr, te) in enumerate(folds):
                if progress is not None:
                    progress(f"CV ({len(folds)} folds)", f, len(folds))
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    pred[te] = self._new_regressor(pid).fit(Xs[tr], y[tr]).predict(Xs[te])
            cv_qwk = round(_qwk(y, _round_clip(pred, lo, hi), lo, hi), 4)
            if progress is not None:
                progress(f"CV ({len(folds)} folds)", len(folds), len(folds))
        reg = self._new_regressor(pid).fit(Xs, y)
        summary = {"n_train": len(y), "alpha": alpha, "n_ngrams": len(vec.vocabulary_), "cv_qwk": cv_qwk,
                   "ngram_cv_qwk": round(_qwk(y, _round_clip(oof, lo, hi), lo, hi), 4),
                   "stats_seconds": round(t_stats, 2), "fit_seconds": round(time.perf_counter() - t0, 2)}
        log.info("essay-scorer prompt %s: %s", pid, summary)
        return _PromptModel(vec, ridge, scaler, reg, lo, hi, prompt_text, source, summary)


def holdout_split(records: Sequence[ScoredResponse], fraction: float = 0.2,
                  seed: int = 13) -> tuple[list[ScoredResponse], list[ScoredResponse]]:
    """A fixed, seeded train/test split per prompt: the records of each prompt, ordered by id, are permuted
    by a generator derived from ``(seed, "holdout", prompt_id)`` and the first ``round(fraction * n)`` go
    to the test side. Independent of the input order."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"holdout_split: fraction={fraction}; use a value in (0, 1)")
    by_prompt: dict[str, list[ScoredResponse]] = {}
    for r in records:
        by_prompt.setdefault(str(r.prompt_id), []).append(r)
    train: list[ScoredResponse] = []
    test: list[ScoredResponse] = []
    for pid in sorted(by_prompt, key=natural_key):
        recs = sorted(by_prompt[pid], key=lambda r: natural_key(r.id))
        perm = np.random.default_rng(derive_seed(seed, "holdout", pid)).permutation(len(recs))
        n_test = int(round(fraction * len(recs)))
        test += [recs[i] for i in perm[:n_test]]
        train += [recs[i] for i in perm[n_test:]]
    return train, test


def train_essay_scorer(data_spec: str, out_dir: str | Path, prompts: Sequence[str] | None = None, *,
                       holdout: float = 0.0, holdout_seed: int = 13, **kw: Any) -> dict[str, Any]:
    """Train an :class:`EssayScorer` on dataset spec ``data_spec`` (e.g. ``asap-aes:training_set_rel3.tsv``),
    save it to ``out_dir`` and return its metadata (``model.json``) with ``train_seconds``.

    With ``holdout`` > 0 the model is trained on a seeded split (:func:`holdout_split`) and the QWK on the
    held-out essays is saved per prompt (``metrics[pid]["holdout_qwk"]``). ``kw`` go to :class:`EssayScorer`.
    """
    import json


    t0 = time.perf_counter()
    ds = load(data_spec)
    first = next(iter(ds), None)
    if first is not None and not isinstance(first, ScoredResponse):
        raise DataError(f"essay-scorer trains on scored responses (essay or content data); {data_spec} is "
                        f"{ds.task!r}")
    wanted = {str(p) for p in prompts} if prompts else None
    if wanted and not wanted <= set(ds.prompts):
        raise DataError(f"{data_spec}: unknown prompt(s) {', '.join(sorted(wanted - set(ds.prompts)))}; the data "
                        f"has {', '.join(sorted(ds.prompts, key=natural_key))}")
    records = [r for r in ds if isinstance(r, ScoredResponse) and (wanted is None or r.prompt_id in wanted)]
    test: list[ScoredResponse] = []
    if holdout > 0:
        records, test = holdout_split(records, holdout, holdout_seed)
    model = EssayScorer(**kw).fit(records, ds.prompts, data_spec=data_spec)
    model.save(out_dir)
    f = Path(out_dir) / persist.MODEL_JSON
    meta = json.loads(f.read_text(encoding="utf-8"))
    if test:
        for pid in model.prompt_ids:
            recs = [r for r in test if r.prompt_id == pid]
            m = model.models[pid]
            pred = model.score_texts(pid, [r.text for r in recs])
            meta["metrics"][pid]["holdout_qwk"] = round(_qwk([r.gold for r in recs], pred, m.score_min,
                                                             m.score_max), 4)
            meta["metrics"][pid]["holdout_n"] = len(recs)
        meta["holdout"] = {"fraction": holdout, "seed": holdout_seed}
        f.write_text(json.dumps(meta, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
    meta["train_seconds"] = round(time.perf_counter() - t0, 2)
    return meta
