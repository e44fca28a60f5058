"""Voting ensembles of Yes/No (P) and in-template LP (L) predictions (Ide et al. 2024, Table 5).

Each of the 10 predictors (5 Yes/No templates, 5 in-template LP templates) says whether the
acceptable sentence won. A setting draws 5 of the 10 without replacement with its mix of P
and L, the pair is judged by majority vote, and the accuracy is averaged over seeded trials.

A predictor that tied on a pair (both sentences scored the same) has no preference. With
``ties="abstain"`` (the default) it does not vote: the pair is right when more of the
remaining predictors are right than wrong (an even split, or every predictor tied, is an
error, as a tie is). With ``ties="wrong"`` its vote counts as wrong (a tie is an error), and
the pair is right when more than half of the chosen predictors are right. The oracle rows
(one template alone) count a tie as an error either way.

The ensemble ties on a pair when its voters split evenly (as many right as wrong, every voter
abstaining included): counted wrong in ``accuracy``, and beside it the share of such pairs, the
expected accuracy (a tie half) and the accuracy with every tie right
(:func:`helpers.analysis.accuracy.tie_range`); an oracle row's ties are its template's. Under
``ties="wrong"`` five voters never split evenly: no ensemble ties.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .accuracy import TIE_SHARE_COLUMN, with_tie_range
from .significance import bootstrap_ci
from ..methods.templates import IDE_TEMPLATE_IDS

SETTINGS = {"P-only": (5, 0), "Mix-P3": (3, 2), "Mix-L3": (2, 3), "L-only": (0, 5)}
TIES = ("abstain", "wrong")  # what a tied predictor's vote does (see the module docstring)
TEMPLATES = IDE_TEMPLATE_IDS
PREDICTORS = [f"{kind}{t}" for kind in "PL" for t in TEMPLATES]


def predictor(kind: str, template) -> str:
    """The column of one predictor: "P" (Yes/No) or "L" (in-template LP) and its template."""
    return f"{kind}{template}"


def _matrix(scores: pd.DataFrame, p_method: str, l_method: str, keys, column: str) -> pd.DataFrame:
    cols = {}
    for label, method in (("P", p_method), ("L", l_method)):
        sub = scores[scores["method"] == method]
        if sub.empty:
            raise ValueError(f"no scores of {method!r}: run {'03_prompting' if label == 'P' else '02_readout'} first")
        for template, g in sub.groupby("template"):
            indexed = g.set_index(list(keys))
            cols[predictor(label, template)] = (indexed[column].astype(bool) if column in indexed
                                                else pd.Series(False, index=indexed.index))
    matrix = pd.DataFrame(cols).dropna()
    missing = [p for p in PREDICTORS if p not in matrix]
    if missing:
        raise ValueError(f"ensembles need 5 templates of each method; missing {missing}")
    return matrix[PREDICTORS].astype(bool)


def predictor_matrix(scores: pd.DataFrame, p_method: str = "yesno", l_method: str = "intemplate_lp",
                     keys=("paradigm", "pair_id")) -> pd.DataFrame:
    """Pairs x predictors ("P1".."P5", "L1".."L5") of per-pair correctness (ties are errors)."""
    return _matrix(scores, p_method, l_method, keys, "correct")


def tie_matrix(scores: pd.DataFrame, p_method: str = "yesno", l_method: str = "intemplate_lp",
               keys=("paradigm", "pair_id")) -> pd.DataFrame:
    """Pairs x predictors of per-pair ties (False where the scores have no ``tie`` column), the
    rows and columns of :func:`predictor_matrix`."""
    return _matrix(scores, p_method, l_method, keys, "tie")


def abstentions(scores: pd.DataFrame, p_method: str = "yesno", l_method: str = "intemplate_lp",
                ties: str = "abstain", keys=("paradigm", "pair_id")) -> pd.DataFrame | None:
    """The predictors that abstain on each pair under ``ties``: the tie matrix for "abstain",
    None (nobody abstains) for "wrong"."""
    if ties not in TIES:
        raise ValueError(f"ties must be 'abstain' (a tied predictor does not vote) or 'wrong' (its vote counts "
                         f"as wrong), got {ties!r}")
    return tie_matrix(scores, p_method, l_method, keys) if ties == "abstain" else None


def draw(setting: str, rng: np.random.Generator) -> list[str]:
    """The 5 predictors of one trial of ``setting``."""
    n_p, n_l = SETTINGS[setting]
    p = rng.choice([predictor("P", t) for t in TEMPLATES], size=n_p, replace=False).tolist()
    ls = rng.choice([predictor("L", t) for t in TEMPLATES], size=n_l, replace=False).tolist()
    return sorted(p) + sorted(ls)


def _counts(matrix: pd.DataFrame, predictors: list[str], abstain: pd.DataFrame | None) -> tuple:
    """Per pair, the chosen predictors' right and wrong votes (an abstaining one casts neither)."""
    right = matrix[predictors].to_numpy()
    wrong = ~right if abstain is None else ~right & ~abstain.loc[matrix.index, predictors].to_numpy()
    return right.sum(axis=1), wrong.sum(axis=1)


