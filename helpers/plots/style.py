"""What every figure shares: a non-interactive backend outside notebooks, fonts for every script
the datasets hold, the chance line, and one panel per model (titled with the model's name)
under a figure's title. Each figure module
(one per notebook's figures) draws and returns figures; writing them is the notebook report's
job (:class:`helpers.reporting.notebook.NotebookReport`)."""
from __future__ import annotations

from pathlib import Path

import matplotlib

if not matplotlib.get_backend().lower().startswith(("module://", "nbagg", "ipympl")):
    matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402
from matplotlib import font_manager  # noqa: E402

CHANCE = dict(color="grey", linestyle="--", linewidth=1)
# Text glyphs by fallback, in order: DejaVu Sans (matplotlib's own: Latin, Cyrillic, Greek), then a
# CJK font for Chinese characters and Japanese kana: WenQuanYi Micro Hei (Debian fonts-wqy-microhei,
# installed by `make system-deps`) or a Noto CJK font where one is installed instead.
BASE_FONT = "DejaVu Sans"
CJK_FONTS = ("WenQuanYi Micro Hei", "Noto Sans CJK SC", "Noto Sans CJK JP", "Droid Sans Fallback")
CJK_FONT_FILES = ("wqy-microhei.ttc", "NotoSansCJK-Regular.ttc", "DroidSansFallbackFull.ttf")


def script_fonts() -> list[str]:
    """The font families every figure uses, in fallback order: the base font, then the first CJK
    font installed. A CJK font installed after matplotlib built its font cache is added here."""
    known = {f.name for f in font_manager.fontManager.ttflist}
    if not known.intersection(CJK_FONTS):
        for path in font_manager.findSystemFonts():
            if Path(path).name in CJK_FONT_FILES:
                font_manager.fontManager.addfont(path)
        known = {f.name for f in font_manager.fontManager.ttflist}
    return [BASE_FONT, *[name for name in CJK_FONTS if name in known][:1]]


def use_script_fonts() -> list[str]:
    """Set matplotlib's font family to :func:`script_fonts` (the figures of every notebook)."""
    fonts = script_fonts()
    matplotlib.rcParams["font.family"] = fonts
    return fonts


FONTS = use_script_fonts()


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


__all__ = ["CHANCE", "FONTS", "accuracy_axis", "heatmap_figure", "model_panels", "plt", "sns", "use_script_fonts"]  # the figure modules take plt and sns from here, after the backend
