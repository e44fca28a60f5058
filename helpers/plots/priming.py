"""Figures of 06_context_priming in the encodings of Sinha et al. (2023): x = prefix length in
tokens, one line per prefix type (or acceptability / domain) with its 95% CI band, one panel per
(method, model). Tables come from ``helpers.analysis.priming_effects``."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from .style import CHANCE

ORDER = ("in_acceptable", "in_unacceptable", "out_acceptable", "out_unacceptable", "wikitext", "acceptable",
         "unacceptable", "in", "out")


def _panels(table: pd.DataFrame, title: str):
    """One panel per (method, model): rows = methods, columns = models, shared y."""
    models = list(dict.fromkeys(table["model"]))
    methods = list(dict.fromkeys(table["method"]))
    fig, axes = plt.subplots(len(methods), len(models), figsize=(6 * len(models), 4 * len(methods)),
                             squeeze=False, sharey=True)
    fig.suptitle(title)
    return fig, [(axes[i][j], f"{model} · {method}", table[(table["model"] == model) & (table["method"] == method)])
                 for i, method in enumerate(methods) for j, model in enumerate(models)]


def _lines(ax, rows: pd.DataFrame, by: str, value: str, scale: float) -> None:
    levels = sorted(rows[by].unique(), key=lambda v: ORDER.index(v) if v in ORDER else len(ORDER))
    colors = dict(zip(levels, sns.color_palette("colorblind", len(levels))))
    for level in levels:
        g = rows[rows[by] == level].sort_values("target_length")
        ax.plot(g["target_length"], scale * g[value], marker="o", color=colors[level], label=level)
        ax.fill_between(g["target_length"], scale * g["ci_low"], scale * g["ci_high"], color=colors[level],
                        alpha=0.2, linewidth=0)
    ax.set_xlabel("prefix length (tokens)")


def _check(table: pd.DataFrame, columns: list[str]) -> None:
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise ValueError(f"the table lacks columns {missing}: pass a table of helpers.analysis.priming_effects")


def baselined_accuracy(table: pd.DataFrame, title: str, by: str = "prefix_type"):
    """Baselined accuracy (percentage points, accuracy with prefix - without) against prefix length,
    one line per value of ``by`` with its CI band; the no-prefix baseline is the dashed line at 0
    (Sinha et al. Figures 2-5)."""
    _check(table, ["model", "method", by, "target_length", "delta", "ci_low", "ci_high"])
    fig, panels = _panels(table, title)
    for ax, name, rows in panels:
        _lines(ax, rows, by, "delta", 100)
        ax.axhline(0, **CHANCE, label="no prefix")
        ax.set_ylabel("baselined accuracy (points)")
        ax.set_title(name)
        ax.legend(fontsize=8, title=by)
    fig.tight_layout()
    return fig


def perplexity_margin(table: pd.DataFrame, title: str):
    """Mean score margin (good - bad) against prefix length per prefix type with CI bands; the
    no-prefix margin (prefix_type 'none') is a dashed line (Sinha et al. Appendix C)."""
    _check(table, ["model", "method", "prefix_type", "target_length", "margin", "ci_low", "ci_high"])
    fig, panels = _panels(table, title)
    for ax, name, rows in panels:
        base = rows[rows["prefix_type"] == "none"]
        if len(base) != 1:
            raise ValueError(f"{name}: expected one no-prefix row (prefix_type 'none'), found {len(base)}")
        _lines(ax, rows[rows["prefix_type"] != "none"], "prefix_type", "margin", 1)
        ax.axhline(float(base["margin"].iloc[0]), color="black", linestyle="--", linewidth=1, label="no prefix")
        ax.set_ylabel("score margin, good - bad")
        ax.set_title(name)
        ax.legend(fontsize=8, title="prefix type")
    fig.tight_layout()
    return fig


def separability(table: pd.DataFrame, title: str):
    """Pooled AUC (top row) and within-pair correlation of good and bad scores (bottom row)
    against prefix length, one line per prefix type with its CI band, one column per (model,
    method, template); the no-prefix value is the black dashed line, AUC's chance grey (table:
    :func:`helpers.analysis.primed_separability.primed_separability`)."""
    _check(table, ["model", "method", "template", "prefix_type", "target_length", "auc", "auc_ci_low",
                   "auc_ci_high", "r", "r_ci_low", "r_ci_high"])
    facets = list(dict.fromkeys(zip(table["model"], table["method"], table["template"].astype(str))))
    fig, axes = plt.subplots(2, len(facets), figsize=(5 * len(facets), 7.5), squeeze=False, sharex=True)
    fig.suptitle(title)
    for j, (model, method, template) in enumerate(facets):
        rows = table[(table["model"] == model) & (table["method"] == method)
                     & (table["template"].astype(str) == template)]
        base, primed = rows[rows["prefix_type"] == "none"], rows[rows["prefix_type"] != "none"]
        name = f"{model} · {method}" + ("" if template == "none" else f" · template {template}")
        for ax, value, label in ((axes[0][j], "auc", "pooled AUC, good vs bad"),
                                 (axes[1][j], "r", "Pearson r, good and bad scores")):
            _lines(ax, primed.rename(columns={f"{value}_ci_low": "ci_low", f"{value}_ci_high": "ci_high"}),
                   "prefix_type", value, 1)
            if value == "auc":
                ax.axhline(0.5, **CHANCE, label="chance")
            if len(base) == 1:
                ax.axhline(float(base[value].iloc[0]), color="black", linestyle="--", linewidth=1, label="no prefix")
            ax.set_ylabel(label)
            ax.set_title(name)
            ax.legend(fontsize=8, title="prefix type")
    fig.tight_layout()
    return fig
