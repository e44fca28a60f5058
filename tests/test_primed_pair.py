"""00's primed pair: the prefix is 06's draw for that pair, the LPs are 06's (the runner's primed
path into a store), and the pair 00 shows is flipped by its prefix on demo-en-icl."""
from __future__ import annotations

import ast

import numpy as np
import papermill as pm
import pytest

from helpers import data, paths
from helpers.data import priming
from helpers.data.selection import DatasetSelection
from helpers.engine import CausalScorer
from helpers.explain.primed_pair import margin_figure, primed_pair
from helpers.models import load
from helpers.runs.primed import primed_input
from helpers.runs.run import Run
from helpers.store import ScoreStore, load_files
from helpers.settings import Settings


def quickstart_parameters() -> dict:
    declared = pm.inspect_notebook(str(paths.NOTEBOOKS / "00_quickstart.ipynb"))
    return {k: ast.literal_eval(v["default"]) for k, v in declared.items() if k.startswith("primed_")}


@pytest.fixture(scope="module")
def icl():
    return CausalScorer(load("demo-en-icl"), Settings(progress=False))


def test_the_quickstart_pair_is_flipped_as_06_scores_it(icl, tmp_path):
    shown = quickstart_parameters()
    assert shown["primed_model"] == "demo-en-icl"
    pair = primed_pair(icl, "blimp", shown["primed_paradigm"], shown["primed_pair"], length=shown["primed_tokens"])
    assert pair.flipped and list(pair.table.prefers) == ["acceptable", "unacceptable"]
    assert abs(pair.prefix_tokens - shown["primed_tokens"]) <= 60 and pair.prefix_sentences >= 20

    # the same pair through 06's path: build_prefixes over the target frame, a run of primed_input into a store
    pairs = data.load_processed("blimp")
    target = pairs[(pairs.paradigm == shown["primed_paradigm"]) & (pairs.pair_id == shown["primed_pair"])]
    selection = DatasetSelection("blimp", target.reset_index(drop=True))
    prefixes = priming.build_prefixes(selection.frame, priming.token_counter(icl.tokenizer), pool=pairs,
                                      prefix_types=["in_unacceptable"], lengths=[0, shown["primed_tokens"]],
                                      max_positions=icl.max_positions)
    assert prefixes.prefix.iloc[-1] == pair.prefix  # 06's draw for this pair
    scores = load_files(Run.of(icl).files(["lp"], *primed_input(selection, prefixes), store=ScoreStore(tmp_path),
                                          templates=[1]))
    scores = scores.sort_values("target_length")
    np.testing.assert_allclose(pair.table.lp_good, scores.score_good, rtol=0, atol=1e-4)
    np.testing.assert_allclose(pair.table.lp_bad, scores.score_bad, rtol=0, atol=1e-4)
    assert list(scores.correct) == [True, False]
    fig = margin_figure(pair, "demo-en-icl")
    assert [round(b.get_width(), 6) for b in fig.axes[0].patches] == list(pair.table.margin.round(6))


def test_a_pair_that_is_not_there_is_named(icl):
    with pytest.raises(ValueError, match="no pair 5000 of anaphor_gender_agreement in blimp: anaphor_gender_agreement "
                                         "has pair ids 0 to 999"):
        primed_pair(icl, "blimp", "anaphor_gender_agreement", 5000)
    with pytest.raises(ValueError, match="'no_such' is not a paradigm of blimp"):
        primed_pair(icl, "blimp", "no_such", 0)
    with pytest.raises(ValueError, match="prefix_type must be one of in_acceptable"):
        primed_pair(icl, "blimp", "anaphor_gender_agreement", 0, prefix_type="in")
