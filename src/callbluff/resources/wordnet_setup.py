"""Make NLTK's WordNet reader work offline from Debian's ``wordnet-base`` package.

NLTK's ``WordNetCorpusReader`` expects ``<nltk_data>/corpora/wordnet/`` holding the WordNet 3.0 database
files plus ``lexnames`` and (since NLTK 3.8, for its version mapping) ``index.sense``. Debian ships the
database in ``/usr/share/wordnet`` (``wordnet-base``; ``index.sense`` comes with ``wordnet-sense-index``)
but not ``lexnames``, so we write it (the 45 lexicographer file names, fixed by WordNet 3.0, see ``lexnames(5WN)``).
The data directory is ``<sys.prefix>/nltk_data``, which NLTK searches by default.
Run ``python -m callbluff.resources.wordnet_setup``; it is idempotent.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

DEBIAN_WORDNET = Path("/usr/share/wordnet")

LEXNAMES = [
    "adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact",
    "noun.attribute", "noun.body", "noun.cognition", "noun.communication", "noun.event", "noun.feeling",
    "noun.food", "noun.group", "noun.location", "noun.motive", "noun.object", "noun.person",
    "noun.phenomenon", "noun.plant", "noun.possession", "noun.process", "noun.quantity", "noun.relation",
    "noun.shape", "noun.state", "noun.substance", "noun.time", "verb.body", "verb.change",
    "verb.cognition", "verb.communication", "verb.competition", "verb.consumption", "verb.contact",
    "verb.creation", "verb.emotion", "verb.motion", "verb.perception", "verb.possession",
    "verb.social", "verb.stative", "verb.weather", "adj.ppl",
]
_SYNTACTIC_CATEGORY = {"adj": 3, "adv": 4, "noun": 1, "verb": 2}


def lexnames_text() -> str:
    """The ``lexnames`` file: ``NN<TAB>name<TAB>syntactic category`` per line."""
    lines = []
    for i, name in enumerate(LEXNAMES):
        lines.append(f"{i:02d}\t{name}\t{_SYNTACTIC_CATEGORY[name.split('.')[0]]}")
    return "\n".join(lines) + "\n"


def install(source: Path = DEBIAN_WORDNET, data_dir: Path | None = None) -> Path:
    """Copy WordNet into ``data_dir/corpora/wordnet`` and write ``lexnames``; returns the target dir."""
    data_dir = data_dir or Path(sys.prefix) / "nltk_data"
    target = data_dir / "corpora" / "wordnet"
    for needed in ("data.noun", "index.sense"):
        if not (source / needed).exists():
            raise FileNotFoundError(
                f"WordNet file {needed} not found in {source}: install Debian's wordnet-base and "
                "wordnet-sense-index (apt-get install wordnet-base wordnet-sense-index) or pass another source"
            )
    target.mkdir(parents=True, exist_ok=True)
    for f in source.iterdir():
        if f.is_file():
            dest = target / f.name
            if not dest.exists() or dest.stat().st_size != f.stat().st_size:
                shutil.copyfile(f, dest)
    (target / "lexnames").write_text(lexnames_text())
    return target


class InMemoryDataFile:
    """A WordNet ``data.*`` file held in memory, read the way NLTK's reader reads it: ``seek`` to a byte offset
    then ``readline`` (lines decoded from UTF-8), ``tell``, and iteration over the lines from the position.

    NLTK reads synsets through its ``SeekableUnicodeStreamReader``, whose pure-Python ``readline`` was most of
    the time of a WordNet lookup (ModLexicon's synonyms, BabelGen's vocabulary). In memory, a line is one
    ``bytes.find``. It also keeps worker processes forked after loading from sharing one open file offset
    (one process's ``seek`` between another's ``seek`` and ``readline``)."""

    def __init__(self, path: Path) -> None:
        self._data = Path(path).read_bytes()
        self._pos = 0

    def seek(self, offset: int, whence: int = 0) -> int:
        base = (0, self._pos, len(self._data))[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def readline(self, size: int = -1) -> str:  # noqa: ARG002 - NLTK never limits a line
        end = self._data.find(b"\n", self._pos)
        end = len(self._data) if end < 0 else end + 1
        line, self._pos = self._data[self._pos:end], end
        return line.decode("utf-8")

    def __iter__(self) -> Any:
        while line := self.readline():
            yield line

    def close(self) -> None:
        """Nothing to release (NLTK closes the files it opens itself, not these)."""


def load_wordnet() -> Any:
    """Load ``nltk.corpus.wordnet`` now, without the WordNet-version map NLTK (>= 3.8) builds on every load.

    ``WordNetCorpusReader.__init__`` ends with ``self.map30 = self.map_wn()``, which reads ``index.sense``
    twice (~200k lines each through NLTK's slow seekable stream reader) to map WordNet 3.0 synsets onto the
    loaded version; the map is only used by the Open Multilingual Wordnet functions, which callbluff never
    calls (and which have no data offline: ``omw_reader`` is None). Loading without it is 2-3x faster (here:
    54 s -> 21 s on a loaded 2-core machine). The reader is built the way ``LazyCorpusLoader`` builds it and
    installed in place of the lazy loader, so every ``from nltk.corpus import wordnet`` in this process (and
    in worker processes forked after this call) gets it. Its ``data.*`` files are read in memory
    (:class:`InMemoryDataFile`) and its ``Lemma.count()`` from ``cntlist.rev`` read once (:class:`LemmaCounts`).
    Idempotent; returns the reader.
    Raises LookupError when WordNet is not installed (see :func:`install`)."""
    import warnings

    import nltk.corpus
    from nltk.corpus.reader.wordnet import WordNetCorpusReader
    from nltk.corpus.util import LazyCorpusLoader
    from nltk.data import find

    wn = nltk.corpus.wordnet
    if not isinstance(wn, LazyCorpusLoader):  # already loaded (by this function, or by NLTK's lazy loader)
        return _data_in_memory(wn)

    class _Reader(WordNetCorpusReader):
        def map_wn(self, version: str = "wordnet") -> None:  # noqa: ARG002 - only OMW uses the map
            return None


    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "multilingual functions are not available" (no OMW offline)
        reader = _Reader(find("corpora/wordnet"), None)
    wn.__dict__ = reader.__dict__  # what LazyCorpusLoader.__load does with the reader it builds
    wn.__class__ = reader.__class__
    return _data_in_memory(wn)


def _data_in_memory(reader: Any) -> Any:
    """Give ``reader`` its ``data.*`` files as :class:`InMemoryDataFile` (NLTK's ``_data_file`` returns the one
    in ``_data_file_map`` when there is one) and its :class:`LemmaCounts`; also for a reader NLTK's lazy loader
    built before :func:`load_wordnet` was called. Returns ``reader``."""
    for pos, suffix in reader._FILEMAP.items():
        if not isinstance(reader._data_file_map.get(pos), InMemoryDataFile):
            reader._data_file_map[pos] = InMemoryDataFile(Path(reader.abspath(f"data.{suffix}")))
    if not isinstance(reader.__dict__.get("lemma_count"), LemmaCounts):
        reader.lemma_count = LemmaCounts(Path(reader.abspath("cntlist.rev")))
    return reader


class LemmaCounts:
    """``WordNetCorpusReader.lemma_count`` (what ``Lemma.count()`` calls: a sense's SemCor tag count) from a
    dict of ``cntlist.rev`` read once, instead of NLTK's binary search of the file on every call (70 us a
    call: most of BabelGen's keyword weighing). Each line is ``sense_key sense_number tag_count``; the count of
    a key absent from the file is 0, as in NLTK."""

    def __init__(self, path: Path) -> None:
        self.counts: dict[str, int] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            key, _, rest = line.partition(" ")
            if rest:
                self.counts.setdefault(key, int(rest.rsplit(" ", 1)[-1]))

    def __call__(self, lemma: Any) -> int:
        return self.counts.get(lemma._key, 0)


def main() -> None:
    target = install()
    print(f"[setup] WordNet for NLTK ready in {target}")


if __name__ == "__main__":
    main()
