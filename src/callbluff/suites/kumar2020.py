"""The whole protocol of Kumar et al. 2020, "Calling Out Bluff", as an editable suite TOML.

``callbluff suite kumar2020 --out FILE`` writes it: all 16 adversaries of Table 1 with the Sec. 3.1 size x
position grid (``percent`` 10/15/20/25 x ``position`` beginning/middle/end) where the adversary takes one, the
authors' bounded / unbounded additions, the seven RepeatSent variants, the DelStart / DelEnd progressive
series, both ModGrammar variants of Table 3, both ModFluency test cases of Sec. 3.2, and BabelGen (Sec. 3.4);
the dataset (default: ASAP-AES, the paper's data, Table 2) and the target(s) to point at the user's scorer.
Every table carries a comment saying where in the paper it comes from, so the file reads as the protocol.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from callbluff.datasets.base import parse_spec

PERCENTS: tuple[int, ...] = (10, 15, 20, 25)
"""Sec. 3.1: "We try out different values of [the size criterion] ({10, 15, 20, 25})"."""
POSITIONS: tuple[str, ...] = ("beginning", "middle", "end")
"""Sec. 3.1: "three positions [...] by dividing the response into three equal-sized portions"."""
SIZE_POSITION: dict[str, list[Any]] = {"percent": list(PERCENTS), "position": list(POSITIONS)}

DEFAULT_DATA = "asap-aes:training_set_rel3.tsv.gz"
"""Placeholder dataset: ASAP-AES (Kumar et al. Table 2), relative to the suite file; ``--data`` replaces it."""
PLACEHOLDER_TARGET: dict[str, Any] = {
    "name": "my-scorer", "type": "http", "url": "http://127.0.0.1:8000/score",
    "body_template": {"text": "${text}", "prompt_id": "${prompt_id}"}, "response_path": "score",
}
"""Placeholder target (an HTTP scorer on localhost); ``--target`` replaces it."""
PASSAGES_NOTE = ("# The prompt texts and the reading passages of prompts 3-6 (AddRC adds the passage's sentences): "
                 "prompts.json beside\n# the TSV is read when present (../shared/data/asap-aes/prompts.json), or give "
                 "the option prompt_texts=FILE (relative to the TSV).")
"""The comment under an ASAP-AES ``[dataset]``: where AddRC's passages come from."""


@dataclass(frozen=True)
class Table:
    """One ``[[attack]]`` table of the suite: the attack, fixed params, grid and the comment above it."""

    name: str
    comment: str
    params: Mapping[str, Any] = field(default_factory=dict)
    grid: Mapping[str, Sequence[Any]] = field(default_factory=dict)

    def configurations(self) -> int:
        n = 1
        for values in self.grid.values():
            n *= len(values)
        return n


def kumar2020_tables() -> list[Table]:
    """The paper's test cases (Table 1), family by family, with their parameter grids."""
    bounded = {**SIZE_POSITION, "bounded": [False, True]}
    return [
        # -- Add (Sec. 3.3) --
        Table("AddWikiRelated", "Sec. 3.3: Wikipedia sentences on the prompt's key phrases; bounded = as many "
              "sentences dropped as added (authors' notebook), unbounded = the essay grows", grid=bounded),
        Table("AddWikiUnrelated", "Sec. 3.3: Wikipedia sentences from articles matching none of the key phrases",
              grid=bounded),
        Table("AddSong", "Sec. 3.3: song lyrics", grid=SIZE_POSITION),
        Table("AddSpeech", "Sec. 3.3: excerpts of speeches of popular leaders", grid=SIZE_POSITION),
        Table("AddRC", "Sec. 3.3: sentences of the prompt's reading passage (source-based prompts 3-6 only, "
              "their passages from the ASAP-AES prompts file; no example elsewhere)", grid=SIZE_POSITION),
        Table("AddTruth", "Sec. 3.3: true facts", grid=bounded),
        Table("AddLies", "Sec. 3.3: universally false statements (Table 5, first sub-table)", grid=bounded),
        Table("RepeatSent", "Sec. 3.3: one or two introduction sentences repeated at the end",
              {"mode": "introduction"}, {"count": [1, 2]}),
        Table("RepeatSent", "Sec. 3.3: one or two conclusion sentences repeated at the beginning",
              {"mode": "conclusion"}, {"count": [1, 2]}),
        Table("RepeatSent", "Sec. 3.3: one to three sentences repeated in the middle",
              {"mode": "middle"}, {"count": [1, 2, 3]}),
        # -- Delete (Sec. 3.3) --
        Table("DelStart", "Sec. 3.3: only the first line, then the first two lines, ... (progressive series)"),
        Table("DelEnd", "Sec. 3.3: only the last line, then the last two lines, ... (progressive series)"),
        Table("DelRand", "Sec. 3.3: a fixed percentage of sentences removed at random (Table 5, second "
              "sub-table)", grid=SIZE_POSITION),
        # -- Modify (Sec. 3.2) --
        Table("ModGrammar", "Sec. 3.2, Table 3: subject-verb-object jumbling ('svo') and article + agreement + "
              "informal-convention errors ('errors'), every sentence", grid={"variant": ["svo", "errors"]}),
        Table("ModFluency", "Sec. 3.2: filler words (huh, uh, um, well, hmm...) before percent % of the sentences",
              {"mode": "fillers"}, SIZE_POSITION),
        Table("ModFluency", "Sec. 3.2: the first words of alternate sentences repeated ('I ... I like apples')",
              {"mode": "disfluency"}),
        Table("ModLexicon", "Sec. 3.2: one non-stop word per sentence replaced by a WordNet synonym"),
        Table("ShuffleSent", "Sec. 3.2: all sentences shuffled"),
        # -- Generate (Sec. 3.4) --
        Table("BabelGen", "Sec. 3.4, Table 4: BABEL-style nonsense essays from three prompt keywords, length "
              "matched to the prompt's essays (a robust scorer gives them the scale minimum)"),
    ]


