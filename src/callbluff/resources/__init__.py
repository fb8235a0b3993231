"""Lexical resources, lazily loaded and offline-first (word frequencies, dictionary, WordNet, spaCy)."""

from callbluff.resources.paths import cache_dir

__all__ = ["cache_dir"]
