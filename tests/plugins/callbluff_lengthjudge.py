"""A third-party target type as one module: ``type = "length-judge"``, a pairwise judge that prefers the longer
(or shorter) response, with a configurable position bias; registered through the ``callbluff.targets`` entry
point group only (tests/plugins/test_plugins.py). Its settings model is a :class:`TargetSettings` subclass (the
common keys: ``name``, ``fingerprint``, ``version``, ``output``...); the target keeps that config."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from callbluff.targets import Input, Output, TargetSettings, TargetStats, register_target


class LengthJudgeConfig(TargetSettings):
    prefer: Literal["longer", "shorter"] = "longer"
    position_bias: float = Field(0.0, ge=0, le=0.5, description="added to the first response's preference")


class LengthJudge:
    """P(first response is better) from the two responses' lengths (the ``text`` and ``text_b`` slots)."""

    def __init__(self, config: LengthJudgeConfig) -> None:
        self.config = config
        self.name = config.name or "length-judge"
        self.fingerprint = config.identity(f"length-judge:{config.prefer}:{config.position_bias}")
        self.stats = TargetStats()

    def predict(self, inputs: Sequence[Input]) -> list[Output]:
        self.stats.calls += 1
        self.stats.inputs += len(inputs)
        out = []
        for inp in inputs:
            b = inp.slot("text_b")
            if b is None:
                out.append(Output(error="length-judge needs a second response (the text_b slot)"))
                continue
            d = len(inp.text) - len(b)
            d = -d if self.config.prefer == "shorter" else d
            p = 0.9 if d > 0 else 0.1 if d < 0 else 0.5
            out.append(Output(score=min(1.0, p + self.config.position_bias)))
        return out

    def close(self) -> None:
        pass

    def to_config(self) -> dict[str, Any]:
        return {"type": "length-judge", **self.config.model_dump(exclude_none=True)}


def build(config: LengthJudgeConfig, base_dir: Path | None) -> LengthJudge:
    return LengthJudge(config)


register_target("length-judge", LengthJudgeConfig, build)
