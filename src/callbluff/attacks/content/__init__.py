"""Content-scoring adversaries of Ding et al. 2020, "Don't take 'nswvtnvakgxpm' for an answer" (task
``content``), one module per kind of Sec. 2.2: ``shuffle`` (Shuffle), ``uniform`` (RandomChars,
RandomWords), ``ngram`` (GenericChars, PromptChars, GenericWords, PromptWords), ``burst`` (ContentBurst),
``lm`` (LMGenerate); and ``offtopic`` (OffTopic: a real answer to another prompt, the wrong-question
bluff the paper's Abstract names but does not generate); ``misspell`` (Misspell: the benign noise of Sec. 5.3). Importing this package registers them. :func:`ding2020_configurations` lists the
paper's 25 generator configurations (Sec. 3.3, Figure 1).
"""

from __future__ import annotations

from typing import Any

from callbluff.attacks.content.burst import ContentBurst
from callbluff.attacks.content.common import DING
from callbluff.attacks.content.lm import LMGenerate
from callbluff.attacks.content.misspell import Misspell, MisspellParams
from callbluff.attacks.content.offtopic import OffTopic, OffTopicParams
from callbluff.attacks.content.ngram import GenericChars, GenericWords, PromptChars, PromptWords
from callbluff.attacks.content.shuffle import Shuffle, ShuffleParams
from callbluff.attacks.content.uniform import RandomChars, RandomWords

__all__ = [
    "DING", "ContentBurst", "GenericChars", "GenericWords", "LMGenerate", "Misspell", "MisspellParams", "OffTopic", "OffTopicParams", "PromptChars", "PromptWords",
    "RandomChars", "RandomWords", "Shuffle", "ShuffleParams", "ding2020_configurations",
]


def ding2020_configurations(count: int = 1000, corpus: str | None = None,
                            model_dir: str | None = None) -> list[dict[str, Any]]:
    """The 25 adversary configurations of Ding et al. 2020 (Sec. 3.3: "1,000 answers for each method";
    Figure 1): random characters, random words, character and word n-grams (n = 1..5) from the generic and
    from the prompt-specific corpus, content burst, shuffle and the generative language model.

    Each entry is ``{"attack": name, "params": {...}}`` as a suite's ``[[attack]]`` table takes it.
    ``count`` answers per prompt for the generators (Shuffle is a static attack: one example per correct
    answer, no count); ``corpus`` the generic corpus (unset: the default); ``model_dir`` a local Hugging Face
    causal LM for LMGenerate (unset: the offline n-gram LM)."""
    generic = {"corpus": corpus} if corpus is not None else {}
    out: list[dict[str, Any]] = [
        {"attack": "RandomChars", "params": {"count": count}},
        {"attack": "RandomWords", "params": {"count": count, **generic}},
    ]
    for name, extra in (("GenericChars", generic), ("PromptChars", {}), ("GenericWords", generic),
                        ("PromptWords", {})):
        out += [{"attack": name, "params": {"count": count, "n": n, **extra}} for n in range(1, 6)]
    lm = {"model_dir": model_dir} if model_dir is not None else generic
    out += [{"attack": "ContentBurst", "params": {"count": count}},
            {"attack": "Shuffle", "params": {}},
            {"attack": "LMGenerate", "params": {"count": count, **lm}}]
    return out
