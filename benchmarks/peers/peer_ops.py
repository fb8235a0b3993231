"""Timing of the peer tools' operations (runs inside benchmarks/.peers-venv, called by benchmarks/peers/run.py).

Reads a JSON list of texts (and the number of passes), prints one JSON object: for each (operation, tool) the
inputs per second of one augmentation per input, median of the passes (each after a warm-up on 5 texts;
TextAttack one pass), or why it could not be measured. Defaults of each tool
unless said; one output per input (nlpaug ``augment(text)``, TextAttack ``Augmenter(...,
transformations_per_example=1)``, CheckList ``Perturb.add_typos``).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any


def nlpaug_ops() -> dict[str, Callable[[], Callable[[str], Any]]]:
    def char(kind: str, **kw: Any) -> Callable[[], Callable[[str], Any]]:
        def make() -> Callable[[str], Any]:
            import nlpaug.augmenter.char as nac

            return getattr(nac, kind)(**kw).augment
        return make

    def word(kind: str, **kw: Any) -> Callable[[], Callable[[str], Any]]:
        def make() -> Callable[[str], Any]:
            import nlpaug.augmenter.word as naw

            return getattr(naw, kind)(**kw).augment
        return make

    return {"keyboard typos": char("KeyboardAug"), "character replacement": char("RandomCharAug", action="substitute"),
            "real-misspelling swap": word("SpellingAug"),  # nlpaug's own spelling_en.txt (natural-noise list)
            "random misspellings": word("SpellingAug"),  # the same operation, beside our Misspell (no analysis)
            "word shuffle": word("RandomWordAug", action="swap"), "word deletion": word("RandomWordAug", action="delete"),
            "WordNet synonym swap": word("SynonymAug", aug_src="wordnet")}


CONFIGS = {
    ("nlpaug", "keyboard typos"): "KeyboardAug", ("nlpaug", "character replacement"): "RandomCharAug(substitute)",
    ("nlpaug", "real-misspelling swap"): "SpellingAug", ("nlpaug", "random misspellings"): "SpellingAug",
    ("nlpaug", "word shuffle"): "RandomWordAug(swap)",
    ("nlpaug", "word deletion"): "RandomWordAug(delete)", ("nlpaug", "WordNet synonym swap"): "SynonymAug(wordnet)",
    ("TextAttack", "keyboard typos"): "WordSwapQWERTY",
    ("TextAttack", "character replacement"): "WordSwapRandomCharacterSubstitution",
    ("TextAttack", "word deletion"): "WordDeletion", ("TextAttack", "WordNet synonym swap"): "WordSwapWordNet",
    ("CheckList", "random misspellings"): "Perturb.add_typos",
}


def textattack_ops() -> dict[str, Callable[[], Callable[[str], Any]]]:
    def make_for(name: str) -> Callable[[], Callable[[str], Any]]:
        def make() -> Callable[[str], Any]:
            from textattack import augmentation, transformations

            t = getattr(transformations, name)()
            return augmentation.Augmenter(transformation=t, pct_words_to_swap=0.1,
                                          transformations_per_example=1).augment
        return make

    return {"keyboard typos": make_for("WordSwapQWERTY"),
            "character replacement": make_for("WordSwapRandomCharacterSubstitution"),
            "word deletion": make_for("WordDeletion"), "WordNet synonym swap": make_for("WordSwapWordNet")}


NOTES: list[str] = []
TEXTATTACK_TEXTS = 64
"""TextAttack is timed on the first 64 texts, one pass (its rates are a few texts per second); the others on all."""


def checklist_ops() -> dict[str, Callable[[], Callable[[str], Any]]]:
    def make() -> Callable[[str], Any]:
        from checklist.perturb import Perturb

        def add_typos(text: str) -> Any:
            # add_typos draws a position among len(text) - 1 and raises on texts shorter than 2 characters
            # (an empty ASAP-SAS answer): those are returned unchanged, as our attacks leave them
            return Perturb.add_typos(text) if len(text) > 1 else text

        return add_typos

    return {"random misspellings": make}


def main() -> None:
    texts = json.loads(open(sys.argv[1], encoding="utf-8").read())
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    out: list[dict[str, Any]] = []
    for tool, ops in (("nlpaug", nlpaug_ops), ("TextAttack", textattack_ops), ("CheckList", checklist_ops)):
        try:
            table = ops()
        except Exception as e:  # noqa: BLE001
            out.append({"tool": tool, "status": f"not measured: {type(e).__name__}: {e}"[:300]})
            continue
        for op, make in table.items():
            row: dict[str, Any] = {"tool": tool, "operation": op, "config": CONFIGS.get((tool, op), "")}
            try:
                fn = make()
                passes = []
                # TextAttack: one pass over the first TEXTATTACK_TEXTS texts (its word swaps take seconds a text)
                these = texts[:TEXTATTACK_TEXTS] if tool == "TextAttack" else texts
                for _ in range(1 if tool == "TextAttack" else repeats):
                    for t in texts[:5]:
                        fn(t)
                    t0 = time.perf_counter()
                    for t in these:
                        fn(t)
                    passes.append(time.perf_counter() - t0)
                secs = statistics.median(passes)
                row.update(inputs=len(these), seconds=round(secs, 3), pass_seconds=[round(x, 3) for x in passes],
                           texts_per_s=round(len(these) / secs, 1),
                           outputs_per_s=round(len(these) / secs, 1), outputs_per_input=1.0, status="ok")
            except Exception as e:  # noqa: BLE001 - reported, the other operations still run
                why = " ".join(str(e).replace("*", " ").split())  # NLTK's multi-line banners on one line
                row["status"] = f"not measured: {type(e).__name__}: {why}"[:240]
            out.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    print(json.dumps({"rows": out, "notes": NOTES}))


if __name__ == "__main__":
    main()
