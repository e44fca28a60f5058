"""The explorer's figures, per dataset: accuracy of each method for each model (the mean over
templates with its sd, the best template marked) and a heat map of paradigms x (model, method)
at each method's best template. Written as SVG files the page shows (text stays text)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..analysis.accuracy import TIES_RIGHT
from ..plots.style import CHANCE, plt, sns
from .items import method_order

ANNOTATE_CELLS = 400  # heat maps with more cells than this are not annotated (unreadable)


def accuracy_figure(table: pd.DataFrame, dataset: str):
    """Bars: accuracy of each method (x) for each model (colour), the mean over templates with
    its sd (a tie wrong); above each bar, hatched, the range up to every tie right (its middle the
    expected accuracy, a tie half); a black diamond: the best template's accuracy. ``table``: the
    overview's rows of one dataset."""
    methods = method_order(table["method"])
    models = list(dict.fromkeys(table["model"]))
    width = 0.8 / len(models)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.45 * len(methods) * max(2, len(models)) + 2), 3.8))
    colors = sns.color_palette("colorblind", len(models))
    x = np.arange(len(methods))
    for k, model in enumerate(models):
        rows = table[table["model"] == model].set_index("method").reindex(methods)
        at = x - 0.4 + width * (k + 0.5)
        ax.bar(at, rows["accuracy_mean"], width * 0.95, yerr=rows["accuracy_sd"].fillna(0), color=colors[k],
               label=model, error_kw=dict(lw=0.8, capsize=2))
        ax.bar(at, rows[TIES_RIGHT + "_mean"] - rows["accuracy_mean"], width * 0.95, bottom=rows["accuracy_mean"],
               color=colors[k], alpha=0.35, hatch="///", label="ties: wrong to right" if k == 0 else None)
        ax.scatter(at, rows["best_accuracy"], marker="D", s=14, color="black", zorder=3,
                   label="best template" if k == 0 else None)
    ax.axhline(0.5, **CHANCE)
    ax.set_xticks(x, methods, rotation=30, ha="right")
    ax.set_ylim(0, 1)
    ax.set_ylabel("accuracy")
    ax.set_title(f"{dataset}: accuracy per method (bars: mean ± sd over templates, ties wrong; hatched: up to "
                 "every tie right)", loc="left", fontsize=10)
    ax.legend(fontsize=8, ncol=min(4, len(models) + 1), loc="lower right")
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig


def paradigm_matrix(table: pd.DataFrame, value: str = "accuracy_best") -> pd.DataFrame:
    """Paradigms (rows, in the data's order) x "model · method" (columns) of ``value``;
    ``table``: the paradigm table's rows of one dataset."""
    methods = method_order(table["method"])
    models = list(dict.fromkeys(table["model"]))
    wide = table.pivot_table(index="paradigm", columns=["model", "method"], values=value, sort=False)
    columns = [(m, me) for m in models for me in methods if (m, me) in wide.columns]
    wide = wide[columns]
    wide.columns = [f"{m} · {me}" if len(models) > 1 else me for m, me in columns]
    return wide.reindex(list(dict.fromkeys(table["paradigm"])))


def paradigm_heatmap(table: pd.DataFrame, dataset: str):
    """The paradigm matrix of one dataset (accuracy at each method's best template) as a heat map."""
    matrix = paradigm_matrix(table)
    annotate = matrix.size <= ANNOTATE_CELLS
    fig, ax = plt.subplots(figsize=(min(30.0, 0.55 * len(matrix.columns) + 4), min(60.0, 0.22 * len(matrix) + 2)))
    sns.heatmap(matrix, vmin=0, vmax=1, cmap="RdYlGn", annot=annotate, fmt=".2f", annot_kws={"fontsize": 6},
                cbar_kws={"label": "accuracy (best template)", "shrink": 0.6 if len(matrix) > 20 else 1.0}, ax=ax, linewidths=0.2)
    ax.set_xlabel("")
    ax.set_ylabel("")
    ax.tick_params(axis="y", labelsize=7)
    ax.tick_params(axis="x", labelsize=8, rotation=60)
    ax.set_title(f"{dataset}: accuracy per paradigm", loc="left", fontsize=10)
    fig.tight_layout()
    return fig


def write_svg(fig, path: Path) -> Path:
    """``fig`` as an SVG file (text as text), closed after."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with plt.rc_context({"svg.fonttype": "none"}):
        fig.savefig(path, format="svg", bbox_inches="tight")
    plt.close(fig)
    return path
