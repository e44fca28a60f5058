"""The MORCELA figure of the separability notebook (Tjuatja et al. 2025): held-out correlation
with LI's ratings per linking function, the correlation of BLiMP's per-paradigm accuracy with
human agreement under the LI fit, and the fitted (beta, gamma) beside SLOR's (1, 0); drawn from
the tables of :mod:`helpers.analysis.morcela` (writing it is the notebook report's job)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .style import plt

LABELS = {"lp": "LP", "meanlp": "MeanLP", "penlp": "PenLP", "slor": "SLOR", "morcela_gamma0": "MORCELA γ=0",
          "morcela_beta1": "MORCELA β=1", "morcela": "MORCELA"}
SLOR_POINT = (1.0, 0.0)
VARIANT_STYLE = {"morcela": ("o", "tab:blue"), "morcela_beta1": ("s", "tab:orange"),
                 "morcela_gamma0": ("^", "tab:purple")}


def _one_model(*tables: pd.DataFrame) -> str:
    models = list(dict.fromkeys(m for t in tables if t is not None for m in t["model"]))
    if len(models) != 1:
        raise ValueError(f"this figure draws one model; the tables have {models}: filter them to one")
    return models[0]


def _ordered(table: pd.DataFrame) -> pd.DataFrame:
    order = {name: k for k, name in enumerate(LABELS)}
    return table.assign(_order=table["function"].map(order).fillna(len(order))).sort_values("_order")


def _correlation_bars(ax, table: pd.DataFrame, title: str, sd: bool) -> None:
    rows = _ordered(table)
    pos = np.arange(len(rows))
    ends = [0.0]
    for k, (stat, color) in enumerate((("pearson", "tab:blue"), ("spearman", "tab:orange"))):
        values = rows[stat].to_numpy(float)
        err = rows[f"{stat}_sd"].to_numpy(float) if sd else np.zeros_like(values)
        ax.bar(pos - 0.2 + 0.4 * k, values, 0.4, yerr=err if sd else None, capsize=2, color=color,
               label="Pearson r" if stat == "pearson" else "Spearman ρ")
        ends += [np.nanmax(values + err, initial=0.0), np.nanmin(values - err, initial=0.0)]
    ax.set_xticks(pos, [LABELS.get(f, f) for f in rows["function"]], rotation=30, ha="right")
    ax.axhline(0, color="black", linewidth=0.8)
    low, high = min(ends), max(ends)
    ax.set_ylim(low - 0.05 * (high - low), high + 0.3 * (high - low))  # room for the legend above the bars
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper left", ncol=2)


def _parameter_plane(ax, params: pd.DataFrame, folds: pd.DataFrame) -> None:
    fold_fits = folds[folds["function"] == "morcela"]
    ax.scatter(fold_fits["beta"], fold_fits["gamma"], s=14, color="tab:blue", alpha=0.35, label="MORCELA, each fold")
    for row in params.itertuples():
        marker, color = VARIANT_STYLE.get(row.variant, ("x", "black"))
        ax.scatter([row.beta], [row.gamma], s=60, marker=marker, color=color, edgecolor="black",
                   label=LABELS.get(row.variant, row.variant))
    ax.scatter(*SLOR_POINT, s=140, marker="*", color="tab:red", edgecolor="black", label="SLOR (β=1, γ=0)")
    ax.axvline(1, color="grey", linestyle=":", linewidth=1)
    ax.axhline(0, color="grey", linestyle=":", linewidth=1)
    ax.set_xlabel("β (weight of the unigram log-prob)")
    ax.set_ylabel("γ (nats added to LP before dividing by length)")
    ax.set_title("Fitted on all rated LI sentences", fontsize=10)
    ax.legend(fontsize=7)


def morcela_summary(heldout: pd.DataFrame, folds: pd.DataFrame, params: pd.DataFrame,
                    blimp: pd.DataFrame | None = None, title: str = "MORCELA (Tjuatja et al. 2025)"):
    """Held-out Pearson and Spearman per linking function (bars, fold sd), the correlation of
    BLiMP's per-paradigm accuracy with human agreement (when ``blimp`` is given) and the fitted
    (beta, gamma) with each fold's, beside SLOR's (1, 0)."""
    model = _one_model(heldout, folds, params, blimp)
    panels = 3 if blimp is not None else 2
    fig, axes = plt.subplots(1, panels, figsize=(5.2 * panels, 4.2))
    _correlation_bars(axes[0], heldout, f"LI held-out ({int(heldout['folds'].max())} folds): "
                                         "correlation with ratings", sd=True)
    if blimp is not None:
        _correlation_bars(axes[1], blimp, f"BLiMP ({int(blimp['paradigms'].max())} paradigms): accuracy "
                                          "vs human agreement", sd=False)
    _parameter_plane(axes[-1], params, folds)
    fig.suptitle(f"{title}: {model}")
    fig.tight_layout()
    return fig
