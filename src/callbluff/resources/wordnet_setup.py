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


def main() -> None:
    target = install()
    print(f"[setup] WordNet for NLTK ready in {target}")


if __name__ == "__main__":
    main()
