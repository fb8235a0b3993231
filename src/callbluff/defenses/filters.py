"""Adversarial-answer filters (Ding et al. 2020, Sec. 5.4): a module before the scorer that flags answers as
potential adversarials "for human inspection"; a flagged answer is rejected (the prompt's minimum score, see
:class:`callbluff.defenses.filtered.FilteredTarget`).

Two filters of the paper and one of ours (:mod:`callbluff.defenses.plausibility`), all fitted per prompt on
the prompt's training answers and saved to a directory (``filter.json`` + ``state.joblib``) that names the
prompts it knows; asking it about another prompt is an error that says so.

* :class:`NonWordRateFilter` -- "rejecting all answers with a non-word ratio above a certain threshold"
  (Hunspell dictionary enlarged by the prompt's words, :mod:`callbluff.defenses.lexicon`); the threshold
  maximises "the average value of" ARR and real-answer recall on a development split.
* :class:`UnigramPerplexityFilter` -- "a unigram language model on the training dataset ... If an item has a
  perplexity of infinity, the filter will reject it": an answer with a word the prompt's training answers
  never used (no smoothing, so its probability is 0) is flagged.

Development split (where the paper is silent): per prompt, ``dev_fraction`` (20 %) of the training answers,
drawn with a seed derived from ``seed`` and the prompt id, are held out; the dictionary / n-gram tables are
built from the rest, and the adversarial development answers come from the generator battery
(:func:`callbluff.countermeasures.battery.battery`, ``dev_count`` per configuration) fitted on that rest, so the
development answers are unseen by both. The battery generates through the engine, which sits above the
defences (the engine builds filtered targets), so :meth:`AnswerFilter.fit` takes it as an argument
(``battery=callbluff.countermeasures.battery.battery``; ``callbluff filter fit`` passes it). An answer without any word token is always flagged (nothing there is
an answer; the scorer would reject it too). A prompt with too few answers to split (fewer than
``min_dev`` development answers) keeps the configured ``threshold`` instead of choosing one.
"""

from __future__ import annotations

import hashlib
import json
import math
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from io import BytesIO
from pathlib import Path
from typing import Any, ClassVar, Self

import numpy as np

from callbluff.defenses.lexicon import hunspell_words, nonword_rate, shared_words
from callbluff.progress import PROMPTS, Progress, prefixed
from callbluff.records import Prompt, ScoredResponse
from callbluff.resources.ngrams import word_tokens
from callbluff.seeding import derive_seed

Battery = Callable[..., Sequence[Any]]
"""``battery(records, prompt, count, *, seed, corpus, errors[, progress])`` -> generated answers with a ``text``
(:func:`callbluff.countermeasures.battery.battery`; ``progress`` is passed only when the fit has a hook)."""

FILTER_FILE = "filter.json"
STATE_FILE = "state.joblib"


class FilterPromptError(KeyError):
    """A filter asked about a prompt it was not fitted on."""

    def __str__(self) -> str:
        return str(self.args[0])


def dev_split(records: Sequence[ScoredResponse], fraction: float, seed: int,
              prompt_id: str) -> tuple[list[ScoredResponse], list[ScoredResponse]]:
    """(fit part, development part): ``fraction`` of ``records`` held out, drawn with a seed of the prompt."""
    n = len(records)
    k = int(round(n * fraction)) if n >= 2 else 0
    order = np.random.default_rng(derive_seed(seed, "filter-dev-split", prompt_id)).permutation(n)
    dev = set(order[:k].tolist())
    return [r for i, r in enumerate(records) if i not in dev], [r for i, r in enumerate(records) if i in dev]


def best_threshold(real: np.ndarray, adversarial: np.ndarray) -> tuple[float, float, float]:
    """The threshold ``t`` (flag when value > t) maximising mean(ARR, real recall) on development values,
    the largest such ``t`` on ties (fewest real answers lost). Returns (t, ARR %, recall %)."""
    cands = np.unique(np.concatenate([real, adversarial, [-math.inf]]))
    best = (-1.0, 0.0, 0.0, 0.0)
    for t in cands.tolist():
        a = float(np.mean(adversarial > t)) * 100 if len(adversarial) else 0.0
        r = float(np.mean(real <= t)) * 100 if len(real) else 100.0
        m = (a + r) / 2
        if m >= best[0]:
            best = (m, t, a, r)
    return best[1], best[2], best[3]


