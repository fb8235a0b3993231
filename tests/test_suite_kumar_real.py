"""The essay-suite check: every one of Kumar et al. 2020's 16 adversaries (Table 1, as `callbluff suite kumar2020`
writes them) generates on real ASAP-AES essays, through the engine's one generation path; AddRC on the
source-based prompts 3-6 only (the passages of ../shared/data/asap-aes/prompts.json)."""

from __future__ import annotations

import itertools

import pytest

from callbluff.engine.generate import generate
from callbluff.engine.work import AttackSpec
from callbluff.suites.kumar2020 import kumar2020_tables
from helpers import shared_path

PER_PROMPT = 3


def _first_points() -> list[AttackSpec]:
    """The first grid point of every table of the suite (BabelGen: 2 essays per prompt)."""
    out = []
    for t in kumar2020_tables():
        keys = sorted(t.grid)
        point = dict(zip(keys, next(itertools.product(*(t.grid[k] for k in keys))))) if keys else {}
        params = {**t.params, **point, **({"count": 2} if t.name == "BabelGen" else {})}
        out.append(AttackSpec.make(t.name, params))
    return out


def test_all_16_adversaries_generate_on_real_essays() -> None:
    from callbluff.attacks.essay.knowledge import default_corpus_files
    from callbluff.datasets import load

    tsv = shared_path("data", "asap-aes", "training_set_rel3.tsv.gz")
    shared_path("data", "asap-aes", "prompts.json")
    if not default_corpus_files():
        pytest.skip("AddWikiRelated / AddWikiUnrelated need SQuAD v1.1: run python -m callbluff.resources.squad_fetch")
    ds = load(f"asap-aes:{tsv}")
    by_prompt: dict[str, list] = {}
    for r in ds:
        if len(by_prompt.setdefault(r.prompt_id, [])) < PER_PROMPT:
            by_prompt[r.prompt_id].append(r)
    records = [r for rs in by_prompt.values() for r in rs]
    assert len(records) == 8 * PER_PROMPT
    specs = _first_points()
    made: dict[str, set[str]] = {s.name: set() for s in specs}
    errors = []
    for chunk in generate(specs, records, ds.prompts, seed=3, chunk_size=8):
        errors += chunk.errors
        for ex in chunk.examples:
            made[ex.attack].add(str(ex.prompt_id))
    assert errors == []
    assert len(made) == 16 and all(made.values()), sorted(a for a, p in made.items() if not p)
    assert made["AddRC"] == {"3", "4", "5", "6"}
    assert made["ShuffleSent"] == made["BabelGen"] == {str(i) for i in range(1, 9)}


def test_addrc_rows_reach_the_metrics_the_kumar_tables_and_the_report(small_run) -> None:
    from callbluff.render.tables import kumar_tables

    tsv = shared_path("data", "asap-aes", "training_set_rel3.tsv.gz")
    shared_path("data", "asap-aes", "prompts.json")
    suite = f"""
name = "addrc-real"
seed = 1
limit = 9
[dataset]
spec = "asap-aes:{tsv}?prompts=1,3,5"
[[target]]
name = "length"
type = "callable"
function = "helpers.scorers:essay_length_scorer"
out_of_range = "clip"
[[attack]]
name = "AddRC"
grid = {{ percent = [10, 25], position = ["end"] }}
"""
    result = small_run(suite)
    rows = [r for r in result.metrics if r.get("attack") == "AddRC"]
    assert {str(r["prompt"]) for r in rows} == {"3", "5", "all"}  # prompt 1 has no passage
    assert all(r["n"] == 3 for r in rows if r["prompt"] != "all")
    table = kumar_tables(result.run_dir)
    [line] = [ln for ln in table.splitlines() if "| AddRC |" in ln and "10%" in ln]
    assert line.count("(") == 3  # prompts 3, 5 and all
    html = (result.run_dir / "report.html").read_text(encoding="utf-8")
    assert "AddRC" in html and "Not measured:</b> AddRC" not in html
