"""Figures of 08_learning_curves: accuracy against training step, one panel per phenomenon (all
pairs first), one line per method, as the BabyLM evaluation pipeline draws them. Steps that span
two orders of magnitude or more go on a log x axis (symmetric-log where step 0, the
initialisation, is among them). Tables come from :mod:`helpers.analysis.learning_curves`."""
from __future__ import annotations

import math

import pandas as pd
from matplotlib import ticker

from ..analysis.learning_curves import spans_orders
from .style import CHANCE, plt, sns

COLUMNS = ("method", "phenomenon", "step", "accuracy")


def step_axis(ax, steps) -> str:
    """Put ``steps`` on ``ax``'s x axis: linear, log (spanning orders of magnitude) or
    symmetric-log (the same with step 0); returns the scale's name."""
    if not spans_orders(steps):
        return "linear"
    if min(steps) > 0:
        ax.set_xscale("log")
        ax.set_xlim(min(steps) / 1.5, max(steps) * 1.5)
        return "log"
    first = min(s for s in steps if s > 0)
    ax.set_xscale("symlog", linthresh=first)
    ax.set_xlim(0, max(steps) * 1.5)  # step 0 at the left edge, linear up to the first checkpoint
    decades = range(math.ceil(math.log10(first)), math.floor(math.log10(max(steps))) + 1)
    ax.set_xticks([0, *(10 ** k for k in decades)], ["0", *(f"$10^{{{k}}}$" for k in decades)])
    ax.xaxis.set_minor_locator(ticker.NullLocator())
    return "symlog"


def learning_curves(table: pd.DataFrame, title: str, columns: int = 4):
    """Accuracy against training step: one panel per phenomenon (``columns`` a row, shared axes),
    one line per method, chance at 0.5."""
    missing = [c for c in COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"the table lacks columns {missing}: pass a table of "
                         "helpers.analysis.learning_curves.learning_curves")
    phenomena = list(dict.fromkeys(table["phenomenon"]))
    methods = list(dict.fromkeys(table["method"]))
    colors = dict(zip(methods, sns.color_palette("colorblind", len(methods))))
    ncols = min(columns, len(phenomena))
    nrows = math.ceil(len(phenomena) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4 * ncols, 3.2 * nrows + 0.8), squeeze=False, sharex=True,
                             sharey=True)
    steps = sorted(table["step"].unique())
    for ax, phenomenon in zip(axes.flat, phenomena):
        rows = table[table["phenomenon"] == phenomenon]
        for method in methods:
            line = rows[rows["method"] == method].sort_values("step")
            ax.plot(line["step"], line["accuracy"], marker="o", color=colors[method], label=method)
        ax.axhline(0.5, **CHANCE)
        ax.set_ylim(0, 1)
        ax.set_title(phenomenon, fontsize=10)
    scale = step_axis(axes.flat[0], steps)  # shared: one call sets every panel
    label = {"linear": "training step", "log": "training step (log)", "symlog": "training step (log, from 0)"}[scale]
    for i, ax in enumerate(axes.flat):
        if i >= len(phenomena):
            ax.set_visible(False)
        elif i + ncols >= len(phenomena):  # the lowest panel of its column: its steps are labelled
            ax.xaxis.set_tick_params(labelbottom=True)
            ax.set_xlabel(label, fontsize=9)
    for ax in axes[:, 0]:
        ax.set_ylabel("accuracy")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper right", fontsize=8, title="method")
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 0.88 if ncols > 1 else 0.75, 1))
    return fig
