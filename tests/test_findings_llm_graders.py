"""scripts/findings/llm_graders.py: the Mohler slice it grades and the suite it runs (which must load), without the
server (the script itself runs against the real local model; docs/findings/llm-graders.md is its output)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from callbluff.datasets import load
from callbluff.engine.suite import load_suite
from helpers import REPO, shared_path


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("llm_graders_findings", REPO / "scripts" / "findings" / "llm_graders.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_slice_takes_weak_and_ordinary_answers_with_the_prompts_fields(script, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(script, "MOHLER", shared_path("data", "mohler-unt-sag"))
    info = script.write_slice(2, 6, tmp_path / "slice.jsonl")
    rows = [json.loads(x) for x in (tmp_path / "slice.jsonl").read_text().splitlines()]
    assert info["prompts"] == ["1.1", "1.2"] and info["answers"] == len(rows) == 12
    full = load(f"mohler:{script.MOHLER}")
    for pid in info["prompts"]:
        golds = sorted(r.gold for r in full.records() if r.prompt_id == pid)
        mine = sorted(x["score"] for x in rows if x["prompt_id"] == pid)
        assert mine[:3] == golds[:3]  # half of each prompt's answers are its lowest-scored ones
    ds = load(script.slice_spec(tmp_path / "slice.jsonl"))
    p = ds.prompts["1.1"]
    assert p.reference == full.prompts["1.1"].reference and p.rubric == full.prompts["1.1"].rubric
    assert p.text == full.prompts["1.1"].text and (p.score_min, p.score_max) == (0, 5)


def test_the_suites_it_runs_load(script, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(script, "CACHE", tmp_path)
    srv = SimpleNamespace(base_url="http://127.0.0.1:9/v1", model="smollm2-135m-instruct")
    spec = f"jsonl:{tmp_path / 'slice.jsonl'}?prompt_text=question&score_min=0&score_max=5"
    main = tmp_path / "main.toml"
    main.write_text(script.main_suite_text(srv, spec, tmp_path / "filter", 2, 48, length=2, train_answers=2))
    suite = load_suite(main)
    assert [t.name for t in suite.target] == ["smollm2", "smollm2+injection-filter"]
    universal = next(a for a in suite.attack if a.name == "UniversalPhrase")
    assert dict(universal.params) == {"query_budget": 48, "length": 2, "train_answers": 2}
    var = tmp_path / "variants.toml"
    var.write_text(script.variants_suite_text(srv, spec))
    assert [t.name for t in load_suite(var).target] == ["llm-grader", "llm-grader-answer-first"]


def test_the_battery_asks_its_known_answer_form_and_the_document_keeps_the_marked_sections(
        script, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(script, "CACHE", tmp_path)
    srv = SimpleNamespace(base_url="http://127.0.0.1:9/v1", model="smollm2-135m-instruct")
    spec = f"jsonl:{tmp_path / 'slice.jsonl'}?prompt_text=question&score_min=0&score_max=5"
    for form in ("few-shot-word", "liu"):
        path = tmp_path / f"battery-{form}.toml"
        path.write_text(script.battery_suite_text(srv, spec, attacks="small", known_answer_form=form,
                                                  filter_dir=tmp_path / "inj"))
        suite = load_suite(path)
        tables = {t.name: t.model_dump() for t in suite.target}
        assert sorted(tables) == sorted(script.BATTERY_TARGETS)
        asked = {n: t["defence"].get("known_answer_form", "liu") for n, t in tables.items()
                 if t.get("defence") and t["defence"].get("known_answer")}
        assert asked == {"smollm2+known-answer": form, "smollm2+full": form, "smollm2+filter+full": form}
        layered = tables["smollm2+filter+full"]
        assert layered["filter"] == str(tmp_path / "inj") and layered["defence"] == tables["smollm2+full"]["defence"]
        assert layered["defence"]["erase_suffix_tokens"] > 0 and tables["smollm2+injection-filter"]["defence"] is None
        universal = [a for a in suite.attack if a.name == "UniversalPhrase"]
        assert len(universal) == 1 and dict(universal[0].params) == script.UNIVERSAL  # the main run's search
    doc = tmp_path / "doc.md"
    ka = "\n".join(script.KNOWN_ANSWER_MARKS[:1] + ("## Known-answer forms\n\nfigures",) + script.KNOWN_ANSWER_MARKS[1:])
    det = "\n".join(script.DETECTOR_MARKS[:1] + ("## Detector\n\nrows",) + script.DETECTOR_MARKS[1:])
    doc.write_text(f"# T\n\n{ka}\n\n{script.SECTION}\n\nold\n\n{det}\n\n## Reproduce\n")
    script.write_doc(doc, f"# T\n\nnew\n\n{script.SECTION}\n\nnew battery\n\n## The literature beside ours\n\n"
                          "x\n\n## Reproduce\n")
    out = doc.read_text()
    assert ka in out and det in out and "new battery" in out and "old" not in out
    assert out.index(ka) < out.index(script.SECTION) < out.index(det) < out.index("## Reproduce")
    spliced = script.splice_battery(out, [script.SECTION, "", "newer"])
    assert ka in spliced and det in spliced and "newer" in spliced and "new battery" not in spliced


def test_known_answer_forms_choice_rule_and_its_section(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("ka_forms", REPO / "scripts" / "findings" / "known_answer_forms.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sel = {"liu": {"clean_pass": 30.0, "catch": 80.0}, "liu-digits": {"clean_pass": 100.0, "catch": 99.0},
           "few-shot": {"clean_pass": 95.0, "catch": 40.0}, "few-shot-word": {"clean_pass": 96.0, "catch": 15.0}}
    assert mod.choose(sel) == "few-shot"  # a form the product offers, clean pass >= 95 %, then the catch rate
    sel["few-shot"]["clean_pass"] = 90.0
    assert mod.choose(sel) == "few-shot-word"
    sel["few-shot-word"]["clean_pass"] = 50.0
    assert mod.choose(sel) == "few-shot"  # none reaches 95 %: the highest sum (130 against 110 and 65)
    doc = tmp_path / "d.md"
    doc.write_text("# T\n\nintro\n\n## Grader-side defences: the battery\n\nrows\n")
    block = "\n".join((mod.MARKS[0], "## K", "", "one", mod.MARKS[1])) + "\n"
    mod.write_section(doc, block)
    mod.write_section(doc, block.replace("one", "two"))
    out = doc.read_text()
    assert out.count(mod.MARKS[0]) == 1 and "two" in out and "one" not in out
    assert out.index(mod.MARKS[1]) < out.index("## Grader-side defences") and out.startswith("# T\n\nintro\n")


def test_every_configuration_of_the_main_run_is_in_the_battery(script) -> None:
    from callbluff.attacks.llm import llm_configurations

    names = [c["attack"] for c in script.battery_configs("all")]
    assert names == [c["attack"] for c in llm_configurations("content")] and "UniversalPhrase" in names


def test_the_suffix_choice_rule_and_the_goal_verdict(script) -> None:
    per_d = {1: {"raised": 12.5, "clean_lowered_pct": 0.0}, 2: {"raised": 6.25, "clean_lowered_pct": 6.25},
             3: {"raised": 0.0, "clean_lowered_pct": 18.75}}
    assert script.choose_suffix(per_d) == 1  # 12.5 = 12.5 < 18.75: the tie goes to the smaller d
    per_d[2]["clean_lowered_pct"] = 0.0
    assert script.choose_suffix(per_d) == 2
    assert script.goal_met({"pos_pct": 5.0, "max_out_pct": 0.0}) is True
    assert script.goal_met({"pos_pct": 6.25, "max_out_pct": 0.0}) is False
    assert script.goal_met({"pos_pct": 0.0, "max_out_pct": 6.25}) is False
    assert script.goal_met({}) is None


def test_the_battery_section_states_the_goal_per_configuration(script) -> None:
    configs = [("InjectInstruction", "{}"), ("UniversalPhrase", '{"length": 2}')]
    figures = {"smollm2": [(100.0, 100.0), (68.8, 37.5)], "smollm2+full": [(0.0, 0.0), (12.5, 6.2)],
               "smollm2+filter+full": [(0.0, 0.0), (6.2, 0.0)]}
    metrics = [{"target": t, "prompt": "all", "attack": a, "params": p, "pos_pct": r, "max_out_pct": m}
               for t, fig in figures.items() for (a, p), (r, m) in zip(configs, fig)]
    metrics += [{"target": t, "prompt": "1.1", "attack": "clean", "params": "{}", "qwk": 0.0} for t in figures]
    b = {"metrics": metrics, "clean": {t: {"mae": 2.8, "mean": 0.1, "n": 16} for t in figures},
         "target_stats": {"smollm2+filter+full": {"usage": {"filter": {"kind": "injection", "answers": 40,
                                                                       "flagged": 10},
                                                            "defence": {"answers": 30, "extra_calls_per_answer":
                                                                        {"known_answer": 1.0, "erase": 0.5}}}}},
         "wall_s": 1.0, "slice": {"low": 8, "prompts": ["1.1", "1.2"]}, "calls": 3, "attacks": "all",
         "lowered": {}, "suffix_tokens": 2}
    text = "\n".join(script.render_battery(b))
    assert "| InjectInstruction | 100.0 / 100.0 | 0.0 / 0.0 | met | 0.0 / 0.0 | met |" in text
    assert "| UniversalPhrase (length=2) | 68.8 / 37.5 | 12.5 / 6.2 | **not met** | 6.2 / 0.0 | **not met** |" in text
    assert "**not met** on this sample for 1 of 2 configurations (UniversalPhrase (length=2): 6.2 % / 0.0 %)" in text
    assert "it flagged 10 of the 40 answers" in text and "known_answer 1, erase 0.5" in text


def test_the_battery_section_says_when_the_detector_changed_after_its_pre_filter(
        script, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The battery's pre-filter is fitted from the checkout it runs in; rendered in a later checkout whose detector
    files changed, the section says which commits came after it."""
    import subprocess

    def git(*args: str) -> str:
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True,
                              capture_output=True, text=True).stdout.strip()

    git("init", "-q")
    det = tmp_path / "src" / "callbluff" / "defenses" / "injection.py"
    det.parent.mkdir(parents=True)
    det.write_text("RULES = 1\n")
    git("add", "-A")
    git("commit", "-q", "-m", "round 3")
    fitted = git("rev-parse", "--short", "HEAD")
    (tmp_path / "README.md").write_text("docs only\n")
    git("add", "-A")
    git("commit", "-q", "-m", "docs")
    monkeypatch.setattr(script, "REPO", tmp_path)
    assert script.detector_changed_since(fitted) == ""  # other files changed: no disclosure
    det.write_text("RULES = 2\n")
    git("commit", "-qam", "round 4")
    later = git("rev-parse", "--short", "HEAD")
    said = script.detector_changed_since(fitted)
    assert f"pre-filter is the detector at {fitted}" in said and f"(commit {later})" in said
    assert script.detector_changed_since(f"{fitted} with uncommitted changes") == ""
    assert script.detector_changed_since("") == ""
