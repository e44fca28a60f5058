"""Prediction 3 of Hu et al. (2025): string probability separates the two sentences of a
minimal pair, but not grammatical from ungrammatical sentences pooled together.

From stored score files: the metrics per sentence (:func:`metrics_table`, from the basis
columns of one sentence-readout pass: LP, MeanLP, SLLN-LP, LP per character and per byte, SLOR and
the two Bayes factors), per-sentence scores of any method that scores one
sentence (:func:`sentence_scores`: in-template LP, Yes/No...), ROC curves and AUC with
bootstrap intervals per dataset and pooled (:func:`auc_table`, :func:`roc_table`), and the
minimal-pair accuracy of the same metrics (:func:`pair_accuracy`, the paper's Figure 9).
A long frame has one row per (model, dataset, method, template, sentence) with
``grammatical`` (1/0) and ``score``.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score, roc_curve

from ..methods import measures
from .. import methods as registry
from ..store import read_metadata
from .accuracy import summarise
from .significance import auc_ci

METRICS = ("lp", "meanlp", "slln_lp", "lp_per_char", "lp_per_byte", "slor", "bf_uniform", "bf_unigram")
TEXT_METRICS = {"lp_per_char": "n_chars", "lp_per_byte": "n_bytes"}  # per unit of the sentence's text
UNIGRAM_METRICS = ("slor", "bf_unigram")
# sentence readouts share one engine pass; a method with unigram sums is the fullest basis
BASIS_METHODS = ("bf_unigram", "slor", "lp", "meanlp", "penlp", "slln_lp", "lp_per_char", "lp_per_byte", "bf_uniform")
# families whose score of a sentence depends on that sentence alone (not comparative LP, A/B, ...)
SENTENCE_FAMILIES = ("sentence", "single", "yesno")
GROUP = ["model", "dataset", "method", "template"]
POOLED = "pooled"


def _sides(rows: pd.DataFrame) -> tuple[str, ...]:
    if "tgt_sum_good" in rows and rows["tgt_sum_good"].notna().all():
        return ("good", "bad")
    if "tgt_sum_sentence" in rows and rows["tgt_sum_sentence"].notna().all():
        return ("sentence",)
    raise ValueError("score rows without the basis columns tgt_sum_good/_bad or tgt_sum_sentence: "
                     "load the score files of a sentence readout (lp, slor, bf_unigram...)")


def _unigram_sources(scores: pd.DataFrame) -> dict[str, str | None]:
    """config_hash -> the unigram corpus its score file recorded."""
    return {meta["config_hash"]: meta.get("unigram_source")
            for meta in (read_metadata(p) for p in scores.attrs.get("score_files", []))}


def _has_unigram(rows: pd.DataFrame) -> bool:
    column = f"uni_sum_{_sides(rows)[0]}"
    return column in rows and rows[column].notna().all()


def _basis(group: pd.DataFrame, needs_unigram: bool, where: str) -> pd.DataFrame:
    """The rows of one sentence-readout method of one (model, dataset)."""
    have = [m for m in BASIS_METHODS if (group["method"] == m).any()]
    if needs_unigram:
        have = [m for m in have if _has_unigram(group[group["method"] == m])]
    if not have:
        need = "slor or bf_unigram" if needs_unigram else "a sentence readout (lp, meanlp, slor, bf_uniform, bf_unigram)"
        raise ValueError(f"no scores of {need} for {where}: score the dataset with those methods first")
    rows = group[group["method"] == have[0]]
    if rows["config_hash"].nunique() > 1:
        raise ValueError(f"{where}: {have[0]} rows come from {rows['config_hash'].nunique()} score files; "
                         "load one file per method (helpers.store.load_scores picks one)")
    return rows


def _item_column(rows: pd.DataFrame, sides: tuple[str, ...]) -> pd.Series:
    column = "pair_id" if sides == ("good", "bad") else "item_id"
    if column not in rows or rows[column].isna().any():
        raise ValueError(f"score rows lack their {column} column")
    return rows[column].astype("int64")


def _per_side(rows: pd.DataFrame, sides: tuple[str, ...], side: str) -> pd.DataFrame:
    """The identifying columns of ``rows`` for one side, with ``grammatical``."""
    out = pd.DataFrame({"model": rows["model"].to_numpy(), "dataset": rows["dataset"].astype(str).to_numpy(),
                        "paradigm": rows["paradigm"].astype(str).to_numpy() if "paradigm" in rows else "",
                        "item": _item_column(rows, sides).to_numpy(), "side": side})
    if side == "sentence":
        if "label" not in rows or rows["label"].isna().any():
            raise ValueError("single-sentence scores need the dataset's 0/1 label column")
        out["grammatical"] = rows["label"].astype(int).to_numpy()
    else:
        out["grammatical"] = int(side == "good")
    return out


def _metric(metric: str, rows: pd.DataFrame, side: str) -> np.ndarray:
    """One metric of one side from the basis columns, by :mod:`helpers.methods.measures`."""
    total, n = rows[f"tgt_sum_{side}"].to_numpy(float), rows[f"n_tokens_{side}"].to_numpy(float)
    if metric == "lp":
        return total
    if metric == "meanlp":
        return measures.mean_lp(total, n)
    if metric == "slln_lp":
        return measures.slln_lp(total, n)
    if metric in TEXT_METRICS:
        return measures.per_unit(total, rows[f"{TEXT_METRICS[metric]}_{side}"].to_numpy(float))
    if metric == "bf_uniform":
        return measures.bf_uniform(total, n, rows["log_vocab"].to_numpy(float))
    uni = rows[f"uni_sum_{side}"].to_numpy(float)
    return measures.slor(total, uni, n) if metric == "slor" else measures.bf_unigram(total, uni)


def metrics_table(scores: pd.DataFrame, metrics=METRICS) -> pd.DataFrame:
    """One row per sentence (both sides of every pair, or every single sentence) with the
    ``metrics`` computed from the stored sums and counts by :mod:`helpers.methods.measures`, and, when a
    metric needs them, the unigram log-prob sum (``unigram_lp``) and corpus (``unigram_source``) that
    SLOR and BF-unigram used."""
    metrics = list(metrics)
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise ValueError(f"unknown metrics {unknown}; choose from {list(METRICS)}")
    if scores.empty:
        raise ValueError("no scores: run the sentence readouts (lp, slor, bf_unigram...) on the datasets first")
    needs_unigram = any(m in UNIGRAM_METRICS for m in metrics)
    sources = _unigram_sources(scores)
    frames = []
    for (model, dataset), group in scores.groupby(["model", "dataset"], sort=False):
        rows = _basis(group, needs_unigram, f"{model} on {dataset}")
        sides = _sides(rows)
        lacking = [m for m in metrics if m in TEXT_METRICS and f"{TEXT_METRICS[m]}_{sides[0]}" not in rows]
        if lacking:
            warnings.warn(f"{model} on {dataset}: its sentence-readout scores predate character and byte counts; "
                          f"{lacking} left out (score lp_per_char and lp_per_byte to add them)", stacklevel=2)
        for side in sides:
            out = _per_side(rows, sides, side)
            out["n_tokens"] = rows[f"n_tokens_{side}"].to_numpy(int)
            for m in [m for m in metrics if m not in lacking]:
                out[m] = _metric(m, rows, side)
            if needs_unigram:  # the sentence's unigram log-prob sum (MORCELA weighs it, helpers.analysis.morcela)
                out["unigram_lp"] = rows[f"uni_sum_{side}"].to_numpy(float)
            out["unigram_source"] = [sources.get(h) for h in rows["config_hash"]] if needs_unigram else None
            frames.append(out)
    table = pd.concat(frames, ignore_index=True)
    if table.duplicated(["model", "dataset", "paradigm", "item", "side"]).any():
        raise ValueError("a sentence appears twice: give each (model, dataset) one score file per method")
    return table


def metrics_long(table: pd.DataFrame, metrics=None) -> pd.DataFrame:
    """:func:`metrics_table` as a long frame (``method`` = the metric, template "none")."""
    metrics = [m for m in (metrics or METRICS) if m in table]
    keys = ["model", "dataset", "paradigm", "item", "side", "grammatical"]
    long = table.melt(id_vars=keys, value_vars=metrics, var_name="method", value_name="score")
    return long.assign(template="none")[GROUP + keys[2:] + ["score"]]


def _per_sentence(method: str) -> bool:
    return method in registry.METHODS and registry.get(method).family.name in SENTENCE_FAMILIES


def sentence_scores(scores: pd.DataFrame, methods=None, target: bool = False) -> pd.DataFrame:
    """Per-sentence scores of every method that scores one sentence (LP, in-template LP,
    Yes/No...), both sides of pair files unpaired, as a long frame; ``target`` takes the
    in-template methods' score over the target sentence only."""
    present = list(dict.fromkeys(scores["method"]))
    methods = [m for m in present if _per_sentence(m)] if methods is None else list(methods)
    bad = [m for m in methods if not _per_sentence(m)]
    if bad:
        raise ValueError(f"{bad} do not score one sentence alone (e.g. their score depends on the other "
                         f"sentence of the pair); methods of families {SENTENCE_FAMILIES} do")
    missing = [m for m in methods if m not in present]
    if missing:
        raise ValueError(f"no scores of {missing} in this frame (it has {present})")
    suffix = "_target" if target else ""
    frames = []
    for (model, dataset, method, template), rows in scores[scores.method.isin(methods)].groupby(GROUP, sort=False):
        pair = "score_good" in rows and rows["score_good"].notna().all()
        sides = ("good", "bad") if pair else ("sentence",)
        for side in sides:
            column = f"score_{side}{suffix}" if pair else f"score{suffix}"
            if column not in rows or rows[column].isna().any():
                raise ValueError(f"{method} ({model}, {dataset}) has no {column} column" +
                                 (": only in-template methods have a target-only score" if target else ""))
            out = _per_side(rows, sides, side)
            out.insert(2, "method", method)
            out.insert(3, "template", str(template))
            out["score"] = rows[column].to_numpy(float)
            frames.append(out)
    return pd.concat(frames, ignore_index=True)[GROUP + ["paradigm", "item", "side", "grammatical", "score"]]


