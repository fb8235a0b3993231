"""Content-scoring adversaries of Ding et al. 2020, "Don't take 'nswvtnvakgxpm' for an answer" (task
``content``), one module per kind of Sec. 2.2: ``shuffle`` (Shuffle), ``uniform`` (RandomChars,
RandomWords), ``ngram`` (GenericChars, PromptChars, GenericWords, PromptWords). Importing this package
registers them. :func:`ding2020_configurations` lists the paper's generator configurations (Figure 1).
"""

from callbluff.attacks.content.common import DING
from callbluff.attacks.content.ngram import GenericChars, GenericWords, PromptChars, PromptWords
from callbluff.attacks.content.shuffle import Shuffle, ShuffleParams
from callbluff.attacks.content.uniform import RandomChars, RandomWords

__all__ = [
    "DING", "GenericChars", "GenericWords", "PromptChars", "PromptWords", "RandomChars", "RandomWords",
    "Shuffle", "ShuffleParams",
]
