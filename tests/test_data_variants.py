"""Dataset variants: Hu et al. (2025)'s counts, the SLING and LI selection rules checked by an
independent reading of the mirror, variants apart in data/processed and in the score store,
and the error for a variant that notebook 01 has not prepared."""
from __future__ import annotations

import csv
import json

import pandas as pd
import pytest

from helpers import data, paths
from helpers.data import DataNotPreparedError, english
from helpers.data.selection import HU2025, select
from helpers.store import ScoreStore, load_scores
from helpers.runner import run_methods
from helpers.engine import CausalScorer
from helpers.settings import Settings


@pytest.fixture
def processed(tmp_path, monkeypatch):
    monkeypatch.setenv(paths.PROCESSED_ENV, str(tmp_path / "processed"))
    return tmp_path / "processed"


@pytest.mark.parametrize("label", list(HU2025))
def test_hu2025_table1_counts(label):
    name, count = HU2025[label]
    df = data.load(name)
    assert len(df) == count
    assert set(df["dataset"]) == {name}  # a variant's rows carry the variant's name
    if "identical" in df and name != "li_hu2025":
        assert not df["identical"].any()


def test_variants_and_their_bases():
    variants = {n: d.base for n, d in data.DATASETS.items() if d.base}
    assert variants == {"blimp_hu2025": "blimp", "sling_hu2025": "sling", "li_hu2025": "li", "cola_dev": "cola"}
    bases = {"blimp": 67_000, "sling": 40_000, "li": 2_379, "cola": 8_551}
    assert {n: len(data.load(n)) for n in bases} == bases
    dev = data.load("cola_dev")
    assert len(dev) == 527 and set(dev.dataset) == {"cola_dev"} and dev.label.sum() == 365


def _sling_files():
    """(relative folder, file stem) -> list of (good, bad), read with json alone."""
    root = paths.mirror() / "sling" / "SLING_Data"
    out = {}
    for path in sorted(root.rglob("*.jsonl")):
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        out[f"{path.parent.relative_to(root).as_posix()}/{path.stem}"] = [(r["sentence_good"], r["sentence_bad"])
                                                                       for r in rows]
    return out


def test_sling_rule_main_set_without_identical_pairs():
    files = _sling_files()
    sizes = pd.Series({k: len(v) for k, v in files.items()}).value_counts().to_dict()
    assert sizes == {1000: 40, 40: 14}
    identical = {k: sum(g == b for g, b in v) for k, v in files.items()}
    assert {k: n for k, n in identical.items() if n} == {
        "Aspect/zai_le": 16, "Classifier-Noun/cl_adj_simple_noun": 4, "Classifier-Noun/cl_simple_noun": 4}
    main = {k: v for k, v in files.items() if len(v) == 1000}
    expected = sum(g != b for v in main.values() for g, b in v)
    assert expected == 39_976
    variant = data.load("sling_hu2025")
    assert len(variant) == expected and variant.paradigm.nunique() == 40
    assert variant.groupby("paradigm").size()["Aspect/zai_le"] == 984
    # the rules that do not give the paper's count
    assert len(data.load("sling", include_small=True, drop_identical=True)) == 40_536
    full = data.load("sling")
    assert len(full) - full.duplicated(["good", "bad"]).sum() == 39_994


def _li_rows():
    path = paths.mirror() / english.LI
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        return [dict(zip(header, row)) for row in reader]  # the second LS_diff overwrites the first


def test_li_rule_at_most_one_word_apart():
    rows = _li_rows()
    assert len(rows) == 2379
    apart = [abs(len(r["sentence_grammatical"].split()) - len(r["sentence_ungrammatical"].split())) for r in rows]
    keep = [r for r, words in zip(rows, apart) if words <= 1]
    assert len(keep) == 1883
    variant = data.load("li_hu2025")
    assert sorted(variant.pair_id) == sorted(int(r["pair_ID"]) for r in keep)
    assert variant.source.value_counts().to_dict() == {"Sprouse": 1009, "Mahowald": 874}
    assert (variant.word_difference == 0).sum() == 1152
    assert variant.rating_diff.notna().sum() == 1799 and int(variant.identical.sum()) == 1
    # the other rules tried, none of which gives 1,883
    rated = [r for r in rows if r["LS_diff"] != ""]
    assert len(rated) == 2275 and sum(float(r["LS_diff"]) > 0 for r in rated) == 2145
    assert len({(r["sentence_grammatical"], r["sentence_ungrammatical"]) for r in rows}) == 2373
    assert sum(r["Bad ID"].split(".")[-2] == "*" for r in rows) == 2116
    assert len(data.load("li", max_word_difference=0)) == 1152
    with pytest.raises(ValueError, match="max_word_difference must be a number of words >= 0 or None, got -1"):
        english.load_li(max_word_difference=-1)