def _check(long: pd.DataFrame) -> None:
    missing = [c for c in GROUP + ["grammatical", "score"] if c not in long]
    if missing:
        raise ValueError(f"a long score frame needs columns {missing}: build it with metrics_long or sentence_scores")
    if long["score"].isna().any():
        raise ValueError("some scores are NaN: check the score files")


def _groups(long: pd.DataFrame, pooled: bool):
    for key, rows in long.groupby(GROUP, sort=False):
        yield dict(zip(GROUP, key)), rows
    if pooled and long["dataset"].nunique() > 1:
        rest = [c for c in GROUP if c != "dataset"]
        for key, rows in long.groupby(rest, sort=False):
            yield {**dict(zip(rest, key)), "dataset": POOLED}, rows


def auc_table(long: pd.DataFrame, pooled: bool = True, n_resamples: int = 1000, level: float = 0.95,
              seed: int = 0) -> pd.DataFrame:
    """AUC of grammatical vs ungrammatical sentences per (model, dataset, method, template),
    and over all datasets pooled (dataset "pooled"), with percentile bootstrap intervals."""
    _check(long)
    rows = []
    for key, g in _groups(long, pooled):
        y, s = g["grammatical"].to_numpy(int), g["score"].to_numpy(float)
        if y.min() == y.max():
            raise ValueError(f"{key}: AUC needs grammatical and ungrammatical sentences, all are {y[0]}")
        low, high = auc_ci(s[y == 1], s[y == 0], n_resamples, level, seed)
        rows.append({**key, "auc": float(roc_auc_score(y, s)), "ci_low": low, "ci_high": high,
                     "n_grammatical": int(y.sum()), "n_ungrammatical": int((y == 0).sum())})
    return pd.DataFrame(rows)[GROUP + ["auc", "ci_low", "ci_high", "n_grammatical", "n_ungrammatical"]]


