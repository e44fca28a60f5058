"""What every figure shares: a non-interactive backend outside notebooks, fonts for every script
the datasets hold, the chance line, and one panel per model (titled with the model's name)
under a figure's title. Each figure module
(one per notebook's figures) draws and returns figures; writing them is the notebook report's
job (:class:`helpers.reporting.notebook.NotebookReport`)."""
from __future__ import annotations

import matplotlib

if not matplotlib.get_backend().lower().startswith(("module://", "nbagg", "ipympl")):
    matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from .fonts import BASE_FONT, CJK_FONTS, SCRIPT_FONTS, script_fonts, undrawable, use_script_fonts  # noqa: E402

CHANCE = dict(color="grey", linestyle="--", linewidth=1)
FONTS = use_script_fonts()  # every script the datasets hold (helpers.plots.fonts)


def model_panels(table: pd.DataFrame, title: str, width: float, height: float):
    """A figure titled ``title`` with one panel per model of ``table`` (shared y axis), and the
    list of (axes, model, rows of that model)."""
    models = list(dict.fromkeys(table["model"]))
    fig, axes = plt.subplots(1, len(models), figsize=(width * len(models), height), squeeze=False, sharey=True)
    fig.suptitle(title)
    return fig, [(ax, model, table[table["model"] == model]) for ax, model in zip(axes[0], models)]


def heatmap_figure(matrix: pd.DataFrame, title: str, xlabel: str, ylabel: str, cell: tuple[float, float],
                   **style):
    """One annotated heat map of ``matrix`` sized by its cells (``cell``: inches per column, per
    row); ``style`` goes to seaborn's heatmap (colours, format, colour bar)."""
    fig, ax = plt.subplots(figsize=(cell[0] * len(matrix.columns) + 3, cell[1] * len(matrix) + 1.5))
    sns.heatmap(matrix, ax=ax, **{"annot": True, **style})
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    fig.tight_layout()
    return fig


def accuracy_axis(ax, model: str) -> None:
    """A model's panel of accuracies: chance at 0.5, the axis from 0 to 1, titled by the model."""
    ax.axhline(0.5, **CHANCE)
    ax.set_ylim(0, 1)
    ax.set_ylabel("accuracy")
    ax.set_title(model)


__all__ = ["BASE_FONT", "CHANCE", "CJK_FONTS", "FONTS", "SCRIPT_FONTS", "accuracy_axis", "heatmap_figure", "model_panels",
           "plt", "script_fonts", "sns", "undrawable", "use_script_fonts"]  # the figure modules take plt and sns from here, after the backend