class AnswerFilter(ABC):
    """Fit per prompt, then :meth:`flag` answers. Subclasses set ``kind`` and implement ``_fit_prompt`` and
    ``_values`` (one number per answer, higher = more suspicious; flagged above the prompt's threshold)."""

    kind: ClassVar[str]
    uses_dev: ClassVar[bool] = True

    def __init__(self, *, dev_fraction: float = 0.2, dev_count: int = 40, seed: int = 0,
                 threshold: float = 0.5, min_dev: int = 10, corpus: str | None = None) -> None:
        if not 0 < dev_fraction < 1:
            raise ValueError(f"{type(self).__name__}: dev_fraction={dev_fraction}; use a value in (0, 1)")
        self.params: dict[str, Any] = {"dev_fraction": float(dev_fraction), "dev_count": int(dev_count),
                                       "seed": int(seed), "threshold": float(threshold), "min_dev": int(min_dev),
                                       "corpus": corpus}
        self.states: dict[str, dict[str, Any]] = {}
        self.errors: list[str] = []

    # -- fitting --------------------------------------------------------------------------------------
    def fit(self, records: Sequence[ScoredResponse], prompts: Mapping[str, Prompt], *,
            adversarial: Mapping[str, Sequence[str]] | None = None, battery: Battery | None = None,
            progress: Progress | None = None) -> Self:
        """Fit on every prompt of ``prompts`` with its ``records`` (a prompt without records is fitted on
        none: the unigram filter then flags every answer, the others judge by the non-word rate and the
        configured ``threshold``). The development adversarials of a prompt are ``adversarial[prompt id]``
        when given, else ``battery`` run on the prompt's fit part (:func:`callbluff.countermeasures.battery.battery`); a filter
        that chooses its threshold on them and gets neither raises ValueError naming both. ``progress``
        (:mod:`callbluff.progress`) hears the prompts fitted (:data:`~callbluff.progress.PROMPTS`) and, per prompt,
        the battery's configurations and the fit itself (``prompt P: fit``); it changes nothing fitted."""
        by_prompt: dict[str, list[ScoredResponse]] = {}
        for r in records:
            by_prompt.setdefault(str(r.prompt_id), []).append(r)
        todo = sorted(prompts.items())
        if progress is not None:
            progress(PROMPTS, 0, len(todo))
        for done, (pid, prompt) in enumerate(todo, 1):
            step = prefixed(progress, f"prompt {pid}")
            recs = by_prompt.get(pid, [])
            p = self.params
            fit_part, dev_part = (dev_split(recs, p["dev_fraction"], p["seed"], pid) if self.uses_dev
                                  else (recs, []))
            dev_adv: list[str] = []
            if self.uses_dev and len(dev_part) >= p["min_dev"]:
                if adversarial is not None and pid in adversarial:
                    dev_adv = [t for t in adversarial[pid] if t.strip()]
                elif battery is None:
                    raise ValueError(f"{type(self).__name__}.fit: prompt {pid} needs development adversarials: pass "
                                     "adversarial={prompt id: texts} or battery=callbluff.countermeasures.battery.battery")
                else:
                    extra = {"progress": step} if step is not None else {}
                    dev_adv = [a.text for a in battery(fit_part, prompt, p["dev_count"], seed=p["seed"],
                                                       corpus=p["corpus"], errors=self.errors, **extra)]
            if step is not None:
                step("fit", 0, 1)
            state = self._fit_prompt([r.text for r in fit_part], [r.text for r in dev_part], dev_adv)
            if step is not None:
                step("fit", 1, 1)
            state.update({"score_min": float(prompt.score_min), "score_max": float(prompt.score_max),
                          "n_fit": len(fit_part), "n_dev": len(dev_part), "n_dev_adversarial": len(dev_adv)})
            self.states[pid] = state
            if progress is not None:
                progress(PROMPTS, done, len(todo))
        return self

    def _choose_threshold(self, state: dict[str, Any], dev_real: Sequence[str], dev_adv: Sequence[str]) -> None:
        """Set ``state["threshold"]`` by :func:`best_threshold` on the development answers, or the configured
        threshold when there are too few of them."""
        if len(dev_real) < self.params["min_dev"] or not dev_adv:
            state.update({"threshold": self.params["threshold"], "threshold_from": "configured (too few "
                          "development answers)"})
            return
        real, adv = self._values_of(state, dev_real), self._values_of(state, dev_adv)
        t, a, r = best_threshold(real, adv)
        state.update({"threshold": t, "threshold_from": "development split", "dev_arr": round(a, 2),
                      "dev_recall": round(r, 2)})

    @abstractmethod
    def _fit_prompt(self, fit_texts: list[str], dev_real: list[str], dev_adv: list[str]) -> dict[str, Any]:
        """The prompt's state (JSON-able or picklable), threshold included."""

    @abstractmethod
    def _values_of(self, state: dict[str, Any], texts: Sequence[str]) -> np.ndarray:
        """One suspicion value per text (higher = more adversarial)."""

    # -- applying -------------------------------------------------------------------------------------
    @property
    def prompt_ids(self) -> list[str]:
        return sorted(self.states)

    def state(self, prompt_id: str | None) -> dict[str, Any]:
        pid = str(prompt_id) if prompt_id is not None else (self.prompt_ids[0] if len(self.states) == 1 else None)
        if pid is None or pid not in self.states:
            raise FilterPromptError(f"{self.kind} filter: fitted on prompts {self.prompt_ids}, not on prompt "
                                    f"{prompt_id!r}; fit it on that prompt's answers (`callbluff filter fit`)")
        return self.states[pid]

    def values(self, prompt_id: str | None, texts: Sequence[str]) -> np.ndarray:
        """Suspicion values of ``texts`` for ``prompt_id`` (FilterPromptError for an unknown prompt)."""
        return self._values_of(self.state(prompt_id), texts)

    def flag(self, prompt_id: str | None, texts: Sequence[str]) -> np.ndarray:
        """True for each text the filter rejects as a potential adversarial answer."""
        st = self.state(prompt_id)
        vals = self._values_of(st, texts)
        empty = np.array([not word_tokens(t) for t in texts], dtype=bool)
        return (vals > st["threshold"]) | empty

    def summary(self) -> dict[str, dict[str, Any]]:
        """Per prompt: sizes, threshold and where it came from, development ARR / recall."""
        keys = ("n_fit", "n_dev", "n_dev_adversarial", "threshold", "threshold_from", "dev_arr", "dev_recall",
                "score_min", "score_max")
        return {pid: {k: s[k] for k in keys if k in s} for pid, s in sorted(self.states.items())}

    # -- persistence ----------------------------------------------------------------------------------
    @property
    def fingerprint(self) -> str:
        import joblib
        buf = BytesIO()
        joblib.dump(self.states, buf)
        h = hashlib.sha256(buf.getvalue())
        h.update(json.dumps(self.params, sort_keys=True).encode())
        return f"{self.kind}:{h.hexdigest()[:16]}"

    def save(self, path: str | Path) -> Path:
        """Write ``filter.json`` (kind, params, prompts with their thresholds) and ``state.joblib``."""
        import joblib

        if not self.states:
            raise RuntimeError(f"{type(self).__name__}.save: not fitted; call fit() first")
        d = Path(path)
        d.mkdir(parents=True, exist_ok=True)
        joblib.dump(self.states, d / STATE_FILE)
        meta = {"kind": self.kind, "params": self.params, "prompts": self.summary(),
                "fingerprint": self.fingerprint, "errors": self.errors}
        (d / FILTER_FILE).write_text(json.dumps(meta, indent=2, default=str) + "\n", encoding="utf-8")
        return d


