"""Headline paired comparisons of 04 (McNemar on the same pairs, each method at its best
template): in-template LP and Yes/No against the sentence-probability baseline, Yes/No against
in-template LP, and the best ensemble setting against the best single predictor. Ties count
wrong in the test; each row also says how many discordant pairs involve a tie, the test without
them and each side's tie range (:func:`helpers.analysis.significance.mcnemar`)."""
from __future__ import annotations

import pandas as pd

from . import ensembles
from .accuracy import best_templates
from .significance import mcnemar, paired_correct


def method_pairs(scores: pd.DataFrame, baseline: str, l_method: str, p_method: str) -> list[dict]:
    """One McNemar row per model for (L vs baseline), (P vs baseline) and (P vs L)."""
    best = best_templates(scores)
    rows = []
    for model, s in scores.groupby("model", sort=False):
        for a, b in [(l_method, baseline), (p_method, baseline), (p_method, l_method)]:
            ta, tb = best[(model, a)], best[(model, b)]
            ca, cb = paired_correct(s, (a, ta), (b, tb))
            ia, ib = paired_correct(s, (a, ta), (b, tb), column="tie")
            rows.append({"model": model, "a": f"{a} (t{ta})", "b": f"{b} (t{tb})",
                         **mcnemar(ca, cb, tie_a=ia, tie_b=ib)})
    return rows


def ensemble_vs_single(scores: pd.DataFrame, ensemble: pd.DataFrame, p_method: str, l_method: str,
                       trials: int = 10, seed: int = 0, ties: str = "abstain") -> list[dict]:
    """Per model: the first trial of the most accurate ensemble setting against the more accurate
    of the two best single templates (Yes/No, in-template LP), on the pairs of the ensembles;
    ``ties`` as in :func:`helpers.analysis.ensembles.ensembles_by_model`."""
    best = best_templates(scores)
    rows = []
    for model, s in scores.groupby("model", sort=False):
        matrix = ensembles.predictor_matrix(s, p_method, l_method)
        top = ensemble[(ensemble["model"] == model) & ensemble["setting"].isin(ensembles.SETTINGS)]
        setting = top.loc[top["accuracy"].idxmax(), "setting"]
        abstain = ensembles.abstentions(s, p_method, l_method, ties)
        votes, tied, _ = ensembles.trial_decisions(matrix, setting, trials, seed, abstain)
        candidates = [(method, best[(model, method)], ensembles.predictor(kind, best[(model, method)]))
                      for kind, method in (("P", p_method), ("L", l_method))]
        method, template, column = max(candidates, key=lambda c: matrix[c[2]].mean())
        single_tie = ensembles.tie_matrix(s, p_method, l_method).loc[matrix.index, column].to_numpy()
        rows.append({"model": model, "a": f"ensemble {setting} (trial 1)", "b": f"{method} (t{template})",
                     **mcnemar(votes[:, 0], matrix[column].to_numpy(), tie_a=tied[:, 0], tie_b=single_tie)})
    return rows


def headline(scores: pd.DataFrame, ensemble: pd.DataFrame, baseline: str = "lp", l_method: str = "intemplate_lp",
             p_method: str = "yesno", trials: int = 10, seed: int = 0, ties: str = "abstain") -> pd.DataFrame:
    """The headline comparisons of every model, method pairs first (one row each); ``ties``: what a
    tied predictor's ensemble vote does, as the ``ensemble`` table was built."""
    by_model = {}
    for row in method_pairs(scores, baseline, l_method, p_method) + ensemble_vs_single(
            scores, ensemble, p_method, l_method, trials, seed, ties):
        by_model.setdefault(row["model"], []).append(row)
    return pd.DataFrame([row for rows in by_model.values() for row in rows])
