# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
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
# model's tokens). Reads the results store only: run `02_readout` and `03_prompting` first (with
# nothing stored, the first cell stops with an error naming what to run).
#
# - accuracy against the length difference, with 95% Wilson bands (Figure 2);
# - the point-biserial correlation between success and length difference per method and
#   model (Table 4), each method at its best template;
# - per paradigm, the accuracy of Yes/No minus in-template LP against the mean length
#   difference, with Pearson r (Figure 6);
# - the same length bias for each linking function side by side (LP, MeanLP, PenLP, SLLN-LP and
#   the byte norm), so you see which function removes the bias on your model.
#
# A tie (both sentences scored the same) counts as wrong in every table, and each table gives the
# ties and their share (`tie_share_counted_wrong`), the expected accuracy (a tie counts half) and the
# accuracy with every tie right; Figure 6 gives the gap with ties half (`gap_ties_half`) and its range
# over the ties (`gap_low` to `gap_high`, the grey bar at each paradigm).
#
# Every table and figure is written with a sidecar `<file>.json` naming the parameters below,
# the score files used and the git commit.

# %% tags=["parameters"]
model = "demo-en"  # model(s) whose scores to analyse: one name, a list or comma-separated
dataset = "blimp"  # dataset scored by 02_readout and 03_prompting
methods = "lp,meanlp,penlp,intemplate_lp,yesno,ab"  # methods to analyse (a list or comma-separated)
gap = "yesno,intemplate_lp"  # the two methods of the per-paradigm gap (Figure 6)
linking = "lp,meanlp,penlp,slln_lp,lp_per_byte"  # linking functions compared side by side (02's readouts); "none" for none
clip = 4  # length differences beyond this are pooled into the outermost bins
seed = 0  # seed of the bootstrap
resamples = 2000  # bootstrap resamples for the confidence intervals

# %%
from IPython.display import display

from helpers.plots import accuracy as plots
from helpers.analysis import accuracy, cross_model, length_bias
from helpers.reporting import headline
from helpers.reporting.notebook import NotebookReport
from helpers.reporting.outputs import required_scores
from helpers.runs.reading import stored_choice
from helpers.settings.lists import parse_list

config = dict(model=model, dataset=dataset, methods=methods, gap=gap, linking=linking, clip=clip,
              seed=seed, resamples=resamples)
method_list, gap_pair = parse_list(methods, what="method"), parse_list(gap, what="method")
linking_list = parse_list(linking, what="method", none=("none",))
settings, chosen = stored_choice(globals())  # every setting by its name chooses the stored scores; a misspelt name stops
config |= settings.given_values()
scores = required_scores(model, dataset, list(dict.fromkeys(method_list + gap_pair + linking_list)), where=chosen)  # an error naming what to run when missing
report = NotebookReport("05_length_bias", config, dataset, sources=scores)
print(f"{len(scores):,} stored decisions of {', '.join(scores.model.unique())} on {dataset}")

# %% [markdown]
# ## The answer: accuracy per method, with its 95% interval
#
# Percent of pairs where the method prefers the grammatical sentence (a tie counted wrong), its 95%
# interval and n, the difference from the best method on the same pairs with a paired test, and the
# paper's number where one exists; under it, what changes how to read them.

# %%
head = headline.of(scores, "05_length_bias", dataset)
report.table(head.table, "headline", note=head.note)
head

# %% [markdown]
# ## Figure 2: accuracy against the token-length difference

# %%
best = accuracy.at_best_template(scores, method_list)
by_length = length_bias.accuracy_by_length(best, clip)
report.table(by_length, "accuracy_by_length")
fig = plots.accuracy_by_length(by_length, head.title(f"accuracy by length difference on {dataset}"))
report.figure(fig, "accuracy_by_length")

# %% [markdown]
# ## Table 4: point-biserial r between success and length difference (best templates), with
# bootstrap 95% CIs of each accuracy; below it, Table 4 averaged over the models

# %%
table4 = length_bias.table4(best, resamples, seed)
display(table4.round(3))
report.table(table4, "point_biserial")
table4_mean = cross_model.table4_mean(table4)  # averaged over the models (with one model: its values)
display(table4_mean.round(3))
report.table(table4_mean, "point_biserial_mean")

# %% [markdown]
# ## Figure 6: per-paradigm accuracy gap against mean length difference

# %%
gaps = length_bias.paradigm_gaps(scores, *gap_pair)
display(length_bias.gap_correlations(gaps).round(3))
report.table(gaps, "paradigm_gap")
fig = plots.gap_scatter(gaps, f"{gap_pair[0]} minus {gap_pair[1]} per paradigm on {dataset}")
report.figure(fig, "paradigm_gap")

# %% [markdown]
# ## Length bias across the linking functions
#
# Accuracy against the token-length difference for each linking function, side by side, and the
# point-biserial r of each: the closer r is to 0 and the flatter the curve, the less that function
# prefers the shorter (or longer) sentence on this model and dataset. SLLN-LP is ZhoBLiMP's
# sub-linear normalisation (Liu et al. 2024); the byte norm is lm-evaluation-harness's `acc_norm`.

# %%
if linking_list:
    linked = accuracy.at_best_template(scores, linking_list)
    linking_by_length = length_bias.accuracy_by_length(linked, clip)
    report.table(linking_by_length, "linking_by_length")
    fig = plots.linking_by_length(linking_by_length, f"accuracy by length difference per linking function on {dataset}")
    report.figure(fig, "linking_by_length")
    linking_table = length_bias.table4(linked, resamples, seed)
    display(linking_table.round(3))
    report.table(linking_table, "linking_point_biserial")
else:
    print("no linking functions compared (linking='none')")

# %% [markdown]
# ## Paper check
#
# Ide et al. (2024) Table 4 and the numbers of its text, each beside this run's value, for the
# paper's models (a run of another model, such as the demo models, is not expected to agree: the
# note says so), and what the papers show only in figures.

# %%
report.paper_check(scores)
