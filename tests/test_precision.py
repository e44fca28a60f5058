"""The precision check end to end: `python -m helpers precision` on tiny-llama scores every
default method in float32, bfloat16, NF4 and int8 through the runner into a store whose files
record their precision, and its table agrees with an independent recount from those files
(flips, accuracy, McNemar's exact p by statsmodels and by scipy); a rerun scores nothing;
the comparison's edge cases and the model card's section."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from scipy.stats import binomtest
from statsmodels.stats.contingency_tables import mcnemar
from notebook_run import run_notebook

from helpers import paths
from helpers.analysis.precision import COLUMNS, compare_frames, mcnemar_p, mcnemar_table, precision_table
from helpers.cli import main
from helpers.runs.precision import default_methods, precision_names
from helpers.zoo.model_card import card_text, lp_accuracy
from helpers.zoo.precision_card import PRECISION_HEADING, precision_text, update_card_precision

LIMIT = 2  # pairs per BLiMP paradigm: 134 pairs
METHODS = ["lp", "intemplate_lp", "yesno", "ab"]
PRECISION_OF = {"float32": (None, "float32"), "bfloat16": (None, "bfloat16"), "nf4": ("4bit", "bfloat16"),
                "int8": ("8bit", "float32")}  # precision -> (quant, dtype) its files record


def meta_of(path) -> dict:
    return json.loads(pq.read_schema(path).metadata[b"helpers"])


@pytest.fixture(scope="module")
def check(tmp_path_factory, tiny_dir):
    """The CLI's run on tiny-llama: its printed output, the table it wrote and its score files."""
    root = tmp_path_factory.mktemp("precision")
    argv = ["precision", "--model", "tiny-llama", "--dataset", "blimp", "--limit", str(LIMIT), "--templates", "1",
            "--root", str(root)]
    assert main(argv) == 0
    folder = root / "blimp" / "tiny-llama"
    files = sorted(folder.glob("*.parquet"))
    return {"argv": argv, "root": root, "folder": folder, "files": files,
            "table": pd.read_csv(folder / f"precision__limit{LIMIT}.csv", keep_default_na=False, na_values=[""])}


def test_the_table_has_a_row_per_method_template_and_precision(check):
    table = check["table"]
    assert list(table.columns) == COLUMNS
    assert len(table) == 4 * 4 and len(check["files"]) == 16
    assert table.groupby(["method", "template"]).precision.apply(list).to_dict() == {
        (m, "none" if m == "lp" else "1"): ["float32", "bfloat16", "nf4", "int8"] for m in METHODS}
    assert (table["items"] == 67 * LIMIT).all() and (table["limit"] == LIMIT).all()
    assert (check["folder"] / f"precision__limit{LIMIT}.md").read_text().startswith("| method ")


def test_the_score_files_record_their_precision(check):
    for path in check["files"]:
        meta = meta_of(path)
        assert path.name.endswith(f"__{meta['precision']}.parquet")
        assert (meta["quant"], meta["dtype"]) == PRECISION_OF[meta["precision"]], path.name
        assert meta["model_name"] == "tiny-llama" and meta["limit"] == LIMIT
    assert len({meta_of(p)["config_hash"] for p in check["files"]}) == 16


def test_float32_against_itself_flips_nothing(check):
    ref = check["table"][check["table"].precision == "float32"]
    assert (ref.flips == 0).all() and (ref.to_wrong == 0).all() and (ref.mcnemar_p == 1.0).all()
    assert (ref.accuracy_change == 0).all() and (ref.mean_abs_score_change == 0).all()


