"""DPAEG for Q&A robots: keywords (Algorithm 1, Sec. 3.3), adversarial words (Algorithm 2, Sec. 3.4),
adversarial questions (Sec. 3.5) and the Sec. 4.4 baselines, each a registered attack."""

from callbluff.attacks.questions.attacks import (
    BASELINES,
    DPAEG,
    DPAEGAllContent,
    DPAEGDelete,
    DPAEGParams,
    DPAEGRandomKeywords,
    NoiseKeyboard,
    NoiseMiddle,
    NoiseReplace,
    NoiseScramble,
    NoiseSwap,
    DPAEGRandomChars,
    adversarial_questions,
    skip_reason,
)
from callbluff.attacks.questions.keywords import Keyword, content_keywords, dependency_keywords, random_keywords
from callbluff.attacks.questions.words import AdversarialWord, DistanceRule, adversarial_words, noisy_words

__all__ = [
    "BASELINES", "DPAEG", "AdversarialWord", "DPAEGAllContent", "DPAEGDelete", "DPAEGParams",
    "DPAEGRandomKeywords", "DistanceRule", "Keyword", "NoiseKeyboard", "NoiseMiddle", "NoiseReplace",
    "NoiseScramble", "NoiseSwap", "DPAEGRandomChars", "adversarial_questions", "adversarial_words", "content_keywords",
    "dependency_keywords", "noisy_words", "random_keywords", "skip_reason",
]
