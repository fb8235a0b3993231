"""A run's report reads each attack's family, paper and defaults from run.json (issue 38): an attack registered by
a plugin that is not installed where the report is rendered keeps them."""

from __future__ import annotations

from callbluff.attacks.base import get_attack
from callbluff.render.catalogue import attack_meta, reading_runs
from callbluff.render.tables import paper_params
from callbluff.render.text import short_params
from callbluff.report.scorecard import paper_of


def test_describe_gives_family_paper_and_json_defaults() -> None:
    d = get_attack("AddSong").describe()
    assert d["family"] == get_attack("AddSong").family and d["paper"]
    assert d["defaults"] and all(not callable(v) for v in d["defaults"].values())


def test_the_run_record_wins_over_the_registry_and_an_unknown_attack_renders_from_it() -> None:
    run = {"attacks": [{"name": "PluginSwap", "params": {"k": 2}, "kind": "static", "expect": "not-higher",
                        "family": "pairwise", "paper": "Someone et al. 2027", "defaults": {"k": 1}}]}
    assert attack_meta("PluginSwap") is None  # not registered in this process
    with reading_runs([run]):
        assert attack_meta("PluginSwap") == {"family": "pairwise", "paper": "Someone et al. 2027", "defaults": {"k": 1}}
        assert paper_of("PluginSwap") == "Someone et al. 2027"
        assert short_params('{"k": 1}', "PluginSwap") == "defaults"  # its default, as the run recorded it
        assert short_params('{"k": 2}', "PluginSwap") == "k=2"
        assert "k=2" in paper_params("PluginSwap", {"k": 2})
        assert attack_meta("AddSong") == get_attack("AddSong").describe()  # not in the run: the registry
    assert attack_meta("PluginSwap") is None  # the record is in force only while rendering
