"""ASAP-AES prompt texts and reading passages (the ``prompt_texts`` option / ``prompts.json`` beside the TSV):
a small hand-made prompts file for the rules and every error, the project's real file from ../shared."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from callbluff.datasets import DataError, load
from helpers import shared_path

HEADER = ("essay_id\tessay_set\tessay\trater1_domain1\trater2_domain1\trater3_domain1\tdomain1_score\t"
          "rater1_domain2\trater2_domain2\tdomain2_score")
TSV = "\n".join([HEADER, "1\t1\tComputers help people.\t4\t4\t\t8\t\t\t",
                 "2\t3\tThe road was hot and the cyclist was tired.\t2\t2\t\t2\t\t\t"]) + "\n"
ENTRIES = [
    {"essay_set": 1, "prompt_text": "Write a letter about computers.", "source_title": None, "source_text": None},
    {"essay_set": 3, "prompt_text": "Explain how the setting affects the cyclist.", "source_title": "A Road",
     "source_text": "The road was long. The sun was hot.\n\nHe rode on."},
]


def write(d: Path, entries: object = ENTRIES, name: str = "prompts.json") -> Path:
    (d / "a.tsv").write_text(TSV, encoding="utf-8")
    f = d / name
    f.write_text(json.dumps(entries), encoding="utf-8")
    return f


def test_found_beside_the_tsv(tmp_path: Path) -> None:
    write(tmp_path)
    ds = load(f"asap-aes:{tmp_path / 'a.tsv'}")
    p1, p3 = ds.prompts["1"], ds.prompts["3"]
    assert p1.text == "Write a letter about computers." and p1.source is None and "source_title" not in p1.meta
    assert p3.text == "Explain how the setting affects the cyclist."
    assert p3.source == "The road was long. The sun was hot.\n\nHe rode on." and p3.meta["source_title"] == "A Road"
    assert ds.prompts["2"].text == "" and ds.prompts["2"].source is None  # a set the file does not list
    assert ds.meta["prompt_texts"] == str(tmp_path / "prompts.json")
    assert [r.id for r in ds] == ["1", "2"]


def test_option_relative_to_the_tsv_absolute_and_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = write(tmp_path, name="texts.json")
    monkeypatch.chdir(tmp_path.parent)  # a relative path is read from the TSV's directory, not the cwd
    ds = load(f"asap-aes:{tmp_path / 'a.tsv'}?prompts=3&prompt_texts=texts.json")
    assert ds.prompts["3"].source and ds.meta["prompt_texts"] == str(f)
    assert load(f"asap-aes:{tmp_path / 'a.tsv'}?prompt_texts={f}").prompts["1"].text
    assert load(f"asap-aes:{tmp_path / 'a.tsv'}").prompts["3"].text == ""  # texts.json is not prompts.json


def test_without_a_prompts_file_nothing_changes(tmp_path: Path) -> None:
    (tmp_path / "a.tsv").write_text(TSV, encoding="utf-8")
    plain = load(f"asap-aes:{tmp_path / 'a.tsv'}")
    write(tmp_path)
    off = load(f"asap-aes:{tmp_path / 'a.tsv'}?prompt_texts=none")
    for ds in (plain, off):
        assert all(p.text == "" and p.source is None for p in ds.prompts.values())
        assert "prompt_texts" not in ds.meta and set(ds.prompts["3"].meta) == {
            "dataset", "essay_set", "rater_score_min", "rater_score_max"}
    assert plain.prompts == off.prompts and plain.records() == off.records()


BAD = [
    ("not a list", {"essay_set": 1}, "", "expected a non-empty JSON list", None),
    ("empty list", [], "", "found an empty list", None),
    ("entry not an object", ["text"], "[0]", "entry is str", "[0]"),
    ("unknown key", [{**ENTRIES[0], "source_txt": "x"}], "[0]", "unknown key 'source_txt'. Fix: did you mean "
     "'source_text'?", "[0].source_txt"),
    ("set out of range", [{**ENTRIES[0], "essay_set": 9}], "[0]", "'essay_set' is 9, expected an ASAP-AES essay set "
     "1-8", "[0].essay_set"),
    ("set as a string", [{**ENTRIES[0], "essay_set": "1"}], "[0]", "'essay_set' is '1'", "[0].essay_set"),
    ("set missing", [{"prompt_text": "x"}], "[0]", "'essay_set' is missing", "[0].essay_set"),
    ("set twice", [ENTRIES[0], ENTRIES[1], ENTRIES[0]], "[2]", "essay_set 1 is given twice (first at [0])",
     "[2].essay_set"),
    ("prompt text missing", [{"essay_set": 1}], "[0]", "'prompt_text' is missing, expected a non-empty string",
     "[0].prompt_text"),
    ("prompt text blank", [{**ENTRIES[0], "prompt_text": "  "}], "[0]", "'prompt_text' is empty", "[0].prompt_text"),
    ("source not text", [{**ENTRIES[1], "source_text": 3}], "[0]", "'source_text' is int 3, expected a string or "
     "null", "[0].source_text"),
]


@pytest.mark.parametrize(("entries", "where", "message", "key"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_a_bad_prompts_file_is_named_with_its_key_and_the_fix(tmp_path: Path, entries: object, where: str,
                                                             message: str, key: str | None) -> None:
    f = write(tmp_path, entries)
    with pytest.raises(DataError) as e:
        load(f"asap-aes:{tmp_path / 'a.tsv'}")
    msg = str(e.value)
    assert msg.startswith(f"{f}: {where + ': ' if where else ''}") and message in msg and "Fix: " in msg
    assert e.value.path == str(f) and e.value.key == key


def test_bad_json_and_a_missing_file(tmp_path: Path) -> None:
    f = write(tmp_path)
    f.write_text('[{"essay_set": 1, "prompt_text": "x"', encoding="utf-8")
    with pytest.raises(DataError, match=re.escape(f"{f}: line 1, column") + ".*JSON ends unexpectedly.*Fix"):
        load(f"asap-aes:{tmp_path / 'a.tsv'}")
    with pytest.raises(DataError, match=r"option 'prompt_texts': .*gone\.json not found.*TSV's directory.*Fix: ") as e:
        load(f"asap-aes:{tmp_path / 'a.tsv'}?prompt_texts=gone.json")
    assert e.value.key == "prompt_texts"
    with pytest.raises(DataError, match="option 'prompt_text': unknown option. Fix: did you mean 'prompt_texts'"):
        load(f"asap-aes:{tmp_path / 'a.tsv'}?prompt_text=x.json")


# -- the project's file (../shared/data/asap-aes/prompts.json) ---------------------------------------------------

def test_the_shared_prompts_file() -> None:
    """Found beside the shared TSV: every set has its task, sets 3-6 (Kumar et al. Table 2's RC prompts) and only
    they a passage, of the size PROMPTS-SOURCE.md states (whitespace words, paragraphs)."""
    tsv = shared_path("data", "asap-aes", "training_set_rel3.tsv.gz")
    shared_path("data", "asap-aes", "prompts.json")
    ds = load(f"asap-aes:{tsv}", lazy=True)
    assert all(len(p.text.split()) >= 20 for p in ds.prompts.values())
    assert [pid for pid, p in ds.prompts.items() if p.source] == ["3", "4", "5", "6"]
    words = {"3": 1073, "4": 1339, "5": 788, "6": 1570}
    paragraphs = {"3": 28, "4": 40, "5": 8, "6": 22}
    for pid, n in words.items():
        src = ds.prompts[pid].source
        assert src is not None and len(src.split()) == n and len(src.split("\n\n")) == paragraphs[pid]
    assert ds.prompts["3"].meta["source_title"].endswith("by Joe Kurmaskie")
    assert "cyclist" in ds.prompts["3"].text and "Saeng" in ds.prompts["4"].text
