"""Grammar prompting as a study (Scheinberg et al. 2025): the shipped explanations and control files
scored plain, explained and control in one pass, A/B in the three orders; the gain per paradigm
checked against the score files' own columns, and McNemar's p-value against the exact binomial test."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from helpers import paths
from helpers.analysis import grammar_prompting as gp
from helpers.analysis.prompting import first_prompt
from helpers.data import load
from helpers.engine import CausalScorer
from helpers.data.selection import DatasetSelection, first_per_paradigm
from helpers.runs.explanations import read_explanations
from helpers.runs.grammar_study import files_by_condition, study_jobs
from helpers.runs.run import Run
from helpers.settings import Settings
from helpers.store import ScoreStore

EXPLAINED = paths.ROOT / "data" / "explanations" / "blimp_grammar.yaml"
CONTROL = paths.ROOT / "data" / "explanations" / "blimp_control.yaml"
PARADIGMS = ["anaphor_number_agreement", "determiner_noun_agreement_1"]


def own_decisions(path) -> pd.DataFrame:
    """One file's decisions from its raw columns (not the method's code): an A/B file's answer
    against the acceptable sentence's slot in each order; Yes/No's P(Yes) from the two answers'
    log-probs; a readout's two scores."""
    t = pd.read_parquet(path)
    if "answer_outlines_forward" in t:
        return pd.concat([pd.DataFrame({"paradigm": t.paradigm, "correct": t[f"answer_outlines_{o}"] == t[f"good_slot_{o}"]})
                          for o in ("forward", "reversed", "seeded")])
    if "lp_yes_good" in t:
        def p_yes(side):
            return 1 / (1 + np.exp(t[f"lp_no_{side}"] - t[f"lp_yes_{side}"]))
        return pd.DataFrame({"paradigm": t.paradigm, "correct": p_yes("good") > p_yes("bad")})
    return pd.DataFrame({"paradigm": t.paradigm, "correct": t.score_good > t.score_bad})


def test_the_shipped_files_run_plain_explained_and_control_and_one_paradigms_gain_is_the_files(tiny, tmp_path):
    explained, control = read_explanations(EXPLAINED), read_explanations(CONTROL)
    assert set(explained) == set(control) and set(PARADIGMS) <= set(explained)
    df = load("blimp")
    chosen = DatasetSelection("blimp", first_per_paradigm(df[df.paradigm.isin(PARADIGMS)], 6), limit=6)
    run = Run.of(CausalScorer(tiny("tiny-gpt2"), Settings(progress=False, templates=(1, 2))))
    jobs = study_jobs(chosen, EXPLAINED, CONTROL)
    store = ScoreStore(tmp_path / "scores")
    done = run.files_each([job for part in jobs.values() for job in part], store=store)
    files = files_by_condition(jobs, done)
    assert sorted(f.name for f in files["control"]) == ["ab__t1__control.parquet", "ab__t2__control.parquet",
                                                        "intemplate_lp__t1__control.parquet",
                                                        "intemplate_lp__t2__control.parquet",
                                                        "yesno__t1__control.parquet", "yesno__t2__control.parquet"]
    decisions = gp.decisions(files)
    ab = decisions[decisions.method == "ab"]
    assert sorted(ab.order.unique()) == ["forward", "reversed", "seeded"] and len(ab) == 3 * 2 * 12 * 3
    table = gp.gains(decisions, seed=0)
    assert set(zip(table.condition, table.baseline)) == set(gp.COMPARISONS)

    paradigm = PARADIGMS[0]
    for method in ("ab", "yesno", "intemplate_lp"):
        own = {c: pd.concat([own_decisions(f) for f in fs if f.name.startswith(f"{method}__")])
               for c, fs in files.items()}
        own = {c: d[d.paradigm == paradigm].correct.to_numpy(bool) for c, d in own.items()}
        for a, b in gp.COMPARISONS:
            row = table[(table.method == method) & (table.paradigm == paradigm) & (table.condition == a)
                        & (table.baseline == b)].iloc[0]
            assert row.gain == pytest.approx(own[a].mean() - own[b].mean(), abs=1e-12)
            assert row.decisions == own[a].size == (36 if method == "ab" else 12) and row.pairs == 6
            only_a, only_b = int(np.sum(own[a] & ~own[b])), int(np.sum(~own[a] & own[b]))
            want = 1.0 if only_a + only_b == 0 else stats.binomtest(only_a, only_a + only_b, 0.5).pvalue
            assert row.p_value == pytest.approx(min(1.0, want), abs=1e-12)
            assert row.ci_low <= row.gain <= row.ci_high

    # the A/B accuracy is the mean over the three orders: the file's own decision credit
    ab_files = [f for f in files["explained"] if f.name.startswith("ab__")]
    credit = pd.concat([pd.read_parquet(f) for f in ab_files]).correct.mean()
    overall = gp.overall(table)
    got = overall[(overall.method == "ab") & (overall.condition == "explained") & (overall.baseline == "plain")]
    assert got.accuracy.iloc[0] == pytest.approx(credit, abs=1e-12)
    # the prompt as scored: the explanation, then the A/B question
    first = pd.read_parquet(ab_files[0])
    assert first_prompt(first).startswith(explained[first.paradigm.iloc[0]])

    with pytest.raises(ValueError, match="not scored on the same decisions"):
        gp.gains(decisions.drop(index=decisions.index[(decisions.condition == "plain")][:1]))
