"""Figure functions (seaborn), one per figure kind; each returns the figure and can save it."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg") if not matplotlib.get_backend().lower().startswith(("module://", "nbagg", "ipympl")) else None
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402


def save(fig, stem: str | Path) -> list[Path]:
    """Save ``fig`` as PNG and SVG next to each other."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    out = [stem.with_suffix(".png"), stem.with_suffix(".svg")]
    fig.savefig(out[0], dpi=150, bbox_inches="tight")
    fig.savefig(out[1], bbox_inches="tight")
    return out


def phenomenon_heatmap(matrix: pd.DataFrame, title: str):
    """Accuracy (%) of each method (columns) per phenomenon (rows), chance at 50."""
    fig, ax = plt.subplots(figsize=(1.1 * len(matrix.columns) + 3, 0.45 * len(matrix) + 1.5))
    sns.heatmap(100 * matrix, annot=True, fmt=".0f", cmap="RdBu", center=50, vmin=0, vmax=100,
                cbar_kws={"label": "accuracy (%)"}, ax=ax)
    ax.set_title(title)
    ax.set_xlabel("method (best template)")
    ax.set_ylabel("phenomenon")
    fig.tight_layout()
    return fig
