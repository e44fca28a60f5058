"""Introspection (Song, Hu & Mahowald 2025, "Language Models Fail to Introspect About Their
Knowledge of Language", arXiv 2503.07513): does a model's metalinguistic answer predict its own
string probabilities better than another model's?

Per item and model, as the paper (and its released analysis.R): the **Direct** measure is the
string-probability differential of the pair, sum LP(acceptable) - sum LP(unacceptable) (Ide et
al.'s ``lp``; Hu & Levy's ``direct`` prompt); the **Meta** measure is the prompted answer's
differential: for Yes/No judgments (Ide et al.'s ``yesno``, Hu & Levy's sentence judgment) the
log-odds of Yes for the acceptable sentence minus that for the unacceptable one, the paper's
individual-judgment measure (which averages the two ways of labelling the answers; here one
Yes/No question); for choices between the two options (Hu & Levy's sentence and word
comparison, ``ab_logit``) the log-prob of the acceptable option's answer minus the other's
(Hu & Levy's comparisons average both orders, as the paper; ``ab_logit`` has one seeded order);
for word prediction, the log-prob of the true word in the prompt (Direct: without it).

:func:`matrix`: for every (Meta model A, Direct model B), Pearson r over items of Meta_A with
Direct_B, per prompt and averaged over prompts (the paper's ``mean_prompt_corr``), with
percentile bootstrap CIs over items, beside the Direct-Direct similarity r(Direct_A, Direct_B).
:func:`disagreeing` is the paper's item filter: a pair item is kept where the share of the models'
Direct answers, and of the (model, prompt) Meta answers, that prefer the unacceptable option lies
between 0.05 and 0.95 (the models disagree on it; word prediction, as the paper's experiment 2,
is not filtered).
:func:`self_vs_others`: per Meta model, r with its own Direct minus the best r with another
model's Direct, bootstrapped over items ("yes" when the CI is above 0). The paper's regression,
which controls for how similar the models are, is :mod:`.introspection_comparison`.

    items = item_measures(load_files(files))     # yesno / ab_logit with lp; hl_* with direct
    table = matrix(disagreeing(items, 0.05))
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import stats

MEAN = "mean"  # the prompt label of the mean over prompts (the paper's measure)
DIRECT_METHOD = "lp"  # the Direct measure of Ide et al.'s prompting methods
META_METHODS = {"yesno": ("yesno", "yesno_released"), "ab_logit": ("ab_logit", "ab")}  # measure -> its files
LOG_ODDS = {"yesno", "hl_sentence_judgment"}  # Yes/No judgments: the log-odds of Yes
HU_LEVY_DIRECT = "direct"


def _key(g: pd.DataFrame) -> pd.Series:
    if "item_id" in g and g["item_id"].notna().all():
        return g["item_id"].astype(int).astype(str)
    return g["paradigm"].astype(str) + ":" + g["pair_id"].astype(str)


def _differential(g: pd.DataFrame, measure: str) -> pd.Series:
    if "score" in g:
        return g["score"].astype(float)
    if measure in LOG_ODDS and "lp_yes_good" in g:
        return (g["lp_yes_good"] - g["lp_no_good"]) - (g["lp_yes_bad"] - g["lp_no_bad"])
    if "lp_a" in g and "good_slot" in g:  # A/B (also an "ab" file, whose scores are outlines' answer)
        good_is_a = g["good_slot"] == "A"
        return g["lp_a"].where(good_is_a, g["lp_b"]) - g["lp_b"].where(good_is_a, g["lp_a"])
    return g["score_good"].astype(float) - g["score_bad"].astype(float)


def _frame(g: pd.DataFrame, measure: str) -> pd.DataFrame:
    """prompt, item, value: the differential of each prompt's rows (each with its own columns)."""
    parts = []
    for prompt, h in g.groupby("template", sort=False):
        h = h.dropna(axis=1, how="all")
        parts.append(pd.DataFrame({"prompt": str(prompt), "item": _key(h).to_numpy(),
                                   "value": _differential(h, measure).to_numpy()}))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["prompt", "item", "value"])


def _join(direct: pd.DataFrame, meta: pd.DataFrame, measure, stimuli, model, paired) -> pd.DataFrame:
    d = direct.drop_duplicates("item").set_index("item")["value"]
    return pd.DataFrame({"measure": measure, "stimuli": stimuli, "model": model, "prompt": meta["prompt"].to_numpy(),
                         "item": meta["item"].to_numpy(), "direct": d.reindex(meta["item"]).to_numpy(),
                         "meta": meta["value"].to_numpy(), "paired": paired})


