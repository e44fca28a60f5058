"""Predictions 1 and 2 of Hu et al. (2025): within minimal pairs, probability tracks meaning.

Prediction 1: LP(good) and LP(bad) correlate across pairs, and more so the closer the two
sentences are in meaning; pairs get the cosine distance of their sentence embeddings
(:func:`with_distances`), are put in equal-size bins by it (:func:`equal_bins`), and Pearson r
is taken per bin with a bootstrap interval (:func:`binned_correlations`). Prediction 2 (LI):
the model's delta LP(good) - LP(bad) correlates with the human delta (mean z good - mean z
bad), on the pairs whose character-level Levenshtein distance is below its 75th percentile
(:func:`li_deltas`).

    pairs = with_pair_text(separability.pairs_wide(table), dataset_tables, ["language"])
    binned = binned_correlations(assign_bins(with_distances(pairs)), "lp_good", "lp_bad")
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cpdist
from scipy import stats

from . import embedding_store, embeddings


def equal_bins(values, n_bins: int = 10) -> np.ndarray:
    """Bin number (0 = smallest values) of each value, ``n_bins`` bins whose sizes differ by at
    most one; equal values are split by their order in ``values``."""
    v = np.asarray(values, dtype=np.float64)
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}")
    if v.ndim != 1 or v.size < n_bins:
        raise ValueError(f"{v.size} values cannot fill {n_bins} bins: lower `bins` or score more pairs")
    if np.isnan(v).any():
        raise ValueError("cannot bin NaN values")
    labels = np.empty(v.size, dtype=np.int64)
    for b, index in enumerate(np.array_split(np.argsort(v, kind="stable"), n_bins)):
        labels[index] = b
    return labels


def _pearson(x, y, axis=-1):
    """Pearson r along ``axis`` (vectorized, for scipy's bootstrap)."""
    x = x - x.mean(axis=axis, keepdims=True)
    y = y - y.mean(axis=axis, keepdims=True)
    return (x * y).sum(axis=axis) / np.sqrt((x * x).sum(axis=axis) * (y * y).sum(axis=axis))


def correlation(x, y, n_resamples: int = 1000, level: float = 0.95, seed: int = 0) -> dict:
    """Pearson r, its p-value and a percentile bootstrap interval (pairs resampled together)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.size < 3:
        raise ValueError(f"a correlation needs at least 3 pairs, got {x.size}")
    result = stats.pearsonr(x, y)
    low = high = float("nan")
    if n_resamples > 0:
        ci = stats.bootstrap((x, y), _pearson, paired=True, vectorized=True, n_resamples=n_resamples,
                             confidence_level=level, method="percentile", rng=np.random.default_rng(seed))
        low, high = float(ci.confidence_interval.low), float(ci.confidence_interval.high)
    return {"r": float(result.statistic), "p": float(result.pvalue), "ci_low": low, "ci_high": high, "n": x.size}


def assign_bins(frame: pd.DataFrame, column: str = "distance", n_bins: int = 10,
                by=("model", "dataset")) -> pd.DataFrame:
    """``frame`` with ``bin`` (0..n_bins-1): equal-size bins of ``column`` within each ``by`` group."""
    if column not in frame:
        raise ValueError(f"no column {column!r} to bin by (compute the pair distances first)")
    labels = pd.Series(0, index=frame.index, dtype="int64")
    for _, g in frame.groupby(list(by), sort=False):
        labels.loc[g.index] = equal_bins(g[column].to_numpy(), n_bins)
    return frame.assign(bin=labels)


def binned_correlations(frame: pd.DataFrame, x: str, y: str, by=("model", "dataset"), distance: str = "distance",
                        n_resamples: int = 1000, level: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Pearson r of ``x`` and ``y`` in each bin of each ``by`` group (``frame`` from
    :func:`assign_bins`), with the bin's distance range and a bootstrap interval."""
    rows = []
    for key, g in frame.groupby([*by, "bin"], sort=True):
        rows.append({**dict(zip([*by, "bin"], key)), "distance_min": g[distance].min(),
                     "distance_max": g[distance].max(), "distance_mean": g[distance].mean(),
                     **correlation(g[x], g[y], n_resamples, level, seed)})
    return pd.DataFrame(rows)


def with_pair_text(pairs: pd.DataFrame, frame: pd.DataFrame, columns=()) -> pd.DataFrame:
    """``pairs`` (one row per scored pair: dataset, paradigm, item) with the sentences of the
    dataset table ``frame`` (``good``, ``bad``; several datasets concatenated are fine) and its
    ``columns`` (e.g. human ratings) joined on (dataset, paradigm, pair_id); every scored pair
    must be found."""
    keys = ["dataset", "paradigm", "item"] if "dataset" in frame and "dataset" in pairs else ["paradigm", "item"]
    need = [k if k != "item" else "pair_id" for k in keys] + ["good", "bad", *columns]
    missing = [c for c in need if c not in frame]
    if missing:
        raise ValueError(f"the dataset table lacks columns {missing}")
    text = frame[need].rename(columns={"pair_id": "item"}).astype({k: str for k in keys if k != "item"})
    text["item"] = text["item"].astype("int64")
    if text.duplicated(keys).any():
        raise ValueError(f"the dataset table has a ({', '.join(keys)}) twice")
    out = pairs.astype({k: str for k in keys if k != "item"}).merge(text, on=keys, how="left", validate="many_to_one")
    lost = out["good"].isna().sum()
    if lost:
        raise ValueError(f"{lost} scored pairs are not in the dataset table: is it the variant that was scored?")
    return out


def embedders(embedding_model: str | dict | None, languages) -> dict[str, str]:
    """The embedding model of each language: ``embedding_model`` (one name, or a {language: name}
    dict), or the language's default (the paper's where it can be loaded, else a stand-in with a
    warning: :func:`helpers.analysis.embeddings.default_model`). 07 records it in every table."""
    languages = list(dict.fromkeys(languages))
    if isinstance(embedding_model, dict):
        lacking = [lang for lang in languages if lang not in embedding_model]
        if lacking:
            raise ValueError(f"no embedding model for languages {lacking} in {embedding_model}")
        return {lang: embedding_model[lang] for lang in languages}
    return {lang: embedding_model or embeddings.default_model(lang) for lang in languages}


def with_distances(pairs: pd.DataFrame, embedding_model: str | dict | None = None, **options) -> pd.DataFrame:
    """``pairs`` (with ``dataset``, ``good``, ``bad``, ``language``) with ``distance``, the cosine
    distance of the two sentences' embeddings, and ``embedding_model``: one model name, a
    {language: name} dict, or None for each language's default
    (:func:`helpers.analysis.embeddings.default_model`). The vectors come from each dataset's
    store file (:mod:`helpers.analysis.embedding_store`: computed once, reused by every model);
    ``options`` go to its ``embed`` (cache_dir, batch_size, device, progress)."""
    missing = [c for c in ("dataset", "good", "bad", "language") if c not in pairs]
    if missing:
        raise ValueError(f"no columns {missing}: join the scored pairs (with their dataset) with "
                         "with_pair_text(..., columns=['language'])")
    models = embedders(embedding_model, pairs["language"].astype(str))
    distance = np.empty(len(pairs))
    keys = [pairs["dataset"].astype(str), pairs["language"].astype(str)]
    for (dataset, lang), index in pairs.groupby(keys, sort=False).indices.items():
        rows = pairs.iloc[index]
        distance[index] = embedding_store.pair_distances(rows["good"], rows["bad"], models[lang], dataset, **options)
    return pairs.assign(distance=distance, embedding_model=pairs["language"].astype(str).map(models))


def levenshtein(good, bad) -> np.ndarray:
    """Character-level Levenshtein distance between each pair's two sentences (rapidfuzz)."""
    return cpdist(list(map(str, good)), list(map(str, bad)), scorer=Levenshtein.distance, workers=1).astype(np.int64)


def li_deltas(pairs: pd.DataFrame, metric: str = "lp", human=("rating_good", "rating_bad"),
              percentile: float = 75, by=("model", "dataset")) -> pd.DataFrame:
    """Human and model deltas per pair (``pairs`` from :func:`with_pair_text` with the human
    rating columns), the Levenshtein distance, ``rated`` (both ratings present) and ``kept``:
    rated, and below the ``percentile``-th percentile of the distance over the rated pairs of
    its group (``levenshtein_cutoff``)."""
    good_h, bad_h = human
    for c in (f"{metric}_good", f"{metric}_bad", good_h, bad_h, "good", "bad"):
        if c not in pairs:
            raise ValueError(f"no column {c!r}: join the LI pairs with their ratings (with_pair_text) first")
    out = pairs.assign(human_delta=pairs[good_h].astype(float) - pairs[bad_h].astype(float),
                       model_delta=pairs[f"{metric}_good"] - pairs[f"{metric}_bad"],
                       levenshtein=levenshtein(pairs["good"], pairs["bad"]))
    out["rated"] = out["human_delta"].notna()
    if not out["rated"].any():
        raise ValueError(f"no pair has both ratings {good_h!r} and {bad_h!r}")
    cutoff = (out[out["rated"]].groupby(list(by), sort=False)["levenshtein"]
              .agg(lambda d: np.percentile(d, percentile)).rename("levenshtein_cutoff"))
    out = out.join(cutoff, on=list(by))
    return out.assign(kept=out["rated"] & (out["levenshtein"] < out["levenshtein_cutoff"]))
