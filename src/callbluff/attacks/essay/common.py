"""Shared pieces of the essay suite (Kumar et al. 2020, "Calling Out Bluff"): the citation string."""

from __future__ import annotations

KUMAR = "Kumar et al. 2020, Calling Out Bluff"
