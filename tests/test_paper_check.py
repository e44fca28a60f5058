"""The paper check (helpers.reporting.paper_check): published values read from the mirror equal
the numbers the papers' own materials print, a run is matched to them row by row, and Hu &
Levy's released Mandarin results, passed through this project's score columns and
decisions, reproduce their published values exactly."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from helpers.reporting import paper_check
from helpers.data.sources import resolve


def _values(notebook):
    return {v.quantity: v for v in paper_check.paper_values(notebook)}


def test_hu_levy_appendix_d_values_equal_their_analysis_notebook():
    """analysis_zh.ipynb (branch chinese @ 9b0a157) prints these means for text-davinci-003."""
    v = _values("03_prompting")
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
    blimp = _values("02_readout")
    assert blimp["LP accuracy, all pairs"].value == pytest.approx(0.830238806)
    assert blimp["LP accuracy, island_effects"].value == pytest.approx(0.72725)
    assert blimp["LP accuracy, island_effects"].select == {"dataset": "blimp", "method": "lp",
                                                           "phenomenon": "island_effects"}
    assert len(blimp) == 13  # all pairs and the 12 phenomena
    sg = paper_check.paper_values("06_context_priming")
    assert [(v.paper_model, round(v.value, 4)) for v in sg] == [("GPT-2", 0.7993), ("GPT-2 XL", 0.8527)]
    counts = _values("07_separability")
    assert counts["BLiMP: items"].value == 66_993 and counts["LI: items"].value == 1_883
    assert paper_check.paper_values("04_ensembles") == [] and paper_check.not_available("04_ensembles")


def test_a_run_is_matched_row_by_row_and_the_note_says_whether_models_differ():
    rows = []
    for model, passing in (("gpt2", [1, 1, 0, 1]), ("demo-en", [0, 1, 0, 0])):
        rows.append(pd.DataFrame({"model": model, "method": "syntaxgym", "suite": "number_src",
                                  "item": range(4), "score": passing}))
    scores = pd.concat(rows, ignore_index=True)
    table = paper_check.check("06_context_priming", scores).set_index(["paper_model", "model"])
    assert table.loc[("GPT-2", "gpt2"), "this_run"] == 0.75
    assert table.loc[("GPT-2", "gpt2"), "difference"] == pytest.approx(0.75 - 0.7992874109)
    assert table.loc[("GPT-2", "gpt2"), "note"] == "the paper's model: should agree"
    assert table.loc[("GPT-2", "demo-en"), "note"].startswith("different model (demo-en vs the paper's GPT-2)")
    assert table.loc[("GPT-2 XL", "gpt2"), "note"].startswith("different model")
    empty = paper_check.check("02_readout", None)
    assert empty.this_run.isna().all() and empty.note.str.startswith("not computed by this run").all()
    text = paper_check.summary("06_context_priming", paper_check.check("06_context_priming", scores))
    assert "4 published numbers checked, 4 computed by this run, 1 with the paper's own model" in text
    assert "Sinha et al. 2023" in text
    with pytest.raises(KeyError, match="no paper check for '09_x'"):
        paper_check.check("09_x", None)


def _hl(rel):
    path = resolve(None).path(f"{paper_check.HL_ZH}/{rel}")
    return pd.DataFrame(json.loads(path.read_text(encoding="utf-8"))["results"])


def test_hu_levys_released_results_through_this_projects_scores_reproduce_their_values():
    """Their per-item log-probs as this project's basis columns, reduced by the registered
    methods (both answer orders averaged, as the paper reports), give back their numbers."""
    from helpers import methods as registry
    from helpers.methods.base import Runtime
    from helpers.runner import method_frame

    model, runtime, frames = "text-davinci-003", Runtime(None, "zh", False), []

    def add(dataset, method, prompt, info, table, sides):
        frame = method_frame(info, table, registry.get(method), sides, runtime)
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
    table = paper_check.check("03_prompting", scores)
    assert len(table) == 12 and (table.note == "the paper's model: should agree").all()
    np.testing.assert_allclose(table.this_run, table.paper_value, atol=1e-12, rtol=0)
