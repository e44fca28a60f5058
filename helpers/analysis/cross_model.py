"""Cross-model tables: what Ide et al. (2024) and Hu & Levy (2023) report over their sets of
models, computed from the stored scores of any list of models.

Ide et al.: a table averaged over models (:func:`mean_over_models`, e.g. Table 4's
point-biserial r with :func:`table4_mean`) and the phenomena where one method beats another
by at least a margin (1 point) for at least k models, as the paper marks them
(:func:`phenomenon_wins`).

Hu & Levy: each prompt type's task measure per model with a bootstrap 95% CI over items and
its mean over models with a bootstrap 95% CI over models (:func:`performance`,
:func:`across_models`; Figure 2 pools the stimulus sets of a task, Figures 4-5 keep them
apart), the internal consistency of each prompt with Direct as a matrix (Figure 3 the mean
over models, Figure 6 per model: :func:`consistency_matrix`), and the per-item Direct and
prompt differentials behind the scatter plots (Figures 7-10: :func:`direct_vs_meta`).
"""
from __future__ import annotations

import pandas as pd

from ..store import safe_name
from ..settings.lists import parse_list
from .accuracy import EXPECTED, TIES_RIGHT, by_phenomenon, of_methods
from .hu_levy import DIRECT, item_measure, summarize, with_ties
from .significance import bootstrap_ci

# What each Hu & Levy task reports (the mean over items of :func:`item_values`).
MEASURES = {"word_prediction": "mean log-prob of the true word",
            "word_comparison": "accuracy",
            "sentence_judgment": "balanced accuracy (Direct: pair accuracy)",
            "sentence_comparison": "accuracy"}
ALL_MODELS = "all models (mean)"
TIE_COLUMNS = ["value", "tie_share", EXPECTED, TIES_RIGHT]  # a measure and its ties (hu_levy.with_ties)


def models_tag(models) -> str:
    """A file-name tag for a list of models: the name of one, "a+b+c" for several."""
    names = [safe_name(m) for m in parse_list(models, what="model")]
    return names[0] if len(names) == 1 else "+".join(names)


def models_of(table: pd.DataFrame) -> list[str]:
    """The models of a table, in order; an error when it holds none."""
    if table.empty or "model" not in table:
        raise ValueError("no scores of any model: run the scoring notebooks for the models first")
    return list(dict.fromkeys(table["model"]))


# ------------------------------------------------------------------ Ide et al.
def mean_over_models(table: pd.DataFrame, keys: list[str], values: list[str]) -> pd.DataFrame:
    """Per ``keys``: the mean and sample sd over models of each ``values`` column, and the
    number of models averaged."""
    missing = [c for c in ["model", *keys, *values] if c not in table]
    if missing:
        raise KeyError(f"the table lacks columns {missing}")
    g = table.groupby(keys, sort=False)
    out = g["model"].nunique().rename("models").to_frame()
    for v in values:
        out[f"{v}_mean"] = g[v].mean()
        out[f"{v}_sd"] = g[v].std(ddof=1)
    return out.reset_index()


def table4_mean(table4: pd.DataFrame) -> pd.DataFrame:
    """Ide et al. Table 4 averaged over models: per method, the mean (and sd) over models of the
    point-biserial r between success and length difference and of the accuracy (ties wrong), the
    expected accuracy (ties half) and the accuracy with every tie right, each model at its best
    template (the rows of :func:`helpers.analysis.length_bias.table4`)."""
    return mean_over_models(table4, ["method"], ["r", "accuracy", EXPECTED, TIES_RIGHT])


def ensembles_mean(ensemble: pd.DataFrame) -> pd.DataFrame:
    """Table 5 averaged over models: per setting, the mean (and sd) over models of the accuracy
    (ties wrong), the expected accuracy (ties half) and the accuracy with every tie right (the
    rows of :func:`helpers.analysis.ensembles.ensembles_by_model`)."""
    return mean_over_models(ensemble, ["setting"], ["accuracy", EXPECTED, TIES_RIGHT])


