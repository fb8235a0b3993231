"""Loaders on the real data in ../shared/data: counts exactly as in each SOURCE.md, score scales, joins.

Skipped with a message naming the missing path when ../shared is absent (as on a user's machine).
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest

from callbluff.datasets import load
from callbluff.records import OpenQuestion, QAExample, ScoredResponse
from helpers import shared_path

pytestmark = [pytest.mark.slow, pytest.mark.shared]

AES_COUNTS = {"1": 1783, "2": 1800, "3": 1726, "4": 1772, "5": 1805, "6": 1800, "7": 1569, "8": 723}
AES_RANGES = {"1": (2, 12), "2": (1, 6), "3": (0, 3), "4": (0, 3), "5": (0, 4), "6": (0, 4), "7": (0, 30),
              "8": (0, 60)}
SAS_TRAIN = {"1": 1672, "2": 1278, "3": 1891, "4": 1738, "5": 1795, "6": 1797, "7": 1799, "8": 1799, "9": 1798,
             "10": 1640}
SAS_PUBLIC = {"1": 557, "2": 426, "3": 406, "4": 295, "5": 598, "6": 599, "7": 599, "8": 599, "9": 599, "10": 546}


def data(*parts: str) -> Path:
    return shared_path("data", *parts)


@pytest.fixture(scope="module")
def aes():
    t0 = time.perf_counter()
    ds = load(f"asap-aes:{data('asap-aes', 'training_set_rel3.tsv.gz')}")
    recs = ds.records()
    return ds, recs, time.perf_counter() - t0


def test_asap_aes_counts_and_ranges(aes) -> None:
    ds, recs, seconds = aes
    assert len(ds) == len(recs) == 12_978
    assert dict(Counter(r.prompt_id for r in recs)) == AES_COUNTS
    assert {pid: (p.score_min, p.score_max) for pid, p in ds.prompts.items()} == AES_RANGES
    assert all(p.task == "essay" for p in ds.prompts.values())
    for r in recs:
        assert isinstance(r, ScoredResponse)
        assert ds.prompts[r.prompt_id].in_range(r.gold)
    # observed domain1 extremes per SOURCE.md (set 7: 2-24, set 8: 10-60)
    s7 = [r.gold for r in recs if r.prompt_id == "7"]
    s8 = [r.gold for r in recs if r.prompt_id == "8"]
    assert (min(s7), max(s7), min(s8), max(s8)) == (2, 24, 10, 60)
    assert len({r.id for r in recs}) == 12_978
    assert seconds < 20, f"ASAP-AES load took {seconds:.1f}s"


def test_asap_aes_quotes_stripped_and_gold_first(aes) -> None:
    _, recs, _ = aes
    by_id = {r.id: r for r in recs}
    first = by_id["1"]
    assert first.text.startswith("Dear local newspaper, I think effects computers")
    assert not first.text.endswith('"')
    assert first.scores == (8.0, 4.0, 4.0)  # domain1_score, rater1, rater2 (rater3 empty: skipped)
    # CSV-escaped inner quotes ("") come back as single quotes
    assert 'and "boom," instant' in by_id["9"].text and '""' not in by_id["9"].text
    wrapped = sum(1 for r in recs if r.text.startswith('"') and r.text.endswith('"'))
    assert wrapped == 0
    # the one essay that starts with an unpaired quotation mark keeps it
    assert by_id["10534"].text.startswith('"When they come back')
    # set 8 has an adjudicating third rater for some essays
    assert by_id["20717"].scores == (46.0, 21.0, 26.0, 46.0)
    assert by_id["20716"].scores == (34.0, 18.0, 16.0)


def test_asap_aes_prompt_selection() -> None:
    path = data("asap-aes", "training_set_rel3.tsv.gz")
    a = load(f"asap-aes:{path}?prompts=1,2")
    b = load(f"asap-aes:{path}", prompts=[1, 2])
    assert len(a) == len(b) == 1783 + 1800
    assert sorted(a.prompts) == ["1", "2"]
    assert [r.id for r in a] == [r.id for r in b]


def test_asap_sas_train() -> None:
    ds = load(f"asap-sas:{data('asap-sas', 'train.tsv.gz')}")
    recs = ds.records()
    assert len(recs) == 17_207 and ds.task == "content"
    assert dict(Counter(r.prompt_id for r in recs)) == SAS_TRAIN
    assert {pid: p.score_max for pid, p in ds.prompts.items()} == {
        "1": 3, "2": 3, "3": 2, "4": 2, "5": 3, "6": 3, "7": 2, "8": 2, "9": 2, "10": 2}
    assert all(len(r.scores) == 2 and ds.prompts[r.prompt_id].in_range(r.scores[1]) for r in recs)
    assert not any(r.text.startswith('"') and r.text.endswith('"') for r in recs)
    r46 = next(r for r in recs if r.id == "46")
    assert r46.text.startswith("I think the experiment should make") and '""each of the cork' not in r46.text
    assert '"each of the cork samples"' in r46.text


def test_asap_sas_public_leaderboard_joined_with_solution() -> None:
    tsv = data("asap-sas", "public_leaderboard_rel_2.tsv.gz")
    auto = load(f"asap-sas:{tsv}")
    explicit = load(f"asap-sas:{tsv}?solution=public_leaderboard_solution.csv.gz")
    recs = auto.records()
    assert len(recs) == 5_224
    assert dict(Counter(r.prompt_id for r in recs)) == SAS_PUBLIC
    assert all(len(r.scores) == 1 for r in recs), "every public id must be joined with its gold score"
    assert auto.meta["labeled"] and not auto.meta["unlabeled"] and auto.meta["warnings"] == []
    assert auto.meta["solution"].endswith("public_leaderboard_solution.csv.gz")
    assert [(r.id, r.scores) for r in recs] == [(r.id, r.scores) for r in explicit]
    assert recs[0].id == "1673" and recs[0].scores == (1.0,)
    none = load(f"asap-sas:{tsv}?solution=none")
    assert none.meta["unlabeled"] and all(r.scores == () for r in none)


def test_asap_sas_private_leaderboard_is_unlabeled() -> None:
    ds = load(f"asap-sas:{data('asap-sas', 'private_leaderboard.tsv.gz')}", prompts="1,3")
    full = load(f"asap-sas:{data('asap-sas', 'private_leaderboard.tsv.gz')}")
    assert len(full) == 5_100 and full.meta["unlabeled"] is True and full.meta["solution"] is None
    assert all(r.scores == () and r.gold is None for r in full)
    assert sorted(ds.prompts) == ["1", "3"] and {r.prompt_id for r in ds} == {"1", "3"}


def test_asap_sas_lazy_matches_eager() -> None:
    path = data("asap-sas", "train.tsv.gz")
    lazy = load(f"asap-sas:{path}?lazy=true&prompts=10")
    eager = load(f"asap-sas:{path}?prompts=10")
    assert lazy.meta["count"] == 1640
    assert list(lazy) == list(eager) == list(lazy)  # re-iterable, same records


def test_squad_dev_and_xquad() -> None:
    ds = load(f"squad:{data('squad-v1.1', 'dev-v1.1.json.gz')}")
    recs = ds.records()
    assert len(recs) == 10_570 and ds.task == "reading" and ds.prompts == {}
    assert ds.meta["articles"] == 48 and ds.meta["paragraphs"] == 2_067 and ds.meta["version"] == "1.1"
    q = recs[0]
    assert isinstance(q, QAExample)
    assert q.id == "56be4db0acb8001400a502ec" and q.title == "Super_Bowl_50"
    assert q.answers == ("Denver Broncos",) * 3 and q.answer_starts == (177,) * 3
    assert all(r.context[s:s + len(a)] == a for r in recs for a, s in zip(r.answers, r.answer_starts))
    assert len(load(f"squad:{data('squad-v1.1', 'xquad.en.json.gz')}")) == 1_190


def test_squad_train_count_and_speed() -> None:
    t0 = time.perf_counter()
    ds = load(f"squad:{data('squad-v1.1', 'train-v1.1.json.gz')}")
    seconds = time.perf_counter() - t0
    assert len(ds) == 87_599 and ds.meta["articles"] == 442
    assert seconds < 30, f"SQuAD train load took {seconds:.1f}s"


def test_mohler_published_subset_and_all() -> None:
    root = data("mohler-unt-sag")
    pub = load(f"mohler:{root}")
    recs = pub.records()
    assert len(recs) == 2_273 and len(pub.prompts) == 81
    everything = load(f"mohler:{root}", include_ignored=True)
    assert len(everything) == 2_442 and len(everything.prompts) == 87
    p = pub.prompts["1.1"]
    assert p.text == "What is the role of a prototype program in problem solving?"
    assert p.source == "To simulate the behaviour of portions of the desired software product."
    assert (p.score_min, p.score_max) == (0, 5)
    first = recs[0]
    assert first.id == "1.1.0" and first.scores == (3.5, 3.0, 4.0)
    exam = next(r for r in recs if r.id == "11.1.2")
    assert exam.scores == (5.0, 5.0, 5.0) and exam.meta["raw_grader_scores"] == (10.0, 10.0)
    assert all(0 <= s <= 5 for r in everything for s in r.scores)
    # the one answer with a tab inside (CSV-quoted in answers.tsv) is read whole
    assert any("\t" in r.text for r in recs)


def test_mohler_prompts_carry_reference_and_rubric() -> None:
    """What a chat grader is shown (issue 29): the reference answer of questions.tsv and the annotators'
    instruction of the release README as the rubric (the data has no per-question rubric)."""
    from callbluff.datasets.mohler import RUBRIC

    root = data("mohler-unt-sag")
    ds = load(f"mohler:{root}")
    p = ds.prompts["1.1"]
    assert p.reference == "To simulate the behaviour of portions of the desired software product."
    assert p.rubric == RUBRIC and "0" in RUBRIC and "5" in RUBRIC
    assert all(q.reference for q in ds.prompts.values())  # every published question has a reference answer
    assert load(f"mohler:{root}?rubric=none").prompts["1.1"].rubric is None
    assert load(f"mohler:{root}", rubric="Two points per idea.").prompts["3.4"].rubric == "Two points per idea."


@pytest.mark.parametrize("name,count", [("curated-train.tsv", 430), ("curated-test.tsv", 430),
                                        ("curated-full.tsv", 867), ("large2470-train.tsv", 1_704),
                                        ("large2470-test.tsv", 766)])
def test_trec_counts(name: str, count: int) -> None:
    ds = load(f"trec:{data('open-qa', 'curatedtrec', name)}")
    recs = ds.records()
    assert len(recs) == count and ds.task == "questions"
    assert all(isinstance(r, OpenQuestion) and r.answer_type == "regex" and len(r.answers) == 1 for r in recs)


def test_trec_spot_check() -> None:
    r = load(f"trec:{data('open-qa', 'curatedtrec', 'curated-train.tsv')}").records()[0]
    assert (r.id, r.question, r.answers) == ("1756", "When is Fashion week in NYC?", ("Sept?(ember)?|Feb(ruary)?",))


@pytest.mark.parametrize("name,count", [("trainmodel.json", 2_834), ("val.json", 755), ("devtest.json", 189),
                                        ("test.json", 2_032)])
def test_webquestions_counts(name: str, count: int) -> None:
    ds = load(f"webquestions:{data('open-qa', 'webquestions', name)}")
    recs = ds.records()
    assert len(recs) == count
    assert all(r.answer_type == "string" and r.answers for r in recs)


def test_webquestions_spot_check() -> None:
    r = load(f"webquestions:{data('open-qa', 'webquestions', 'val.json')}").records()[0]
    assert (r.id, r.question, r.answers) == ("wqr000004", "what kind of money to take to bahamas?",
                                             ("Bahamian dollar",))