def test_flips_accuracy_and_p_agree_with_a_recount_from_the_score_files(check):
    """Read each precision's file and its float32 twin with pandas alone, recount."""
    files = {(meta_of(p)["method"], str(meta_of(p).get("template_id") or "none"), meta_of(p)["precision"]): p
             for p in check["files"]}
    table = check["table"].set_index(["method", "template", "precision"])
    moved = 0
    for (method, template, precision), path in files.items():
        ref = pd.read_parquet(files[(method, template, "float32")])
        low = pd.read_parquet(path)
        assert ref.pair_id.tolist() == low.pair_id.tolist()
        r, w = ref.correct.to_numpy(bool), low.correct.to_numpy(bool)
        b, c = int(np.sum(r & ~w)), int(np.sum(~r & w))
        row = table.loc[(method, template, precision)]
        assert (row.flips, row.to_wrong, row.to_right) == (b + c, b, c) == (int(np.sum(r != w)), b, c)
        assert row.flip_share == pytest.approx(100 * (b + c) / len(low))
        assert row.accuracy == pytest.approx(100 * w.mean()) and row.ties == int(low.tie.sum())
        assert row.accuracy_change == pytest.approx(100 * (w.mean() - r.mean()))
        counts = [[int(np.sum(r & w)), b], [c, int(np.sum(~r & ~w))]]
        assert row.mcnemar_p == pytest.approx(mcnemar(counts, exact=True).pvalue, rel=1e-12)
        assert row.mcnemar_p == pytest.approx(binomtest(b, b + c).pvalue if b + c else 1.0, rel=1e-9)
        deltas = np.abs(np.r_[low.score_good - ref.score_good, low.score_bad - ref.score_bad])
        assert row.mean_abs_score_change == pytest.approx(deltas.mean(), rel=1e-12)
        moved += b + c
    assert moved > 0  # the random tiny model's decisions do move in some precision
    nf4 = table.xs("nf4", level="precision")
    assert (nf4.mean_abs_score_change.loc[[("lp", "none"), ("intemplate_lp", "1")]] > 0).all()


def test_weights_shrink_with_precision(check):
    size = check["table"].groupby("precision").weight_bytes.agg(["min", "max"])
    assert (size["min"] == size["max"]).all()  # one size per precision, whatever the method
    halved = 2 * size.loc["bfloat16", "min"] - size.loc["float32", "min"]
    assert 0 <= halved <= 256  # the weights halve; float32 buffers (the rotary frequencies) stay float32
    assert size.loc["nf4", "min"] < size.loc["int8", "min"] < size.loc["float32", "min"]


def test_a_rerun_reuses_every_score_file(check, capsys):
    before = {p: meta_of(p)["time_ns"] for p in check["files"]}
    assert main(check["argv"]) == 0
    assert {p: meta_of(p)["time_ns"] for p in sorted(check["folder"].glob("*.parquet"))} == before
    assert "wrote " in capsys.readouterr().out


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["precision", "--model", "tiny-llama", "--dataset", "no_such_set", "--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown dataset 'no_such_set'; choose from: ") and err.count("\n") == 1
    assert main(["precision", "--model", "tiny-llama", "--dataset", "hl_p18", "--methods", "no_such_method",
                 "--root", str(tmp_path)]) == 2
    assert "unknown method 'no_such_method'" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # argparse: a precision outside the four
        main(["precision", "--model", "tiny-llama", "--dataset", "blimp", "--precisions", "fp8"])


def test_methods_follow_the_dataset():
    assert default_methods("blimp") == METHODS
    assert default_methods("hl_blimp") == METHODS + ["hl_sentence_judgment", "hl_sentence_comparison"]
    assert default_methods("hl_p18") == ["hl_word_prediction"]
    assert default_methods("hl_dtfit") == ["hl_word_comparison"]
    with pytest.raises(ValueError, match="--methods"):
        default_methods("wikitext")
    assert precision_names("nf4,int8") == ["float32", "nf4", "int8"]
    assert precision_names(["float32"]) == ["float32"]


def test_hu_levy_items_without_a_decision_and_with_shared_credit(tmp_path, tiny_dir):
    """Word prediction (one item, no decision): only score changes. Word comparison credits
    each pair with the share of its two answer orders right (0, 0.5, 1): a flip is any change
    of that credit, the diagonal of McNemar's table holds the unchanged ones."""
    argv = ["precision", "--model", "tiny-llama", "--precisions", "nf4", "--limit", "60", "--root", str(tmp_path),
            "--templates", "direct", "metaQuestionSimple"]
    assert main(argv + ["--dataset", "hl_p18"]) == 0
    assert main(argv + ["--dataset", "hl_dtfit"]) == 0
    words = pd.read_csv(tmp_path / "hl_p18" / "tiny-llama" / "precision__limit60.csv")
    assert set(words.method) == {"hl_word_prediction"} and words.flips.isna().all() and words.accuracy.isna().all()
    assert (words[words.precision == "nf4"].mean_abs_score_change > 0).all()
    files = sorted((tmp_path / "hl_dtfit" / "tiny-llama").glob("*.parquet"))
    table = precision_table(files).set_index(["template", "precision"])
    credits = set()
    for template in ("direct", "metaQuestionSimple"):
        ref, low = (pd.read_parquet(next(f for f in files if meta_of(f)["template_id"] == template
                                         and meta_of(f)["precision"] == p)) for p in ("float32", "nf4"))
        r, w = ref.correct.to_numpy(float), low.correct.to_numpy(float)
        row = table.loc[(template, "nf4")]
        assert (row.flips, row.to_wrong, row.to_right) == (np.sum(r != w), np.sum(w < r), np.sum(w > r))
        assert row.accuracy == pytest.approx(100 * w.mean())
        assert row.mcnemar_p == pytest.approx(binomtest(int(np.sum(w < r)), int(np.sum(w != r))).pvalue
                                              if np.any(w != r) else 1.0)
        credits |= set(w) | set(r)
    assert credits == {0.0, 0.5, 1.0} and table.flips.sum() > 0  # a half credit and a flip occur: both paths run