def test_li_ratings_are_the_files_per_item_means():
    li = data.load("li")
    rows = _li_rows()
    assert li.rating_good.isna().sum() == 104 and li.rating_bad.isna().sum() == 64
    got = li.set_index("pair_id")
    for r in rows[::97]:
        want = float(r["LS_grammatical"]) if r["LS_grammatical"] else float("nan")
        assert got.loc[int(r["pair_ID"]), "rating_good"] == pytest.approx(want, nan_ok=True)
    means = pd.concat([li.rating_good, li.rating_bad]).groupby(pd.concat([li.source, li.source])).mean()
    assert abs(means["Sprouse"]) < 0.03 and abs(means["Mahowald"]) < 0.01  # z-scores: mean ~0 per study


def test_unprepared_variant_is_an_error_that_names_it(processed):
    with pytest.raises(DataNotPreparedError) as err:
        select("blimp_hu2025", prepared_only=True)
    msg = str(err.value)
    assert msg.startswith("dataset 'blimp_hu2025' (BLiMP without its 7 identical pairs")
    assert "python -m helpers sweep --notebooks 01 --datasets blimp_hu2025" in msg
    assert f"{processed / 'blimp_hu2025.parquet'} does not exist" in msg
    assert not processed.exists() or not list(processed.iterdir())  # nothing was built


def test_variants_coexist_in_processed(processed):
    data.prepare("li")
    data.prepare("li_hu2025")
    assert sorted(p.name for p in processed.iterdir()) == ["li.parquet", "li_hu2025.parquet"]
    full, hu = select("li", prepared_only=True), select("li_hu2025", prepared_only=True)
    assert (len(full), len(hu)) == (2379, 1883)
    assert set(full.frame.dataset) == {"li"} and set(hu.frame.dataset) == {"li_hu2025"}
    assert full.config()["dataset_options"] == hu.config()["dataset_options"] == {}


def test_options_that_make_a_variant_are_refused():
    with pytest.raises(ValueError, match="blimp with {'drop_identical': True} is the dataset 'blimp_hu2025'"):
        select("blimp", drop_identical=True)
    with pytest.raises(ValueError, match="cola with {'split': 'in_domain_dev'} is the dataset 'cola_dev'"):
        data.prepare("cola", split="in_domain_dev")
    with pytest.raises(ValueError, match=r"'li_hu2025' is 'li' with \{'max_word_difference': 1\}"):
        select("li_hu2025", max_word_difference=None)
    with pytest.raises(TypeError, match="dataset 'sling' has no option drop_identicals"):
        select("sling", drop_identicals=True)


def test_processed_file_records_its_options(processed):
    data.prepare("li", max_word_difference=2)
    assert data.load_processed("li").attrs["dataset_options"] == {"max_word_difference": 2}
    selection = select("li")  # what notebook 01 prepared, its options recorded in the score config
    assert len(selection) == 2227 and selection.config()["dataset_options"] == {"max_word_difference": 2}
    with pytest.raises(ValueError, match=r"li.parquet holds li read with options \{'max_word_difference': 2\}, "
                                         r"not \{\}"):
        data.load_processed("li", max_word_difference=None)
    assert select("li", limit=1, max_word_difference=3).config()["dataset_options"] == {"max_word_difference": 3}


def test_variants_are_apart_in_the_score_store(tmp_path, processed, tiny):
    scorer = CausalScorer(tiny("tiny-gpt2"), Settings(progress=False))
    store = ScoreStore(tmp_path / "scores")
    full, hu = select("li", limit=1), select("li_hu2025", limit=1)
    files_full = run_methods(scorer, full, ["lp"], store=store)
    files_hu = run_methods(scorer, hu, ["lp"], store=store)
    assert [f.parent.parent.name for f in files_full + files_hu] == ["li", "li_hu2025"]
    model = scorer.loaded.name
    got_full = load_scores(dataset="li", model=model, methods=["lp"], root=store.root)
    got_hu = load_scores(dataset="li_hu2025", model=model, methods=["lp"], root=store.root)
    assert set(got_full.dataset) == {"li"} and len(got_full) == len(full) == 101
    assert set(got_hu.dataset) == {"li_hu2025"} and len(got_hu) == len(hu) == hu.frame.paradigm.nunique()
    calls = scorer.forward_calls
    assert run_methods(scorer, select("li_hu2025", limit=1), ["lp"], store=store) == files_hu
    assert scorer.forward_calls == calls  # the variant's own file is found again, nothing rescored
