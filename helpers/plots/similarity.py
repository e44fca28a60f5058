"""Figures of prefix similarity (Sinha et al. 2023, section 5 and Figures 6-7): group x group
heatmaps (rows: prefix source, columns: target) and similarity by correctness. Each draws and
returns a figure; the notebook report writes it."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from .style import plt, sns

ANNOTATE_UP_TO = 16  # groups; larger matrices (BLiMP's 67 paradigms) go unannotated


def _heatmap(ax, matrix: pd.DataFrame, label: str, cmap: str, center: float | None):
    annotate = max(matrix.shape) <= ANNOTATE_UP_TO
    sns.heatmap(matrix, ax=ax, cmap=cmap, center=center, square=True, annot=annotate, fmt=".2f",
                annot_kws={"fontsize": 7}, cbar_kws={"label": label, "shrink": 0.7})
    ax.set_xlabel("target" + (f" ({matrix.columns.name})" if matrix.columns.name else ""))
    ax.set_ylabel("prefix" + (f" ({matrix.index.name})" if matrix.index.name else ""))
    ax.tick_params(axis="x", rotation=90, labelsize=7)
    ax.tick_params(axis="y", rotation=0, labelsize=7)


def matrix_heatmap(matrix: pd.DataFrame, title: str, *, label: str = "mean F1", cmap: str = "viridis",
                   center: float | None = None):
    """One group x group matrix (an overlap or an accuracy matrix) as a heatmap."""
    size = 0.32 * max(matrix.shape) + 3
    fig, ax = plt.subplots(figsize=(size + 1.5, size))
    _heatmap(ax, matrix, label, cmap, center)
    ax.set_title(title)
    fig.tight_layout()
    return fig


def matrices_figure(accuracy: pd.DataFrame, overlaps: Mapping[str, pd.DataFrame], title: str,
                    correlations: pd.DataFrame | None = None):
    """The accuracy matrix after single-group prefixes beside each overlap matrix, each overlap
    panel titled with its Spearman rho against accuracy (rows of ``matrix_correlations``)."""
    panels = [("accuracy", accuracy)] + list(overlaps.items())
    size = 0.3 * max(accuracy.shape) + 3
    fig, axes = plt.subplots(1, len(panels), figsize=((size + 1.5) * len(panels), size), squeeze=False)
    fig.suptitle(title)
    rhos = {} if correlations is None else correlations.set_index("overlap")[["rho", "p"]].to_dict("index")
    for ax, (name, matrix) in zip(axes[0], panels):
        is_accuracy = name == "accuracy"
        _heatmap(ax, matrix, "accuracy" if is_accuracy else f"{name} F1",
                 "RdBu" if is_accuracy else "viridis", 0.5 if is_accuracy else None)
        note = f" (Spearman rho = {rhos[name]['rho']:.2f}, p = {rhos[name]['p']:.2g})" if name in rhos else ""
        ax.set_title(f"{name}{note}", fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return fig


def similarity_by_correctness(frame: pd.DataFrame, title: str, similarities: Sequence[str] = ("token_f1", "dep_f1"),
                              *, correct: str = "correct", correlations: pd.DataFrame | None = None):
    """Distribution of each similarity for incorrectly vs correctly judged items, with the
    point-biserial r of ``correctness_correlation`` (one row per similarity) in the panel titles."""
    similarities = [s for s in similarities if s in frame]
    if not similarities:
        raise KeyError("none of the similarity columns is in the frame: run item_similarity first")
    rs = {} if correlations is None else correlations.set_index("similarity")["r"].to_dict()
    fig, axes = plt.subplots(1, len(similarities), figsize=(3.5 * len(similarities), 3.5), squeeze=False)
    fig.suptitle(title)
    for ax, name in zip(axes[0], similarities):
        data = frame[[name, correct]].dropna().assign(**{correct: lambda d: d[correct].astype(bool)})
        sns.boxplot(data=data, x=correct, y=name, ax=ax, order=[False, True])
        ax.set_title(name + (f" (r_pb = {rs[name]:.2f})" if name in rs else ""), fontsize=9)
        ax.set_xlabel("judged correctly")
    fig.tight_layout()
    return fig