def test_mcnemar_table_and_p_by_hand():
    ref = np.array([1, 1, 0, 0.5, 0.5, 1, 0])
    low = np.array([0, 1, 1, 1, 0, 0.5, 0])
    table = mcnemar_table(ref, low)
    assert table.tolist() == [[1, 3], [2, 1]]  # down: 1->0, .5->0, 1->.5; up: 0->1, .5->1
    assert mcnemar_p(table) == pytest.approx(1.0) and mcnemar_p([[5, 0], [6, 5]]) == pytest.approx(2 / 2 ** 6)
    assert mcnemar_p([[3, 0], [0, 4]]) == 1.0
    with pytest.raises(ValueError, match="compare the same items"):
        mcnemar_table(ref, low[:3])


def pairs(good, bad) -> pd.DataFrame:
    frame = pd.DataFrame({"paradigm": "p", "pair_id": range(len(good)), "score_good": good, "score_bad": bad})
    return frame.assign(correct=frame.score_good > frame.score_bad, tie=frame.score_good == frame.score_bad)


def test_a_hand_made_comparison_and_other_items_refused():
    ref = pairs([-1.0, -2.0, -3.0, -4.0], [-2.0, -1.0, -3.5, -4.0])  # right, wrong, right, tie (an error)
    low = pairs([-1.5, -1.5, -3.75, -4.0], [-2.0, -1.0, -3.5, -4.5])  # right, wrong, wrong, right
    row = compare_frames(ref, low)
    assert (row["accuracy"], row["accuracy_change"], row["flips"], row["flip_share"]) == (50, 0, 2, 50)
    assert (row["to_wrong"], row["to_right"], row["ties"], row["mcnemar_p"]) == (1, 1, 0, 1.0)
    assert row["mean_abs_score_change"] == pytest.approx((0.5 + 0.5 + 0.75 + 0.5) / 8)
    assert row["max_abs_score_change"] == 0.75
    assert compare_frames(ref, ref)["ties"] == 1 and compare_frames(ref, ref)["flips"] == 0
    # the reference's tie (an error) is half right in the expected accuracy and right in the upper end
    assert (compare_frames(ref, ref)["accuracy"], compare_frames(ref, ref)["expected_accuracy"],
            compare_frames(ref, ref)["accuracy_ties_right"]) == (50, 62.5, 75)
    assert (row["expected_accuracy"], row["accuracy_ties_right"]) == (50, 50)  # no tie: the range is the accuracy
    with pytest.raises(ValueError, match="same selection"):
        compare_frames(ref, low.assign(pair_id=[1, 0, 2, 3]))


