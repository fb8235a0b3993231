"""scripts/findings/content.py: the pieces that read the engine's rows and compare two renderings."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "findings" / "content.py"
spec = importlib.util.spec_from_file_location("content_findings", SCRIPT)
cf = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cf)  # type: ignore[union-attr]

OLD = """# Doc
## 1. ARR
| configuration | ContentScorer ARR % | NeuralScorer ARR % |
| --- | ---: | ---: |
| RandomChars | 100.0 | 96.7 |
| **mean** | **85.0** | **64.9** |

### ContentScorer: ARR % per configuration x prompt
| configuration | 1 | 2 |
| --- | ---: | ---: |
| Shuffle | 5 | 9 |
"""


def test_doc_tables_reads_every_cell_by_section_row_and_column() -> None:
    t = cf.doc_tables(OLD)
    assert t[("1. ARR", "RandomChars", "NeuralScorer ARR %")] == "96.7"
    assert t[("ContentScorer: ARR % per configuration x prompt", "Shuffle", "2")] == "9"
    assert len(t) == 6


def test_moved_section_lists_headline_moves_and_summarises_the_rest() -> None:
    new = OLD.replace("**85.0**", "**84.0**").replace("| Shuffle | 5 | 9 |", "| Shuffle | 12 | 9 |")
    text = "\n".join(cf.moved_section(OLD, new))
    assert "| 1. ARR | **mean** | ContentScorer ARR % | **85.0** | **84.0** |" in text
    assert "| ContentScorer: ARR % per configuration x prompt | 1 | 7.0 | Shuffle, 1: 5 -> 12 |" in text
    assert "Nothing moved." in "\n".join(cf.moved_section(OLD, OLD))


def test_per_prompt_reads_arr_qwk_misspell_and_offtopic_rows() -> None:
    rows = [{"target": "paper", "prompt": "3", "attack": "clean", "params": "{}", "qwk": 0.7},
            {"target": "paper", "prompt": "3", "attack": "PromptWords", "params": '{"count":40,"n":2}', "arr": 61.0},
            {"target": "paper", "prompt": "3", "attack": "Misspell", "params": '{"rate":0.3}', "failure_pct": 12.5},
            {"target": "paper", "prompt": "3", "attack": "OffTopic", "params": '{"count":9}', "arr": 90.0},
            {"target": "other", "prompt": "3", "attack": "clean", "params": "{}", "qwk": 0.1}]
    got = cf.per_prompt(rows, "paper", "3")
    assert got == {"arr_by_config": {"PromptWords n=2": 61.0}, "noisy_same": {"0.3": 87.5}, "qwk": 0.7,
                   "offtopic_arr": 90.0}
