"""The adversarial answers the countermeasures learn from and are measured on (Ding et al. 2020, Sec. 2.2 and
5): the generator configurations of :func:`~callbluff.attacks.content.ding2020_configurations` run on one
prompt's answers, through the engine's pure generation (fit once per configuration and prompt, answer ``i``
from its own ``prompt_rng``), so the same seed gives the same answers whatever the order or split.

``Shuffle`` is a static attack (one answer per correct source answer); here it runs over the prompt's
correct answers in a seeded order until ``count`` answers exist, so every configuration contributes about the
same number of answers (the paper: "1,000 answers for each method", Sec. 3.3).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from callbluff.records import Prompt, ScoredResponse
from callbluff.resources.context import default_resources
from callbluff.seeding import derive_seed, record_rng


@dataclass(frozen=True)
class AdversarialAnswer:
    """One generated answer: its text and the configuration that made it (attack name + label with ``n``)."""

    prompt_id: str
    text: str
    attack: str
    config: str


def config_label(cfg: Mapping[str, Any]) -> str:
    """``PromptChars n=3``-style label of a ``{"attack", "params"}`` configuration."""
    n = cfg.get("params", {}).get("n")
    return cfg["attack"] + (f" n={n}" if n is not None else "")


def battery(records: Sequence[ScoredResponse], prompt: Prompt, count: int, *, seed: int = 0,
            configs: Sequence[Mapping[str, Any]] | None = None, corpus: str | None = None,
            errors: list[str] | None = None) -> list[AdversarialAnswer]:
    """``count`` adversarial answers per configuration for ``prompt``, every generator fitted on ``records``
    (the prompt's answers that the attacker may see). ``configs`` default to the paper's 25
    (:func:`~callbluff.attacks.content.ding2020_configurations`; their ``count`` is replaced by ``count``).

    Never raises for one configuration: one that cannot fit or generate on this prompt (no answers, an
    unusable corpus) is skipped and its cause appended to ``errors``."""
    from callbluff.attacks.base import PromptGenerator, get_attack
    from callbluff.attacks.content import ding2020_configurations
    res = default_resources()
    configs = list(configs) if configs is not None else ding2020_configurations(count, corpus)
    out: list[AdversarialAnswer] = []
    for cfg in configs:
        label = config_label(cfg)
        try:
            cls = get_attack(cfg["attack"])
            params = dict(cfg.get("params", {}))
            if cls.kind == "generator":
                params["count"] = count
            attack = cls(**params)
            if isinstance(attack, PromptGenerator):
                state = attack.fit(records, prompt, res)
                texts = [ex.text for ex in attack.examples_for(prompt, state, seed, res)]
            else:
                texts = _static_answers(attack, records, prompt, count, seed, res)
        except Exception as e:  # noqa: BLE001 - reported, the other configurations go on
            if errors is not None:
                errors.append(f"prompt {prompt.id}: {label}: {type(e).__name__}: {e}")
            continue
        out += [AdversarialAnswer(prompt.id, t, cls.name, label) for t in texts if t.strip()]
    return out


def _static_answers(attack: Any, records: Sequence[ScoredResponse], prompt: Prompt, count: int, seed: int,
                    res: Any) -> list[str]:
    """Up to ``count`` answers of a static attack (Shuffle) over ``records`` in a seeded order."""
    import numpy as np

    order = np.random.default_rng(derive_seed(seed, "battery-order", prompt.id, attack.name)).permutation(
        len(records))
    texts: list[str] = []
    for i in order.tolist():
        r = records[i]
        for ex in attack.examples(r, record_rng(seed, r.id, attack.name, attack.params_dict), res, prompt, None):
            texts.append(ex.text)
        if len(texts) >= count:
            break
    return texts[:count]
