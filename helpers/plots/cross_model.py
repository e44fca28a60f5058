"""Figures of the cross-model analysis (:mod:`helpers.analysis.cross_model`): Hu & Levy's task
performance per prompt type with 95% CIs (Figure 2; per stimulus set, Figures 4-5), internal
consistency heatmaps (Figures 3 and 6), and Direct-vs-prompt scatter plots (Figures 7-10)."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from ..analysis.cross_model import ALL_MODELS
from .style import CHANCE, heatmap_figure

PROMPT_ORDER = ("direct", "metaQuestionSimple", "metaInstruct", "metaQuestionComplex")


def _prompts(table: pd.DataFrame) -> list[str]:
    have = list(dict.fromkeys(table["prompt"]))
    return [p for p in PROMPT_ORDER if p in have] + [p for p in have if p not in PROMPT_ORDER]


def prompt_performance(table: pd.DataFrame, title: str):
    """One panel per task (and stimulus set, when the table has them): each model's measure
    per prompt type as bars with 95% CI whiskers, the mean over models last."""
    for c in ("model", "task", "prompt", "value", "ci_low", "ci_high"):
        if c not in table:
            raise ValueError(f"the table lacks {c!r}: pass helpers.analysis.cross_model.figure2_table's table")
    panel_key = ["task", "stimuli"] if "stimuli" in table and table["stimuli"].notna().any() else ["task"]
    panels = list(table.groupby(panel_key, sort=False))
    prompts = _prompts(table)
    colors = dict(zip(prompts, sns.color_palette("colorblind", len(prompts))))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.5 * len(panels), 4), squeeze=False)
    fig.suptitle(title)
    for ax, (key, rows) in zip(axes[0], panels):
        models = list(dict.fromkeys(rows["model"]))
        width = 0.8 / len(prompts)
        for j, prompt in enumerate(prompts):
            r = rows[rows["prompt"] == prompt].set_index("model").reindex(models)
            x = np.arange(len(models)) + (j - (len(prompts) - 1) / 2) * width
            err = np.vstack([r["value"] - r["ci_low"], r["ci_high"] - r["value"]])
            ax.bar(x, r["value"], width, yerr=np.nan_to_num(err), capsize=2, color=colors[prompt], label=prompt)
        task = key[0] if isinstance(key, tuple) else key
        if task != "word_prediction":
            ax.axhline(0.5, **CHANCE)
            ax.set_ylim(0, 1)
        ax.set_xticks(range(len(models)), [m.replace(ALL_MODELS, "mean") for m in models], rotation=30, ha="right")
        ax.set_title(" · ".join(map(str, key)) if isinstance(key, tuple) else str(key))
        ax.set_ylabel(rows["measure"].iloc[0])
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def consistency_heatmap(matrix: pd.DataFrame, title: str):
    """Pearson r of each prompt with Direct (columns) per task and stimulus set (rows), the
    mean over models (Hu & Levy Figure 3)."""
    return heatmap_figure(matrix, title, "prompt", "task · stimuli", (1.4, 0.5), fmt=".2f", cmap="RdBu_r", center=0,
                          vmin=-1, vmax=1, cbar_kws={"label": "Pearson r with Direct"})


def consistency_heatmaps(matrix: pd.DataFrame, title: str):
    """:func:`consistency_heatmap` with one panel per model (a matrix indexed by model and
    row; Hu & Levy Figure 6)."""
    models = list(dict.fromkeys(matrix.index.get_level_values("model")))
    rows = matrix.xs(models[0], level="model")
    fig, axes = plt.subplots(1, len(models), figsize=((1.4 * len(matrix.columns) + 2) * len(models),
                                                      0.5 * len(rows) + 1.5), squeeze=False)
    fig.suptitle(title)
    for ax, model in zip(axes[0], models):
        sns.heatmap(matrix.xs(model, level="model"), annot=True, fmt=".2f", cmap="RdBu_r", center=0, vmin=-1,
                    vmax=1, cbar=model == models[-1], ax=ax)
        ax.set_title(model)
        ax.set_xlabel("prompt")
        ax.set_ylabel("")
    fig.tight_layout()
    return fig


def direct_meta_scatter(points: pd.DataFrame, title: str):
    """Per item, the Direct differential (x) against each prompt's (y): rows are models,
    columns prompts, with each panel's Pearson r (Hu & Levy Figures 7-10)."""
    models, prompts = list(dict.fromkeys(points["model"])), _prompts(points)
    fig, axes = plt.subplots(len(models), len(prompts), figsize=(3.2 * len(prompts), 3 * len(models)),
                             squeeze=False)
    fig.suptitle(title)
    for i, model in enumerate(models):
        for j, prompt in enumerate(prompts):
            ax = axes[i][j]
            g = points[(points["model"] == model) & (points["prompt"] == prompt)]
            ax.scatter(g["direct"], g["meta"], s=8, alpha=0.6)
            r = np.corrcoef(g["direct"], g["meta"])[0, 1] if len(g) > 2 and g["direct"].std() > 0 and \
                g["meta"].std() > 0 else float("nan")
            ax.set_title(f"{model} · {prompt}\nr = {r:.2f}", fontsize=9)
            ax.set_xlabel("Direct" if i == len(models) - 1 else "")
            ax.set_ylabel("prompt" if j == 0 else "")
    fig.tight_layout()
    return fig


def phenomenon_differences(table: pd.DataFrame, scores_by_model: pd.DataFrame, title: str):
    """Accuracy of method a minus method b per phenomenon and model (dots), phenomena marked
    by :func:`helpers.analysis.cross_model.phenomenon_wins` in bold."""
    a, b, margin = table.attrs["a"], table.attrs["b"], table.attrs["margin"]
    fig, ax = plt.subplots(figsize=(max(6, 0.45 * len(table) + 2), 4))
    order = list(table["phenomenon"])
    sns.stripplot(data=scores_by_model, x="phenomenon", y="difference", hue="model", order=order, ax=ax, size=6)
    ax.axhline(0, color="grey", linewidth=1)
    for y in (margin, -margin):
        ax.axhline(y, **CHANCE)
    marked = dict(zip(table["phenomenon"], table["marked"]))
    for label in ax.get_xticklabels():
        if marked.get(label.get_text()):
            label.set_fontweight("bold")
    ax.tick_params(axis="x", rotation=45)
    plt.setp(ax.get_xticklabels(), ha="right")
    ax.set_ylabel(f"accuracy of {a} minus {b}")
    ax.set_title(title)
    fig.tight_layout()
    return fig
