"""What the per-prompt scorers (one model per prompt id: ContentScorer, EssayScorer, NeuralScorer) share:
training data grouped per prompt, the Target side, and the joblib-saved scorers' base class."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Self

import numpy as np

from callbluff.models import persist
from callbluff.progress import PROMPTS, Progress, prefixed
from callbluff.records import Prompt, ScoredResponse
from callbluff.targets.base import Input, Output


def predict_per_prompt(inputs: Sequence[Input], prompt_ids: Collection[str],
                       score_texts: Callable[[str, list[str]], np.ndarray], name: str, *,
                       allow_empty: bool = True) -> list[Output]:
    """One :class:`Output` per input, scoring each prompt's inputs in one batch.

    An input without ``prompt_id`` goes to the only prompt when the scorer has exactly one; an unknown
    prompt id becomes an error row naming the trained prompts (never a crash, never a silent zero). With
    ``allow_empty=False`` a blank text is an error row too (for models that cannot encode an empty input).
    """
    out: list[Output | None] = [None] * len(inputs)
    groups: dict[str, list[int]] = {}
    only = next(iter(prompt_ids)) if len(prompt_ids) == 1 else None
    for i, inp in enumerate(inputs):
        pid = inp.prompt_id if inp.prompt_id is not None else only
        if pid is None or str(pid) not in prompt_ids:
            out[i] = Output.failed(f"{name}: no model for prompt_id {pid!r} (input {i}); trained prompts: "
                                   f"{sorted(prompt_ids)}")
        elif not allow_empty and not inp.text.strip():
            out[i] = Output.failed(f"{name}: input {i} has empty text")
        else:
            groups.setdefault(str(pid), []).append(i)
    for pid, idx in groups.items():
        scores = score_texts(pid, [inputs[i].text for i in idx])
        for i, s in zip(idx, scores, strict=True):
            out[i] = Output(score=float(s))
    return [o if o is not None else Output.failed(f"{name}: internal error, no output") for o in out]


def natural_key(pid: str) -> tuple[int, int | str]:
    """Sort key putting numeric prompt ids in numeric order ("2" before "10"), others after them."""
    return (0, int(pid)) if pid.isdigit() else (1, pid)


@dataclass(frozen=True)
class PromptTrainingSet:
    """One prompt's training answers: texts, gold scores and the scale the model must predict on."""

    prompt_id: str
    texts: list[str]
    y: np.ndarray
    score_min: float
    score_max: float
    prompt: Prompt | None


def training_sets(responses: Sequence[ScoredResponse], prompts: Mapping[str, Prompt] | Prompt | None,
                  name: str) -> list[PromptTrainingSet]:
    """Group labelled ``responses`` by prompt id (in natural order) for per-prompt training.

    The scale is the Prompt's ``score_min..score_max`` when ``prompts`` has it (a Prompt or a mapping id ->
    Prompt), else the gold scores' min..max. Raises ``ValueError`` naming the response for a missing gold
    score, and the ids for gold scores outside the prompt's scale.
    """
    by_prompt: dict[str, list[ScoredResponse]] = {}
    for i, r in enumerate(responses):
        if r.gold is None:
            raise ValueError(f"{name}.fit: response {i} (id {r.id!r}, prompt {r.prompt_id!r}) has no gold score; "
                             "train on labelled data")
        by_prompt.setdefault(str(r.prompt_id), []).append(r)
    if not by_prompt:
        raise ValueError(f"{name}.fit: no training responses")
    if isinstance(prompts, Prompt):
        prompts = {prompts.id: prompts}
    sets = []
    for pid in sorted(by_prompt, key=natural_key):
        recs = by_prompt[pid]
        pr = (prompts or {}).get(pid)
        y = np.array([float(r.gold) for r in recs if r.gold is not None])
        lo = float(pr.score_min) if pr else float(y.min())
        hi = float(pr.score_max) if pr else float(y.max())
        bad = [r.id for r, g in zip(recs, y, strict=True) if not lo <= g <= hi]
        if bad:
            raise ValueError(f"{name}.fit: prompt {pid!r}: gold scores of ids {bad[:5]} are outside the prompt's "
                             f"scale {lo:g}-{hi:g}; fix the data or the Prompt's score range")
        sets.append(PromptTrainingSet(pid, [r.text for r in recs], y, lo, hi, pr))
    return sets