def roc_table(long: pd.DataFrame, pooled: bool = True) -> pd.DataFrame:
    """ROC curve points (false and true positive rate at each threshold) per group, as
    scikit-learn's ``roc_curve`` gives them."""
    _check(long)
    frames = []
    for key, g in _groups(long, pooled):
        fpr, tpr, threshold = roc_curve(g["grammatical"].to_numpy(int), g["score"].to_numpy(float))
        frames.append(pd.DataFrame({**key, "fpr": fpr, "tpr": tpr, "threshold": threshold}))
    return pd.concat(frames, ignore_index=True)


def pair_decisions(table: pd.DataFrame, metrics=None) -> pd.DataFrame:
    """Per (model, dataset, metric, pair) of a :func:`metrics_table`: whether the grammatical sentence
    scores strictly higher (``correct``), whether the two tie (``tie``), and where the table has them
    both sentences' token counts (``n_tokens_good``/``n_tokens_bad``), the metric as ``method``: the
    rows the headline (:mod:`helpers.reporting.headline`) and :func:`pair_accuracy` read."""
    metrics = [m for m in (metrics or METRICS) if m in table]
    pairs = table[table["side"].isin(["good", "bad"])]
    if pairs.empty:
        raise ValueError("no minimal pairs in this table (single sentences have no pair accuracy)")
    counts = ["n_tokens"] if "n_tokens" in pairs else []
    wide = pairs.pivot_table(index=["model", "dataset", "paradigm", "item"], columns="side", values=metrics + counts,
                             aggfunc="first", sort=False)
    rows = []
    for _, g in wide.groupby(level=["model", "dataset"], sort=False):
        keys = g.index.to_frame(index=False).rename(columns={"item": "pair_id"})
        lengths = {f"n_tokens_{side}": g[("n_tokens", side)].to_numpy(int) for side in ("good", "bad") if counts}
        rows += [keys.assign(method=m, correct=(g[(m, "good")] > g[(m, "bad")]).to_numpy(),
                             tie=(g[(m, "good")] == g[(m, "bad")]).to_numpy(), **lengths) for m in metrics]
    return pd.concat(rows, ignore_index=True)


