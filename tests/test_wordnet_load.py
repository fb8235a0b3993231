"""``load_wordnet``: NLTK's WordNet loaded once, without the OMW version map, installed as nltk.corpus.wordnet."""

from __future__ import annotations

import pytest

pytest.importorskip("nltk")


def test_load_wordnet_installs_one_reader_with_wordnet_30_data() -> None:
    import nltk.corpus

    from callbluff.resources.requirements import check_requirements
    from callbluff.resources.wordnet_setup import load_wordnet

    if check_requirements(("wordnet",)):
        pytest.skip("WordNet is not installed: python -m callbluff.resources.wordnet_setup")
    from nltk.corpus.util import LazyCorpusLoader

    lazy_before = isinstance(nltk.corpus.wordnet, LazyCorpusLoader)  # another test may have loaded it already
    wn = load_wordnet()
    assert load_wordnet() is wn is nltk.corpus.wordnet  # idempotent; every import sees the same reader
    if lazy_before:
        assert wn.map30 is None  # loaded here: the OMW version map was not built
    assert wn.get_version() == "3.0"
    # WordNet 3.0 facts: the paper's ModLexicon example (happy -> cheerful is a "glad"/"felicitous" sense)
    assert [s.name() for s in wn.synsets("happy")] == ["happy.a.01", "felicitous.s.01", "glad.s.01", "happy.s.03"]
    assert wn.synsets("dog", pos="n")[0].lemma_names() == ["dog", "domestic_dog", "Canis_familiaris"]
    assert wn.morphy("geese", "n") == "goose"  # the exception lists were loaded
