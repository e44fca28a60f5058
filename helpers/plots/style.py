"""What every figure shares: a non-interactive backend outside notebooks, the chance line, and
one panel per model (titled with the model's name) under a figure's title. Each figure module
(one per notebook's figures) draws and returns figures; writing them is the notebook report's
job (:class:`helpers.reporting.notebook.NotebookReport`)."""
from __future__ import annotations

import matplotlib

if not matplotlib.get_backend().lower().startswith(("module://", "nbagg", "ipympl")):
    matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

CHANCE = dict(color="grey", linestyle="--", linewidth=1)


def model_panels(table: pd.DataFrame, title: str, width: float, height: float):
    """A figure titled ``title`` with one panel per model of ``table`` (shared y axis), and the
    list of (axes, model, rows of that model)."""
    models = list(dict.fromkeys(table["model"]))
    fig, axes = plt.subplots(1, len(models), figsize=(width * len(models), height), squeeze=False, sharey=True)
    fig.suptitle(title)
    return fig, [(ax, model, table[table["model"] == model]) for ax, model in zip(axes[0], models)]

__all__ = ["CHANCE", "model_panels", "plt", "sns"]  # the figure modules take plt and sns from here, after the backend
