"""MultiBLiMP's word-order pairs from the mirror: the counts of SOURCES.md, languages as ISO
639-3 codes from Universal Dependencies' names, the identical pairs flagged, and scored as
MultiBLiMP's own code scores its pairs (the summed log-prob, a strict comparison: a pair of one
sentence twice is a tie, counted wrong)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from helpers import data
from helpers.data import linking
from helpers.data.selection import DatasetSelection
from helpers.engine import CausalScorer
from helpers.models import load
from helpers.runner import run_methods
from helpers.settings import Settings
from helpers.store import ScoreStore
from minicons_reference import minicons_logprobs


def test_the_word_order_pairs_as_the_mirror_holds_them():
    df = data.load("multiblimp_word_order")
    assert len(df) == 46148 and df.groupby("phenomenon").size().to_dict() == {"iobj": 6802, "nsubj": 21464,
                                                                           "obj": 17882}
    assert df.groupby("phenomenon").lang.nunique().to_dict() == {"iobj": 58, "nsubj": 143, "obj": 130}
    assert int(df.identical.sum()) == 694 and (df[df.identical].good == df[df.identical].bad).all()
    codes = df.drop_duplicates("language_name").set_index("language_name")
    assert codes.loc["English", ["lang", "language"]].tolist() == ["eng", "en"]
    assert codes.loc["Madi", "lang"] == "jaa" and codes.loc["Norwegian Nynorsk", ["lang", "language"]].tolist() == [
        "nno", "nn"]  # UD's Madi is Jarawara, not the Madi of Papua New Guinea (grg) a name lookup gives
    english = df[df.paradigm == "eng/nsubj"].iloc[0]
    assert english.good.startswith("Kaoshikii can be danced") and english.rule == "[0] -> [1] -> [2] -> [3]"
    assert linking.paper_linking("multiblimp_word_order").method == "lp"


def test_word_order_pairs_are_scored_with_multiblimps_rule(tmp_path):
    df = data.load("multiblimp_word_order")
    english = df[df.lang == "eng"]
    picked = pd.concat([english[~english.identical].groupby("paradigm").head(4), english[english.identical].head(2)])
    selection = DatasetSelection("multiblimp_word_order", picked.reset_index(drop=True))
    lm = load("demo-en")
    scorer = CausalScorer(lm, Settings(progress=False, start="minicons"))  # minicons' convention, its sums below
    (path,) = run_methods(scorer, selection, ["lp"], store=ScoreStore(tmp_path))
    frame = pd.read_parquet(path)
    totals = {s: lp.sum() for s, lp in minicons_logprobs(lm, list(picked.good) + list(picked.bad)).items()}
    by_rule = np.array([-totals[g] < -totals[b] for g, b in zip(picked.good, picked.bad)])  # sen_nll < wrong_nll
    assert np.array_equal(frame.correct.to_numpy(bool), by_rule)
    assert frame.tie.to_numpy(bool)[-2:].all() and not by_rule[-2:].any()  # one sentence twice: a tie, wrong
