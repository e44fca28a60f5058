"""The paper check (helpers.reporting.paper_check, helpers.reporting.published): published values
read from the mirror and the papers folder equal the numbers the papers print, the papers'
names map onto this project's, a run is matched to them row by row (template mean and best,
share of "A", ensembles, point-biserial r computed as by hand), and Hu & Levy's released
Mandarin results, passed through this project's score columns and decisions, reproduce their
published values exactly."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from helpers import paths
from helpers.reporting import paper_check, published
from helpers.data.sources import resolve

HL_APPENDIX_D = "Hu & Levy 2023, Appendix D (Figure 11)"


def _values(notebook, paper=None):
    return {v.quantity: v for v in paper_check.paper_values(notebook) if paper is None or v.paper == paper}


def test_hu_levy_appendix_d_values_equal_their_analysis_notebook():
    """analysis_zh.ipynb (branch chinese @ 9b0a157) prints these means for text-davinci-003."""
    v = _values("03_prompting", HL_APPENDIX_D)
    printed = {"word prediction, News-zh, direct: mean log-prob of the true word": -3.346442,
               "word prediction, News-zh, metaQuestionSimple: mean log-prob of the true word": -3.671287,
               "word prediction, News-zh, metaInstruct: mean log-prob of the true word": -3.553944,
               "word prediction, News-zh, metaQuestionComplex: mean log-prob of the true word": -5.521090,
               "sentence comparison, Mandarin, direct: pair accuracy": 0.611215,
               "sentence comparison, Mandarin, metaQuestionSimple: accuracy": 0.787850,
               "sentence comparison, Mandarin, metaInstruct: accuracy": 0.823364,
               "sentence comparison, Mandarin, metaQuestionComplex: accuracy": 0.777570}
    for quantity, value in printed.items():
        assert v[quantity].value == pytest.approx(value, abs=5e-7), quantity
        assert v[quantity].paper_model == "text-davinci-003"
    # balanced accuracy (Figure 11's bars): (TPR + TNR) / 2 over the 535 pairs' sentences
    assert v["sentence judgment, Mandarin, metaInstruct: balanced accuracy"].value == pytest.approx(
        (498 / 535 + 131 / 535) / 2)
    assert len(v) == 12


def test_blimp_and_syntaxgym_values_come_from_the_released_results():
    blimp = _values("02_readout", "Warstadt et al. 2020 (BLiMP)")
    assert blimp["LP accuracy, all pairs"].value == pytest.approx(0.830238806)
    assert blimp["LP accuracy, island_effects"].value == pytest.approx(0.72725)
    assert blimp["LP accuracy, island_effects"].select == {"dataset": "blimp", "method": "lp",
                                                           "phenomenon": "island_effects"}
    assert len(blimp) == 13  # all pairs and the 12 phenomena
    # the linking function BLiMP's card records is the one its paper values are read with
    from helpers.data import DATASETS, linking
    from helpers.methods import METHODS

    assert linking.paper_linking("blimp").method == "lp" and linking.paper_linking("zhoblimp").method == "slln_lp"
    assert set(linking.PAPER_LINKING) <= set(DATASETS)
    assert {v.method for v in linking.PAPER_LINKING.values()} - {None} <= set(METHODS)
    assert linking.describe("blimp").startswith("blimp's paper reports lp (Warstadt et al. 2020")
    assert linking.paper_linking("blimp_nl").method == "bf_unigram"  # SLOG: LP minus the unigram LP
    # BHS: the ending's mean log-prob after its context (endings=True), scored through minicons
    assert linking.describe("bhs").startswith("bhs's paper reports meanlp (Kryvosheieva & Levy 2025")
    assert linking.describe("bhs", "bos-else-eos", False).endswith(
        'Convention: its reference scored with start="minicons" (no start token, the first token unscored), this run '
        'with start="bos-else-eos": start="minicons" scores as it did; its reference scores each ending after its '
        "context: endings=True scores as it did")
    assert linking.describe("bhs", "minicons", True).endswith('Convention: this run used the reference\'s convention, '
                                                              'start="minicons"')
    assert "its reference cuts every sentence to 64 tokens" in linking.describe("zhoblimp", "bos-else-eos")
    assert linking.describe("cola").endswith("no linking function recorded for its paper (helpers.data.linking)")
    sg = [v for v in paper_check.paper_values("06_context_priming") if v.paper == "Hu et al. 2020 (SyntaxGym)"]
    assert [(v.paper_model, round(v.value, 4)) for v in sg] == [("GPT-2", 0.7993), ("GPT-2 XL", 0.8527)]
    counts = _values("07_separability")
    assert counts["BLiMP: items"].value == 66_993 and counts["LI: items"].value == 1_883
    assert paper_check.not_available("04_ensembles")


def test_a_run_is_matched_row_by_row_and_the_note_says_whether_models_differ():
    rows = []
    for model, passing in (("gpt2", [1, 1, 0, 1]), ("demo-en", [0, 1, 0, 0])):
        rows.append(pd.DataFrame({"model": model, "method": "syntaxgym", "suite": "number_src",
                                  "item": range(4), "score": passing}))
    scores = pd.concat(rows, ignore_index=True)
    checked = paper_check.check("06_context_priming", scores)
    table = checked[checked.paper == "Hu et al. 2020 (SyntaxGym)"].set_index(["paper_model", "model"])
    assert table.loc[("GPT-2", "gpt2"), "this_run"] == 0.75
    assert table.loc[("GPT-2", "gpt2"), "difference"] == pytest.approx(0.75 - 0.7992874109)
    assert table.loc[("GPT-2", "gpt2"), "note"] == "the paper's model: should agree"
    assert table.loc[("GPT-2", "demo-en"), "note"].startswith("different model (demo-en vs the paper's GPT-2)")
    assert table.loc[("GPT-2 XL", "gpt2"), "note"].startswith("different model")
    empty = paper_check.check("02_readout", None)
    assert empty.this_run.isna().all() and empty.note.str.startswith("not computed by this run").all()
    text = paper_check.summary("06_context_priming", checked)
    assert f"{len(checked)} published numbers checked, 4 computed by this run, 1 with the paper's own model" in text
    assert "Shown only in figures: Sinha et al. 2023" in text
    with pytest.raises(KeyError, match="no paper check for '09_x'"):
        paper_check.check("09_x", None)


def _hl(rel):
    path = resolve(None).path(f"{paper_check.HL_ZH}/{rel}")
    return pd.DataFrame(json.loads(path.read_text(encoding="utf-8"))["results"])


def test_hu_levys_released_results_through_this_projects_scores_reproduce_their_values():
    """Their per-item log-probs as this project's basis columns, reduced by the registered
    methods (both answer orders averaged, as the paper reports), give back their numbers."""
    from helpers import methods as registry
    from helpers.methods.base import PassContext
    from helpers.settings import Settings

    model, pass_context, frames = "text-davinci-003", PassContext(None, "zh", Settings(instruct=False)), []

    def add(dataset, method, prompt, info, table, sides):
        frame = registry.get(method).frame(info, table, sides, pass_context)
        frames.append(frame.assign(model=model, method=method, template=prompt))

    for prompt in paper_check.HL_PROMPTS:
        r = _hl(f"exp1_word-prediction/news_zh_{model}_{prompt}.json")
        add("hl_news_zh", "hl_word_prediction", prompt, pd.DataFrame({"dataset": "hl_news_zh", "item_id": r.item_id}),
            pd.DataFrame({"lp": r.logprob_of_gold_continuation, "n_tokens": 1}), ("item",))
    direct = _hl(f"exp3a_sentence-judgment/mandarin_{model}_direct.json")
    info = pd.DataFrame({"dataset": "hl_mandarin", "paradigm": "mandarin", "pair_id": direct.item_id})
    for method in ("hl_sentence_judgment", "hl_sentence_comparison"):
        add("hl_mandarin", method, "direct", info, pd.DataFrame({"lp_good": direct.logprob_of_good_sentence,
                                                                  "lp_bad": direct.logprob_of_bad_sentence}),
            ("good", "bad"))
    for prompt in paper_check.HL_PROMPTS[1:]:
        r = _hl(f"exp3a_sentence-judgment/mandarin_{model}_{prompt}.json")
        add("hl_mandarin", "hl_sentence_judgment", prompt, info, pd.DataFrame({
            "lp_yes_good": r.logprob_of_yes_good_sentence, "lp_no_good": r.logprob_of_no_good_sentence,
            "lp_yes_bad": r.logprob_of_yes_bad_sentence, "lp_no_bad": r.logprob_of_no_bad_sentence}), ("good", "bad"))
        good = _hl(f"exp3b_sentence-comparison/mandarin_{model}_{prompt}_goodFirst.json")
        bad = _hl(f"exp3b_sentence-comparison/mandarin_{model}_{prompt}_badFirst.json")
        assert (good.item_id == bad.item_id).all()
        add("hl_mandarin", "hl_sentence_comparison", prompt, info, pd.DataFrame({
            "lp_1_good_first": good.logprob_of_good_continuation, "lp_2_good_first": good.logprob_of_bad_continuation,
            "lp_1_bad_first": bad.logprob_of_bad_continuation, "lp_2_bad_first": bad.logprob_of_good_continuation}),
            ("good", "bad"))
    scores = pd.concat(frames, ignore_index=True)
    checked = paper_check.check("03_prompting", scores)
    table = checked[checked.paper == HL_APPENDIX_D]
    assert len(table) == 12 and (table.note == "the paper's model: should agree").all()
    np.testing.assert_allclose(table.this_run, table.paper_value, atol=1e-12, rtol=0)
    # their text's "Direct ~0.6" (Exp. 3b, Figure 11) is the same measure of the same rows
    direct = checked[checked.quantity.str.startswith("text (Figure 11): accuracy_approx, Direct")].iloc[0]
    assert direct.paper_value == 0.6 and direct.note.startswith("the paper's model: should agree")
    assert direct.this_run == pytest.approx(0.611215, abs=5e-7)
    # shown in one unit per row: the accuracies in percent, the word prediction's mean log-prob as it is
    assert dict(zip(table.quantity.str.split(",").str[0], table.unit)) == {
        "word prediction": "log-prob", "sentence judgment": "%", "sentence comparison": "%"}
    shown = paper_check.shown(checked).set_index("quantity")
    for row in table.itertuples():
        factor = 100 if row.unit == "%" else 1
        assert shown.loc[row.quantity, "this_run"] == round(factor * row.this_run, 1 if factor == 100 else 3)
    assert shown.loc[direct.quantity, "paper_value"] == 60.0 and direct.unit == "%"


def _ide(notebook, table):
    return [v for v in paper_check.paper_values(notebook) if v.paper == "Ide et al. 2024"
            and v.source.startswith(f"{table},")]


def _one(values, model, start):
    found = [v for v in values if v.paper_model == model and v.quantity.startswith(start)]
    assert len(found) == 1, (model, start, [v.quantity for v in values])
    return found[0]


def test_ide_tables_are_read_from_the_papers_folder_as_fractions():
    t3 = _ide("02_readout", "Table 3")
    lp = _one(t3, "Llama-3", "Table 3: LP (lp) on BLiMP")
    assert lp.value == pytest.approx(0.796) and lp.measure == "accuracy" and lp.same_models == ("llama3",)
    assert lp.select == {"dataset": "blimp", "method": "lp"} and lp.source == "Table 3, papers/ide2024_table3.csv"
    itlp = _one(t3, "Qwen2", "Table 3: In-template LP (intemplate_lp) on CLiMP")
    assert itlp.value == pytest.approx(0.879) and itlp.measure == "template_mean" and "SD 0.3 points" in itlp.quantity
    assert _one(t3, "Mixtral-Instruct", "Table 3: In-template compar. LP (comparative_lp) on BLiMP").select == {
        "dataset": "blimp", "method": "comparative_lp"}
    assert len(t3) == 7 * 8  # 7 readout methods x (6 models on BLiMP + 2 on CLiMP)
    t9 = _ide("02_readout", "Table 9")
    best = _one(t9, "Llama-3", "Table 9: In-template LP (intemplate_lp) on BLiMP")
    assert best.value == pytest.approx(0.85) and best.measure == "template_max"
    assert len(t9) == 4 * 8  # the templated readouts (the single scores repeat Table 3)
    assert len(_ide("03_prompting", "Table 3")) == len(_ide("03_prompting", "Table 9")) == 2 * 8
    share = _one(_ide("03_prompting", "Table 10"), "Mixtral", "Table 10")
    assert share.value == pytest.approx(0.701) and share.measure == "share_A" and share.select["method"] == "ab"
    assert len(_ide("04_ensembles", "Table 10")) == 8
    t5 = _ide("04_ensembles", "Table 5")
    mix = _one(t5, "Qwen2", "Table 5: ensemble Mix-P3 of yesno and intemplate_lp on BLiMP")
    assert mix.value == pytest.approx(0.902) and mix.measure == "ensemble:Mix-P3"
    assert _one(t5, "Qwen2", "Table 5: oracle In-template LP (intemplate_lp) on CLiMP").value == pytest.approx(0.882)
    assert len(t5) == 48
    t4 = _ide("05_length_bias", "Table 4")
    r = _one(t4, "average over models", "Table 4: point-biserial r of success and token-length difference, In-template "
                                        "PenLP (intemplate_penlp) on CLiMP")
    assert r.value == pytest.approx(-0.269) and r.same_models == () and "Qwen2, Qwen2-Instruct" in r.comment


def test_every_name_of_the_papers_maps_to_a_registered_one():
    from helpers import methods
    from helpers.analysis.ensembles import SETTINGS
    from helpers.data import DATASETS
    from helpers.data.selection import HU2025
    from helpers.models.registry import REGISTRY

    for name in ("ide2024_table3.csv", "ide2024_table4.csv", "ide2024_table9.csv", "ide2024_table10.csv"):
        assert published.read(name)[["method", "dataset"]].isin([*published.METHODS, *published.DATASETS]).all(None)
    t3 = published.read("ide2024_table3.csv")
    assert set(t3["model"]) == set(published.MODELS)
    assert {published.METHODS[m] for m in t3["method"]} == set(published.NOTEBOOK_METHODS["02_readout"]) | set(
        published.NOTEBOOK_METHODS["03_prompting"])
    assert set(published.NOTEBOOK_METHODS["02_readout"]) <= set(methods.READOUT_METHODS)
    assert set(published.NOTEBOOK_METHODS["03_prompting"]) <= set(methods.PROMPT_METHODS)
    assert set(published.METHODS.values()) <= set(methods.METHODS)
    assert set(published.MODELS.values()) <= set(REGISTRY) and set(published.DATASETS.values()) <= set(DATASETS)
    t5 = published.read("ide2024_table5.csv")["method"]
    assert {m.removesuffix(" (oracle)") for m in t5 if m.endswith("(oracle)")} <= set(published.METHODS)
    assert {m for m in t5 if not m.endswith("(oracle)")} == set(SETTINGS)
    printed = published.read("hu2025_table1.csv").query("metric == 'n_items'").set_index("dataset")["value"]
    assert all(printed[row] == count for row, (_, count) in HU2025.items())
    assert all("equals papers/hu2025_table1.csv" in v.source
               for v in paper_check.paper_values("07_separability") if v.quantity in {f"{r}: items" for r in HU2025})


def test_text_numbers_are_listed_for_their_notebooks():
    ide = {v.quantity: v for v in paper_check.paper_values("04_ensembles") if v.quantity.startswith("text")}
    human = ide["text (Table 3): accuracy, human accuracy from Warstadt et al. (2020)"]
    assert human.value == pytest.approx(0.886) and human.measure == "none" and "88.6%" in human.comment
    attractors = sorted(v.value for q, v in ide.items() if q.startswith("text (Figure 4)"))
    assert attractors == pytest.approx([0.904, 0.945])
    assert len(ide) == 12  # every result of Ide et al.'s text
    assert sum(v.quantity.startswith("text (Table 10)") for v in paper_check.paper_values("03_prompting")) == 1
    sinha = [v for v in paper_check.paper_values("06_context_priming") if v.paper == "Sinha et al. 2023"]
    assert len(sinha) == 16 and all(v.measure == "none" for v in sinha)
    drop = [v for v in sinha if "accuracy_drop_min_pp" in v.quantity][0]
    assert drop.value == pytest.approx(0.70) and drop.paper_model == "OPT 6.7B"
    hu = [v for v in paper_check.paper_values("07_separability") if v.quantity.startswith("text")]
    assert sorted(v.value for v in hu) == pytest.approx([0.75, 0.8, 70, 95])
    hl = [v for v in paper_check.paper_values("03_prompting") if v.paper == "Hu & Levy 2023"]
    assert [v.value for v in hl if v.quantity.startswith("text")] == [0.6, 0.8]
    assert {v.select["dataset"]: v.value for v in hl if v.measure == "pairs"} == {"hl_syntaxgym": 345, "hl_blimp": 390}
    assert not any(v.quantity.startswith("text") for v in paper_check.paper_values("05_length_bias"))


def test_a_missing_papers_folder_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv(paths.PAPERS_ENV, str(tmp_path))
    assert paths.papers() == tmp_path.resolve()
    with pytest.raises(published.PapersMissing, match=f"{paths.PAPERS_ENV}=.* has no ide2024_table3.csv"):
        paper_check.check("02_readout", None)
    monkeypatch.delenv(paths.PAPERS_ENV)
    monkeypatch.setattr(paths, "DEFAULT_PAPERS", tmp_path / "absent")
    assert paths.papers() is None
    with pytest.raises(published.PapersMissing, match=f"there is no folder .*absent.*set {paths.PAPERS_ENV}"):
        paper_check.check("06_context_priming", None)


def test_summary_lists_what_only_figures_show():
    for notebook in paper_check.PAPER_VALUES:
        assert paper_check.not_available(notebook), notebook
    text = paper_check.summary("04_ensembles", paper_check.check("04_ensembles", None))
    assert "Shown only in figures: Ide et al. 2024 Figure 4" in text and "Not available offline" not in text
    assert "Shown only in figures: Hu et al. 2025 Figure 9" in paper_check.summary(
        "07_separability", paper_check.check("07_separability", None))


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    from synthetic_scores import write_store
    from helpers.store import load_files

    return load_files(write_store(tmp_path_factory.mktemp("scores"), models=("llama3", "m2")))


def _run(table, quantity_start, paper_model, model):
    rows = table[table.quantity.str.startswith(quantity_start) & (table.paper_model == paper_model)
                 & (table.model == model)]
    assert len(rows) == 1, (quantity_start, paper_model, model)
    return rows.iloc[0]


def test_a_run_measures_template_mean_best_share_of_a_ensembles_and_r_as_by_hand(synthetic):
    from scipy import stats
    from synthetic_scores import METHODS, decisions, pairs_frame
    from helpers.analysis import ensembles

    n = len(pairs_frame())
    per_template = [decisions("llama3", "intemplate_lp", t, n)[0].mean() for t in METHODS["intemplate_lp"]]
    t02 = paper_check.check("02_readout", synthetic)
    row = _run(t02, "Table 3: In-template LP (intemplate_lp) on BLiMP", "Llama-3", "llama3")
    assert row.this_run == pytest.approx(np.mean(per_template)) and row.note == "the paper's model: should agree"
    assert row.difference == pytest.approx(np.mean(per_template) - 0.844)
    assert _run(t02, "Table 9: In-template LP (intemplate_lp) on BLiMP", "Qwen2", "llama3").this_run == pytest.approx(
        max(per_template))
    assert _run(t02, "Table 3: LP (lp) on BLiMP", "Mixtral", "m2").this_run == pytest.approx(
        decisions("m2", "lp", None, n)[0].mean())
    assert _run(t02, "Table 3: LP (lp) on CLiMP", "Qwen2", "m2").note.startswith("not computed by this run")

    rng = np.random.default_rng([ord(c) for c in "m2"])  # as write_store draws lengths, then slots
    rng.integers(3, 10, n), rng.integers(3, 10, n)
    slots = np.where(rng.random(n) < 0.5, "A", "B")
    shares = []
    for t in METHODS["ab"]:
        correct, tie = decisions("m2", "ab", t, n)
        shares.append(np.mean((correct & (slots == "A")) | (~correct & ~tie & (slots == "B"))))
    t03 = paper_check.check("03_prompting", synthetic)
    assert _run(t03, "Table 10", "Mixtral", "m2").this_run == pytest.approx(np.mean(shares))
    assert _run(t03, "Table 3: Yes/No prob comp (yesno) on BLiMP", "Llama-3", "m2").this_run == pytest.approx(
        np.mean([decisions("m2", "yesno", t, n)[0].mean() for t in METHODS["yesno"]]))

    t04 = paper_check.check("04_ensembles", synthetic)
    mine = synthetic[synthetic.model == "llama3"]
    expected = ensembles.ensemble_table(ensembles.predictor_matrix(mine), 10, 0, ensembles.abstentions(mine))
    for setting in ensembles.SETTINGS:
        got = _run(t04, f"Table 5: ensemble {setting} of yesno and intemplate_lp on BLiMP", "Qwen2", "llama3").this_run
        assert got == pytest.approx(expected.set_index("setting").loc[setting, "accuracy"])
    assert _run(t04, "Table 5: oracle Yes/No", "Llama-3", "llama3").this_run == pytest.approx(
        max(decisions("llama3", "yesno", t, n)[0].mean() for t in METHODS["yesno"]))

    best = int(np.argmax(per_template)) + 1
    rows = mine[(mine.method == "intemplate_lp") & (mine.template == str(best))]
    r = stats.pointbiserialr(rows.correct.astype(float), rows.n_tokens_good - rows.n_tokens_bad)[0]
    t05 = paper_check.check("05_length_bias", synthetic)
    assert _run(t05, "Table 4: point-biserial r of success and token-length difference, In-template LP "
                     "(intemplate_lp) on BLiMP", "average over models", "llama3").this_run == pytest.approx(r)
    assert len(t05) == 6 * 2 and t05.columns.tolist() == paper_check.COLUMNS
