"""Each benchmark's linking function as its own reference code decides a pair: the rule of that
code (helpers.data.linking cites the file and line), written out here on minicons' own per-token
log-probs of the same sentences (an implementation apart from the engine), decides a handful of
pairs as the readout recorded for the dataset does, and its tie rule is the one recorded."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from helpers.data import linking
from helpers.data.selection import select
from helpers.engine import CausalScorer
from helpers.models import load
from helpers.runner import run_methods
from helpers.settings import Settings
from helpers.store import ScoreStore
from minicons_reference import minicons_logprobs

# per-token log-probs of the acceptable and the unacceptable sentence -> counted right?
RULES = {
    # src/lm_eval/score.py l.16-17 and scripts/lm_eval/eval_model.py l.46: NLL sums, sen_nll < wrong_nll
    "multiblimp": lambda good, bad: -good.sum() < -bad.sum(),
    # evaluation.py l.20 (sum) and l.66: score[0] > score[1]
    "turblimp": lambda good, bad: good.sum() > bad.sum(),
    # src/metrics.py l.17-23 (sum / length ** 0.5, length the scored tokens) and src/run.py l.67: good > bad
    "zhoblimp": lambda good, bad: good.sum() / len(good) ** 0.5 > bad.sum() / len(bad) ** 0.5,
    # SLING_Code/utils.py l.64-67 (score = -exp(-mean)) and l.245: a failure only where score_good < score_bad
    "sling": lambda good, bad: not (-np.exp(-good.mean()) < -np.exp(-bad.mean())),
}
DATA = {"multiblimp": ("demo-en", "blimp"), "turblimp": ("demo-en", "blimp"), "zhoblimp": ("demo-zh", "zhoblimp"),
        "sling": ("demo-zh", "sling")}


@pytest.mark.parametrize("dataset", sorted(RULES))
def test_the_recorded_readout_decides_as_the_reference_code(dataset, tmp_path):
    recorded = linking.paper_linking(dataset)
    assert recorded.from_code and recorded.method in ("lp", "meanlp", "slln_lp")
    model, pairs_from = DATA[dataset]
    selection = select(pairs_from, 1)
    lm = load(model)
    scorer = CausalScorer(lm, Settings(progress=False, share="none", start="minicons"))  # minicons' convention
    (path,) = run_methods(scorer, selection, [recorded.method], store=ScoreStore(tmp_path))
    frame = pd.read_parquet(path)
    pairs = selection.frame
    tokens = minicons_logprobs(lm, list(pairs.good) + list(pairs.bad))
    by_rule = np.array([RULES[dataset](tokens[g], tokens[b]) for g, b in zip(pairs.good, pairs.bad)])
    ours = frame.correct.to_numpy(bool) | (frame.tie.to_numpy(bool) & (recorded.tie == "right"))
    assert len(by_rule) == len(frame) >= 20 and 0 < by_rule.mean() < 1
    assert np.array_equal(by_rule, ours)
    same = np.array([-3.2, -1.5, -0.7])  # a pair of one sentence twice (MultiBLiMP's word order has 694)
    assert RULES[dataset](same, same) == (recorded.tie == "right")


def test_02_names_the_reference_function_and_tie_rule():
    assert "multiblimp's paper reports lp (" in linking.describe("multiblimp")
    assert "eval_model.py l.46" in linking.describe("multiblimp")
    assert "counts a tie right" in linking.describe("sling")
    assert "not reachable" in linking.describe("blimp_nl") and not linking.paper_linking("blimp_nl").from_code
