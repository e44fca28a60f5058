# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 05 · Token-length bias (Ide et al. 2024, Figure 2, Table 4, Figure 6)
#
# Does a method prefer the shorter (or longer) sentence? For every stored decision, the
# token-length difference is |acceptable| − |unacceptable| (the sentences alone, in the
# model's tokens). Reads the results store only: run `02_readout` and `03_prompting` first.
#
# - accuracy against the length difference, with 95% Wilson bands (Figure 2);
# - the point-biserial correlation between success and length difference per method and
#   model (Table 4), each method at its best template;
# - per paradigm, the accuracy of Yes/No minus in-template LP against the mean length
#   difference, with Pearson r (Figure 6).

# %% tags=["parameters"]
models = "demo-en"  # models whose scores to analyse (a list or comma-separated)
dataset = "blimp"  # dataset scored by 02_readout and 03_prompting
methods = "lp,meanlp,penlp,intemplate_lp,yesno,ab"  # methods to analyse (a list or comma-separated)
gap = "yesno,intemplate_lp"  # the two methods of the per-paradigm gap (Figure 6)
clip = 4  # length differences beyond this are pooled into the outermost bins
seed = 0  # seed of the bootstrap
resamples = 2000  # bootstrap resamples for the confidence intervals

# %%
import pandas as pd
from IPython.display import display

from helpers import paths, plots
from helpers.analysis import accuracy, length_bias, report, significance

model_list, method_list, gap_pair = report.names(models), report.names(methods), report.names(gap)
scores, missing = report.stored_scores(model_list, dataset, sorted(set(method_list) | set(gap_pair)))
ready = not missing
figures = paths.OUTPUTS / "figures"
print(missing or f"{len(scores):,} stored decisions of {', '.join(model_list)} on {dataset}")

# %% [markdown]
# ## Figure 2: accuracy against the token-length difference

# %%
if ready:
    best = accuracy.at_best_template(scores[scores.method.isin(method_list)])
    by_length = length_bias.accuracy_by_length(best, clip)
    report.save_table(by_length, f"05_accuracy_by_length__{dataset}")
    for model in model_list:
        fig = plots.accuracy_by_length(by_length[by_length.model == model],
                                       f"{model} on {dataset}: accuracy by length difference")
        plots.save(fig, figures / f"05_accuracy_by_length__{model}__{dataset}")

# %% [markdown]
# ## Table 4: point-biserial r between success and length difference (best templates), with
# bootstrap 95% CIs of each accuracy

# %%
if ready:
    corr = length_bias.correlation_table(best)
    acc = significance.with_ci(best.groupby(["model", "method", "template"]).agg(accuracy=("correct", "mean"))
                               .reset_index(), best, ["model", "method", "template"], resamples, seed)
    table4 = corr.merge(acc, on=["model", "method", "template"])
    display(table4.round(3))
    report.save_table(table4, f"05_point_biserial__{dataset}")

# %% [markdown]
# ## Figure 6: per-paradigm accuracy gap against mean length difference

# %%
if ready:
    for model in model_list:
        table, r = length_bias.paradigm_gap(scores[scores.model == model], *gap_pair)
        report.save_table(table.assign(model=model, pearson_r=r), f"05_paradigm_gap__{model}__{dataset}")
        fig = plots.gap_scatter(table, r, f"{model}: {gap_pair[0]} minus {gap_pair[1]} per paradigm")
        plots.save(fig, figures / f"05_paradigm_gap__{model}__{dataset}")
        print(f"{model}: Pearson r between the gap and the mean length difference = {r:.3f} "
              f"over {len(table)} paradigms")