def test_the_card_section_merges_methods_and_states_subsets(check, tmp_path):
    folder = tmp_path / "demo-en"
    shutil.copytree(paths.MODELS / "demo-en", folder)
    record = json.loads((folder / "training.json").read_text())
    record.pop("precision", None)  # a card without a recorded table (its old section, if any, is replaced)
    (folder / "training.json").write_text(json.dumps(record))
    table = check["table"]
    settings = {"model": "demo-en", "dataset": "blimp", "machine": "m"}
    for _ in range(2):  # written twice: one section
        update_card_precision(str(folder), table[table.method == "lp"], {**settings, "note": "LP moves."})
    update_card_precision(str(folder), table[table.method != "lp"], {**settings, "why_subset": "time"})
    card = (folder / "README.md").read_text()
    assert card.count("## Precision") == 1 and card.count(PRECISION_HEADING) == 1
    section = card[card.index(PRECISION_HEADING):].split("\n## ")[0]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in section.splitlines() if line.startswith("|")]
    assert rows[0][:3] == ["method", "template", "precision"] and len(rows) == 2 + 16
    assert [r[0] for r in rows[2:6]] == ["lp"] * 4  # kept from the first call
    update_card_precision(str(folder), table[table.method == "lp"], {**settings, "note": "LP moves."})
    again = (folder / "README.md").read_text()
    assert again == card  # a method written again keeps its place (and the others theirs)
    nf4 = table[(table.method == "yesno") & (table.precision == "nf4")].iloc[0]
    shown = dict(zip(rows[0], next(r for r in rows if r[:3] == ["yesno", "1", "nf4"])))
    assert shown["flips"] == f"{int(nf4.flips):,} ({nf4.flip_share:.2f}%)"
    assert shown["McNemar p"] == f"{nf4.mcnemar_p:.2g}"
    assert f"- `yesno` (template 1): the first {LIMIT} pairs of every paradigm, 134 pairs\n" in section
    assert "\nA subset for `intemplate_lp`, `yesno`, `ab`: time.\n" in section
    assert f"- `lp`: the first {LIMIT} pairs of every paradigm, 134 pairs. LP moves.\n" in section  # kept
    record = json.loads((folder / "training.json").read_text())
    assert record["precision"]["why_subset"] == {m: "time" for m in METHODS[1:]}
    assert record["precision"]["notes"] == {"lp": "LP moves."}
    assert len(record["precision"]["rows"]) == 16
    scores = pd.DataFrame({"method": "lp", "dataset": "blimp", "phenomenon": ["a"], "correct": [True], "tie": [False]})
    assert precision_text(record) == section.rstrip("\n") + "\n"  # the card as model_card renders it, too
    assert precision_text(record) in card_text("demo-en", "data/models/demo-en", record, lp_accuracy(scores))


@pytest.mark.slow
def test_02_readout_shows_the_precision_table_the_cli_reproduces(scratch, tiny_dir):
    """02's last section with precision_check=True writes the table; the CLI with the same
    settings finds every score file the notebook wrote (scores nothing) and gives the same table."""
    tmp_path = scratch
    run_notebook("02_readout.ipynb", tmp_path / "02.ipynb", model="tiny-llama", dataset="blimp", methods="lp",
                 templates=[2], limit=1, precision_check=True, precision_limit=1, precision_methods="lp,yesno")
    shown = pd.read_csv(tmp_path / "outputs" / "tables" / "02_readout_precision__tiny-llama__blimp__limit-1.csv")
    assert shown[["method", "template"]].drop_duplicates().values.tolist() == [["lp", "none"], ["yesno", "2"]]
    assert shown.precision.tolist() == ["float32", "bfloat16", "nf4", "int8"] * 2
    folder = tmp_path / "outputs" / "precision" / "blimp" / "tiny-llama"
    written = {p: meta_of(p)["time_ns"] for p in sorted(folder.glob("*.parquet"))}
    assert len(written) == 8
    assert main(["precision", "--model", "tiny-llama", "--dataset", "blimp", "--methods", "lp", "yesno",
                 "--templates", "2", "--limit", "1", "--root", str(tmp_path / "outputs" / "precision")]) == 0
    assert {p: meta_of(p)["time_ns"] for p in sorted(folder.glob("*.parquet"))} == written
    again = pd.read_csv(folder / "precision__limit1__lp+yesno.csv")  # named with its methods: not the default
    pd.testing.assert_frame_equal(shown, again)
    from helpers.reporting.outputs import sidecar_score_files

    sidecar = tmp_path / "outputs" / "tables" / "02_readout_precision__tiny-llama__blimp__limit-1.csv.json"
    assert sorted(sidecar_score_files(sidecar)) == sorted(written)
    # the command line takes the settings 02's precision section passes (all but quant and dtype, which the
    # precisions set): another start convention is another configuration, scored and recorded as such
    assert main(["precision", "--model", "tiny-llama", "--dataset", "blimp", "--methods", "lp", "--limit", "1",
                 "--precisions", "float32", "--start", "none", "--share", "none",
                 "--root", str(tmp_path / "outputs" / "precision")]) == 0
    runs = [(m["start_convention"], m["share"]) for p in sorted(folder.glob("lp*.parquet"))
            if (m := meta_of(p))["precision"] == "float32"]
    assert ("none", "none") in runs and ("bos-else-eos", "auto") in runs