def item_measures(scores: pd.DataFrame) -> pd.DataFrame:
    """One row per (measure, stimuli, model, prompt, item): the Direct and Meta differentials
    (``paired``: a differential of two options; False for word prediction). ``scores``: stored
    score files: Ide et al.'s prompting methods with ``lp`` of the same pairs, and/or Hu &
    Levy's tasks with their ``direct`` prompt."""
    frames = []
    for (model, dataset), g in scores.groupby(["model", "dataset"], sort=False):
        methods = set(g["method"])
        for measure, names in META_METHODS.items():
            name = next((n for n in names if n in methods), None)
            if name is None:
                continue
            if DIRECT_METHOD not in methods:
                raise ValueError(f"{name} of {model} on {dataset} has no Direct measure: score the same pairs with "
                                 f"'{DIRECT_METHOD}' (02_readout, or 03 with a list of models)")
            direct = _frame(g[g["method"] == DIRECT_METHOD], measure)
            frames.append(_join(direct, _frame(g[g["method"] == name], measure), measure, dataset, model, True))
        for method, h in g[g["method"].astype(str).str.startswith("hl_")].groupby("method", sort=False):
            f = _frame(h, method)
            if HU_LEVY_DIRECT not in set(f["prompt"]):
                raise ValueError(f"{method} on {dataset} for {model}: the Direct scores are missing; run prompt "
                                 f"'{HU_LEVY_DIRECT}' too")
            frames.append(_join(f[f["prompt"] == HU_LEVY_DIRECT], f[f["prompt"] != HU_LEVY_DIRECT], method, dataset,
                                model, method != "hl_word_prediction"))
    if not frames:
        raise ValueError("no metalinguistic scores with a Direct measure: run 03_prompting (Yes/No with 'lp', or Hu & "
                         "Levy's tasks) for the models first")
    return pd.concat(frames, ignore_index=True).dropna(subset=["direct", "meta"])


def disagreeing(items: pd.DataFrame, share: float = 0.05) -> pd.DataFrame:
    """The rows of the pair items on which at least ``share`` of the models' Direct answers and
    of the (model, prompt) Meta answers, and at most 1 - ``share``, prefer the unacceptable
    option (the paper's filter, 0.05; 0 keeps every item), and every word-prediction row."""
    if not 0 <= share < 0.5:
        raise ValueError(f"share must be in [0, 0.5), got {share!r} (0.05 is the paper's, 0 keeps every item)")
    keys = ["measure", "stimuli", "item"]
    direct = items.drop_duplicates(["measure", "stimuli", "model", "item"]).groupby(keys)["direct"].agg(
        lambda d: (d < 0).mean())
    meta = items.groupby(keys)["meta"].agg(lambda m: (m < 0).mean())
    ok = ((direct >= share) & (direct <= 1 - share) & (meta >= share) & (meta <= 1 - share)).rename("ok")
    flags = items.join(ok, on=keys)["ok"].fillna(False).to_numpy(bool)
    return items[flags | ~items["paired"].to_numpy(bool)].reset_index(drop=True)


