"""A method records what it reads: every setting a method's family or score reads enters its files'
configuration (and hash) by itself, a setting it does not read leaves its files alone, and no table
mixes two values of one (PenLP's alpha, an A/B seed): the store's readers stop and name the choice."""
from __future__ import annotations

import numpy as np
import pytest

from helpers import methods as registry
from helpers.data import load
from helpers.data.selection import DatasetSelection, first_per_paradigm
from helpers.engine import CausalScorer
from helpers.reporting.outputs import required_scores
from helpers.runner import run_methods
from helpers.settings import Settings
from helpers.settings.stored import StoreConflictError
from helpers.store import ScoreStore, load_scores, read_metadata


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("HELPERS_OUTPUTS_DIR", str(tmp_path / "outputs"))  # load_scores' default store
    return ScoreStore()


def two_pairs() -> DatasetSelection:
    df = load("blimp")
    keep = df.paradigm.drop_duplicates().iloc[:2]
    return DatasetSelection("blimp", first_per_paradigm(df[df.paradigm.isin(keep)], 1), limit=1)


def by_method(files) -> dict:
    return {read_metadata(p)["method"]: p for p in files}


def test_penlp_alpha_is_recorded_by_the_methods_that_read_it_and_never_mixed(tiny, store):
    scorer, selection = CausalScorer(tiny("tiny-gpt2"), Settings(progress=False)), two_pairs()
    first = by_method(run_methods(scorer, selection, ["lp", "penlp", "intemplate_penlp"], {"templates": [1]},
                                  store=store))
    assert read_metadata(first["penlp"])["penlp_alpha"] == 0.8
    assert read_metadata(first["intemplate_penlp"])["penlp_alpha"] == 0.8
    assert "penlp_alpha" not in read_metadata(first["lp"])  # LP does not read it
    # how the head computed is recorded beside the configuration: a float32 head runs as the module
    assert read_metadata(first["lp"])["head_path"] == scorer.record()["head_path"] == "module"

    calls = scorer.forward_calls
    other = by_method(run_methods(scorer, selection, ["lp", "penlp"], {"penlp_alpha": "1.5"}, store=store))
    assert other["lp"] == first["lp"]  # found, not rewritten: its configuration does not hold the alpha
    assert other["penlp"] != first["penlp"] and read_metadata(other["penlp"])["penlp_alpha"] == 1.5
    assert scorer.forward_calls > calls  # the new alpha's file was scored, not the old one reused
    again = scorer.forward_calls
    assert by_method(run_methods(scorer, selection, ["penlp"], {"penlp_alpha": 1.5}, store=store)) == \
        {"penlp": other["penlp"]} and scorer.forward_calls == again  # a rerun of the same alpha finds it

    with pytest.raises(ValueError, match=r"penlp has score files under 2 configurations that differ in penlp_alpha "
                                         r"\(recorded as penlp_alpha: 0.8, 1.5\).*\(-p penlp_alpha 0.8; 04, 05 and 08 take every "
                                         r"setting by its name\)"):
        load_scores("blimp", scorer.loaded.name, ["lp", "penlp"])
    chosen = load_scores("blimp", scorer.loaded.name, ["lp", "penlp"], where=Settings(penlp_alpha=1.5).score_filter())
    pen = chosen[chosen.method == "penlp"]
    assert len(pen) == 2 and (chosen.method == "lp").sum() == 2  # LP's file matches any alpha
    np.testing.assert_array_equal(pen.score_good, pen.tgt_sum_good / ((5 + pen.n_tokens_good) / 6) ** 1.5)
    assert not np.allclose(pen.score_good, pen.tgt_sum_good / ((5 + pen.n_tokens_good) / 6) ** 0.8)

    with pytest.raises(ValueError, match=r"penlp_alpha=0 is not a number > 0"):
        run_methods(scorer, selection, ["penlp"], {"penlp_alpha": 0}, store=store)


