"""AddSong / AddSpeech in the released form (Kumar et al.'s released test cases append whole songs and speech
excerpts, several times the essay's length): ``items`` whole pool entries, beside ``percent``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from callbluff.attacks.essay.add import AddSong, AddSpeech
from callbluff.attacks.essay.pools import default_pool_path
from callbluff.records import ScoredResponse
from callbluff.resources.context import default_resources
from callbluff.testing import check_attack

ESSAY = ScoredResponse("e1", "p1", "I think computers help people. They let us talk to friends far away. "
                       "But some people use them too much.", 4.0)


def _one(attack: AddSong | AddSpeech, seed: int = 3) -> object:
    res = default_resources()
    state = attack.fit([ESSAY], None, res)
    [ex] = attack.examples(ESSAY, np.random.default_rng(seed), res, None, state)
    return ex, state


@pytest.mark.parametrize("cls", [AddSong, AddSpeech])
def test_whole_entries_are_appended_whatever_the_length(cls: type) -> None:
    ex, entries = _one(cls(items=1))
    [i] = ex.meta["entries"]
    assert ex.text.startswith(ESSAY.text)  # appended: the response kept byte for byte, then the entry
    added = ex.text[len(ESSAY.text):]
    assert len(ex.meta["added"]) == len(entries[i])  # every unit of the entry
    assert ex.meta["n_words_added"] == len(added.split()) > 0
    # the whole entry, in order: every one of its units is there
    pos = 0
    for unit in entries[i]:
        at = added.find(" ".join(unit.split()).rstrip(".,;:"), pos)
        assert at >= pos, unit
        pos = at


def test_a_whole_song_is_longer_than_a_short_essay_and_two_items_are_two_entries() -> None:
    songs = json.loads(default_pool_path("songs.json").read_text())
    ex, _ = _one(AddSong(items=2), seed=1)
    assert len(set(ex.meta["entries"])) == 2 <= len(songs)
    assert ex.meta["n_words_added"] > len(ESSAY.text.split())  # longer than the response it pads


def test_percent_and_items_exclusive_and_bounded_refused() -> None:
    with pytest.raises(ValueError, match="percent .* or items"):
        AddSong(items=1, percent=20)
    with pytest.raises(ValueError, match="bounded does not apply"):
        AddSpeech(items=1, bounded=True)
    assert AddSong().params.items is None  # the default stays Kumar et al.'s percent of sentences


def test_position_third_and_same_seed_same_bytes() -> None:
    a, _ = _one(AddSpeech(items=1, position="beginning"), seed=9)
    b, _ = _one(AddSpeech(items=1, position="beginning"), seed=9)
    assert a.text == b.text and a.meta["insert_at"] in (0, 1)  # 3 sentences: the first third's boundaries


@pytest.mark.parametrize("attack", [AddSong(items=1), AddSpeech(items=2, position="end")])
def test_released_forms_pass_the_conformance_kit(attack: object) -> None:
    check_attack(attack)


def test_the_percent_form_keeps_its_ids_and_bytes() -> None:
    """``items`` came later: left out of params_dict at its default, so AddSong configurations made before it
    keep their example ids and random streams (both derive from params_dict)."""
    assert "items" not in AddSong(percent=25).params_dict
    assert AddSong(items=1).params_dict["items"] == 1
    assert type(AddSong().params)(**AddSong().params_dict) == AddSong().params
