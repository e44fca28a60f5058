"""Accuracy by language, MultiBLiMP-style (02 and the cross-model tables): one row per language,
best first; each (model, method) a marker at the expected accuracy (a tie counted half) with a line
from the accuracy with every tie wrong to the accuracy with every tie right."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..analysis.accuracy import EXPECTED, TIES_RIGHT
from .style import CHANCE, plt


def language_ranges(table: pd.DataFrame, title: str):
    """A :func:`helpers.analysis.languages.by_language` table as dots with tie ranges, languages as rows."""
    languages = list(table["language"].drop_duplicates())
    series = list(table[["model", "method"]].drop_duplicates().itertuples(index=False, name=None))
    fig, ax = plt.subplots(figsize=(7, 1.2 + 0.32 * len(languages)))
    offsets = np.linspace(-0.25, 0.25, len(series)) if len(series) > 1 else [0.0]
    for (model, method), dy in zip(series, offsets):
        rows = table[(table["model"] == model) & (table["method"] == method)].set_index("language").reindex(languages)
        y = np.arange(len(languages)) + dy
        ax.hlines(y, 100 * rows["accuracy"], 100 * rows[TIES_RIGHT], lw=2, alpha=0.6)
        label = method if table["model"].nunique() == 1 else f"{model} · {method}"
        ax.plot(100 * rows[EXPECTED], y, "o", ms=5, label=label)
    ax.axvline(50, **CHANCE)
    ax.set_yticks(range(len(languages)), languages)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("accuracy (%): dot = expected (a tie half), line = every tie wrong .. every tie right")
    ax.set_title(title)
    ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    return fig
