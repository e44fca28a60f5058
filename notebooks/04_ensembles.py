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
# # 04 · Ensembles, phenomena and paradigms (Ide et al. 2024, Table 5, Figures 3–5, Table 10)
#
# Reads the results store only (no model): run `02_readout` (in-template LP) and
# `03_prompting` (Yes/No, A/B) first.
#
# - **Ensembles**: 10 predictors, Yes/No (P) and in-template LP (L) over their 5 templates.
#   Each setting draws 5 of the 10 without replacement (P-only 5+0, Mix-P3 3+2, Mix-L3 2+3,
#   L-only 0+5), judges each pair by majority vote, and averages 10 seeded trials; next to
#   the oracle (best single template) of each method. A predictor that tied on a pair does not
#   vote (`ties = "abstain"`, the default: the pair is right when more voters are right than
#   wrong); `ties = "wrong"` counts its vote as wrong instead.
# - **Phenomena** against human agreement (Figure 3), **subject-verb agreement by attractor**
#   (Figure 4), **word-shuffling** vs other paradigms (Figure 5), and the **share of "A"
#   answers** of A/B prompting (Table 10).
# - **Beyond the paper**: bootstrap 95% confidence intervals (resampling pairs, seeded) for the
#   accuracies, and McNemar's paired test for the headline comparisons.
#
# Every table and figure is written with a sidecar `<file>.json` naming the parameters below,
# the score files used and the git commit.

# %% tags=["parameters"]
model = "demo-en"  # model(s) whose scores to analyse: one name, a list or comma-separated
dataset = "blimp"  # dataset scored by 02_readout and 03_prompting
p_method = "yesno"  # the P predictors of the ensembles
l_method = "intemplate_lp"  # the L predictors of the ensembles
baseline = "lp"  # the sentence-probability baseline of the headline comparisons
ab_method = "ab"  # A/B method for the share of "A" answers (Table 10): "ab" (outlines) or "ab_logit"; None skips it
trials = 10  # seeded ensemble trials per setting
ties = "abstain"  # a tied predictor's ensemble vote: "abstain" (it does not vote) or "wrong" (counts as wrong)
seed = 0  # seed of the ensemble draws and the bootstrap
resamples = 2000  # bootstrap resamples for the confidence intervals
margin = 0.01  # across models: a method wins a phenomenon when it beats the other by at least this accuracy (1 point)
k_models = None  # across models: phenomena marked when one method wins for at least k models; None means all models

# %%
from IPython.display import display

from helpers.plots import accuracy as plots
from helpers.plots import cross_model as plots_cross_model
from helpers.analysis import comparisons, cross_model, ensembles, paradigms, prompting, significance
from helpers.reporting.notebook import NotebookReport
from helpers.reporting.outputs import stored_scores

config = dict(model=model, dataset=dataset, p_method=p_method, l_method=l_method,
              baseline=baseline, ab_method=ab_method, trials=trials, ties=ties, seed=seed, resamples=resamples,
              margin=margin, k_models=k_models)
core = [baseline, l_method, p_method]
scores, missing = stored_scores(model, dataset, core + ([ab_method] if ab_method else []))
report = NotebookReport("04_ensembles", config, dataset, sources=scores)
ready = not missing
print(missing or f"{len(scores):,} stored decisions of {', '.join(scores.model.unique())} on {dataset}")

# %% [markdown]
# ## Accuracy per method and template, with bootstrap 95% CIs

# %%
if ready:
    per_template = significance.by_template_with_ci(scores, resamples, seed)
    display(per_template.round(3))
    report.table(per_template, "accuracy_ci")

# %% [markdown]
# ## Table 5: voting ensembles of Yes/No (P) and in-template LP (L)

# %%
if ready:
    ensemble = ensembles.ensembles_by_model(scores, p_method, l_method, trials, seed, resamples, ties)
    display(ensemble.drop(columns="draws").round(3))
    report.table(ensemble, "ensembles")

# %% [markdown]
# ## Headline comparisons (McNemar, same pairs; each method at its best template)

# %%
if ready:
    headline = comparisons.headline(scores, ensemble, baseline, l_method, p_method, trials, seed, ties)
    display(headline.round(4))
    report.table(headline, "mcnemar")

# %% [markdown]
# ## Figure 3: accuracy by phenomenon beside human agreement

# %%
if ready:
    phenomena = paradigms.phenomena_with_humans(scores, core)
    report.table(phenomena, "phenomena")
    fig = plots.phenomena_vs_humans(phenomena, f"accuracy by phenomenon on {dataset}")
    report.figure(fig, "phenomena")

# %% [markdown]
# ## Figure 4: subject-verb agreement by attractor (BLiMP)

# %%
if ready and "attractor" in scores:
    sv = paradigms.attractors(scores, core)
    display(sv.round(3))
    report.table(sv, "attractors")
    fig = plots.attractor_bars(sv, "subject-verb agreement by attractor")
    report.figure(fig, "attractors")

# %% [markdown]
# ## Figure 5: word-shuffling paradigms vs the others (BLiMP)

# %%
if ready and "word_shuffle" in scores:
    shuffle = paradigms.word_shuffle_paradigms(scores, core)
    shuffle_means = paradigms.word_shuffle_means(shuffle)
    display(shuffle_means.round(3))
    report.table(shuffle_means, "word_shuffle")
    fig = plots.word_shuffle_dots(shuffle, "word-shuffling paradigms")
    report.figure(fig, "word_shuffle")

# %% [markdown]
# ## Table 10: share of "A" answers of A/B prompting

# %%
if ready and ab_method:
    shares = prompting.ab_answers(scores, ab_method)
    display(shares.round(3))
    report.table(shares, "ab_share")

# %% [markdown]
# ## Across models: Table 5 averaged, and the phenomena each method wins
#
# With several models (`model` a list), the ensembles' accuracy averaged over the models, and
# the phenomena where in-template LP beats Yes/No (or the reverse) by at least `margin` for at
# least `k_models` of the models, each method at its best template: the phenomena Ide et al.
# mark (bold in the figure). With one model these are that model's numbers.

# %%
if ready:
    ensemble_mean = cross_model.mean_over_models(ensemble, ["setting"], ["accuracy"])
    display(ensemble_mean.round(3))
    report.table(ensemble_mean, "ensembles_mean")
    wins = cross_model.phenomenon_wins(scores, l_method, p_method, margin, k_models)
    display(wins.round(3))
    report.table(wins, "phenomenon_wins")
    fig = plots_cross_model.phenomenon_differences(wins, cross_model.phenomenon_differences(scores, l_method, p_method),
                                                   f"{l_method} minus {p_method} per phenomenon on {dataset}")
    report.figure(fig, "phenomenon_wins")

# %% [markdown]
# ## Paper check
#
# Ide et al. (2024) Table 5, Table 10 and the numbers of its text, each beside this run's value,
# for the paper's models (a run of another model, such as the demo models, is not expected to
# agree: the note says so), and what the papers show only in figures.

# %%
report.paper_check(scores)
