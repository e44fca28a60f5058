"""Figure of 03's grammar prompting study: per paradigm (and all together), the gain in accuracy of
the explained prompt over the plain one (and of the control), with its 95% bootstrap interval over
pairs; one row of panels per model, one panel per method. The table comes from
:func:`helpers.analysis.grammar_prompting.gains`."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..analysis.grammar_prompting import ALL
from .style import CHANCE, sns


def gains_by_paradigm(table: pd.DataFrame, title: str):
    """Gain (percentage points) with its interval per paradigm, one marker colour per comparison."""
    missing = [c for c in ("model", "method", "paradigm", "condition", "baseline", "gain", "ci_low", "ci_high")
               if c not in table]
    if missing:
        raise ValueError(f"the table lacks columns {missing}: pass helpers.analysis.grammar_prompting.gains's table")
    models, methods = list(dict.fromkeys(table.model)), list(dict.fromkeys(table.method))
    paradigms = [*sorted(set(table.paradigm) - {ALL}), ALL]
    compared = list(dict.fromkeys(zip(table.condition, table.baseline)))
    colors = dict(zip(compared, sns.color_palette("colorblind", len(compared))))
    fig, axes = plt.subplots(len(models), len(methods), figsize=(3.2 + 0.45 * len(paradigms) * len(methods),
                             1.2 + 0.4 * len(paradigms) * len(models)), squeeze=False, sharex=True)
    fig.suptitle(title)
    step = 0.8 / len(compared)
    for row, model in enumerate(models):
        for col, method in enumerate(methods):
            ax = axes[row][col]
            part = table[(table.model == model) & (table.method == method)]
            for k, (a, b) in enumerate(compared):
                g = part[(part.condition == a) & (part.baseline == b)].set_index("paradigm").reindex(paradigms)
                y = np.arange(len(paradigms)) + (k - (len(compared) - 1) / 2) * step
                ax.errorbar(100 * g.gain, y, xerr=100 * np.abs(np.vstack([g.gain - g.ci_low, g.ci_high - g.gain])),
                            fmt="o", capsize=2, color=colors[(a, b)], label=f"{a} − {b}")
            ax.axvline(0, **CHANCE)
            ax.set_yticks(range(len(paradigms)), paradigms if col == 0 else [""] * len(paradigms), fontsize=8)
            ax.invert_yaxis()
            ax.set_title(f"{model} · {method}", fontsize=9)
            if row == len(models) - 1:
                ax.set_xlabel("gain in accuracy (points, 95% CI)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(compared), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


__all__ = ["gains_by_paradigm"]