def phenomenon_differences(scores: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """Per (phenomenon, model): the accuracy of method ``a`` minus that of ``b``, each at its
    best template."""
    if a == b:
        raise ValueError(f"compare two different methods, got {a!r} twice")
    p = by_phenomenon(of_methods(scores, [a, b]))
    have = set(p["method"])
    if not {a, b} <= have:
        raise ValueError(f"no scores of {sorted({a, b} - have)}; stored methods: {sorted(set(scores['method']))}")
    wide = p.pivot_table(index=["phenomenon", "model"], columns="method", values="accuracy", sort=False)
    return (wide[a] - wide[b]).dropna().rename("difference").reset_index()


def phenomenon_wins(scores: pd.DataFrame, a: str, b: str, margin: float = 0.01, k: int | None = None) -> pd.DataFrame:
    """Per phenomenon: for how many models method ``a`` beats method ``b`` by at least
    ``margin`` (accuracy; 0.01 is 1 point) and the reverse, each method at its best template,
    and the mark the paper puts on it: ``a`` (or ``b``) when it wins for at least ``k`` models
    (default: all models), "" otherwise."""
    diffs = phenomenon_differences(scores, a, b)
    n_models = len(models_of(diffs))
    k = n_models if k is None else int(k)
    if not 1 <= k <= n_models:
        raise ValueError(f"k must be between 1 and the number of models ({n_models}), got {k}")
    eps = 1e-12  # a difference of exactly the margin counts
    rows = []
    for phenomenon, d in diffs.groupby("phenomenon", sort=False)["difference"]:
        a_wins, b_wins = int((d >= margin - eps).sum()), int((d <= -margin + eps).sum())
        mark = a if a_wins >= k else (b if b_wins >= k else "")
        if a_wins >= k and b_wins >= k:
            mark = "both"
        rows.append({"phenomenon": phenomenon, "models": len(d), f"{a}_wins": a_wins, f"{b}_wins": b_wins,
                     "mean_difference": float(d.mean()), "marked": mark})
    out = pd.DataFrame(rows)
    out.attrs.update(a=a, b=b, margin=margin, k=k)
    return out


def side_by_side(table: pd.DataFrame, value: str, index: list[str]) -> pd.DataFrame:
    """``value`` of every model in a column of its own (models in the table's order), one row
    per ``index`` (in the table's order); an error when a model has two rows of one ``index``."""
    missing = [c for c in ["model", value, *index] if c not in table]
    if missing:
        raise KeyError(f"the table lacks columns {missing}")
    if table.duplicated(["model", *index]).any():
        raise ValueError(f"a model has two rows of the same {index}: add the column that tells them apart")
    wide = table.pivot(index=index, columns="model", values=value)
    rows = table[index].drop_duplicates()
    wide = wide.reindex(pd.MultiIndex.from_frame(rows) if len(index) > 1 else pd.Index(rows[index[0]]))
    return wide[models_of(table)].rename_axis(columns=None)


# ------------------------------------------------------------------ Hu & Levy
def item_values(scores: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, stimuli, task, prompt, item) of stored Hu & Levy scores: ``value``,
    whose mean over items is the task's measure (:data:`MEASURES`; a tie an error), and ``tie``,
    the share of the item's decisions that tied (:func:`helpers.analysis.hu_levy.item_measure`)."""
    frames = []
    for (model, dataset, method, prompt), g in scores.groupby(["model", "dataset", "method", "template"],
                                                               sort=False):
        g = g.dropna(axis=1, how="all")
        task = str(method).removeprefix("hl_")
        if task not in MEASURES:
            raise ValueError(f"{method} is not a Hu & Levy task ({', '.join('hl_' + t for t in MEASURES)})")
        item = g["item_id"].astype(int) if "item_id" in g else g["paradigm"].astype(str) + ":" + g["pair_id"].astype(str)
        value, tie = item_measure(g, task, prompt)
        frames.append(pd.DataFrame({"model": model, "stimuli": dataset, "task": task, "prompt": prompt,
                                    "item": item.astype(str).to_numpy(), "value": value.to_numpy(),
                                    "tie": tie.to_numpy()}))
    if not frames:
        raise ValueError("no Hu & Levy scores: run 03_prompting's Part 2 for the models first")
    return pd.concat(frames, ignore_index=True)


def performance(scores: pd.DataFrame, pooled: bool = True, n_resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Per (model, task, prompt) — and stimuli unless ``pooled`` — the task's measure (ties
    wrong) with its tie share, expected value (ties half) and value with every tie right (NaN for
    word prediction), a percentile bootstrap 95% CI over items (seeded), the items and what the
    measure is.
    ``pooled`` takes the stimulus sets of a task together (Hu & Levy Figure 2); apart, they
    are Figures 4-5."""
    values = item_values(scores)
    keys = ["model", "task", "prompt"] if pooled else ["model", "stimuli", "task", "prompt"]
    rows = []
    for key, g in values.groupby(keys, sort=False):
        lo, hi = bootstrap_ci(g["value"], n_resamples, seed=seed)
        rows.append({**with_ties(dict(zip(keys, key)), "value", float(g["value"].mean()), float(g["tie"].mean())),
                     "ci_low": lo, "ci_high": hi, "items": len(g), "measure": MEASURES[g["task"].iloc[0]]})
    return pd.DataFrame(rows)


def across_models(perf: pd.DataFrame, n_resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """:func:`performance` rows averaged over models (the value and its tie columns), with a
    percentile bootstrap 95% CI over the models (one model: its value twice); ``model`` reads
    :data:`ALL_MODELS`."""
    keys = [c for c in ("stimuli", "task", "prompt") if c in perf]
    rows = []
    for key, g in perf.groupby(keys, sort=False):
        lo, hi = bootstrap_ci(g["value"], n_resamples, seed=seed)
        rows.append({"model": ALL_MODELS, **dict(zip(keys, key)), **g[TIE_COLUMNS].mean().to_dict(),
                     "ci_low": lo, "ci_high": hi, "models": g["model"].nunique(), "measure": g["measure"].iloc[0]})
    return pd.DataFrame(rows)


def figure2_table(scores: pd.DataFrame, pooled: bool = True, n_resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Every model's rows of :func:`performance` followed by their mean over models."""
    perf = performance(scores, pooled, n_resamples, seed)
    return pd.concat([perf, across_models(perf, n_resamples, seed)], ignore_index=True)


def consistency(scores: pd.DataFrame) -> pd.DataFrame:
    """Per (model, stimuli, task, metalinguistic prompt): the Pearson r of its differential
    with the Direct one over items (:func:`helpers.analysis.hu_levy.summarize`)."""
    s = summarize(scores)
    return s.loc[s["prompt"] != DIRECT, ["model", "stimuli", "task", "prompt", "items", "consistency_r"]]


def consistency_matrix(table: pd.DataFrame, by_model: bool = False) -> pd.DataFrame:
    """Rows "task · stimuli" (with the model first when ``by_model``), columns the prompts:
    the consistency r (:func:`consistency`), averaged over models unless ``by_model``
    (Hu & Levy Figure 3 is the mean, Figure 6 one panel per model)."""
    t = table.assign(row=table["task"] + " · " + table["stimuli"])
    index = ["model", "row"] if by_model else ["row"]
    prompts = list(dict.fromkeys(t["prompt"]))
    return t.pivot_table(index=index, columns="prompt", values="consistency_r", aggfunc="mean", sort=False)[prompts]


def direct_vs_meta(scores: pd.DataFrame) -> pd.DataFrame:
    """Per item: the Direct differential beside each metalinguistic prompt's (word
    prediction: log p of the true word; pairs: score of the acceptable minus the
    unacceptable option), the points of Hu & Levy's scatter plots (Figures 7-10)."""
    frames = []
    for (model, dataset, method), g in scores.groupby(["model", "dataset", "method"], sort=False):
        g = g.dropna(axis=1, how="all")
        key = g["item_id"].astype(int).astype(str) if "item_id" in g else (g["paradigm"].astype(str) + ":"
                                                                + g["pair_id"].astype(str))
        diff = g["score"] if "score" in g else g["score_good"] - g["score_bad"]
        frame = pd.DataFrame({"prompt": g["template"].to_numpy(), "item": key.to_numpy(), "diff": diff.to_numpy()})
        if DIRECT not in set(frame["prompt"]):
            raise ValueError(f"{method} on {dataset} for {model}: the Direct scores are missing; run prompt 'direct'")
        direct = frame[frame["prompt"] == DIRECT].set_index("item")["diff"]
        meta = frame[frame["prompt"] != DIRECT]
        frames.append(pd.DataFrame({"model": model, "stimuli": dataset, "task": str(method).removeprefix("hl_"),
                                    "prompt": meta["prompt"].to_numpy(), "item": meta["item"].to_numpy(),
                                    "direct": direct.reindex(meta["item"]).to_numpy(),
                                    "meta": meta["diff"].to_numpy()}))
    out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return out.dropna(subset=["direct", "meta"]) if not out.empty else out


def scatter_groups(points: pd.DataFrame) -> list[tuple[str, str, pd.DataFrame]]:
    """(task, stimuli, rows) of :func:`direct_vs_meta`, one scatter figure each."""
    return [(task, stimuli, g) for (task, stimuli), g in points.groupby(["task", "stimuli"], sort=False)]
