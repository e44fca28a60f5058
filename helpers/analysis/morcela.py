"""MORCELA (Tjuatja, Neubig, Linzen & Hao, NAACL 2025, arXiv 2411.02528): a linking function
from LM log-probability to human acceptability whose adjustments for unigram frequency and
length are learned from ratings instead of fixed as in SLOR:

    MORCELA(s) = (log p_m(s) - beta * log p_u(s) + gamma) / |s|,    rating ~ a * MORCELA(s) + b

|s| is the sentence's token count and log p_u(s) the sum of its tokens' unigram log-probs in the
model's own tokenizer table (the add-one table SLOR uses, :mod:`helpers.methods.measures`). SLOR
is beta = 1, gamma = 0: beta < 1 subtracts less unigram frequency than SLOR, gamma adds
gamma / |s|, a length term. The form is the authors' released code (github.com/lindiatjuatja/morcela:
``src/linking_functions.py``, "(alpha * logprob + beta * unigram + gamma) / length^delta + epsilon",
whose MORCELA rows in ``src/eval_linking_functions.py`` free the unigram and intercept weights with
length exponent 1; as released that script passes five values per row to a four-argument fit, read
here as a free overall scale first); the paper's own text could not be read here, only its abstract.

Fit (:func:`fit`): least squares (scikit-learn) of the ratings on lp/|s|, log p_u/|s|, 1/|s| and an
intercept, as the authors' code fits; a = c1, beta = -c2 / c1, gamma = c3 / c1. The ablations of
the authors' script fix one of them (``beta=1`` or ``gamma=0``): the fixed term joins the first feature.

Held out (:func:`evaluate`): k folds (5, as the authors' KFold) of rated sentences, the two
sentences of a minimal pair in the same fold, pairs shuffled by ``seed``; per fold MORCELA is
fitted on the other folds and its predicted ratings correlated (Pearson, Spearman) with the held-out
ratings, beside LP, MeanLP, PenLP and SLOR (no fit) on the same sentences. Sentence level, as the
paper: each sentence against its own rating, not pair differences.

BLiMP (:func:`blimp_agreement`): the parameters fitted on all rated LI sentences, applied unchanged
(no BLiMP fit); per paradigm, each linking function's minimal-pair accuracy is correlated across
paradigms with BLiMP's human agreement (the validation's per-paradigm ``total_mean``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.linear_model import LinearRegression

from ..methods import measures
from . import pair_correlation as pc
from .accuracy import EXPECTED, TIE_SHARE_COLUMN, TIES_RIGHT, summarise, tie_range

FIXED = ("lp", "meanlp", "penlp", "slor")
# variant -> (beta, gamma) held fixed (None: learned): MORCELA and the authors' two ablations
VARIANTS = {"morcela": (None, None), "morcela_beta1": (1.0, None), "morcela_gamma0": (None, 0.0)}
SENTENCE_COLUMNS = ("lp", "unigram_lp", "n_tokens")
MIN_SENTENCES = 8  # rated sentences a fit needs (at most 4 coefficients)
MIN_TEST = 3  # held-out sentences a correlation needs
PARADIGM_COLUMNS = ["model", "dataset", "paradigm", "function", "accuracy", "pairs", "ties", TIE_SHARE_COLUMN, EXPECTED,
                    TIES_RIGHT, "human_agreement"]  # blimp_agreement's per-paradigm table


@dataclass(frozen=True)
class Params:
    """A fitted MORCELA: rating ~ scale * (lp - beta * unigram + gamma) / n + intercept."""

    beta: float
    gamma: float
    scale: float
    intercept: float
    sentences: int

    def score(self, lp, unigram_lp, n_tokens):
        return morcela(lp, unigram_lp, n_tokens, self.beta, self.gamma)

    def predict(self, lp, unigram_lp, n_tokens):
        """The predicted rating (its direction is the fit's: use it to rank sentences)."""
        return self.scale * self.score(lp, unigram_lp, n_tokens) + self.intercept


def morcela(lp, unigram_lp, n_tokens, beta: float, gamma: float):
    """(LP - beta * unigram LP + gamma) / token count; beta = 1, gamma = 0 is SLOR."""
    return (lp - beta * unigram_lp + gamma) / n_tokens


def _arrays(frame: pd.DataFrame, rated: bool) -> tuple[np.ndarray, ...]:
    columns = SENTENCE_COLUMNS + (("rating",) if rated else ())
    missing = [c for c in columns if c not in frame]
    if missing:
        raise ValueError(f"MORCELA needs columns {missing}: build the sentences with metrics_table(scores, "
                         "['lp', 'slor']) (and rated_sentences for the ratings)")
    out = tuple(frame[c].to_numpy(np.float64) for c in columns)
    if not all(np.isfinite(a).all() for a in out[:3]) or (out[2] <= 0).any():
        raise ValueError("MORCELA needs finite log-probs and positive token counts for every sentence")
    return out


def fit(sentences: pd.DataFrame, beta: float | None = None, gamma: float | None = None) -> Params:
    """MORCELA fitted by least squares to ``sentences``' ``rating`` (columns lp, unigram_lp,
    n_tokens, rating); ``beta`` or ``gamma`` given are held fixed. Unrated rows are an error:
    drop them first (:func:`evaluate` does)."""
    lp, uni, n, rating = _arrays(sentences, rated=True)
    if np.isnan(rating).any():
        raise ValueError(f"{int(np.isnan(rating).sum())} sentences have no rating: drop them before fitting")
    if rating.size < MIN_SENTENCES:
        raise ValueError(f"MORCELA needs at least {MIN_SENTENCES} rated sentences to fit, got {rating.size}: "
                         "score more rated pairs (a larger limit)")
    first = (lp - (beta or 0.0) * uni + (gamma or 0.0)) / n
    features = [first] + ([uni / n] if beta is None else []) + ([1 / n] if gamma is None else [])
    x = np.column_stack(features)
    if np.linalg.matrix_rank(x - x.mean(axis=0)) < x.shape[1]:
        raise ValueError("MORCELA's features are collinear on these sentences (e.g. one token count for all): "
                         "its parameters are not identified; score sentences of varied length or fix gamma")
    model = LinearRegression().fit(x, rating)
    coef = model.coef_
    if coef[0] == 0:
        raise ValueError("the fit gives the LM log-prob no weight (constant ratings?): beta and gamma are undefined")
    k = 1
    if beta is None:
        beta, k = -coef[k] / coef[0], k + 1
    if gamma is None:
        gamma = coef[k] / coef[0]
    return Params(float(beta), float(gamma), float(coef[0]), float(model.intercept_), int(rating.size))


def fixed_scores(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """LP, MeanLP, PenLP and SLOR of each sentence, by :mod:`helpers.methods.measures`."""
    lp, uni, n = _arrays(frame, rated=False)
    return {"lp": lp, "meanlp": measures.mean_lp(lp, n), "penlp": measures.pen_lp(lp, n),
            "slor": measures.slor(lp, uni, n)}


def rated_sentences(table: pd.DataFrame, frame: pd.DataFrame, human=("rating_good", "rating_bad")) -> pd.DataFrame:
    """The pair sentences of ``table`` (:func:`helpers.analysis.separability.metrics_table` with
    SLOR, so with ``unigram_lp``) with ``rating``: each side's human rating from the dataset table
    ``frame`` (LI: ``rating_good``/``rating_bad``, per-item mean z-scores); NaN where unrated."""
    rows = table[table["side"].isin(["good", "bad"])]
    if rows.empty:
        raise ValueError("no minimal-pair sentences in this table: MORCELA is fitted on rated pair sentences (LI)")
    joined = pc.with_pair_text(rows, frame, list(human)).reset_index(drop=True)
    joined["rating"] = np.where(joined["side"] == "good", joined[human[0]], joined[human[1]]).astype(float)
    if joined["rating"].isna().all():
        raise ValueError(f"no sentence has a rating in {list(human)}: is this the LI table with its ratings?")
    return joined.drop(columns=["good", "bad", *human])


def folds(groups, k: int = 5, seed: int = 0) -> np.ndarray:
    """The held-out fold (0..k-1) of each row: rows of one group (a pair) share a fold; the groups
    are permuted by numpy's generator seeded with ``seed`` and cut into k parts of sizes differing
    by at most one group (written here, not GroupKFold, so that folds stay the same across
    scikit-learn versions)."""
    groups = np.asarray(groups)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
        raise ValueError(f"k must be a number of folds >= 2, got {k!r}")
    if len(np.unique(groups)) < k:
        raise ValueError(f"{len(np.unique(groups))} pairs cannot fill {k} folds: score more pairs or lower k")
    unique, inverse = np.unique(groups, return_inverse=True)
    fold_of_group = np.empty(unique.size, dtype=np.int64)
    for fold, members in enumerate(np.array_split(np.random.default_rng(seed).permutation(unique.size), k)):
        fold_of_group[members] = fold
    return fold_of_group[inverse]


def _correlations(score: np.ndarray, rating: np.ndarray) -> tuple[float, float]:
    if np.ptp(score) == 0 or np.ptp(rating) == 0:
        return float("nan"), float("nan")
    return float(stats.pearsonr(score, rating).statistic), float(stats.spearmanr(score, rating).statistic)


def _fold_rows(rated: pd.DataFrame, fold_of: np.ndarray, k: int, variants) -> list[dict]:
    rows = []
    for fold in range(k):
        train, test = rated[fold_of != fold], rated[fold_of == fold]
        if len(test) < MIN_TEST:
            raise ValueError(f"fold {fold} holds {len(test)} rated sentences, a correlation needs {MIN_TEST}: "
                             "lower k or score more rated pairs")
        rating = test["rating"].to_numpy(float)
        scores = {name: (s, {}) for name, s in fixed_scores(test).items()}
        for name, (beta, gamma) in variants.items():
            p = fit(train, beta, gamma)
            scores[name] = (p.predict(*_arrays(test, rated=False)), {"beta": p.beta, "gamma": p.gamma})
        for name, (score, params) in scores.items():
            r, rho = _correlations(score, rating)
            rows.append({"fold": fold, "function": name, "pearson": r, "spearman": rho, "sentences": len(test),
                         "beta": params.get("beta", np.nan), "gamma": params.get("gamma", np.nan)})
    return rows


@dataclass(frozen=True)
class Evaluation:
    """``params``: per (model, dataset, variant) the fit on all rated sentences and the folds'
    spread; ``heldout``: per function the mean and sd over folds of the held-out correlations;
    ``folds``: per fold and function the held-out correlations (and the fold's parameters)."""

    params: pd.DataFrame
    heldout: pd.DataFrame
    folds: pd.DataFrame


def evaluate(sentences: pd.DataFrame, k: int = 5, seed: int = 0, variants=None) -> Evaluation:
    """MORCELA's variants (default :data:`VARIANTS`) fitted and cross-validated per (model,
    dataset) of ``sentences`` (:func:`rated_sentences`); unrated sentences are left out and
    counted (``unrated``)."""
    variants = VARIANTS if variants is None else variants
    params, heldout, per_fold = [], [], []
    for (model, dataset), g in sentences.groupby(["model", "dataset"], sort=False):
        rated = g[g["rating"].notna()].reset_index(drop=True)
        key = {"model": model, "dataset": dataset}
        fold_of = folds(rated["paradigm"].astype(str) + "\x1f" + rated["item"].astype(str), k, seed)
        rows = pd.DataFrame(_fold_rows(rated, fold_of, k, variants)).assign(**key)
        per_fold.append(rows)
        for name, (beta, gamma) in variants.items():
            p, spread = fit(rated, beta, gamma), rows[rows["function"] == name]
            params.append({**key, "variant": name, "beta": p.beta, "gamma": p.gamma, "scale": p.scale,
                           "intercept": p.intercept, "beta_fold_sd": spread["beta"].std(ddof=1),
                           "gamma_fold_sd": spread["gamma"].std(ddof=1), "sentences": p.sentences,
                           "unrated": int(len(g) - len(rated))})
        summary = rows.groupby("function", sort=False).agg(
            pearson=("pearson", "mean"), pearson_sd=("pearson", "std"), spearman=("spearman", "mean"),
            spearman_sd=("spearman", "std"), folds=("fold", "nunique"), sentences=("sentences", "sum"))
        heldout.append(summary.reset_index().assign(**key))
    keys = ["model", "dataset"]
    frame = pd.DataFrame(params)
    return Evaluation(frame[keys + [c for c in frame if c not in keys]],
                      pd.concat(heldout, ignore_index=True).pipe(lambda t: t[keys + [c for c in t if c not in keys]]),
                      pd.concat(per_fold, ignore_index=True).pipe(lambda t: t[keys + [c for c in t if c not in keys]]))


def params_of(table: pd.DataFrame, model: str) -> dict[str, Params]:
    """variant -> :class:`Params` of ``model`` from :attr:`Evaluation.params`."""
    rows = table[table["model"] == model]
    if rows.empty:
        raise ValueError(f"no MORCELA fit of {model!r}: fit it on rated sentences (LI) first")
    if rows["variant"].duplicated().any():
        raise ValueError(f"{model!r} has MORCELA fits on several datasets: keep the one to transfer")
    return {r.variant: Params(r.beta, r.gamma, r.scale, r.intercept, int(r.sentences)) for r in rows.itertuples()}


def _pair_scores(rows: pd.DataFrame, fits: dict[str, Params]) -> pd.DataFrame:
    """One row per pair: each function's score of the good and of the bad sentence."""
    keys = ["paradigm", "item"]
    good, bad = (rows[rows["side"] == s].set_index(keys).sort_index() for s in ("good", "bad"))
    if not good.index.equals(bad.index) or good.index.duplicated().any():
        raise ValueError("every pair needs exactly one good and one bad sentence: load one score file per method")
    out = pd.DataFrame(index=good.index)
    for side, frame in (("good", good), ("bad", bad)):
        for name, score in fixed_scores(frame).items():
            out[f"{name}_{side}"] = score
        for name, p in fits.items():
            out[f"{name}_{side}"] = p.predict(*_arrays(frame, rated=False))
    return out.reset_index()


def blimp_agreement(table: pd.DataFrame, human, params: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Minimal-pair accuracy per (model, dataset, paradigm, function) of the pair sentences of
    ``table`` (metrics_table with SLOR) under LP, MeanLP, PenLP, SLOR and the MORCELA fits in
    ``params`` (:attr:`Evaluation.params`, fitted on LI: no fit here), beside ``human``
    (paradigm -> human agreement); and, per function, the Pearson and Spearman correlation of
    accuracy with human agreement across the paradigms that have one. Each accuracy counts a tie
    wrong and comes with its ties' share, expected accuracy and accuracy with every tie right."""
    human = pd.Series(human, dtype=float)
    rows = table[table["side"].isin(["good", "bad"])]
    if rows.empty:
        raise ValueError("no minimal pairs in this table: score BLiMP's pairs with the sentence readouts")
    per_paradigm, summary = [], []
    for (model, dataset), g in rows.groupby(["model", "dataset"], sort=False):
        fits = params_of(params, model)
        pairs = _pair_scores(g, fits)
        for name in list(FIXED) + list(fits):
            decided = pairs.assign(correct=pairs[f"{name}_good"] > pairs[f"{name}_bad"],  # a tie is an error
                                   tie=pairs[f"{name}_good"] == pairs[f"{name}_bad"])
            frame = summarise(decided, ["paradigm"]).assign(model=model, dataset=dataset, function=name)
            frame = frame.assign(human_agreement=human.reindex(frame["paradigm"]).to_numpy())[PARADIGM_COLUMNS]
            per_paradigm.append(frame)
            known = frame[frame["human_agreement"].notna()]
            if len(known) < MIN_TEST:
                raise ValueError(f"{len(known)} paradigms of {dataset} have a human agreement, a correlation needs "
                                 f"{MIN_TEST}: is `human` BLiMP's per-paradigm validation (blimp.human_agreement)?")
            x, y = known["accuracy"].to_numpy(float), known["human_agreement"].to_numpy(float)
            ok = np.ptp(x) > 0 and np.ptp(y) > 0
            r = stats.pearsonr(x, y) if ok else None
            rho = stats.spearmanr(x, y) if ok else None
            accuracy, share = float(decided["correct"].mean()), float(decided["tie"].mean())
            summary.append({"model": model, "dataset": dataset, "function": name, "accuracy": accuracy,
                            TIE_SHARE_COLUMN: share, **dict(zip((EXPECTED, TIES_RIGHT), tie_range(accuracy, share))),
                            "pearson": r.statistic if ok else np.nan, "pearson_p": r.pvalue if ok else np.nan,
                            "spearman": rho.statistic if ok else np.nan, "spearman_p": rho.pvalue if ok else np.nan,
                            "paradigms": len(known), "pairs": int(known["pairs"].sum())})
    return pd.concat(per_paradigm, ignore_index=True), pd.DataFrame(summary)
