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


CHANCE = dict(color="grey", linestyle="--", linewidth=1)


def phenomena_vs_humans(table: pd.DataFrame, title: str):
    """Accuracy by phenomenon for each method (best template) beside human agreement (Ide et al. Fig. 3)."""
    fig, ax = plt.subplots(figsize=(10, 4.5))
    sns.barplot(data=table, x="phenomenon", y="accuracy", hue="method", ax=ax)
    if "human" in table:
        humans = table.drop_duplicates("phenomenon")
        ax.scatter(range(len(humans)), humans["human"], marker="D", color="black", zorder=5, label="humans")
    ax.axhline(0.5, **CHANCE)
    ax.set_ylim(0, 1)
    ax.set_ylabel("accuracy")
    ax.set_title(title)
    ax.tick_params(axis="x", rotation=45)
    plt.setp(ax.get_xticklabels(), ha="right")
    ax.legend(loc="lower left", fontsize=8, ncol=2)
    fig.tight_layout()
    return fig


def word_shuffle_dots(table: pd.DataFrame, title: str):
    """Per-paradigm accuracy of word-shuffling vs other paradigms, with category means (Ide et al. Fig. 4)."""
    fig, ax = plt.subplots(figsize=(7, 4))
    sns.stripplot(data=table, x="method", y="accuracy", hue="word_shuffle", dodge=True, alpha=0.6, ax=ax)
    sns.pointplot(data=table, x="method", y="accuracy", hue="word_shuffle", dodge=0.4, linestyle="none",
                  markers="_", markersize=20, errorbar=None, palette="dark", legend=False, ax=ax)
    ax.axhline(0.5, **CHANCE)
    ax.set_ylim(0, 1)
    ax.set_ylabel("paradigm accuracy")
    ax.set_title(title)
    ax.legend(title="word-shuffling paradigm", fontsize=8)
    fig.tight_layout()
    return fig


def attractor_bars(table: pd.DataFrame, title: str):
    """Subject-verb agreement accuracy by attractor type (Ide et al. Fig. 5)."""
    fig, ax = plt.subplots(figsize=(7, 4))
    sns.barplot(data=table, x="method", y="accuracy", hue="attractor", ax=ax)
    ax.axhline(0.5, **CHANCE)
    ax.set_ylim(0, 1)
    ax.set_title(title)
    fig.tight_layout()
    return fig


def accuracy_by_length(table: pd.DataFrame, title: str):
    """Accuracy against |acceptable| - |unacceptable| in tokens, 95% Wilson bands (Ide et al. Fig. 2)."""
    fig, ax = plt.subplots(figsize=(7, 4))
    for (model, method), g in table.groupby(["model", "method"], sort=False):
        label = method if table["model"].nunique() == 1 else f"{model}: {method}"
        ax.plot(g["length_diff"], g["accuracy"], marker="o", label=label)
        ax.fill_between(g["length_diff"], g["ci_low"], g["ci_high"], alpha=0.15)
    ax.axhline(0.5, **CHANCE)
    ax.set_xlabel("token length difference, acceptable - unacceptable (clipped)")
    ax.set_ylabel("accuracy")
    ax.set_ylim(0, 1)
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def gap_scatter(table: pd.DataFrame, r: float, title: str):
    """Per-paradigm accuracy gap of two methods against the mean length difference (Ide et al. Fig. 6)."""
    fig, ax = plt.subplots(figsize=(6, 4))
    sns.regplot(data=table, x="mean_length_diff", y="gap", ax=ax, scatter_kws={"alpha": 0.6})
    ax.axhline(0, **CHANCE)
    ax.set_xlabel("mean token length difference (acceptable - unacceptable)")
    ax.set_ylabel("accuracy gap")
    ax.set_title(f"{title} (Pearson r = {r:.2f})")
    fig.tight_layout()
    return fig
