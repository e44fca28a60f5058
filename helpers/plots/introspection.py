"""Figures of 03's introspection section (Song, Hu & Mahowald 2025; tables of
:mod:`helpers.analysis.introspection`): the model x model matrix of r(Meta of the row model,
Direct of the column model) as heat maps, the diagonal (a model with itself) outlined, and the
paper's Figure 3 scatter: each cell's r against the two models' Direct-Direct similarity,
coloured by their relation."""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.patches import Rectangle

from ..analysis.introspection import MEAN, wide
from ..analysis.introspection_comparison import RELATIONS, with_relations
from .style import plt, sns


def _grid(n: int, width: float, height: float, title: str):
    cols = min(n, 3)
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    fig.suptitle(title)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n])


def matrix_heatmaps(table: pd.DataFrame, title: str):
    """One annotated heat map per (measure, stimuli): rows the Meta (prompted) model, columns
    the Direct (string-probability) model, cells r (mean over prompts), the diagonal outlined."""
    for c in ("measure", "stimuli", "meta_model", "direct_model", "prompt", "r"):
        if c not in table:
            raise ValueError(f"the table lacks {c!r}: pass helpers.analysis.introspection.matrix's table")
    m = wide(table)
    groups = list(dict.fromkeys(zip(m.index.get_level_values(0), m.index.get_level_values(1))))
    n = len(m.columns)
    fig, axes = _grid(len(groups), 1.1 * n + 2.5, 0.9 * n + 1.8, title)
    for ax, (measure, stimuli) in zip(axes, groups):
        cells = m.xs((measure, stimuli), level=(0, 1))
        sns.heatmap(cells, annot=True, fmt=".2f", cmap="RdBu_r", center=0, vmin=-1, vmax=1, ax=ax, square=True,
                    cbar_kws={"label": "Pearson r, mean over prompts", "shrink": 0.8})
        for i, model in enumerate(cells.index):
            if model in cells.columns:
                j = list(cells.columns).index(model)
                ax.add_patch(Rectangle((j, i), 1, 1, fill=False, edgecolor="black", linewidth=2))
        ax.set_title(f"{measure} · {stimuli}")
        ax.set_xlabel("Direct model (string probability)")
        ax.set_ylabel("Meta model (prompted answer)")
        ax.tick_params(axis="x", rotation=30)
        ax.tick_params(axis="y", rotation=0)
    fig.tight_layout()
    return fig


def similarity_scatter(table: pd.DataFrame, title: str, given: dict | None = None):
    """One panel per (measure, stimuli): each (Meta model, Direct model) cell's r (mean over
    prompts) against r(Direct, Direct) of the two models, coloured by their relation (Song et
    al.'s Figure 3): introspection would lift the self cells above the others' trend."""
    cells = with_relations(table[table["prompt"] == MEAN], given)
    groups = list(cells.groupby(["measure", "stimuli"], sort=False))
    colors = dict(zip(RELATIONS, sns.color_palette("colorblind", len(RELATIONS))))
    fig, axes = _grid(len(groups), 4.5, 4, title)
    for ax, ((measure, stimuli), g) in zip(axes, groups):
        for rel in RELATIONS:
            rows = g[g["relation"] == rel]
            if len(rows):
                ax.scatter(rows["r_direct"], rows["r"], s=60 if rel == "self" else 30, color=colors[rel], label=rel,
                           edgecolor="black" if rel == "self" else "none", zorder=3)
        others = g[g["relation"] != "self"].dropna(subset=["r", "r_direct"])
        if len(others) >= 2 and others["r_direct"].nunique() > 1:
            slope, intercept = np.polyfit(others["r_direct"], others["r"], 1)
            xs = np.array([others["r_direct"].min(), 1.0])
            ax.plot(xs, intercept + slope * xs, color="grey", linewidth=1, label="other cells: least squares")
        ax.set(title=f"{measure} · {stimuli}", xlabel="r(Direct_A, Direct_B): model similarity",
               ylabel="r(Meta_A, Direct_B)")
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