FILTERS: dict[str, type[AnswerFilter]] = {}
"""Kind -> filter class. Ours (:mod:`callbluff.defenses.plausibility`) registers itself when ``callbluff.defenses``
is imported, which Python does before any of its submodules, this one included."""


def register_filter(cls: type[AnswerFilter]) -> type[AnswerFilter]:
    FILTERS[cls.kind] = cls
    return cls


def load_filter(path: str | Path) -> AnswerFilter:
    """A filter saved with :meth:`AnswerFilter.save`; ValueError naming the file and the fix otherwise."""
    import joblib

    d = Path(path)
    meta_path = d / FILTER_FILE
    if not meta_path.is_file() or not (d / STATE_FILE).is_file():
        raise ValueError(f"{d}: not a saved filter (needs {FILTER_FILE} and {STATE_FILE}); make one with "
                         "`callbluff filter fit`")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except ValueError as e:
        raise ValueError(f"{meta_path}: not valid JSON ({e}); fit the filter again") from None
    kind = meta.get("kind")
    if kind not in FILTERS:
        raise ValueError(f"{meta_path}: unknown filter kind {kind!r}; known: {', '.join(sorted(FILTERS))}")
    f = FILTERS[kind](**meta.get("params", {}))
    f.states = joblib.load(d / STATE_FILE)
    f.errors = list(meta.get("errors", []))
    return f


