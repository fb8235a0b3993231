"""Countermeasure 2 of Ding et al. 2020 (Sec. 5.2 "Adversarial Training"): "we enrich our training data with
1000 instances created using the same methods as for our adversarial examples", each labelled as a wrong
answer (the bottom of the prompt's scale; on ASAP-SAS 0).

:func:`adversarial_training_set` makes those instances per prompt with the generator battery
(:func:`callbluff.countermeasures.battery.battery`, fitted on the prompt's training answers) and returns them as
:class:`~callbluff.records.ScoredResponse` records to add to the training data. Which generators and how
many: ``configs`` (default: all 25 of Figure 1) and ``total`` instances per prompt, split evenly over the
configurations (the paper's Figure 3 augments with one method at a time, 1,000 instances each: pass one
configuration and ``total=1000``). The command-line route for the same data is ``callbluff augment`` with
content generators (their ``expect = "bottom"`` gives the prompt's minimum as the training score).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from callbluff.countermeasures.battery import battery
from callbluff.records import Prompt, ScoredResponse


def adversarial_training_set(records: Sequence[ScoredResponse], prompts: Mapping[str, Prompt], *,
                             total: int = 1000, configs: Sequence[Mapping[str, Any]] | None = None,
                             seed: int = 0, corpus: str | None = None,
                             errors: list[str] | None = None) -> list[ScoredResponse]:
    """About ``total`` generated answers per prompt of ``prompts`` (``ceil(total / len(configs))`` per
    configuration, cut to ``total``), each a ScoredResponse with the prompt's minimum as gold score and an id
    ``adv-<prompt>-<config>-<i>``. Configurations that cannot run on a prompt are skipped (``errors``)."""
    from callbluff.attacks.content import ding2020_configurations

    cfgs = list(configs) if configs is not None else ding2020_configurations(1, corpus)
    per = max(1, math.ceil(total / max(1, len(cfgs))))
    by_prompt: dict[str, list[ScoredResponse]] = {}
    for r in records:
        by_prompt.setdefault(str(r.prompt_id), []).append(r)
    out: list[ScoredResponse] = []
    for pid, prompt in sorted(prompts.items()):
        answers = battery(by_prompt.get(pid, []), prompt, per, seed=seed, configs=cfgs, corpus=corpus,
                          errors=errors)
        for i, a in enumerate(answers[:total]):
            out.append(ScoredResponse(f"adv-{pid}-{a.config.replace(' ', '')}-{i}", pid, a.text,
                                      (float(prompt.score_min),)))
    return out
