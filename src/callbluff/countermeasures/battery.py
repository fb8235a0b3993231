"""The adversarial answers the countermeasures learn from and are measured on (Ding et al. 2020, Sec. 2.2 and
5): the generator configurations of :func:`~callbluff.attacks.content.ding2020_configurations` run on one
prompt's answers, through the engine's one generation path (:func:`callbluff.engine.generate.generate`: fit once
per configuration and prompt, answer ``i`` from its own ``prompt_rng``), so the same seed gives the same answers
whatever the order or split.

``Shuffle`` is a static attack (one answer per correct source answer); here it runs over the prompt's
correct answers in a seeded order until ``count`` answers exist, so every configuration contributes about the
same number of answers (the paper: "1,000 answers for each method", Sec. 3.3).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from callbluff.attacks.base import get_attack
from callbluff.attacks.content import ding2020_configurations
from callbluff.engine.generate import AttackSpec, Chunk, generate
from callbluff.progress import Progress
from callbluff.records import Prompt, ScoredResponse
from callbluff.seeding import derive_seed

NOISE_GRAMMAR = {"attack": "ModGrammar", "params": {"variant": "errors"}}
"""The grammar noise of :func:`noisy_real`: Kumar et al. 2020's ModGrammar "errors" test case (Sec. 3.2,
Table 3: article errors, subject-verb agreement errors, informal conventions) on every sentence."""
NOISE_SPELLING_RATE = 0.2
"""The spelling noise of :func:`noisy_real`: this share of an answer's words replaced by real misspellings
(:func:`callbluff.defenses.tradeoff.noisy_answer`; Ding et al. 2020 Sec. 5.3 argue such answers must stay
accepted)."""


STAGE = "development answers (generator configurations)"
"""The progress stage :func:`battery` reports (configurations done of all)."""


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
            errors: list[str] | None = None, progress: Progress | None = None) -> list[AdversarialAnswer]:
    """``count`` adversarial answers per configuration for ``prompt``, every generator fitted on ``records``
    (the prompt's answers that the attacker may see). ``configs`` default to the paper's 25
    (:func:`~callbluff.attacks.content.ding2020_configurations`; their ``count`` is replaced by ``count``).

    Never raises for one configuration: one that cannot fit or generate on this prompt (no answers, an
    unusable corpus) is skipped and its cause appended to ``errors``; a static attack failing on one source
    answer is reported there too and the others go on. ``progress`` (:mod:`callbluff.progress`) hears
    :data:`STAGE` once per configuration done (skipped ones included), which changes nothing generated."""
    configs = list(configs) if configs is not None else ding2020_configurations(count, corpus)
    out: list[AdversarialAnswer] = []
    if progress is not None:
        progress(STAGE, 0, len(configs))
    for k, cfg in enumerate(configs, 1):
        if progress is not None and k > 1:
            progress(STAGE, k - 1, len(configs))
        label = config_label(cfg)
        try:
            cls = get_attack(cfg["attack"])
            params = dict(cfg.get("params", {}))
            if cls.kind == "generator":
                params["count"] = count
            spec = AttackSpec.make(cls.name, params)
            if cls.kind == "generator":
                chunks = generate([spec], [], {prompt.id: prompt}, seed=seed, fit_on=records, chunk_size=count,
                                  ahead=False)
                texts, problems = _texts(chunks, count)
            else:
                texts, problems = _static_answers(spec, cls.name, records, prompt, count, seed)
        except Exception as e:  # noqa: BLE001 - reported, the other configurations go on
            if errors is not None:
                errors.append(f"prompt {prompt.id}: {label}: {type(e).__name__}: {e}")
            continue
        if errors is not None:
            errors.extend(f"prompt {prompt.id}: {label}: {p}" for p in problems)
        out += [AdversarialAnswer(prompt.id, t, cls.name, label) for t in texts if t.strip()]
    if progress is not None:
        progress(STAGE, len(configs), len(configs))
    return out


def noisy_real(records: Sequence[ScoredResponse], prompt: Prompt, seed: int = 0, *, typos: Any = None,
               grammar: bool = True, spelling: bool = True) -> list[tuple[int, str]]:
    """Noised copies of real answers, as (index in ``records``, text) pairs: each answer with grammar errors
    (:data:`NOISE_GRAMMAR`, through the one generation path with ``seed``; an answer the rules leave unchanged
    has no copy) and each with :data:`NOISE_SPELLING_RATE` of its words misspelt (``typos``: a
    :class:`~callbluff.resources.typos.TypoCorpus`; default: the fetched default corpus, or no spelling copies
    when there is none), each answer's misspellings drawn from ``derive_seed(seed, "noisy-real", id)``. What a
    filter learns as real (:meth:`callbluff.defenses.plausibility.PlausibilityFilter.fit`'s ``noise``) and what
    the findings measure it on (with another seed)."""
    import numpy as np

    from callbluff.defenses.tradeoff import noisy_answer

    out: list[tuple[int, str]] = []
    if grammar and records:
        where = {r.id: i for i, r in enumerate(records)}
        spec = AttackSpec.make(NOISE_GRAMMAR["attack"], NOISE_GRAMMAR["params"])
        for chunk in generate([spec], list(records), {prompt.id: prompt}, seed=seed, chunk_size=256, ahead=False):
            out += [(where[ex.source_id], ex.text) for ex in chunk.examples]
    if spelling and records:
        if typos is None:
            from callbluff.resources.typos import default_typos

            try:
                typos = default_typos()
            except FileNotFoundError:
                typos = None
        if typos is not None:
            for i, r in enumerate(records):
                text, replaced, _ = noisy_answer(r.text, NOISE_SPELLING_RATE, typos,
                                                 np.random.default_rng(derive_seed(seed, "noisy-real", r.id)))
                if replaced:
                    out.append((i, text))
    return out


def _texts(chunks: Iterable[Chunk], count: int) -> tuple[list[str], list[str]]:
    """The first ``count`` texts of the chunks (read no further), and the generation errors met on the way."""
    texts: list[str] = []
    problems: list[str] = []
    for chunk in chunks:
        texts.extend(ex.text for ex in chunk.examples)
        problems.extend(f"{e.get('source_id')}: {e['cause']}" for e in chunk.errors)
        if len(texts) >= count:
            break
    return texts[:count], problems


def _static_answers(spec: AttackSpec, name: str, records: Sequence[ScoredResponse], prompt: Prompt, count: int,
                    seed: int) -> tuple[list[str], list[str]]:
    """Up to ``count`` answers of a static attack (Shuffle) over ``records`` in a seeded order."""
    import numpy as np

    order = np.random.default_rng(derive_seed(seed, "battery-order", prompt.id, name)).permutation(len(records))
    ordered = [records[i] for i in order.tolist()]
    chunks = generate([spec], ordered, {prompt.id: prompt}, seed=seed, chunk_size=_STATIC_CHUNK, ahead=False)
    return _texts(chunks, count)


_STATIC_CHUNK = 64
"""Source answers per generation chunk for a static attack: the battery stops after the chunk that reaches
``count`` answers (the texts are the same whatever this is; only the work past ``count`` changes)."""
