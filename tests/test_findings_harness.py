"""scripts/findings/harness.py: the one harness the findings scripts share (issue 38)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from helpers import REPO

HERE = REPO / "scripts" / "findings"
spec = importlib.util.spec_from_file_location("findings_harness", HERE / "harness.py")
assert spec is not None and spec.loader is not None
harness = importlib.util.module_from_spec(spec)
spec.loader.exec_module(harness)

MARKS = ("<!-- x:start -->", "<!-- x:end -->")


def test_write_section_replaces_only_its_block(tmp_path: Path) -> None:
    doc = tmp_path / "d.md"
    doc.write_text("# T\n\nintro\n\n## Reproduce\n\nrun it\n", encoding="utf-8")
    harness.write_section(doc, f"{MARKS[0]}\n## X\n\nfirst\n{MARKS[1]}\n", MARKS, before=("## Reproduce",))
    first = doc.read_text(encoding="utf-8")
    assert first.index("## X") < first.index("## Reproduce") and first.startswith("# T\n\nintro\n\n")
    harness.write_section(doc, f"{MARKS[0]}\n## X\n\nsecond\n{MARKS[1]}", MARKS, before=("## Reproduce",))
    second = doc.read_text(encoding="utf-8")
    assert "first" not in second and "second" in second
    assert second.replace("second", "first") == first  # every other byte as it was


def test_write_section_appends_without_an_anchor_and_creates_a_missing_file(tmp_path: Path) -> None:
    doc = tmp_path / "new.md"
    harness.write_section(doc, f"{MARKS[0]}\nbody\n{MARKS[1]}", MARKS, before=("## Nowhere",))
    assert doc.read_text(encoding="utf-8") == f"{MARKS[0]}\nbody\n{MARKS[1]}\n"


def test_require_shared_names_each_missing_path_and_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    present = tmp_path / "here.tsv"
    present.write_text("x", encoding="utf-8")
    harness.require_shared([present], "s.py")  # nothing missing: returns
    with pytest.raises(SystemExit) as exc:
        harness.require_shared([present, tmp_path / "gone.tsv"], "s.py")
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "missing: " + str(tmp_path / "gone.tsv") in err and "CALLBLUFF_SHARED" in err and "here.tsv" not in err


def test_the_harness_puts_the_clones_src_first() -> None:
    assert str(REPO / "src") in sys.path
    assert harness.REPO == REPO


@pytest.mark.parametrize("script", ["content", "dpaeg_robot", "essay", "injection_detector", "known_answer_forms",
                                    "llm_graders", "questions"])
def test_the_scripts_use_the_harness(script: str) -> None:
    text = (HERE / f"{script}.py").read_text(encoding="utf-8")
    assert "from harness import" in text
    assert "def log(" not in text or 'tag="known-answer"' in text  # no copy of the harness's log
    assert 'os.environ.get("CALLBLUFF_SHARED"' not in text