def toml_value(value: Any) -> str:
    """A TOML literal for a string, number, bool, list or inline table (JSON string escapes are TOML's)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_key(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} {value!r} as TOML")


def _key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() else json.dumps(key)


def relative_spec(spec: str, suite_dir: Path) -> str:
    """``spec`` with a file path that exists from the current directory rewritten relative to ``suite_dir``
    (suites resolve paths against their own directory); built-in and missing paths are kept as given."""
    name, path, _ = parse_spec(spec)
    if name == "demo" or not path or Path(path).is_absolute() or not Path(path).exists():
        return spec
    rest = spec.split(":", 1)[1]
    rel = os.path.relpath(Path(path).resolve(), suite_dir.resolve())
    return f"{name}:{rel}{rest[len(path):]}"


def kumar2020_suite(data: str | None = None, targets: Sequence[Mapping[str, Any]] = (),
                    suite_dir: Path | str = ".", seed: int = 0, name: str = "kumar2020",
                    shown_path: str | None = None) -> str:
    """The suite TOML text: ``data`` (a dataset spec; default :data:`DEFAULT_DATA`) and ``targets`` (target
    tables; default :data:`PLACEHOLDER_TARGET`), file paths rewritten relative to ``suite_dir``; ``shown_path``:
    the file's path as the header's commands give it (default ``NAME.toml``)."""
    spec = relative_spec(data, Path(suite_dir)) if data else DEFAULT_DATA
    lines = [
        '# Kumar et al. 2020, "Calling Out Bluff": the whole essay-scoring protocol (Table 1: 16 adversaries;',
        "# Sec. 3.1 size x position grid). Edit freely: remove tables, shrink grids, set `limit` for a quick look.",
        f"#   callbluff run {shown_path or name + '.toml'} --out runs/{name} --workers 2",
        "#   callbluff report runs/" + name + " --tables kumar   # the paper's Tables 4-5 per prompt and target",
        "# Every Add/Del/Mod adversary expects the score to drop (a human lowers it, Sec. 3.1 and Table 6):",
        "# not_lowered_pct is the share of essays on which the scorer was overstable. BabelGen expects the",
        "# bottom of the scale (Table 4: the paper's models gave it at least 60% of the range).",
        f"name = {toml_value(name)}",
        f"seed = {int(seed)}",
        "# limit = 200                       # only 200 essays, taken across the prompts (a quick look)",
        "",
        "[dataset]",
        ("# ASAP-AES (Table 2). A placeholder: give the path to training_set_rel3.tsv.gz (relative to this file)"
         if not data else "# relative paths resolve against this file's directory"),
        f"spec = {toml_value(spec)}",
        "",
    ]
    if parse_spec(spec)[0] == "asap-aes":
        lines[-1:-1] = [PASSAGES_NOTE]
    given = list(targets) or [PLACEHOLDER_TARGET]
    for t in given:
        lines.append("[[target]]")
        if not targets:
            lines.append("# A placeholder: point it at your scorer (types: callable, sklearn, http, command, hf, "
                         "model; see docs/design.md \"Targets\").")
        lines += [f"{_key(k)} = {toml_value(v)}" for k, v in t.items() if v is not None]
        lines.append("")
    total = 0
    for table in kumar2020_tables():
        total += table.configurations()
        lines.append(f"# {table.comment}")
        lines.append("[[attack]]")
        lines.append(f"name = {toml_value(table.name)}")
        if table.params:
            lines.append(f"params = {toml_value(dict(table.params))}")
        if table.grid:
            lines.append(f"grid = {toml_value({k: list(v) for k, v in table.grid.items()})}")
        lines.append("")
    lines += ["[output]", "chunk_size = 500", ""]
    lines.insert(7, f"# {len({t.name for t in kumar2020_tables()})} adversaries, {total} configurations.")
    return "\n".join(lines)


def write_kumar2020_suite(out: Path | str, data: str | None = None,
                          targets: Sequence[Mapping[str, Any]] = (), seed: int = 0) -> Path:
    """Write :func:`kumar2020_suite` to ``out`` (its name without ``.toml`` names the suite)."""
    p = Path(out)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(kumar2020_suite(data, targets, p.parent, seed=seed, name=p.stem or "kumar2020", shown_path=str(out)),
                 encoding="utf-8")
    return p
