"""Figures of accuracy tables (02_readout, 04_ensembles, 05_length_bias): phenomena as a heat map
and against humans, attractors, word shuffling, accuracy against token-length difference."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..analysis.length_bias import wilson

from .style import CHANCE, accuracy_axis, heatmap_figure, model_panels, plt, sns


def phenomenon_heatmap(matrix: pd.DataFrame, title: str, counts: pd.DataFrame | None = None):
    """Accuracy (%) of each method (columns) per phenomenon (rows), chance at 50; with ``counts``
    (pairs per cell, the same shape) each cell shows its n, and "°" where its 95% Wilson interval
    covers 50% (the cell cannot be told from chance)."""
    style = dict(cmap="RdBu", center=50, vmin=0, vmax=100, cbar_kws={"label": "accuracy (%)"})
    if counts is None:
        return heatmap_figure(100 * matrix, title, "method (best template)", "phenomenon", (1.1, 0.45), fmt=".0f",
                              **style)
    counts = counts.reindex(index=matrix.index, columns=matrix.columns)
    text = [[_cell(a, n) for a, n in zip(accuracies, ns)] for accuracies, ns in zip(matrix.to_numpy(), counts.to_numpy())]
    return heatmap_figure(100 * matrix, title, "method (best template): accuracy %, n pairs; ° its 95% interval "
                          "covers 50%", "phenomenon", (1.1, 0.6), annot=np.array(text, dtype=object), fmt="",
                          annot_kws={"fontsize": 8}, **style)


def _cell(accuracy: float, n: float) -> str:
    if pd.isna(accuracy) or pd.isna(n) or not n:
        return ""
    return f"{100 * accuracy:.0f}{'°' if _covers_chance(accuracy, n) else ''}\nn={int(n)}"


def _covers_chance(accuracy: float, n: float) -> bool:
    low, high = wilson(int(round(accuracy * n)), int(n))
    return low <= 0.5 <= high


def label_bars(ax, rows: pd.DataFrame, x: str, hue: str) -> None:
    """Each bar of a seaborn bar plot of ``rows`` (``x`` by ``hue``, accuracy) labelled with its n
    (``pairs``), and "°" where its 95% Wilson interval covers 50%; nothing where ``rows`` has no n."""
    if "pairs" not in rows:
        return
    xs, levels = list(dict.fromkeys(rows[x])), list(dict.fromkeys(rows[hue]))
    cells = {(h, v): (a, n) for h, v, a, n in zip(rows[hue], rows[x], rows["accuracy"], rows["pairs"])}
    for level, container in zip(levels, ax.containers):
        labels = []
        for bar in container:
            at = int(round(bar.get_x() + bar.get_width() / 2))
            accuracy, n = cells.get((level, xs[at] if 0 <= at < len(xs) else None), (np.nan, 0))
            labels.append("" if not n or pd.isna(accuracy) else f"{'°' if _covers_chance(accuracy, n) else ''}{int(n)}")
        ax.bar_label(container, labels=labels, fontsize=6, rotation=90, padding=2)
    ax.text(1.0, 1.01, "bar labels: n pairs; ° 95% interval covers 50%", transform=ax.transAxes, ha="right",
            fontsize=7, color="dimgrey")


def phenomena_vs_humans(table: pd.DataFrame, title: str):
    """Accuracy by phenomenon for each method (best template) beside human agreement (Ide et al. Fig. 3),
    each bar labelled with its n (:func:`label_bars`)."""
    fig, panels = model_panels(table, title, 10, 4.5)
    for ax, model, rows in panels:
        sns.barplot(data=rows, x="phenomenon", y="accuracy", hue="method", ax=ax)
        label_bars(ax, rows, "phenomenon", "method")
        if "human" in rows:
            humans = rows.drop_duplicates("phenomenon")
            ax.scatter(range(len(humans)), humans["human"], marker="D", color="black", zorder=5, label="humans")
        accuracy_axis(ax, model)
        ax.tick_params(axis="x", rotation=45)
        plt.setp(ax.get_xticklabels(), ha="right")
        ax.legend(loc="lower left", fontsize=8, ncol=2)
    fig.tight_layout()
    return fig


def attractor_bars(table: pd.DataFrame, title: str):
    """Subject-verb agreement accuracy by attractor type (Ide et al. Fig. 4), each bar labelled with its n."""
    fig, panels = model_panels(table, title, 7, 4)
    for ax, model, rows in panels:
        sns.barplot(data=rows, x="method", y="accuracy", hue="attractor", ax=ax)
        label_bars(ax, rows, "method", "attractor")
        accuracy_axis(ax, model)
    fig.tight_layout()
    return fig


def word_shuffle_dots(table: pd.DataFrame, title: str):
    """Per-paradigm accuracy of word-shuffling vs other paradigms, with category means (Ide et al. Fig. 5)."""
    fig, panels = model_panels(table, title, 7, 4)
    for ax, model, rows in panels:
        sns.stripplot(data=rows, x="method", y="accuracy", hue="word_shuffle", dodge=True, alpha=0.6, ax=ax)
        sns.pointplot(data=rows, x="method", y="accuracy", hue="word_shuffle", dodge=0.4, linestyle="none",
                      markers="_", markersize=20, errorbar=None, palette="dark", legend=False, ax=ax)
        ax.axhline(0.5, **CHANCE)
        ax.set_ylim(0, 1)
        ax.set_ylabel("paradigm accuracy")
        ax.set_title(model)
        ax.legend(title="word-shuffling paradigm", fontsize=8)
    fig.tight_layout()
    return fig


def accuracy_by_length(table: pd.DataFrame, title: str):
    """Accuracy against |acceptable| - |unacceptable| in tokens, 95% Wilson bands (Ide et al. Fig. 2)."""
    fig, panels = model_panels(table, title, 7, 4)
    for ax, model, rows in panels:
        for method, g in rows.groupby("method", sort=False):
            ax.plot(g["length_diff"], g["accuracy"], marker="o", label=method)
            ax.fill_between(g["length_diff"], g["ci_low"], g["ci_high"], alpha=0.15)
        ax.axhline(0.5, **CHANCE)
        ax.set_xlabel("token length difference, acceptable - unacceptable (clipped)")
        ax.set_ylabel("accuracy")
        ax.set_ylim(0, 1)
        ax.set_title(model)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def gap_scatter(table: pd.DataFrame, title: str):
    """Per-paradigm accuracy gap of two methods (ties wrong) against the mean length difference,
    with each model's Pearson r (``pearson_r``) in its panel title (Ide et al. Fig. 6); where the
    table has the gap's tie range (``gap_low``: the first method's ties wrong and the second's
    right, ``gap_high``: the reverse), a grey bar at each point spans it."""
    fig, panels = model_panels(table, title, 6, 4)
    ranged = {"gap_low", "gap_high"} <= set(table)
    for ax, model, rows in panels:
        sns.regplot(data=rows, x="mean_length_diff", y="gap", ax=ax, scatter_kws={"alpha": 0.6})
        if ranged:
            ax.vlines(rows["mean_length_diff"], rows["gap_low"], rows["gap_high"], color="grey", linewidth=1,
                      label="range over the ties")
        ax.axhline(0, **CHANCE)
        ax.set_xlabel("mean token length difference (acceptable - unacceptable)")
        ax.set_ylabel("accuracy gap (ties wrong; bar: range over the ties)" if ranged else "accuracy gap")
        ax.set_title(f"{model} (Pearson r = {rows['pearson_r'].iloc[0]:.2f})")
    fig.tight_layout()
    return fig


def linking_by_length(table: pd.DataFrame, title: str):
    """:func:`accuracy_by_length` with one panel per linking function (columns) and model (rows),
    so the functions' length bias reads side by side (05_length_bias)."""
    models, methods = list(dict.fromkeys(table["model"])), list(dict.fromkeys(table["method"]))
    fig, axes = plt.subplots(len(models), len(methods), figsize=(3.2 * len(methods), 3 * len(models)),
                             sharex=True, sharey=True, squeeze=False)
    for (model, method), g in table.groupby(["model", "method"], sort=False):
        ax = axes[models.index(model), methods.index(method)]
        ax.plot(g["length_diff"], g["accuracy"], marker="o")
        ax.fill_between(g["length_diff"], g["ci_low"], g["ci_high"], alpha=0.15)
        ax.axhline(0.5, **CHANCE)
        ax.set_ylim(0, 1)
        ax.set_title(method if len(models) == 1 else f"{model}: {method}", fontsize=9)
    for ax in axes[-1]:
        ax.set_xlabel("length difference (tokens)")
    for ax in axes[:, 0]:
        ax.set_ylabel("accuracy")
    fig.suptitle(title)
    fig.tight_layout()
    return fig
