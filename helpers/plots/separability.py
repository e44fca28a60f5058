"""Figures of the separability notebook (Hu et al. 2025): each draws and returns a figure from
a table of :mod:`helpers.analysis.separability`, :mod:`~helpers.analysis.pair_correlation`,
:mod:`~helpers.analysis.isolated` or :mod:`~helpers.analysis.teaching` (writing it is
the notebook report's job). Figures over datasets draw one model: filter first.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import seaborn as sns

from ..analysis.accuracy import TIES_RIGHT
from .style import CHANCE, model_panels, plt

GRAMMATICAL = {1: "grammatical", 0: "ungrammatical"}
PALETTE = {"grammatical": "tab:blue", "ungrammatical": "tab:red"}


def _one_model(table: pd.DataFrame) -> str:
    models = list(dict.fromkeys(table["model"]))
    if len(models) != 1:
        raise ValueError(f"this figure draws one model; the table has {models}: filter it to one")
    return models[0]


def _grid(n: int, width: float = 4.0, height: float = 3.4, cols: int = 4):
    cols = min(cols, n)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    return fig, axes.ravel()[:n]


def _bars(ax, table: pd.DataFrame, x: str, hue: str, y: str, low: str | None = None, high: str | None = None):
    """Grouped bars of ``y`` by ``x`` and ``hue``, with [low, high] error bars when given."""
    xs, hues = list(dict.fromkeys(table[x])), list(dict.fromkeys(table[hue]))
    width = 0.8 / len(hues)
    for k, h in enumerate(hues):
        rows = table[table[hue] == h].set_index(x).reindex(xs)
        pos = np.arange(len(xs)) - 0.4 + width * (k + 0.5)
        err = None
        if low and high:
            err = np.vstack([rows[y] - rows[low], rows[high] - rows[y]])
        ax.bar(pos, rows[y], width, yerr=err, capsize=2, label=str(h))
    ax.set_xticks(np.arange(len(xs)), xs, rotation=30, ha="right")


def teaching_panel(frame: pd.DataFrame, title: str = "Probability mixes meaning and grammar", value: str = "lp"):
    """The eight {The, A} {moon, moons} {emerge, emerges} strings by ``value``, grammatical ones
    in blue (Hu et al. Figure 1b)."""
    rows = frame.sort_values(value)
    fig, ax = plt.subplots(figsize=(6, 3.8))
    colors = [PALETTE[GRAMMATICAL[g]] for g in rows["grammatical"]]
    ax.barh(rows["sentence"], rows[value], color=colors)
    for label, color in PALETTE.items():
        ax.barh([], [], color=color, label=label)
    ax.set_xlabel({"lp": "log-probability (LP)", "meanlp": "mean token log-probability"}.get(value, value))
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return fig


def pair_scatter(pairs: pd.DataFrame, metric: str = "lp", title: str = "Prediction 1: within-pair correlation"):
    """LP(grammatical) against LP(ungrammatical) per pair with x = y, one panel per dataset,
    coloured by cosine-distance bin when ``pairs`` has ``bin``."""
    model = _one_model(pairs)
    datasets = list(dict.fromkeys(pairs["dataset"]))
    fig, axes = _grid(len(datasets))
    for ax, dataset in zip(axes, datasets):
        rows = pairs[pairs["dataset"] == dataset]
        x, y = rows[f"{metric}_good"], rows[f"{metric}_bad"]
        hue = rows["bin"] + 1 if "bin" in rows else None
        sns.scatterplot(x=x, y=y, hue=hue, palette="viridis" if hue is not None else None, s=6, alpha=0.5,
                        linewidth=0, legend=dataset == datasets[0] and hue is not None, ax=ax)
        lo, hi = min(x.min(), y.min()), max(x.max(), y.max())
        ax.plot([lo, hi], [lo, hi], **CHANCE)
        ax.set_title(f"{dataset} (r = {np.corrcoef(x, y)[0, 1]:.2f})")
        ax.set_xlabel(f"{metric} (grammatical)")
        ax.set_ylabel(f"{metric} (ungrammatical)")
        if hue is not None and dataset == datasets[0]:
            ax.legend(title="distance bin", fontsize=7, title_fontsize=7, markerscale=2)
    fig.suptitle(f"{title} — {model}")
    fig.tight_layout()
    return fig


def binned_r(table: pd.DataFrame, title: str = "Pearson r by cosine-distance bin"):
    """r per distance bin (1 = most similar pairs) with bootstrap intervals, a line per dataset."""
    fig, panels = model_panels(table, title, 6, 4)
    for ax, model, rows in panels:
        for dataset, g in rows.groupby("dataset", sort=False):
            ax.errorbar(g["bin"] + 1, g["r"], yerr=[g["r"] - g["ci_low"], g["ci_high"] - g["r"]], marker="o",
                        capsize=2, label=dataset)
        ax.axhline(0, **CHANCE)
        ax.set_xlabel("cosine-distance bin (1 = closest meaning)")
        ax.set_ylabel("Pearson r")
        ax.set_title(model)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def li_scatter(deltas: pd.DataFrame, title: str = "Prediction 2: model vs human deltas (LI)"):
    """Model delta against human delta per LI pair; pairs at or above the Levenshtein cutoff in grey."""
    model = _one_model(deltas)
    kept = deltas[deltas["kept"]]
    fig, ax = plt.subplots(figsize=(5.5, 4.5))
    dropped = deltas[~deltas["kept"]]
    ax.scatter(dropped["human_delta"], dropped["model_delta"], s=8, color="lightgrey", label="left out (Levenshtein ≥ cutoff or unrated)")
    sns.regplot(data=kept, x="human_delta", y="model_delta", scatter_kws={"s": 8, "alpha": 0.6},
                label="kept", ax=ax)
    r = np.corrcoef(kept["human_delta"], kept["model_delta"])[0, 1]
    ax.axhline(0, **CHANCE)
    ax.axvline(0, **CHANCE)
    ax.set_xlabel("human delta (mean z good - mean z bad)")
    ax.set_ylabel("model delta (LP good - LP bad)")
    ax.set_title(f"{title}\n{model}: r = {r:.2f} over {len(kept)} pairs")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def score_distributions(long: pd.DataFrame, method: str = "lp", auc: pd.DataFrame | None = None,
                        title: str | None = None):
    """Scores of grammatical and ungrammatical sentences pooled, one panel per dataset, the AUC
    in each panel title when ``auc`` (from ``auc_table``) is given (Figures 5-8)."""
    rows = long[long["method"] == method]
    if rows.empty:
        raise ValueError(f"no scores of {method!r} in this frame")
    model = _one_model(rows)
    datasets = list(dict.fromkeys(rows["dataset"]))
    fig, axes = _grid(len(datasets))
    for ax, dataset in zip(axes, datasets):
        g = rows[rows["dataset"] == dataset].assign(kind=lambda d: d["grammatical"].map(GRAMMATICAL))
        sns.histplot(data=g, x="score", hue="kind", palette=PALETTE, stat="density", common_norm=False,
                     element="step", bins=40, ax=ax, legend=dataset == datasets[0])
        label = dataset
        if auc is not None:
            hit = auc[(auc["model"] == model) & (auc["dataset"] == dataset) & (auc["method"] == method)]
            if len(hit):
                label += f" (AUC = {hit['auc'].iloc[0]:.2f})"
        ax.set_title(label)
        ax.set_xlabel(method)
    fig.suptitle(title or f"{method}: grammatical vs ungrammatical sentences, unpaired — {model}")
    fig.tight_layout()
    return fig


def auc_bars(auc: pd.DataFrame, title: str = "Prediction 3: AUC of pooled sentences"):
    """AUC per dataset (x) and method (colour) with bootstrap intervals; chance at 0.5."""
    fig, panels = model_panels(auc, title, 8, 4)
    for ax, model, rows in panels:
        _bars(ax, rows, "dataset", "method", "auc", "ci_low", "ci_high")
        ax.axhline(0.5, **CHANCE)
        ax.set_ylim(0, 1)
        ax.set_ylabel("AUC")
        ax.set_title(model)
        ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


def roc_curves(roc: pd.DataFrame, title: str = "ROC curves, grammatical vs ungrammatical"):
    """ROC curves (from ``roc_table``), one panel per dataset, a line per method."""
    model = _one_model(roc)
    datasets = list(dict.fromkeys(roc["dataset"]))
    fig, axes = _grid(len(datasets), 3.6, 3.4)
    for ax, dataset in zip(axes, datasets):
        for (method, template), g in roc[roc["dataset"] == dataset].groupby(["method", "template"], sort=False):
            ax.plot(g["fpr"], g["tpr"], label=method if template == "none" else f"{method} t{template}")
        ax.plot([0, 1], [0, 1], **CHANCE)
        ax.set_title(dataset)
        ax.set_xlabel("false positive rate")
        ax.set_ylabel("true positive rate")
    axes[0].legend(fontsize=7)
    fig.suptitle(f"{title} — {model}")
    fig.tight_layout()
    return fig


def _tie_bars(accuracy: pd.DataFrame) -> tuple:
    """The error bar of a pair accuracy (ties wrong): up to the accuracy with every tie right,
    where the table has it (:func:`helpers.analysis.separability.pair_accuracy`); and its label."""
    if TIES_RIGHT in accuracy:
        return ("accuracy", TIES_RIGHT), "pair accuracy (ties wrong; bar: up to ties right)"
    return (None, None), "pair accuracy"


def pair_accuracy_bars(accuracy: pd.DataFrame, title: str = "Minimal-pair accuracy (Figure 9)"):
    """Minimal-pair accuracy per dataset and metric (a tie wrong, a bar up to every tie right);
    chance at 0.5."""
    fig, panels = model_panels(accuracy, title, 8, 4)
    ends, label = _tie_bars(accuracy)
    for ax, model, rows in panels:
        _bars(ax, rows, "dataset", "method", "accuracy", *ends)
        ax.axhline(0.5, **CHANCE)
        ax.set_ylim(0, 1)
        ax.set_ylabel(label)
        ax.set_title(model)
        ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


def accuracy_beside_auc(accuracy: pd.DataFrame, auc: pd.DataFrame,
                        title: str = "High pair accuracy, low AUC"):
    """Figure 9 (pair accuracy, a tie wrong, a bar up to every tie right) beside the AUC of the
    same metrics and datasets, one screen."""
    model = _one_model(accuracy)
    auc = auc[(auc["model"] == model) & auc["dataset"].isin(accuracy["dataset"])
              & auc["method"].isin(accuracy["method"])]
    fig, (left, right) = plt.subplots(1, 2, figsize=(14, 4.2), sharey=True)
    ends, label = _tie_bars(accuracy)
    _bars(left, accuracy, "dataset", "method", "accuracy", *ends)
    _bars(right, auc, "dataset", "method", "auc", "ci_low", "ci_high")
    for ax, label in ((left, f"minimal-{label}"), (right, "AUC, sentences unpaired")):
        ax.axhline(0.5, **CHANCE)
        ax.set_ylim(0, 1)
        ax.set_title(label)
    left.legend(fontsize=7, ncol=2)
    fig.suptitle(f"{title} — {model}")
    fig.tight_layout()
    return fig


def mcc_bars(table: pd.DataFrame, title: str = "CoLA isolated judgments: MCC on in-domain dev"):
    """Dev-set Matthews correlation per method (threshold chosen on train)."""
    table = table.assign(label=[m if t in ("none", None) else f"{m} t{t}"
                                for m, t in zip(table["method"], table["template"])])
    fig, panels = model_panels(table, title, 7, 4)
    for ax, model, rows in panels:
        ax.bar(rows["label"], rows["dev_mcc"], color="tab:purple")
        ax.axhline(0, **CHANCE)
        ax.set_ylabel("MCC (dev)")
        ax.set_title(model)
        ax.tick_params(axis="x", rotation=45)
        plt.setp(ax.get_xticklabels(), ha="right")
    fig.tight_layout()
    return fig