class JoblibPerPromptScorer:
    """Shared plumbing of the scikit-learn per-prompt scorers saved with :mod:`callbluff.models.persist`
    (ContentScorer, EssayScorer): state, ``fit`` over :func:`training_sets`, the Target protocol, the
    fingerprint and ``save``/``load``. A subclass sets ``kind`` and ``self.cfg`` (its constructor
    parameters, JSON-able) and implements ``_fit_set`` (one prompt), ``score_texts``, ``_metrics`` and
    ``_extra`` (what goes into ``model.json``); ``_init_args`` maps saved params back to the constructor.
    """

    kind: ClassVar[str]
    cfg: dict[str, Any]

    def _init_state(self) -> None:
        self.models: dict[str, Any] = {}
        self.data_spec: str | None = None
        self.trained_at: str | None = None
        self._blob: bytes | None = None

    # -- subclass hooks -------------------------------------------------------------------------------
    def _fit_set(self, t: PromptTrainingSet, progress: Progress | None = None) -> Any:
        raise NotImplementedError

    def score_texts(self, prompt_id: str, texts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError

    def _metrics(self) -> dict[str, Any]:
        raise NotImplementedError

    def _extra(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def _init_args(cls, params: Mapping[str, Any]) -> dict[str, Any]:
        return dict(params)

    # -- shared ---------------------------------------------------------------------------------------
    @property
    def params(self) -> dict[str, Any]:
        return dict(self.cfg)

    @property
    def prompt_ids(self) -> list[str]:
        return sorted(self.models, key=natural_key)

    @property
    def fingerprint(self) -> str:
        """``KIND:`` + hash of the saved state and configuration (see :mod:`.persist`)."""
        name = type(self).__name__
        if not self.models:
            raise RuntimeError(f"{name}: not trained; call fit() or {name}.load(DIR)")
        return persist.fingerprint_of(self.kind, self._state_blob(), self.cfg)

    def fit(self, responses: Sequence[ScoredResponse], prompts: Mapping[str, Prompt] | Prompt | None = None,
            *, data_spec: str | None = None, progress: Progress | None = None) -> Self:
        """Train one model per prompt id in ``responses`` (gold = ``response.gold``); scale, prompt text and
        source come from ``prompts`` (a mapping id -> Prompt, or one Prompt), else the scale is the gold
        scores' min..max (see :func:`training_sets`). ``progress`` (:mod:`callbluff.progress`) hears stage
        ``prompts`` per prompt fitted and, within one, ``prompt ID: STEP`` stages; it does not change the fit."""
        sets = training_sets(responses, prompts, type(self).__name__)
        if data_spec is not None:
            self.data_spec = data_spec
        for k, t in enumerate(sets):
            if progress is not None:
                progress(PROMPTS, k, len(sets))
            self.models[t.prompt_id] = self._fit_set(t, prefixed(progress, f"prompt {t.prompt_id}"))
        if progress is not None:
            progress(PROMPTS, len(sets), len(sets))
        self.trained_at = persist.utc_now()
        self._blob = None
        return self

    def predict(self, inputs: Sequence[Input]) -> list[Output]:
        """Target protocol: one :class:`Output` (``score``) per input; unknown prompts give an error row."""
        return predict_per_prompt(inputs, self.models, self.score_texts, type(self).__name__)

    def training_summary(self, prompt_id: str | None = None) -> dict[str, Any]:
        """Chosen parameters, CV QWK on train, sizes and timing (one prompt, or all prompts)."""
        if prompt_id is None:
            return {pid: dict(m.summary) for pid, m in self.models.items()}
        return dict(self._model(prompt_id).summary)

    def save(self, path: str | Path) -> Path:
        """Write ``model.joblib`` + ``model.json`` (kind, data, params, per-prompt CV metrics, versions)."""
        if not self.models:
            raise RuntimeError(f"{type(self).__name__}.save: nothing trained; call fit() first")
        return persist.save_dir(path, kind=self.kind, blob=self._state_blob(), params=self.cfg,
                                data=self.data_spec, metrics=self._metrics(), extra=self._extra(),
                                trained_at=self.trained_at)

    @classmethod
    def load(cls, path: str | Path) -> Self:
        state, blob, meta = persist.load_dir(path, cls.kind)
        self = cls(**cls._init_args(meta["params"]))
        self.models = state["models"]
        self.data_spec = meta.get("data")
        self.trained_at = meta.get("trained_at")
        self._blob = blob
        return self

    def _model(self, prompt_id: str) -> Any:
        m = self.models.get(str(prompt_id))
        if m is None:
            raise KeyError(f"{type(self).__name__}: no model for prompt {prompt_id!r}; trained prompts: "
                           f"{self.prompt_ids}")
        return m

    def _state_blob(self) -> bytes:
        if self._blob is None:
            self._blob = persist.state_bytes({"kind": self.kind, "models": self.models})
        return self._blob