def test_two_ab_seeds_stop_the_reading_notebooks_and_leave_lp_files_alone(tiny, store):
    scorer, selection = CausalScorer(tiny("tiny-gpt2"), Settings(progress=False)), two_pairs()
    first = by_method(run_methods(scorer, selection, ["lp", "ab"], {"templates": [1]}, store=store))
    writes = store.writes
    second = by_method(run_methods(scorer, selection, ["lp", "ab"], {"templates": [1], "ab_seed": 7}, store=store))
    assert store.writes == writes + 1 and second["lp"] == first["lp"]  # only the A/B file is new
    assert (read_metadata(first["ab"])["seed"], read_metadata(second["ab"])["seed"]) == (42, 7)

    # 04's read (required_scores with its chosen settings): the two seeds are an error naming them
    with pytest.raises(ValueError, match=r"ab \(template 1\) has score files under 2 configurations that differ in "
                                         r"ab_seed \(recorded as seed: 42, 7\).*\(-p ab_seed 42;"):
        required_scores(scorer.loaded.name, "blimp", ["lp", "ab"], where=Settings().score_filter())
    chosen = required_scores(scorer.loaded.name, "blimp", ["lp", "ab"], where=Settings().but(ab_seed=7).score_filter())
    assert set(chosen.attrs["score_files"]) == {str(first["lp"]), str(second["ab"])}

    # everything the store lacks or mixes, said at once: two A/B seeds, two PenLP alphas, a method never scored
    for alpha in (0.8, 1.5):
        run_methods(scorer, selection, ["penlp"], {"penlp_alpha": alpha}, store=store)
    with pytest.raises(StoreConflictError) as err:
        required_scores(scorer.loaded.name, "blimp", ["lp", "ab", "penlp", "yesno"], where=Settings().score_filter())
    problems = err.value.problems
    assert len(problems) == 3 and "differ in ab_seed" in problems[0] and "differ in penlp_alpha" in problems[1]
    assert problems[2] == (f"no scores of yesno for {scorer.loaded.name}: run notebooks/03_prompting.ipynb with "
                           f"model={scorer.loaded.name!r}, dataset='blimp'")
    assert err.value._render_traceback_() == ["StoreConflictError: the store cannot be read as asked:",
                                              "\n".join(f"- {p}" for p in problems)]  # no traceback frames


def test_a_setting_a_model_kind_does_not_read_is_refused(tiny):
    from helpers.engine.kinds import check_models

    with pytest.raises(ValueError, match="masked_variant='within_word_l2r' applies to masked models only, and tiny-gpt2 is a causal model"):
        check_models("tiny-gpt2", Settings(masked_variant="within_word_l2r"))
    assert registry.get("penlp").reads() == ("unigram_corpus", "penlp_alpha")  # its family's, then its own


def test_a_misspelt_papermill_parameter_is_an_error_naming_the_parameters(scratch):
    import papermill as pm

    from helpers.parameters import check_injected
    from notebook_run import run_notebook

    history = ["", 'model = "demo-en"  # a comment\nlimit = 0\n', '# Parameters\nlimt = 7\nquant = "none"\n', "print(1)"]
    with pytest.raises(ValueError, match=r"^this notebook has no parameter 'limt' \(papermill injected it; 'limt': did you "
                                         r"mean 'limit'\?\): its parameters are model, limit; and every setting: start, "):
        check_injected({"In": history})  # quant: a setting, taken by its name though the cell does not name it
    with pytest.raises(ValueError, match=r"no parameter 'limt', 'quant' .*\(it takes no setting\)"):
        check_injected({"In": history}, settings=False)  # 01: no setting
    check_injected({"In": history[:2]})  # run by hand: no injected cell, nothing to check
    # a real papermill run of a reading notebook stops at its first code cell after the parameters
    with pytest.raises(pm.PapermillExecutionError, match=r"this notebook has no parameter 'penlp_alph' \(papermill "
                                                         r"injected it; 'penlp_alph': did you mean 'penlp_alpha'\?\)"):
        run_notebook("05_length_bias.ipynb", scratch / "05.ipynb", penlp_alph=1.0)