def _pearson(x, y, axis=-1):
    x = x - x.mean(axis=axis, keepdims=True)
    y = y - y.mean(axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (x * y).sum(axis=axis) / np.sqrt((x * x).sum(axis=axis) * (y * y).sum(axis=axis))


def _mean_r(*arrays, axis=-1):
    """Mean over prompts of r(Meta of prompt k, Direct): ``arrays`` are the prompts' Meta, then Direct."""
    *metas, direct = arrays
    if len(metas) == 1:
        return _pearson(metas[0], direct, axis)
    rs = np.stack([_pearson(m, direct, axis) for m in metas])
    with warnings.catch_warnings():  # a prompt whose answers never vary has no r: the mean of the others
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(rs, axis=0)


def _advantage(k: int):
    def statistic(*arrays, axis=-1):
        metas, own, others = arrays[:k], arrays[k], arrays[k + 1:]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            best = np.nanmax(np.stack([_mean_r(*metas, o, axis=axis) for o in others]), axis=0)
        return _mean_r(*metas, own, axis=axis) - best
    return statistic


def _bootstrap(data, statistic, n_resamples: int, level: float, seed: int) -> tuple[float, float]:
    if n_resamples <= 0 or len(data[0]) < 3 or not np.isfinite(statistic(*data)):
        return float("nan"), float("nan")
    ci = stats.bootstrap(data, statistic, paired=True, vectorized=True, n_resamples=n_resamples,
                         confidence_level=level, method="percentile", rng=np.random.default_rng(seed))
    return float(ci.confidence_interval.low), float(ci.confidence_interval.high)


def _tables(g: pd.DataFrame):
    """Direct (items x models), Meta per prompt (items x models) on the items and prompts every
    model has, and the models in order."""
    models = list(dict.fromkeys(g["model"]))
    prompts = [p for p in dict.fromkeys(g["prompt"]) if g.loc[g["prompt"] == p, "model"].nunique() == len(models)]
    meta = {p: g[g["prompt"] == p].pivot_table(index="item", columns="model", values="meta", aggfunc="first")
            for p in prompts}
    direct = g.pivot_table(index="item", columns="model", values="direct", aggfunc="first")
    items = direct.dropna().index
    for m in meta.values():
        items = items.intersection(m.dropna().index)
    items = sorted(items)
    return direct.loc[items, models], {p: m.loc[items, models] for p, m in meta.items()}, models


def _groups(items: pd.DataFrame):
    for (measure, stimuli), g in items.groupby(["measure", "stimuli"], sort=False):
        direct, meta, models = _tables(g)
        if len(models) < 2:
            continue
        if len(direct) < 3:
            warnings.warn(f"{measure} on {stimuli} left out: {len(direct)} items left that every model has; a "
                          "correlation needs at least 3 (score more items, or lower the filter's share)", stacklevel=3)
            continue
        yield measure, stimuli, direct, meta, models


def matrix(items: pd.DataFrame, n_resamples: int = 1000, level: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Per (measure, stimuli, Meta model, Direct model, prompt): Pearson r of the Meta model's
    answers with the Direct model's string probabilities over the items every model has, with a
    percentile bootstrap CI over items (seeded); prompt :data:`MEAN` is the mean over prompts
    (the paper's). ``r_direct`` is r(Direct of the Meta model, Direct of the other): 1 on the
    diagonal. A group with one model is left out, and one with fewer than 3 items that every
    model has, with a warning."""
    rows = []
    for measure, stimuli, direct, meta, models in _groups(items):
        prompts = list(meta)
        for a in models:
            for b in models:
                d = direct[b].to_numpy(float)
                similar = 1.0 if a == b else float(_pearson(direct[a].to_numpy(float), d))
                for prompt in [*prompts, MEAN]:
                    chosen = prompts if prompt == MEAN else [prompt]
                    data = tuple(meta[p][a].to_numpy(float) for p in chosen) + (d,)
                    low, high = _bootstrap(data, _mean_r, n_resamples, level, seed)
                    rows.append({"measure": measure, "stimuli": stimuli, "meta_model": a, "direct_model": b,
                                 "prompt": prompt, "r": float(_mean_r(*data)), "ci_low": low, "ci_high": high,
                                 "r_direct": similar, "self": a == b, "items": len(d), "prompts": len(chosen)})
    if not rows:
        raise ValueError("no measure has scores of two or more models on 3 or more items: introspection compares "
                         "models")
    return pd.DataFrame(rows)


def wide(table: pd.DataFrame, value: str = "r", prompt: str = MEAN) -> pd.DataFrame:
    """The matrix of :func:`matrix` (rows: measure, stimuli, Meta model; columns: Direct
    models) of ``value`` (``r``, ``r_direct``, ``ci_low``...) at ``prompt``."""
    t = table[table["prompt"] == prompt]
    models = list(dict.fromkeys(t["direct_model"]))
    return t.pivot_table(index=["measure", "stimuli", "meta_model"], columns="direct_model", values=value,
                         sort=False)[models]


def self_vs_others(items: pd.DataFrame, n_resamples: int = 1000, level: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Per (measure, stimuli, Meta model): r (mean over prompts) with its own Direct, the other
    model whose Direct it predicts best and that r, the advantage (own minus best other) with a
    percentile bootstrap CI over items, and ``introspection``: "yes" when the CI lies above 0
    (its answers predict its own probabilities better than any other model's), else "no"."""
    rows = []
    for measure, stimuli, direct, meta, models in _groups(items):
        for a in models:
            others = [b for b in models if b != a]
            metas = tuple(meta[p][a].to_numpy(float) for p in meta)
            own = float(_mean_r(*metas, direct[a].to_numpy(float)))
            r_others = {b: float(_mean_r(*metas, direct[b].to_numpy(float))) for b in others}
            best = max(others, key=lambda b: -np.inf if np.isnan(r_others[b]) else r_others[b])
            data = metas + (direct[a].to_numpy(float),) + tuple(direct[b].to_numpy(float) for b in others)
            low, high = _bootstrap(data, _advantage(len(metas)), n_resamples, level, seed)
            rows.append({"measure": measure, "stimuli": stimuli, "meta_model": a, "r_self": own, "best_other": best,
                         "r_best_other": r_others[best], "advantage": own - r_others[best], "ci_low": low,
                         "ci_high": high, "introspection": "yes" if low > 0 else "no", "items": len(direct)})
    if not rows:
        raise ValueError("no measure has scores of two or more models on 3 or more items: introspection compares "
                         "models")
    return pd.DataFrame(rows)