@register_filter
class NonWordRateFilter(AnswerFilter):
    """Ding et al. 2020 Sec. 5.4 "Non-word rate" (module doc; dictionary: :mod:`callbluff.defenses.lexicon`).

    The value of an answer is its non-word rate; flagged above the threshold chosen on the development split
    (``min_answers``: how many training answers must share a word for it to enlarge the dictionary)."""

    kind = "nonword"

    def __init__(self, *, min_answers: int = 2, **kw: Any) -> None:
        super().__init__(**kw)
        self.params["min_answers"] = int(min_answers)

    def _fit_prompt(self, fit_texts: list[str], dev_real: list[str], dev_adv: list[str]) -> dict[str, Any]:
        _, source = hunspell_words()
        state: dict[str, Any] = {"extra": frozenset(shared_words(fit_texts, self.params["min_answers"])),
                                 "dictionary": source}
        self._choose_threshold(state, dev_real, dev_adv)
        return state

    def _values_of(self, state: dict[str, Any], texts: Sequence[str]) -> np.ndarray:
        words, source = hunspell_words()
        if source != state["dictionary"]:
            raise ValueError(f"nonword filter: the Hunspell dictionary changed since fit ({source}, fitted with "
                             f"{state['dictionary']}); fit the filter again")
        return np.array([nonword_rate(word_tokens(t), words, state["extra"]) for t in texts], dtype=float)


@register_filter
class UnigramPerplexityFilter(AnswerFilter):
    """Ding et al. 2020 Sec. 5.4 "Perplexity of language models" (module doc): a maximum-likelihood unigram
    model of the prompt's training answers (all of them: there is no threshold to choose). The value of an
    answer is its perplexity (``inf`` when one of its words has probability 0); flagged when infinite."""

    kind = "unigram-perplexity"
    uses_dev = False

    def _fit_prompt(self, fit_texts: list[str], dev_real: list[str], dev_adv: list[str]) -> dict[str, Any]:
        counts = Counter(w for t in fit_texts for w in word_tokens(t))
        total = sum(counts.values())
        return {"logp": {w: math.log(c / total) for w, c in counts.items()}, "threshold": math.inf,
                "threshold_from": "paper (reject infinite perplexity)"}

    def _values_of(self, state: dict[str, Any], texts: Sequence[str]) -> np.ndarray:
        logp = state["logp"]
        out = []
        for t in texts:
            toks = word_tokens(t)
            if not toks or any(w not in logp for w in toks):
                out.append(math.inf)
            else:
                out.append(math.exp(-sum(logp[w] for w in toks) / len(toks)))
        return np.array(out, dtype=float)

    def flag(self, prompt_id: str | None, texts: Sequence[str]) -> np.ndarray:
        return np.isinf(self.values(prompt_id, texts))