def vote(matrix: pd.DataFrame, predictors: list[str], abstain: pd.DataFrame | None = None) -> np.ndarray:
    """Majority vote of the chosen predictors: correct when more than half are correct; with
    ``abstain`` (pairs x predictors, True where one abstains), when more voters are right than wrong."""
    right, wrong = _counts(matrix, predictors, abstain)
    return right > wrong


def vote_ties(matrix: pd.DataFrame, predictors: list[str], abstain: pd.DataFrame | None = None) -> np.ndarray:
    """The pairs where the chosen predictors' vote is a tie: as many voters right as wrong."""
    right, wrong = _counts(matrix, predictors, abstain)
    return right == wrong


def trial_decisions(matrix: pd.DataFrame, setting: str, trials: int = 10, seed: int = 0,
                    abstain: pd.DataFrame | None = None) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Pairs x trials majority votes of ``setting``, their ties and the predictors of each trial."""
    rng = np.random.default_rng(seed)
    draws = [draw(setting, rng) for _ in range(trials)]
    return (np.stack([vote(matrix, d, abstain) for d in draws], axis=1),
            np.stack([vote_ties(matrix, d, abstain) for d in draws], axis=1), ["+".join(d) for d in draws])


def trial_votes(matrix: pd.DataFrame, setting: str, trials: int = 10, seed: int = 0,
                abstain: pd.DataFrame | None = None) -> tuple[np.ndarray, list[str]]:
    """Pairs x trials majority votes of ``setting`` and the predictors of each trial."""
    votes, _, draws = trial_decisions(matrix, setting, trials, seed, abstain)
    return votes, draws


def ensemble_table(matrix: pd.DataFrame, trials: int = 10, seed: int = 0, abstain: pd.DataFrame | None = None,
                   tied: pd.DataFrame | None = None) -> pd.DataFrame:
    """Mean accuracy (and sd over trials) of each setting, with the predictors of each trial, the
    share of the pairs whose vote tied (mean over trials), the expected accuracy and the accuracy
    with every tie right; ``tied``: the predictors' ties (:func:`tie_matrix`) for the oracle rows
    (default ``abstain``, else none)."""
    rows = []
    for setting in SETTINGS:
        votes, ties, draws = trial_decisions(matrix, setting, trials, seed, abstain)
        accs = votes.mean(axis=0)
        rows.append({"setting": setting, "accuracy": float(np.mean(accs)), "sd": float(np.std(accs, ddof=1)),
                     "trials": trials, "draws": "; ".join(draws), TIE_SHARE_COLUMN: float(ties.mean())})
    oracle, tied = matrix.mean(), abstain if tied is None else tied
    for label, name in (("P", "oracle P (best Yes/No template)"), ("L", "oracle L (best in-template LP template)")):
        best = oracle[[c for c in oracle.index if c.startswith(label)]].idxmax()
        share = 0.0 if tied is None else float(tied.loc[matrix.index, best].mean())
        rows.append({"setting": name, "accuracy": float(oracle[best]), "sd": 0.0, "trials": 1, "draws": best,
                     TIE_SHARE_COLUMN: share})
    return with_tie_range(pd.DataFrame(rows))


def with_bootstrap(table: pd.DataFrame, matrix: pd.DataFrame, trials: int = 10, seed: int = 0,
                   resamples: int = 2000, abstain: pd.DataFrame | None = None) -> pd.DataFrame:
    """Add ci_low / ci_high to an :func:`ensemble_table`: a setting resamples the pairs' mean vote
    over its trials, an oracle row the pairs of its one predictor (seeded bootstrap)."""
    def ci(setting, draws):
        if setting in SETTINGS:
            votes = trial_votes(matrix, setting, trials, seed, abstain)[0]
            return bootstrap_ci(votes.mean(axis=1), resamples, seed=seed)
        return bootstrap_ci(matrix[draws], resamples, seed=seed)

    lows, highs = zip(*(ci(s, d) for s, d in zip(table["setting"], table["draws"])))
    return table.assign(ci_low=list(lows), ci_high=list(highs))


def ensembles_by_model(scores: pd.DataFrame, p_method: str = "yesno", l_method: str = "intemplate_lp",
                       trials: int = 10, seed: int = 0, resamples: int = 2000, ties: str = "abstain") -> pd.DataFrame:
    """Table 5 for every model of ``scores``, with bootstrap 95% CIs of the accuracy (ties wrong) and
    the ties' range (one row per model and setting); ``ties``: what a tied predictor's vote does
    ("abstain", the default, or "wrong")."""
    tables = []
    for model, s in scores.groupby("model", sort=False):
        matrix = predictor_matrix(s, p_method, l_method)
        abstain = abstentions(s, p_method, l_method, ties)
        tied = tie_matrix(s, p_method, l_method)
        table = ensemble_table(matrix, trials, seed, abstain, tied).assign(model=model)
        tables.append(with_bootstrap(table, matrix, trials, seed, resamples, abstain))
    return pd.concat(tables, ignore_index=True)
