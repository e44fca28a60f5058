"""Tables for prompt-based methods: A/B answer shares (Ide et al. Table 10) and the agreement
of the outlines and logit decision paths."""
from __future__ import annotations

import pandas as pd


def ab_answers(scores: pd.DataFrame) -> pd.DataFrame:
    """Per (model, template): share of "A" answers (logit path and outlines), accuracy of each
    path and how often the two paths agree."""
    ab = scores[scores["method"] == "ab"]
    if ab.empty:
        raise ValueError("no A/B scores: run 03_prompting with method 'ab' first")
    rows = []
    for (model, template), g in ab.groupby(["model", "template"], sort=False):
        row = {"model": model, "template": template, "pairs": len(g), "share_A": (g["answer"] == "A").mean(),
               "share_A_expected": (g["good_slot"] == "A").mean(), "accuracy": g["correct"].mean(),
               "ties": int((g["answer"] == "tie").sum())}
        if "answer_outlines" in g and g["answer_outlines"].notna().all():
            row.update(share_A_outlines=(g["answer_outlines"] == "A").mean(),
                       accuracy_outlines=g["correct_outlines"].mean(),
                       agreement=(g["answer_outlines"] == g["answer"]).mean())
        rows.append(row)
    return pd.DataFrame(rows)


def disagreements(scores: pd.DataFrame) -> pd.DataFrame:
    """The A/B items where outlines and the logit path answered differently."""
    ab = scores[(scores["method"] == "ab") & scores.get("answer_outlines", pd.Series(dtype=str)).notna()]
    return ab[ab["answer"] != ab["answer_outlines"]][["model", "template", "paradigm", "pair_id", "lp_a", "lp_b",
                                                      "answer", "answer_outlines"]]