def test_penlp_alpha_reaches_every_front_door_or_is_refused_there_with_the_reason(tiny):
    from helpers import sweep
    from helpers.cli import parser
    from helpers.harness.model import EngineLM

    jobs = sweep.plan(["02", "06"], ["tiny-gpt2"], ["blimp"], settings={"penlp_alpha": 1.5})
    assert {j.notebook.stem: j.papermill_parameters()["penlp_alpha"] for j in jobs} == \
        {"02_readout": 1.5, "06_context_priming": 1.5}
    reading = sweep.plan(["04"], ["tiny-gpt2"], ["blimp"], settings={"penlp_alpha": 1.5})  # 04 reads that alpha's files
    assert reading[0].papermill_parameters()["penlp_alpha"] == 1.5
    with pytest.raises(ValueError, match="no notebook of this sweep .* takes the setting penlp_alpha"):
        sweep.plan(["01"], ["none"], ["blimp"], settings={"penlp_alpha": 1.5})
    with pytest.raises(ValueError, match="penlp_alpha=-1 is not a number > 0"):
        sweep.plan(["02"], ["tiny-gpt2"], ["blimp"], settings={"penlp_alpha": -1})
    args = parser().parse_args(["sweep", "--notebooks", "02", "--penlp-alpha", "1.5"])
    assert args.penlp_alpha == "1.5"
    with pytest.raises(ValueError, match=r"'penlp_alpha' \(a method setting of the notebooks' runs: an lm-eval task"):
        EngineLM(tiny("tiny-gpt2"), penlp_alpha=1.5)


def ten_pairs() -> DatasetSelection:
    df = load("blimp")
    keep = df.paradigm.drop_duplicates().iloc[:10]
    return DatasetSelection("blimp", first_per_paradigm(df[df.paradigm.isin(keep)], 1), limit=1)


def test_ab_orders_prompts_each_pair_in_every_order_and_credits_the_share_of_orders_right(tiny, store):
    """ab_orders="three" (Scheinberg et al. 2025: forward, reversed, seeded): each order's letters'
    log-probs stored under its name; the seeded order's are the default run's, bit for bit; a
    method's correct is the share of orders it got right, a tie that order's error; recorded."""
    import pandas as pd

    scorer, selection = CausalScorer(tiny("tiny-gpt2"), Settings(progress=False)), ten_pairs()
    seeded = by_method(run_methods(scorer, selection, ["ab_logit", "ab"], {"templates": [1]}, store=store))
    three = by_method(run_methods(scorer, selection, ["ab_logit", "ab"], {"templates": [1], "ab_orders": "three"},
                                  store=store))
    assert (read_metadata(seeded["ab_logit"])["ab_orders"], read_metadata(three["ab_logit"])["ab_orders"]) == \
        ("seeded", "three")
    one, rows = pd.read_parquet(seeded["ab_logit"]), pd.read_parquet(three["ab_logit"])
    for column in ("good_slot", "prompt"):  # the seeded order: the default run's prompts
        assert rows[f"{column}_seeded"].tolist() == one[column].tolist(), column
    for column in ("lp_a", "lp_b"):  # and its letters' log-probs (other batches of other requests: float32 rounding)
        np.testing.assert_allclose(rows[f"{column}_seeded"], one[column], rtol=0, atol=1e-5)
    assert set(rows.good_slot_forward) == {"A"} and set(rows.good_slot_reversed) == {"B"}
    # each order decided independently from its own letters: the acceptable sentence's letter higher
    right = {"forward": rows.lp_a_forward > rows.lp_b_forward, "reversed": rows.lp_b_reversed > rows.lp_a_reversed,
             "seeded": np.where(rows.good_slot_seeded == "A", rows.lp_a_seeded > rows.lp_b_seeded,
                                rows.lp_b_seeded > rows.lp_a_seeded)}
    np.testing.assert_array_equal(rows.correct, sum(np.asarray(r, float) for r in right.values()) / 3)
    assert rows.correct.isin([0, 1 / 3, 2 / 3, 1]).all() and rows.correct.nunique() > 1
    assert (rows.order_ties == sum((rows[f"lp_a_{o}"] == rows[f"lp_b_{o}"]).astype(int) for o in right)).all()
    outlines = pd.read_parquet(three["ab"])  # constrained decoding: the share of orders answered right
    letters = {o: np.where(outlines[f"good_slot_{o}"] == "A", "A", "B") for o in right}
    np.testing.assert_array_equal(outlines.correct, sum((outlines[f"answer_outlines_{o}"] == letters[o]).astype(float)
                                                        for o in right) / 3)
    with pytest.raises(ValueError, match=r"ab_orders='all' does not exist: use one of 'auto', 'seeded', 'both', 'three'"):
        Settings(ab_orders="all")
