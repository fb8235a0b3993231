"""Column mapping of the generic loaders (jsonl:, json:, csv:, from_hf) and the format loaders on tiny
hand-made files (these run without ../shared)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from callbluff.datasets import DataError, from_hf, load, loader_names
from callbluff.records import OpenQuestion, QAExample, ScoredResponse


def write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.write_bytes(text.encode(encoding))
    return path


def test_all_loaders_registered() -> None:
    assert {"asap-aes", "asap-sas", "squad", "mohler", "trec", "webquestions", "jsonl", "json", "csv"} <= set(
        loader_names())


# ------------------------------------------------------------------ csv


def test_csv_mapping_raters_prompts_and_meta(tmp_path: Path) -> None:
    f = write(tmp_path / "answers.csv",
              "answer_id,q,question text,reference,body,r1,r2,teacher\n"
              "a1,Q1,Why?,Because.,\"It is, because\",2,3,smith\n"
              "a2,Q1,Why?,Because.,\"Line one\nline two\",0,,jones\n"
              "a3,Q2,How?,,Like so,1,1,smith\n")
    ds = load(f"csv:{f}?id=answer_id&prompt=q&text=body&score=r1,r2&score_min=0&score_max=3"
              "&prompt_text=question text&prompt_source=reference&meta=teacher")
    recs = ds.records()
    assert ds.task == "content"
    assert recs[0] == ScoredResponse(id="a1", prompt_id="Q1", text="It is, because", scores=(2.0, 3.0))
    assert recs[1].text == "Line one\nline two" and recs[1].scores == (0.0,)  # empty second rater skipped
    assert recs[1].meta == {"teacher": "jones"}
    assert ds.prompts["Q1"].text == "Why?" and ds.prompts["Q1"].source == "Because."
    assert ds.prompts["Q2"].source is None
    assert all((p.score_min, p.score_max) == (0, 3) for p in ds.prompts.values())
    assert "warnings" not in ds.meta
    assert ds.meta["columns"] == {"id": "answer_id", "text": "body", "prompt": "q", "prompt_text": "question text",
                                  "prompt_source": "reference", "reference": "reference", "score": "r1,r2"}
    assert ds.prompts["Q1"].reference == "Because." and ds.prompts["Q2"].reference is None


def test_reference_and_rubric_columns_and_rubric_file(tmp_path: Path) -> None:
    """A prompt's reference answer and rubric come from columns (first non-empty value per prompt) or, for the
    rubric, from one file for every prompt without its own."""
    f = write(tmp_path / "a.jsonl",
              '{"prompt_id": "q1", "text": "heat moves", "score": 1, "model": "by conduction", "guide": ""}\n'
              '{"prompt_id": "q1", "text": "no idea", "score": 0, "model": "", "guide": "1 point: names conduction"}\n'
              '{"prompt_id": "q2", "text": "it boils", "score": 2, "model": "at 100 C", "guide": ""}\n')
    guide = write(tmp_path / "rubric.txt", "Score 0-2 for correctness.\n")
    ds = load(f"jsonl:{f}?reference=model&rubric=guide&score_min=0&score_max=2&rubric_file={guide}")
    assert (ds.prompts["q1"].reference, ds.prompts["q1"].rubric) == ("by conduction", "1 point: names conduction")
    assert (ds.prompts["q2"].reference, ds.prompts["q2"].rubric) == ("at 100 C", "Score 0-2 for correctness.")
    plain = load(f"jsonl:{f}?reference=model&score_min=0&score_max=2")
    assert plain.prompts["q2"].rubric is None
    clash = write(tmp_path / "b.jsonl", '{"prompt_id": "q1", "text": "a", "score": 1, "reference": "x"}\n'
                                        '{"prompt_id": "q1", "text": "b", "score": 1, "reference": "y"}\n')
    with pytest.raises(DataError, match=r"line 2.*different reference.*line 1"):
        load(f"jsonl:{clash}?score_min=0&score_max=2").records()
    with pytest.raises(DataError, match="rubric_file"):
        load(f"jsonl:{f}?rubric_file={tmp_path / 'missing.txt'}")


def test_tsv_by_extension_and_explicit_delimiter(tmp_path: Path) -> None:
    body = "id\ttext\tscore\n1\ta, b\t1\n2\tc\t2\n"
    by_ext = load(f"csv:{write(tmp_path / 'x.tsv', body)}?score_min=0&score_max=2")
    by_opt = load(f"csv:{write(tmp_path / 'x.txt', body)}?delimiter=tab&score_min=0&score_max=2")
    gz = tmp_path / "x.tsv.gz"
    gz.write_bytes(gzip.compress(body.encode()))
    by_gz = load(f"csv:{gz}", score_min=0, score_max=2)
    assert by_ext.records() == by_opt.records() == by_gz.records()
    assert [r.text for r in by_ext] == ["a, b", "c"]


def test_csv_quoting_none_keeps_literal_quotes(tmp_path: Path) -> None:
    f = write(tmp_path / "x.tsv", 'id\ttext\n1\t"unbalanced quote\n2\tplain\n')
    with pytest.raises(DataError, match="line 2"):
        load(f"csv:{f}")
    recs = load(f"csv:{f}?quoting=none").records()
    assert [r.text for r in recs] == ['"unbalanced quote', "plain"]


def test_csv_lazy_rereads_file(tmp_path: Path) -> None:
    f = write(tmp_path / "x.csv", "text,score\na,1\nb,2\n")
    ds = load(f"csv:{f}?lazy=true&score_min=0&score_max=5")
    assert len(ds) == 2 and [r.id for r in ds] == ["line-2", "line-3"]
    assert list(ds) == list(ds)
    write(f, "text,score\nchanged,4\nb,2\n")
    assert next(iter(ds)).text == "changed"  # lazy: each iteration reads the file again


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_large_files_stream_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """Files of LAZY_AUTO_BYTES or more are lazy unless the spec says lazy=false (issue 15: memory must not grow
    with the data); smaller ones are kept. The threshold is lowered here instead of writing 64 MB."""
    from callbluff.datasets import _io

    body = "text,score\na,1\nb,2\n" if kind == "csv" else '{"text": "a", "score": 1}\n{"text": "b", "score": 2}\n'
    f = write(tmp_path / f"x.{kind}", body)
    monkeypatch.setattr(_io, "LAZY_AUTO_BYTES", f.stat().st_size + 1)
    kept = load(f"{kind}:{f}?score_min=0&score_max=5")
    monkeypatch.setattr(_io, "LAZY_AUTO_BYTES", f.stat().st_size)
    streamed = load(f"{kind}:{f}?score_min=0&score_max=5")
    forced = load(f"{kind}:{f}?score_min=0&score_max=5&lazy=false")
    write(f, body.replace("a", "changed", 1) if kind == "jsonl" else body.replace("\na,", "\nchanged,"))
    assert next(iter(kept)).text == "a" and next(iter(forced)).text == "a"
    assert next(iter(streamed)).text == "changed"  # re-read: nothing kept


def test_keyword_options_override_spec(tmp_path: Path) -> None:
    f = write(tmp_path / "x.csv", "text,score,other\na,1,3\n")
    ds = load(f"csv:{f}?score=score&score_min=0&score_max=3", score="other")
    assert ds.records()[0].scores == (3.0,)


def test_option_of_another_task_is_rejected(tmp_path: Path) -> None:
    f = write(tmp_path / "x.csv", "text,question\na,b\n")
    with pytest.raises(DataError, match="option 'question' is for task=reading.*add task=reading"):
        load(f"csv:{f}?question=question")


def test_utf16_csv_with_encoding_option(tmp_path: Path) -> None:
    f = write(tmp_path / "x.csv", "text,score\nna\u00efve,1\nsecond,0\n", encoding="utf-16")
    with pytest.raises(DataError, match="cannot decode.*encoding="):
        load(f"csv:{f}")
    recs = load(f"csv:{f}?encoding=utf-16&score_min=0&score_max=1").records()
    assert [r.text for r in recs] == ["na\u00efve", "second"] and [r.id for r in recs] == ["line-2", "line-3"]


# ------------------------------------------------------------------ jsonl / json


def test_jsonl_defaults_line_ids_and_inferred_range(tmp_path: Path) -> None:
    f = write(tmp_path / "x.jsonl", '{"text": "one", "score": 2, "prompt_id": 3}\n\n'
                                    '{"text": "two", "score": 5, "prompt_id": 7}\n'
                                    '{"text": "three", "score": 4, "prompt_id": 7}\n')
    ds = load(f"jsonl:{f}")
    recs = ds.records()
    assert [r.id for r in recs] == ["line-1", "line-3", "line-4"]
    assert [r.prompt_id for r in recs] == ["3", "7", "7"]
    assert (ds.prompts["7"].score_min, ds.prompts["7"].score_max) == (4, 5)
    assert (ds.prompts["3"].score_min, ds.prompts["3"].score_max) == (2, 2)
    assert ds.prompts["7"].meta["score_range_inferred"] is True
    assert any("score range not given" in w and "score_min" in w for w in ds.meta["warnings"])


def test_jsonl_first_row_decides_columns(tmp_path: Path) -> None:
    f = write(tmp_path / "x.jsonl", '{"text": "one"}\n{"text": "two", "prompt_id": 7}\n')
    with pytest.raises(DataError, match=r"line 2: this row has a column 'prompt_id' that the first row lacks"):
        load(f"jsonl:{f}")


def test_jsonl_without_scores_warns(tmp_path: Path) -> None:
    ds = load(f"jsonl:{write(tmp_path / 'x.jsonl', json.dumps({'text': 'a'}) + chr(10))}", task="essay")
    assert ds.records()[0].scores == () and ds.task == "essay"
    assert any("no score column" in w for w in ds.meta["warnings"])


def test_jsonl_reading_task(tmp_path: Path) -> None:
    rows = [{"qid": "q1", "q": "Who went?", "passage": "Bob went home.", "gold": ["Bob", "Bob"],
             "starts": [0, 0], "doc": "T"},
            {"qid": "q2", "q": "Where?", "passage": "Bob went home.", "gold": "home|home.", "starts": "9|9",
             "doc": "T"}]
    f = write(tmp_path / "r.jsonl", "\n".join(json.dumps(r) for r in rows))
    ds = load(f"jsonl:{f}?task=reading&id=qid&question=q&context=passage&answers=gold&answer_starts=starts"
              "&title=doc")
    a, b = ds.records()
    assert a == QAExample(id="q1", question="Who went?", context="Bob went home.", answers=("Bob", "Bob"),
                          answer_starts=(0, 0), title="T")
    assert b.answers == ("home", "home.") and b.answer_starts == (9, 9)
    assert ds.prompts == {} and ds.task == "reading"


def test_questions_task_regex_answers_not_split(tmp_path: Path) -> None:
    f = write(tmp_path / "q.csv", "id,question,answers\n1,When?,Sept?(ember)?|Feb(ruary)?\n")
    (r,) = load(f"csv:{f}?task=questions&answer_type=regex").records()
    assert r == OpenQuestion(id="1", question="When?", answers=("Sept?(ember)?|Feb(ruary)?",), answer_type="regex")
    (s,) = load(f"csv:{f}?task=questions").records()
    assert s.answers == ("Sept?(ember)?", "Feb(ruary)?") and s.answer_type == "string"
    bad = write(tmp_path / "b.csv", "id,question,answers\n1,When?,(oops\n")
    with pytest.raises(DataError, match=r"line 2: answer regex '\(oops'"):
        load(f"csv:{bad}?task=questions&answer_type=regex")


def test_json_array_and_data_wrapper(tmp_path: Path) -> None:
    rows = [{"text": "a", "score": 1}, {"text": "b", "score": 0}]
    a = load(f"json:{write(tmp_path / 'a.json', json.dumps(rows))}", score_min=0, score_max=1)
    b = load(f"json:{write(tmp_path / 'b.json', json.dumps({'data': rows}))}", score_min=0, score_max=1)
    assert a.records() == b.records() and [r.id for r in a] == ["row-0", "row-1"]
    with pytest.raises(DataError, match=r"row 1 \(key \[1\]\): empty text"):
        load(f"json:{write(tmp_path / 'c.json', json.dumps([{'text': 'a'}, {'text': None}]))}")


# ------------------------------------------------------------------ from_hf


def test_from_hf_rows_with_column_mapping() -> None:
    rows = [{"essay": "First essay.", "r1": 3, "r2": 4, "set": 1},
            {"essay": "Second essay.", "r1": 2, "r2": None, "set": 2}]
    ds = from_hf(rows, task="essay", columns={"text": "essay", "score": ["r1", "r2"], "prompt": "set"},
                 score_min=0, score_max=4, name="my-essays")
    a, b = ds.records()
    assert a == ScoredResponse(id="row-0", prompt_id="1", text="First essay.", scores=(3.0, 4.0))
    assert b.scores == (2.0,) and b.prompt_id == "2"
    assert ds.spec == "hf:my-essays" and ds.task == "essay" and sorted(ds.prompts) == ["1", "2"]
    with pytest.raises(DataError, match=r"row 1: r1 5 is outside prompt 2's score range 0-4"):
        from_hf([rows[0], {**rows[1], "r1": 5}], task="essay",
                columns={"text": "essay", "score": "r1", "prompt": "set"}, score_min=0, score_max=4)


def test_from_hf_squad_style_answers() -> None:
    rows = [{"id": "x1", "title": "T", "question": "Who?", "context": "Bob went home.",
             "answers": {"text": ["Bob"], "answer_start": [0]}}]
    (r,) = from_hf(rows, task="reading").records()
    assert r == QAExample(id="x1", question="Who?", context="Bob went home.", answers=("Bob",),
                          answer_starts=(0,), title="T")
    (r2,) = from_hf(rows, task="reading", columns={"answers": "answers.text",
                                                   "answer_starts": "answers.answer_start"}).records()
    assert r2 == r


class FakeHFDataset:
    """Duck-types a datasets.Dataset: column_names, info.dataset_name and iteration over dict rows."""

    def __init__(self, rows: list[dict]) -> None:
        self.rows = rows
        self.column_names = list(rows[0])
        self.info = type("Info", (), {"dataset_name": "fake_asap"})()

    def __iter__(self):
        return iter(self.rows)


def test_from_hf_duck_typed_dataset_checks_columns_up_front() -> None:
    ds = FakeHFDataset([{"answer": "a", "label": 1}, {"answer": "b", "label": 0}])
    loaded = from_hf(ds, columns={"text": "answer", "score": "label"}, score_min=0, score_max=1)
    assert loaded.spec == "hf:fake_asap" and len(loaded) == 2
    with pytest.raises(DataError, match=r"hf dataset 'fake_asap': column names: missing column\(s\) 'lable'.*"
                                        r"did you mean 'label'"):
        from_hf(ds, columns={"text": "answer", "score": "lable"})


def test_from_hf_dataframe_and_bad_inputs() -> None:
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"text": ["a", "b"], "score": [1.0, 2.0], "id": [10, 11]})
    recs = from_hf(df, score_min=0, score_max=2).records()
    assert [(r.id, r.scores) for r in recs] == [("10", (1.0,)), ("11", (2.0,))]
    with pytest.raises(DataError, match="mapping of splits.*pass one split"):
        from_hf({"train": [], "test": []})
    with pytest.raises(DataError, match=r"row 1: expected an object"):
        from_hf([{"text": "a"}, "not a row"])
    with pytest.raises(DataError, match="missing gold score in column 'score'"):
        from_hf(pd.DataFrame({"text": ["a"], "score": [float("nan")]}))


def test_from_hf_real_datasets_package_if_installed() -> None:
    datasets = pytest.importorskip("datasets")
    # this test directory is named datasets too (it mirrors callbluff/datasets); it has no __init__.py, so it
    # can only be a namespace package, which never shadows the installed regular package
    assert datasets.__file__ is not None and hasattr(datasets, "Dataset"), (
        f"`import datasets` found {datasets!r}, not the Hugging Face package; keep tests/datasets without __init__.py")
    hf = datasets.Dataset.from_list([{"text": "a", "score": 1}, {"text": "b", "score": 0}])
    assert [r.text for r in from_hf(hf, score_min=0, score_max=1)] == ["a", "b"]


# ------------------------------------------------------------------ format loaders on synthetic files

AES_HEADER = ("essay_id\tessay_set\tessay\trater1_domain1\trater2_domain1\trater3_domain1\tdomain1_score\t"
              "rater1_domain2\trater2_domain2\tdomain2_score")


def test_asap_aes_synthetic_quotes_crlf_bom_and_gz(tmp_path: Path) -> None:
    lines = [AES_HEADER,
             '7\t2\t"He said ""boom,"" then left."\t3\t4\t\t3\t2\t3\t2',
             '8\t8\t"A quoted essay"\t20\t25\t50\t50\t\t\t',
             '9\t1\t"An unpaired opening quote\t4\t4\t\t8\t\t\t']
    plain = write(tmp_path / "t.tsv", "\ufeff" + "\r\n".join(lines) + "\r\n")
    gz = tmp_path / "t.tsv.gz"
    gz.write_bytes(gzip.compress("\n".join(lines).encode()))
    a, b = load(f"asap-aes:{plain}").records(), load(f"asap-aes:{gz}").records()
    assert a == b and [r.meta for r in a] == [r.meta for r in b]
    assert a[0].text == 'He said "boom," then left.' and a[0].scores == (3.0, 3.0, 4.0)
    assert a[0].meta == {"domain2_score": 2.0}
    assert a[1].text == "A quoted essay" and a[1].scores == (50.0, 20.0, 25.0, 50.0)
    assert a[2].text == '"An unpaired opening quote'
    only8 = load(f"asap-aes:{gz}", prompts="8")
    assert [r.id for r in only8] == ["8"] and list(only8.prompts) == ["8"]
    assert only8.prompts["8"].meta["rater_score_max"] == 30


def test_asap_sas_solution_autodetect_and_errors(tmp_path: Path) -> None:
    write(tmp_path / "public_leaderboard_rel_2.tsv", "Id\tEssaySet\tEssayText\n5\t3\tanswer five\n6\t1\tsix\n")
    write(tmp_path / "public_leaderboard_solution.csv",
          "id,essay_set,essay_weight,essay_score,Usage\n6,1,1,3,PublicTest\n5,3,1,2,PublicTest\n99,1,1,0,PublicTest\n")
    write(tmp_path / "private_leaderboard.tsv", "Id\tEssaySet\tEssayText\n7\t2\tseven\n")
    write(tmp_path / "train.tsv", "Id\tEssaySet\tScore1\tScore2\tEssayText\n1\t1\t3\t2\tone\n")
    pub = load(f"asap-sas:{tmp_path / 'public_leaderboard_rel_2.tsv'}")
    assert [(r.id, r.scores, r.meta["usage"]) for r in pub] == [("5", (2.0,), "PublicTest"),
                                                                 ("6", (3.0,), "PublicTest")]
    sol, tsv = tmp_path / "public_leaderboard_solution.csv", tmp_path / "public_leaderboard_rel_2.tsv"
    assert pub.meta["warnings"] == [f"1 ids of the solution file {sol} are not in {tsv}"]
    priv = load(f"asap-sas:{tmp_path / 'private_leaderboard.tsv'}")
    assert priv.meta["unlabeled"] and priv.records()[0].scores == ()
    with pytest.raises(DataError, match="already has gold scores"):
        load(f"asap-sas:{tmp_path / 'train.tsv'}?solution=public_leaderboard_solution.csv")
    with pytest.raises(DataError, match="nope.csv: ASAP-SAS solution CSV not found"):
        load(f"asap-sas:{tmp_path / 'private_leaderboard.tsv'}?solution=nope.csv")


def test_squad_v2_impossible_questions(tmp_path: Path) -> None:
    doc = {"version": "v2.0", "data": [{"title": "T", "paragraphs": [{"context": "Bob went home.", "qas": [
        {"id": "a", "question": "Who went?", "answers": [{"text": "Bob", "answer_start": 0}], "is_impossible": False},
        {"id": "b", "question": "Who stayed?", "answers": [], "is_impossible": True,
         "plausible_answers": [{"text": "Bob", "answer_start": 0}]}]}]}]}
    f = tmp_path / "v2.json.gz"
    f.write_bytes(gzip.compress(json.dumps(doc).encode()))
    ds = load(f"squad:{f}")
    a, b = ds.records()
    assert a.answers == ("Bob",) and not a.meta
    assert b.answers == () and b.meta == {"is_impossible": True, "plausible_answers": ("Bob",)}
    assert ds.meta["impossible"] == 1 and ds.meta["version"] == "v2.0"
    skipped = load(f"squad:{f}?skip_impossible=true")
    assert [r.id for r in skipped] == ["a"] and skipped.meta["skipped_impossible"] == 1


def test_mohler_synthetic_directory_or_answers_file(tmp_path: Path) -> None:
    d = tmp_path / "m"
    d.mkdir()
    write(d / "questions.tsv", "question_id\tquestion\treference_answer\n1.1\tWhat?\tThis.\n12.2\tWhy?\tSo.\n"
                               "1.2\tIgnored?\tYes.\n")
    write(d / "answers.tsv", "question_id\tanswer_index\tignored_in_published_work\tscore_avg\tscore_grader1_other\t"
                             "score_grader2_me\tstudent_answer\n"
                             '1.1\t0\t0\t4.5\t5\t4\t"A ""quoted""\tanswer"\n'
                             "12.2\t0\t0\t4\t8\t8\tBecause.\n1.2\t0\t1\t5\t5\t5\tYes.\n")
    ds = load(f"mohler:{d}")
    again = load(f"mohler:{d / 'answers.tsv'}")
    assert ds.records() == again.records()
    a, b = ds.records()
    assert a.text == 'A "quoted"\tanswer' and a.scores == (4.5, 5.0, 4.0)
    assert b.scores == (4.0, 4.0, 4.0) and b.meta == {"raw_grader_scores": (8.0, 8.0)}
    assert sorted(ds.prompts) == ["1.1", "12.2"]
    assert len(load(f"mohler:{d}?include_ignored=true").prompts) == 3
