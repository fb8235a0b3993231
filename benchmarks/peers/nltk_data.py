"""Offline NLTK data for the peer tools (benchmarks/.peers-venv/nltk_data), built by benchmarks/peers/setup.sh.

TextAttack imports NLTK ``stopwords`` at import time and tags words with NLTK's averaged perceptron tagger;
nlpaug's ``SynonymAug`` tags with the same tagger; CheckList imports ``pattern``, which loads ``wordnet_ic``
(``ic-brown.dat``) and looks for ``sentiwordnet`` at import time. None of these can be downloaded here (only
PyPI and Debian are reachable; the PyPI package ``nltkdata`` is an empty placeholder, Debian packages no NLTK
data), so this script *substitutes* each one from offline sources, in NLTK's own formats. Every substitute is
listed in ``SUBSTITUTES`` and printed into benchmarks/peers/RESULTS-peers.md by run.py:

- ``corpora/stopwords/english``: spaCy's English stop-word list (326 words) instead of NLTK's (179 words);
- ``taggers/averaged_perceptron_tagger_eng``: NLTK's own ``PerceptronTagger`` (same code, same features,
  5 training passes as NLTK's) trained on ``--essays`` ASAP-AES essays tagged by spaCy ``en_core_web_sm``
  (Penn tags), instead of NLTK's model trained on the WSJ; same tagging algorithm, so the same cost per
  token, with other weights;
- ``corpora/wordnet_ic/ic-brown.dat``: information content computed by NLTK's ``wordnet.ic`` over the same
  essays instead of over the Brown corpus (CheckList's typo operation never reads it);
- ``corpora/sentiwordnet``: an empty directory (``pattern`` only checks that it exists at import time; the
  typo operation never reads it).

WordNet itself is not written here: it is callbluff's NLTK WordNet made from Debian's ``wordnet-base``
(``scripts/setup.sh``), found through ``NLTK_DATA``. Runs in callbluff's own environment (spaCy, its English
model and NLTK are there); it only writes under ``--out``.

    .venv/bin/python benchmarks/peers/nltk_data.py --out benchmarks/.peers-venv/nltk_data
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import sys
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ESSAYS = REPO.parent / "shared" / "data" / "asap-aes" / "training_set_rel3.tsv.gz"
SUBSTITUTES = {
    "stopwords": "corpora/stopwords/english is spaCy's English stop-word list (326 words), not NLTK's (179)",
    "tagger": "taggers/averaged_perceptron_tagger_eng is NLTK's PerceptronTagger trained here on {n} ASAP-AES "
              "essays tagged by spaCy en_core_web_sm, not NLTK's WSJ model (same algorithm and features)",
    "wordnet_ic": "corpora/wordnet_ic/ic-brown.dat holds information content from NLTK's wordnet.ic over those "
                  "essays, not over Brown (unused by the operations timed)",
    "sentiwordnet": "corpora/sentiwordnet is an empty directory (pattern checks it exists; unused by the "
                    "operations timed)",
}


def essays(n: int) -> Iterator[str]:
    if not ESSAYS.exists():
        sys.exit(f"{ESSAYS} is missing: the tagger and IC substitutes are trained on ASAP-AES essays")
    with gzip.open(ESSAYS, "rt", encoding="latin-1") as fh:
        for i, row in enumerate(csv.DictReader(fh, delimiter="\t")):
            if i >= n:
                return
            yield row["essay"]


def write_stopwords(out: Path) -> None:
    from spacy.lang.en.stop_words import STOP_WORDS

    d = out / "corpora" / "stopwords"
    d.mkdir(parents=True, exist_ok=True)
    (d / "english").write_text("\n".join(sorted(STOP_WORDS)) + "\n", encoding="utf-8")
    (d / "README").write_text(SUBSTITUTES["stopwords"] + "\n", encoding="utf-8")


def tagged_sentences(texts: list[str]) -> list[list[tuple[str, str]]]:
    from callbluff.resources.spacy_pipeline import load_english

    nlp = load_english("full")
    out = []
    for doc in nlp.pipe(texts, batch_size=32, disable=["ner", "lemmatizer"]):
        for s in doc.sents:
            sent = [(t.text, t.tag_) for t in s if not t.is_space]
            if sent:
                out.append(sent)
    return out


def write_tagger(out: Path, texts: list[str]) -> None:
    import random

    from nltk.tag.perceptron import PerceptronTagger

    random.seed(0)  # PerceptronTagger.train shuffles the sentences with the global random module
    tagger = PerceptronTagger(load=False, lang="eng")
    d = out / "taggers" / "averaged_perceptron_tagger_eng"
    d.mkdir(parents=True, exist_ok=True)
    tagger.train(tagged_sentences(texts), nr_iter=5)
    # the files save_to_json writes (its path sandbox refuses a directory outside NLTK's own data path)
    for param, name in zip(tagger.encode_json_obj(), tagger.param_files("eng"), strict=True):
        (d / name).write_text(json.dumps(param), encoding="utf-8")
    (d / "README").write_text(SUBSTITUTES["tagger"].format(n=len(texts)) + "\n", encoding="utf-8")


class _Words:
    def __init__(self, words: list[str]) -> None:
        self._words = words

    def words(self) -> list[str]:
        return self._words


def write_ic(out: Path, texts: list[str]) -> None:
    import re

    from nltk.corpus import wordnet as wn

    words = [w for t in texts for w in re.findall(r"[A-Za-z]+", t)]
    ic = wn.ic(_Words(words), weight_senses_equally=False, smoothing=1.0)
    lines = ["wnver::" + wn.get_version().replace(".", "")]
    for pos in ("n", "v"):
        counts = ic[pos]
        lines.append(f"0{pos} {counts[0]} ROOT")  # the reader sums ROOT lines into key 0, as NLTK stores it
        lines += [f"{offset}{pos} {value}" for offset, value in sorted(counts.items()) if offset and value]
    d = out / "corpora" / "wordnet_ic"
    d.mkdir(parents=True, exist_ok=True)
    (d / "ic-brown.dat").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (d / "README").write_text(SUBSTITUTES["wordnet_ic"] + "\n", encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / ".peers-venv" / "nltk_data")
    ap.add_argument("--essays", type=int, default=300)
    args = ap.parse_args()
    sys.path.insert(0, str(REPO / "src"))
    texts = list(essays(args.essays))
    write_stopwords(args.out)
    write_ic(args.out, texts)
    (args.out / "corpora" / "sentiwordnet").mkdir(parents=True, exist_ok=True)
    (args.out / "corpora" / "sentiwordnet" / "README").write_text(SUBSTITUTES["sentiwordnet"] + "\n")
    write_tagger(args.out, texts)
    print(f"NLTK data substitutes written under {args.out}")


if __name__ == "__main__":
    main()
