"""Suite TOML validation: good suites load, bad ones name the key and what is allowed."""

from __future__ import annotations

from pathlib import Path

import pytest

from callbluff.engine.suite import SuiteError, load_suite, parse_suite


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "suite.toml"
    p.write_text(text)
    return p


GOOD = """
name = "t"
seed = 3
[dataset]
spec = "jsonl:data/answers.jsonl?task=content"
[[target]]
name = "a"
type = "http"
url = "http://127.0.0.1:9/score"
[[attack]]
name = "Shuffle"
params = { tokenizer = "whitespace" }
grid = { min_score = [1, 2] }
"""


def test_good_suite_expands_grid_and_resolves_paths(tmp_path: Path) -> None:
    suite = load_suite(write(tmp_path, GOOD))
    assert suite.seed == 3
    points = suite.attack[0].expand()
    assert points == [{"tokenizer": "whitespace", "min_score": 1}, {"tokenizer": "whitespace", "min_score": 2}]
    assert suite.dataset_spec() == f"jsonl:{(tmp_path / 'data/answers.jsonl').resolve()}?task=content"
    assert suite.resolve("/abs/x") == "/abs/x"


def test_fingerprint_changes_with_seed_not_with_report_option(tmp_path: Path) -> None:
    a = load_suite(write(tmp_path, GOOD))
    b = load_suite(write(tmp_path, GOOD.replace("seed = 3", "seed = 4")))
    c = load_suite(write(tmp_path, GOOD + "\n[output]\nreport = false\n"))
    assert a.fingerprint() != b.fingerprint()
    assert a.fingerprint() == c.fingerprint()


@pytest.mark.parametrize(
    "text, expected",
    [
        (GOOD.replace("seed = 3", "sead = 3"), "key `sead`"),
        (GOOD.replace('type = "http"', 'type = "grpc"'), "must be one of callable, command, hf, http, model, openai, sklearn"),
        (GOOD.replace('name = "Shuffle"', 'name = "Shufle"'), "key `attack[0].name`: unknown attack 'Shufle'"),
        (GOOD.replace('tokenizer = "whitespace"', 'tokenizr = "whitespace"'), "tokenizr"),
        (GOOD.replace("min_score = [1, 2]", "min_score = 2"), "key `attack[0].grid.min_score`"),
        (GOOD.replace("[dataset]\n", "[dataset]\nfoo = 1\n"), "key `dataset.foo`"),
        (GOOD + '[[target]]\nname = "a"\ntype = "http"\nurl = "http://127.0.0.1:9/x"\n', "names must be unique"),
        ("seed = [", "not valid TOML"),
    ],
)
def test_bad_suites_name_the_key(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(SuiteError) as e:
        load_suite(write(tmp_path, text))
    assert expected in str(e.value)
    assert "suite.toml" in str(e.value)


def test_missing_file() -> None:
    with pytest.raises(SuiteError, match="suite file not found"):
        load_suite("/nonexistent/suite.toml")


def test_parse_suite_from_dict() -> None:
    suite = parse_suite({"dataset": {"spec": "demo:content"}}, source="dict")
    assert suite.dataset_spec() == "demo:content"
    assert suite.attack == [] and suite.target == []
