"""Effects of priming prefixes on minimal-pair judgments (Sinha et al. 2023): baselined accuracy
(eq. 2) for Figures 2-5, the perplexity margin (Appendix C) and the mixed-effects logistic
regressions (correct ~ log(length) x domain x acceptability; and length x source).

Input: the tidy per-item frame of judgments under prefixes, one row per (model, dataset, method,
item = (paradigm, pair_id), prefix_type, target_length, draw), with columns ``correct``,
``score_good``, ``score_bad``, ``domain`` (in/out/unrelated/none), ``acceptability`` and
``actual_length``; the no-prefix rows have ``prefix_type == "none"`` and length 0.

Regressions are fitted with statsmodels' ``BinomialBayesMixedGLM.fit_map`` (Laplace approximation
at the posterior mode, weak normal priors). ``fit_vb``'s mean-field posterior ignores the correlation
between the intercept and the random intercepts and understates the intercept's SD severalfold;
the Laplace covariance keeps it, and its fixed effects and SDs match lme4::glmer closely (see
tests/test_priming_effects.py). p-values are two-sided normal tail probabilities of the Laplace
posterior, 2 * Phi(-|mean / sd|): Wald-type values, comparable with glmer's z tests.
"""
from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
from scipy import sparse, stats
from statsmodels.genmod.bayes_mixed_glm import BinomialBayesMixedGLM

from .accuracy import EXPECTED, TIE_SHARE_COLUMN, TIES_RIGHT, with_tie_range
from .significance import bootstrap_ci

PREFIX_TYPES = ("in_acceptable", "in_unacceptable", "out_acceptable", "out_unacceptable", "wikitext")
DATASET_PREFIXES = PREFIX_TYPES[:4]
NO_PREFIX = "none"
GROUP = ["model", "dataset", "method"]
ITEM = ["paradigm", "pair_id"]
PMI_METHODS = ("lp", "intemplate_lp")  # methods whose scores are log-probabilities: PMI applies
BASE_TIES = f"baseline_{TIE_SHARE_COLUMN}"  # the no-prefix rows' ties, as the prefixed rows' TIE_SHARE_COLUMN
TIE_COLUMNS = [TIE_SHARE_COLUMN, EXPECTED, TIES_RIGHT, BASE_TIES, EXPECTED + "_baseline", TIES_RIGHT + "_baseline",
               "delta_ties_half"]  # baselined_accuracy's ties, where the frame has them
COLUMNS = GROUP + ITEM + ["prefix_type", "domain", "acceptability", "target_length", "actual_length", "draw",
                          "correct", "score_good", "score_bad"]


