"""WordNet data files read in memory (resources.wordnet_setup.InMemoryDataFile) give NLTK the same lines as
the file on disk, and the loaded reader uses them."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from callbluff.resources.wordnet_setup import InMemoryDataFile, load_wordnet


def test_lines_at_offsets_and_iteration_match_the_file(tmp_path: Path) -> None:
    p = tmp_path / "data.x"
    p.write_bytes(b"  1 header line\n00000017 n first \xc3\xa9t\xc3\xa9\n00000042 n second\nlast without newline")
    mem = InMemoryDataFile(p)
    with p.open(encoding="utf-8", newline="") as disk:
        raw = p.read_bytes()
        starts = [0] + [i + 1 for i, b in enumerate(raw) if b == ord("\n")]
        for offset in (*starts, 5, len(raw) - 3):  # line starts (as NLTK seeks) and inside ASCII text
            disk.seek(offset)
            assert mem.seek(offset) == offset
            assert mem.readline() == disk.readline() and mem.tell() == disk.tell()
        mem.seek(0)
        disk.seek(0)
        assert list(mem) == list(disk)
    assert mem.readline() == ""  # at the end, as a file


def test_the_loaded_reader_reads_synsets_from_memory() -> None:
    try:
        wn = load_wordnet()
    except LookupError as e:
        pytest.skip(f"WordNet not installed: {e}")
    dog = wn.synsets("dog", pos="n")[0]
    assert dog.name() == "dog.n.01" and "domestic" in dog.definition()
    assert isinstance(wn._data_file("n"), InMemoryDataFile)
    assert isinstance(wn._data_file("s"), InMemoryDataFile) and wn._data_file("s") is wn._data_file("a")
    path = Path(wn.abspath("data.noun"))
    with path.open(encoding="utf-8") as disk:  # a real offset: the line NLTK parsed for dog.n.01
        disk.seek(dog.offset())
        assert disk.readline().startswith(f"{dog.offset():08d} 05 n")


def test_lemma_counts_match_nltks_binary_search_of_cntlist() -> None:
    """``Lemma.count()`` from the dict (LemmaCounts) equals NLTK's binary search of ``cntlist.rev`` on every
    lemma of a sample of synsets of each part of speech, counted or not (BabelGen weighs keywords by it)."""
    from nltk.corpus.reader.wordnet import WordNetCorpusReader
    from nltk.data import find

    from callbluff.resources.wordnet_setup import LemmaCounts

    try:
        wn = load_wordnet()
    except LookupError as e:
        pytest.skip(f"WordNet not installed: {e}")
    assert isinstance(wn.lemma_count, LemmaCounts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "multilingual functions are not available" (no OMW offline)
        plain = WordNetCorpusReader(find("corpora/wordnet"), None)  # NLTK's own reader: searches the file
    lemmas = [lem for pos in "nvar" for syn in list(plain.all_synsets(pos))[::97] for lem in syn.lemmas()]
    counts = [plain.lemma_count(lem) for lem in lemmas]
    assert [wn.lemma_count(lem) for lem in lemmas] == counts
    assert sum(c > 0 for c in counts) > 100 and 0 in counts  # both kinds were compared
    assert wn.lemma("dog.n.01.dog").count() == plain.lemma("dog.n.01.dog").count() > 0
