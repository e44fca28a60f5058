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

from helpers import plots
from helpers import plots_cross_model
from helpers.analysis import comparisons, cross_model, ensembles, paradigms, prompting, report, significance

config = dict(notebook="04_ensembles", model=model, dataset=dataset, p_method=p_method, l_method=l_method,
              baseline=baseline, ab_method=ab_method, trials=trials, ties=ties, seed=seed, resamples=resamples,
              margin=margin, k_models=k_models)
core = [baseline, l_method, p_method]
scores, missing = report.stored_scores(model, dataset, core + ([ab_method] if ab_method else []))
ready = not missing
print(missing or f"{len(scores):,} stored decisions of {', '.join(scores.model.unique())} on {dataset}")

# %% [markdown]
# ## Accuracy per method and template, with bootstrap 95% CIs

# %%
if ready:
    per_template = significance.by_template_with_ci(scores, resamples, seed)
    display(per_template.round(3))
    report.save_table(per_template, f"04_accuracy_ci__{dataset}", config=config, sources=scores)

# %% [markdown]
# ## Table 5: voting ensembles of Yes/No (P) and in-template LP (L)

# %%
if ready:
    ensemble = ensembles.ensembles_by_model(scores, p_method, l_method, trials, seed, resamples, ties)
    display(ensemble.drop(columns="draws").round(3))
    report.save_table(ensemble, f"04_ensembles__{dataset}", config=config, sources=scores)

# %% [markdown]
# ## Headline comparisons (McNemar, same pairs; each method at its best template)

# %%
if ready:
    headline = comparisons.headline(scores, ensemble, baseline, l_method, p_method, trials, seed, ties)
    display(headline.round(4))
    report.save_table(headline, f"04_mcnemar__{dataset}", config=config, sources=scores)

# %% [markdown]
# ## Figure 3: accuracy by phenomenon beside human agreement

# %%
if ready:
    phenomena = paradigms.phenomena_with_humans(scores, core)
    report.save_table(phenomena, f"04_phenomena__{dataset}", config=config, sources=scores)
    fig = plots.phenomena_vs_humans(phenomena, f"accuracy by phenomenon on {dataset}")
    report.save_figure(fig, f"04_phenomena__{dataset}", config=config, sources=scores)

# %% [markdown]
# ## Figure 4: subject-verb agreement by attractor (BLiMP)

# %%
if ready and "attractor" in scores:
    sv = paradigms.attractors(scores, core)
    display(sv.round(3))
    report.save_table(sv, f"04_attractors__{dataset}", config=config, sources=scores)
    fig = plots.attractor_bars(sv, "subject-verb agreement by attractor")
    report.save_figure(fig, f"04_attractors__{dataset}", config=config, sources=scores)

# %% [markdown]
# ## Figure 5: word-shuffling paradigms vs the others (BLiMP)

# %%
if ready and "word_shuffle" in scores:
    shuffle = paradigms.word_shuffle_paradigms(scores, core)
    shuffle_means = paradigms.word_shuffle_means(shuffle)
    display(shuffle_means.round(3))
    report.save_table(shuffle_means, f"04_word_shuffle__{dataset}", config=config, sources=scores)
    fig = plots.word_shuffle_dots(shuffle, "word-shuffling paradigms")
    report.save_figure(fig, f"04_word_shuffle__{dataset}", config=config, sources=scores)

# %% [markdown]
# ## Table 10: share of "A" answers of A/B prompting

# %%
if ready and ab_method:
    shares = prompting.ab_answers(scores, ab_method)
    display(shares.round(3))
    report.save_table(shares, f"04_ab_share__{dataset}", config=config, sources=scores)

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
    report.save_table(ensemble_mean, f"04_ensembles_mean__{dataset}", config=config, sources=scores)
    wins = cross_model.phenomenon_wins(scores, l_method, p_method, margin, k_models)
    display(wins.round(3))
    report.save_table(wins, f"04_phenomenon_wins__{dataset}", config=config, sources=scores)
    fig = plots_cross_model.phenomenon_differences(wins, cross_model.phenomenon_differences(scores, l_method, p_method),
                                                   f"{l_method} minus {p_method} per phenomenon on {dataset}")
    report.save_figure(fig, f"04_phenomenon_wins__{dataset}", config=config, sources=scores)

# %% [markdown]
# ## Paper check
#
# Each published number this notebook reproduces: the paper's value for the paper's model
# beside this run's value and model (`helpers.analysis.paper_check`; the values are read from
# the published results in the data mirror). With another model, such as the demo or tiny
# models, the values are not expected to agree, and the note says so; below the table, the
# numbers whose published values are not available offline.

# %%
from helpers.analysis import paper_check  # noqa: E402

paper = paper_check.check("04_ensembles", scores)
display(paper)
print(paper_check.summary("04_ensembles", paper))
report.save_table(paper, f"04_paper_check__{dataset}", config=config, sources=scores)