def check_frame(frame: pd.DataFrame, columns=COLUMNS) -> None:
    """Raise a ValueError naming the missing columns of the per-item frame."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"the judgments frame lacks columns {missing}: pass the tidy per-item frame of judgments "
                         f"under prefixes (columns {list(columns)})")


def _prefixed(frame: pd.DataFrame, prefix_types) -> pd.DataFrame:
    unknown = sorted(set(prefix_types) - set(PREFIX_TYPES))
    if unknown:
        raise ValueError(f"unknown prefix types {unknown}; choose from {list(PREFIX_TYPES)}")
    rows = frame[frame["prefix_type"].isin(list(prefix_types))]
    if rows.empty:
        raise ValueError(f"no rows with prefix types {list(prefix_types)}; the frame has "
                         f"{sorted(frame['prefix_type'].unique())}")
    return rows


def _cells(item_values: pd.DataFrame, keys: list[str], value: str, n_resamples: int, level: float,
           seed: int) -> pd.DataFrame:
    """Mean of ``value`` over items per cell of ``keys``, with a percentile bootstrap CI over items
    (items in key order, so the result does not depend on the frame's row order)."""
    rows = []
    for key, g in item_values.groupby(keys):
        lo, hi = bootstrap_ci(g[value].to_numpy(float), n_resamples, level, seed)
        rows.append(dict(zip(keys, key)) | {value: float(g[value].mean()), "ci_low": lo, "ci_high": hi,
                                            "items": len(g)})
    return pd.DataFrame(rows)


def _ordered(table: pd.DataFrame, by: str) -> pd.DataFrame:
    order = {t: i for i, t in enumerate((NO_PREFIX, *PREFIX_TYPES, "in", "out", "acceptable", "unacceptable"))}
    return (table.assign(_o=table[by].map(order).fillna(len(order))).sort_values(GROUP + ["_o", "target_length"])
            .drop(columns="_o").reset_index(drop=True))


def baselined_accuracy(frame: pd.DataFrame, by: str = "prefix_type", prefix_types=PREFIX_TYPES, *,
                       n_resamples: int = 2000, level: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Accuracy with a prefix minus accuracy without (Sinha et al. eq. 2) per (model, dataset,
    method, ``by``, target_length), over the rows of ``prefix_types`` pooled by ``by`` (prefix_type,
    acceptability or domain). Paired per item: d_i = mean over draws (and pooled types) of
    correct_i under prefix - correct_i without; ``delta`` = mean d_i, the CI a percentile bootstrap
    over items (scipy, seeded). Columns also give ``accuracy``, ``baseline`` (same items), ``items``,
    and, where the frame has ``tie`` (:data:`TIE_COLUMNS`), the share of the prefixed rows that tied
    (counted wrong), the expected accuracy (ties half) and the accuracy with every tie right, the
    same of the baseline (suffix "_baseline") and ``delta_ties_half``, the effect with ties half."""
    check_frame(frame, GROUP + ITEM + ["prefix_type", by, "target_length", "correct"])
    base = frame[frame["prefix_type"] == NO_PREFIX]
    if base.empty:
        raise ValueError("no rows with prefix_type 'none': baselined accuracy needs each item scored without a "
                         "prefix (length 0) as well")
    ties = "tie" in frame  # then every cell gives its ties, counted wrong as everywhere (:mod:`.accuracy`)
    base = _per_item(base, GROUP + ITEM, "baseline", BASE_TIES, ties)
    rows = _prefixed(frame, prefix_types)
    cell = GROUP + [by, "target_length"]
    items = _per_item(rows, cell + ITEM, "accuracy", TIE_SHARE_COLUMN, ties)
    items = items.merge(base, on=GROUP + ITEM, how="left", validate="many_to_one")
    lacking = items.loc[items["baseline"].isna(), GROUP + ITEM].drop_duplicates()
    if not lacking.empty:
        example = lacking.iloc[0]
        raise ValueError(f"{len(lacking)} prefixed items have no no-prefix row (e.g. model {example['model']!r}, "
                         f"method {example['method']!r}, item {tuple(example[ITEM].tolist())}): score every item with "
                         f"prefix_type 'none' too")
    items["delta"] = items["accuracy"] - items["baseline"]
    table = _cells(items, cell, "delta", n_resamples, level, seed)
    shown = ["accuracy", "baseline"] + ([TIE_SHARE_COLUMN, BASE_TIES] if ties else [])
    means = items.groupby(cell, sort=False)[shown].mean().reset_index()
    columns = cell + ["accuracy", "baseline", "delta", "ci_low", "ci_high", "items"]
    if ties:
        means = with_tie_range(with_tie_range(means), "baseline", BASE_TIES, "_baseline")
        means["delta_ties_half"] = means[EXPECTED] - means[EXPECTED + "_baseline"]
        columns = columns + TIE_COLUMNS
    return _ordered(table.merge(means, on=cell), by)[columns]


def _per_item(rows: pd.DataFrame, keys: list[str], accuracy: str, tie_share: str, ties: bool) -> pd.DataFrame:
    """Per item (``keys``): the mean of ``correct`` over its rows (draws) as ``accuracy``, and of
    ``tie`` as ``tie_share`` when ``ties``."""
    rows = rows.assign(_tie=rows["tie"].eq(True)) if ties else rows
    return rows.groupby(keys).agg(**{accuracy: ("correct", "mean")},
                                  **({tie_share: ("_tie", "mean")} if ties else {})).reset_index()


def figure2(frame: pd.DataFrame, **kw) -> pd.DataFrame:
    """Figure 2: baselined accuracy of the five prefix types."""
    return baselined_accuracy(frame, "prefix_type", PREFIX_TYPES, **kw)


# Figures 3-5: (what the two sides differ in, the prefix types compared, the figure's title)
COMPARED = {"figure3": ("acceptability", DATASET_PREFIXES, "acceptable vs unacceptable prefixes"),
            "figure4": ("domain", ("in_acceptable", "out_acceptable"), "figure4: in- vs out-of-domain"),
            "figure5": ("domain", ("in_unacceptable", "out_unacceptable"), "figure5: in- vs out-of-domain")}


def figure3(frame: pd.DataFrame, **kw) -> pd.DataFrame:
    """Figure 3: acceptable vs unacceptable prefixes of the dataset (in and out of domain pooled)."""
    return baselined_accuracy(frame, *COMPARED["figure3"][:2], **kw)


def figure4(frame: pd.DataFrame, **kw) -> pd.DataFrame:
    """Figure 4: in- vs out-of-domain acceptable prefixes."""
    return baselined_accuracy(frame, *COMPARED["figure4"][:2], **kw)


def figure5(frame: pd.DataFrame, **kw) -> pd.DataFrame:
    """Figure 5: in- vs out-of-domain unacceptable prefixes."""
    return baselined_accuracy(frame, *COMPARED["figure5"][:2], **kw)


def comparisons(frame: pd.DataFrame, **kw) -> dict[str, pd.DataFrame]:
    """Figures 3-5, each where both of its sides were scored (a run of some prefix types, e.g.
    ``prefix_types="in_acceptable"``, has none of figure 5's): name -> table."""
    return {name: baselined_accuracy(frame, by, types, **kw) for name, (by, types, _) in COMPARED.items()
            if frame.loc[frame["prefix_type"].isin(list(types)), by].nunique() == 2}


def perplexity_margin(frame: pd.DataFrame, prefix_types=PREFIX_TYPES, *, n_resamples: int = 2000,
                      level: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Appendix C: the pair's margin score_good - score_bad (item mean over draws, then mean over
    items, bootstrap CI over items) per (model, dataset, method, prefix_type, target_length); the
    no-prefix rows come out as prefix_type 'none', length 0 (the baseline)."""
    check_frame(frame, GROUP + ITEM + ["prefix_type", "target_length", "score_good", "score_bad"])
    rows = frame[frame["prefix_type"].isin([NO_PREFIX, *prefix_types])]
    _prefixed(rows, prefix_types)
    cell = GROUP + ["prefix_type", "target_length"]
    margin = (rows["score_good"].astype(float) - rows["score_bad"].astype(float)).rename("margin")
    items = pd.concat([rows[cell + ITEM], margin], axis=1).groupby(cell + ITEM)["margin"].mean()
    return _ordered(_cells(items.reset_index(), cell, "margin", n_resamples, level, seed), "prefix_type")


def pmi_accuracy(frame: pd.DataFrame) -> pd.DataFrame:
    """Judgments by PMI-normalised LP under each prefix: a sentence's log-probability after the
    prefix minus its log-probability alone (the same item's no-prefix row, mean over its rows),
    the pair right when the acceptable sentence's PMI is strictly higher; a tie counts wrong.
    Per (model, dataset, method, prefix_type, target_length): ``accuracy`` of the scores as
    stored, ``accuracy_pmi``, PMI's ties and their share, the rows (items x draws) pooled, and
    the tie range of each accuracy (the stored ties' share, expected accuracy and accuracy with
    every tie right; PMI's with suffix "_pmi": :func:`helpers.analysis.accuracy.with_tie_range`).
    Only the methods whose scores are log-probabilities (:data:`PMI_METHODS`) are read."""
    check_frame(frame, GROUP + ITEM + ["prefix_type", "target_length", "correct", "score_good", "score_bad"])
    frame = frame[frame["method"].isin(PMI_METHODS)]
    if frame.empty:
        raise ValueError(f"no judgments of {' or '.join(PMI_METHODS)}: PMI needs scores that are log-probabilities")
    alone = frame[frame["prefix_type"] == NO_PREFIX]
    if alone.empty:
        raise ValueError("no rows with prefix_type 'none': PMI needs each item scored without a prefix as well")
    alone = alone.groupby(GROUP + ITEM)[["score_good", "score_bad"]].mean()
    rows = frame[frame["prefix_type"] != NO_PREFIX].join(alone, on=GROUP + ITEM, rsuffix="_alone")
    if rows["score_good_alone"].isna().any():
        example = rows.loc[rows["score_good_alone"].isna(), ITEM].iloc[0]
        raise ValueError(f"prefixed item {tuple(example.tolist())} has no no-prefix row: score every item with "
                         "prefix_type 'none' too")
    good = rows["score_good"].astype(float) - rows["score_good_alone"].astype(float)
    bad = rows["score_bad"].astype(float) - rows["score_bad_alone"].astype(float)
    stored_tie = rows["tie"].eq(True) if "tie" in rows else False
    rows = rows.assign(correct_pmi=good > bad, tie_pmi=good == bad, tie=stored_tie)
    cell = GROUP + ["prefix_type", "target_length"]
    table = rows.groupby(cell, sort=False).agg(accuracy=("correct", "mean"), accuracy_pmi=("correct_pmi", "mean"),
                                                ties_pmi=("tie_pmi", "sum"), rows=("correct", "size"),
                                                **{TIE_SHARE_COLUMN: ("tie", "mean")}).reset_index()
    table[f"pmi_{TIE_SHARE_COLUMN}"] = table["ties_pmi"] / table["rows"]
    table = with_tie_range(with_tie_range(table), "accuracy_pmi", f"pmi_{TIE_SHARE_COLUMN}", "_pmi")
    return _ordered(table, "prefix_type")


def sum_code(values: pd.Series, positive: str) -> np.ndarray:
    """Sum (deviation) coding of a two-level factor: +1 for ``positive``, -1 for the other level
    (R's contr.sum with ``positive`` as the first level)."""
    levels = sorted(values.astype(str).unique())
    if len(levels) != 2 or positive not in levels:
        raise ValueError(f"{values.name} must have exactly two levels, one of them {positive!r}; got {levels}")
    return np.where(values.astype(str) == positive, 1.0, -1.0)


def fit_mixed_logit(data: pd.DataFrame, factors: dict[str, str], *, length: str = "actual_length",
                    groups: str = "paradigm", fe_p: float = 10.0, vcp_p: float = 1.0, seed: int = 0,
                    level: float = 0.95) -> pd.DataFrame:
    """correct ~ log(length) x factors (full factorial, each factor sum-coded with the given level
    at +1, log length centred on its mean) + (1 | groups), by ``fit_map``. ``fe_p``: prior SD of the
    fixed effects (logit scale; 10 is nearly flat), ``vcp_p``: prior SD of the log random-intercept
    SD. Returns one row per fixed effect: estimate, se (posterior SD), CI, z, p_value, and the
    fit's rows, groups, group_sd, log_length_center, converged."""
    check_frame(data, ["correct", length, groups, *factors])
    if (data[length] <= 0).any():
        raise ValueError(f"{length} must be > 0 for log(length): leave out the no-prefix rows (length 0)")
    if data[groups].nunique() < 2:
        raise ValueError(f"a random intercept per {groups} needs at least two {groups} values")
    log_length = np.log(data[length].to_numpy(float))
    center = float(log_length.mean())
    columns = {"log_length": log_length - center} | {
        f"{name}[{positive}]": sum_code(data[name], positive) for name, positive in factors.items()}
    names = ["Intercept"]
    exog = [np.ones(len(data))]
    for k in range(1, len(columns) + 1):
        for combo in combinations(columns, k):
            names.append(":".join(combo))
            exog.append(np.prod([columns[c] for c in combo], axis=0))
    group_codes, group_names = pd.factorize(data[groups])
    exog_vc = sparse.csr_matrix((np.ones(len(data)), (np.arange(len(data)), group_codes)),
                                shape=(len(data), len(group_names)))
    model = BinomialBayesMixedGLM(data["correct"].to_numpy(float), np.column_stack(exog), exog_vc,
                                  np.zeros(len(group_names), int), vcp_p=vcp_p, fe_p=fe_p, fep_names=names)
    fit = model.fit_map(rng=np.random.default_rng(seed))
    z = fit.fe_mean / fit.fe_sd
    half = stats.norm.ppf(0.5 + level / 2) * fit.fe_sd
    return pd.DataFrame({"term": names, "estimate": fit.fe_mean, "se": fit.fe_sd, "ci_low": fit.fe_mean - half,
                         "ci_high": fit.fe_mean + half, "z": z, "p_value": 2 * stats.norm.sf(np.abs(z)),
                         "rows": len(data), "groups": len(group_names), "group_sd": float(np.exp(fit.vcp_mean[0])),
                         "log_length_center": center, "converged": bool(fit.optim_retvals.success)})


def _per_group(frame: pd.DataFrame, name: str, prepare, factors: dict[str, str], **kw) -> pd.DataFrame:
    fits = []
    for key, g in frame.groupby(GROUP, sort=False):
        fit = fit_mixed_logit(prepare(g), factors, **kw)
        fits.append(fit.assign(**dict(zip(GROUP, key)), regression=name))
    table = pd.concat(fits, ignore_index=True)
    return table[GROUP + ["regression"] + [c for c in table.columns if c not in GROUP + ["regression"]]]


def domain_regression(frame: pd.DataFrame, **kw) -> pd.DataFrame:
    """Per (model, dataset, method): correct ~ log(length) x domain x acceptability + (1 | paradigm)
    over the dataset's own prefixes (in/out x acceptable/unacceptable); the no-prefix rows (length 0,
    no domain) and WikiText are left out. Codes: domain[in] = +1, acceptability[acceptable] = +1."""
    check_frame(frame, GROUP + ["prefix_type"])
    rows = _prefixed(frame, DATASET_PREFIXES)
    return _per_group(rows, "length x domain x acceptability", lambda g: g,
                      {"domain": "in", "acceptability": "acceptable"}, **kw)


def source_regression(frame: pd.DataFrame, dataset_prefixes=("in_acceptable", "out_acceptable"),
                      **kw) -> pd.DataFrame:
    """Per (model, dataset, method): correct ~ log(length) x source + (1 | paradigm), source =
    'dataset' (its acceptable prefixes, in and out of domain by default) or 'wikitext' (code:
    source[dataset] = +1). Length 0 left out."""
    check_frame(frame, GROUP + ["prefix_type"])
    rows = _prefixed(frame, (*dataset_prefixes, "wikitext"))

    def prepare(g):
        return g.assign(source=np.where(g["prefix_type"] == "wikitext", "wikitext", "dataset"))

    return _per_group(rows, "length x source", prepare, {"source": "dataset"}, **kw)


def regressions(frame: pd.DataFrame, **kw) -> pd.DataFrame:
    """Both regressions, one table (column ``regression`` tells them apart); one whose factors the
    scored prefix types do not vary (``prefix_types="in_acceptable"``: neither) is left out."""
    def varies(types, *factors) -> bool:  # both levels of every factor among the rows of ``types``
        rows = frame[frame["prefix_type"].isin(types)]
        return all(factor(rows).nunique() == 2 for factor in factors)

    fits = [domain_regression(frame, **kw)] if varies(DATASET_PREFIXES, lambda r: r["domain"],
                                                      lambda r: r["acceptability"]) else []
    fits += [source_regression(frame, **kw)] if varies(("in_acceptable", "out_acceptable", "wikitext"),
                                                       lambda r: r["prefix_type"] == "wikitext") else []
    columns = GROUP + ["regression", "term", "estimate", "se", "ci_low", "ci_high", "z", "p_value"]
    return pd.concat(fits, ignore_index=True) if fits else pd.DataFrame(columns=columns)