def pair_accuracy(table: pd.DataFrame, metrics=None) -> pd.DataFrame:
    """Minimal-pair accuracy of each metric per (model, dataset), the grammatical sentence scoring strictly
    higher (a tie an error), with the ties, their share and the accuracy's range over them (:func:`summarise`)."""
    return summarise(pair_decisions(table, metrics), ["model", "dataset", "method"])


def pairs_wide(table: pd.DataFrame, metric: str = "lp") -> pd.DataFrame:
    """One row per minimal pair: ``<metric>_good`` and ``<metric>_bad``."""
    pairs = table[table["side"].isin(["good", "bad"])]
    if metric not in pairs or pairs.empty:
        raise ValueError(f"no minimal pairs with metric {metric!r} in this table")
    wide = pairs.pivot_table(index=["model", "dataset", "paradigm", "item"], columns="side", values=metric,
                             aggfunc="first", sort=False)
    return wide.rename(columns={"good": f"{metric}_good", "bad": f"{metric}_bad"}).reset_index().rename_axis(
        columns=None)


def dataset_sentences(scores: pd.DataFrame, dataset: str, metrics=METRICS, methods=()) -> pd.DataFrame:
    """Every single-sentence score of one dataset as a long frame: the ``metrics`` from its
    sentence-readout files and the scores of ``methods`` (in-template LP, Yes/No...)."""
    rows = scores[scores["dataset"] == dataset]
    frame = metrics_long(metrics_table(rows[rows["method"].isin(list(METRICS))], metrics))
    return pd.concat([frame, sentence_scores(rows, list(methods))], ignore_index=True) if methods else frame
