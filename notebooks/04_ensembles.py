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
#   the oracle (best single template) of each method.
# - **Phenomena** against human agreement, **word-shuffling** vs other paradigms,
#   **subject-verb agreement by attractor**, and the **share of "A" answers** of A/B prompting.
# - **Beyond the paper**: bootstrap 95% confidence intervals (resampling pairs, seeded) for the
#   accuracies, and McNemar's paired test for the headline comparisons.

# %% tags=["parameters"]
models = "demo-en"  # models whose scores to analyse (a list or comma-separated)
dataset = "blimp"  # dataset scored by 02_readout and 03_prompting
p_method = "yesno"  # the P predictors of the ensembles
l_method = "intemplate_lp"  # the L predictors of the ensembles
baseline = "lp"  # the sentence-probability baseline of the headline comparisons
ab_method = "ab"  # A/B prompting scores for the share of "A" answers (Table 10); None skips that table
trials = 10  # seeded ensemble trials per setting
seed = 0  # seed of the ensemble draws and the bootstrap
resamples = 2000  # bootstrap resamples for the confidence intervals

# %%
import pandas as pd
from IPython.display import Markdown, display

from helpers import paths, plots
from helpers.analysis import accuracy, ensembles, paradigms, prompting, report, significance

model_list = report.names(models)
methods = [baseline, l_method, p_method] + ([ab_method] if ab_method else [])
scores, missing = report.stored_scores(model_list, dataset, methods)
ready = not missing
figures = paths.OUTPUTS / "figures"
print(missing or f"{len(scores):,} stored decisions of {', '.join(model_list)} on {dataset}")

# %% [markdown]
# ## Accuracy per method and template, with bootstrap 95% CIs

# %%
if ready:
    per_template = significance.with_ci(accuracy.by_template(scores), scores, ["model", "method", "template"],
                                        resamples, seed)
    display(per_template.round(3))
    report.save_table(per_template, f"04_accuracy_ci__{dataset}")

# %% [markdown]
# ## Table 5: voting ensembles of Yes/No (P) and in-template LP (L)

# %%
if ready:
    ensemble_rows = []
    for model in model_list:
        matrix = ensembles.predictor_matrix(scores[scores.model == model], p_method, l_method)
        table = ensembles.ensemble_table(matrix, trials, seed).assign(model=model)
        table[["ci_low", "ci_high"]] = [significance.bootstrap_ci(
            ensembles.trial_votes(matrix, s, trials, seed)[0].mean(axis=1), resamples, seed=seed)
            if s in ensembles.SETTINGS else significance.bootstrap_ci(matrix[d], resamples, seed=seed)
            for s, d in zip(table.setting, table.draws)]
        ensemble_rows.append(table)
    ensemble = pd.concat(ensemble_rows, ignore_index=True)
    display(ensemble.drop(columns="draws").round(3))
    report.save_table(ensemble, f"04_ensembles__{dataset}")

# %% [markdown]
# ## Headline comparisons (McNemar, same pairs; each method at its best template)

# %%
if ready:
    best = accuracy.best_templates(scores)
    comparisons = []
    for model in model_list:
        s = scores[scores.model == model]
        for a, b in [(l_method, baseline), (p_method, baseline), (p_method, l_method)]:
            ca, cb = significance.paired_correct(s, (a, best[(model, a)]), (b, best[(model, b)]))
            comparisons.append({"model": model, "a": f"{a} (t{best[(model, a)]})", "b": f"{b} (t{best[(model, b)]})",
                                **significance.mcnemar(ca, cb)})
        matrix = ensembles.predictor_matrix(s, p_method, l_method)
        top = ensemble[(ensemble.model == model) & ensemble.setting.isin(ensembles.SETTINGS)]
        setting = top.loc[top.accuracy.idxmax(), "setting"]
        first_trial = ensembles.trial_votes(matrix, setting, trials, seed)[0][:, 0]
        single = max([(p_method, best[(model, p_method)]), (l_method, best[(model, l_method)])],
                     key=lambda mt: matrix[f"{'P' if mt[0] == p_method else 'L'}{mt[1]}"].mean())
        label = f"{'P' if single[0] == p_method else 'L'}{single[1]}"
        comparisons.append({"model": model, "a": f"ensemble {setting} (trial 1)", "b": f"{single[0]} (t{single[1]})",
                            **significance.mcnemar(first_trial, matrix[label].to_numpy())})
    headline = pd.DataFrame(comparisons)
    display(headline.round(4))
    report.save_table(headline, f"04_mcnemar__{dataset}")

# %% [markdown]
# ## Figure 3: accuracy by phenomenon beside human agreement

# %%
if ready:
    phen = paradigms.phenomena_with_humans(scores[scores.method.isin([baseline, l_method, p_method])])
    report.save_table(phen, f"04_phenomena__{dataset}")
    for model in model_list:
        fig = plots.phenomena_vs_humans(phen[phen.model == model], f"{model} on {dataset}: accuracy by phenomenon")
        plots.save(fig, figures / f"04_phenomena__{model}__{dataset}")

# %% [markdown]
# ## Figure 4: word-shuffling paradigms vs the others (Figure 5: attractors)

# %%
if ready and "word_shuffle" in scores:
    shuffle = paradigms.word_shuffle_paradigms(scores[scores.method.isin([baseline, l_method, p_method])])
    display(paradigms.word_shuffle_means(shuffle).round(3))
    report.save_table(paradigms.word_shuffle_means(shuffle), f"04_word_shuffle__{dataset}")
    sv = paradigms.attractors(scores[scores.method.isin([baseline, l_method, p_method])])
    display(sv.round(3))
    report.save_table(sv, f"04_attractors__{dataset}")
    for model in model_list:
        plots.save(plots.word_shuffle_dots(shuffle[shuffle.model == model], f"{model}: word-shuffling paradigms"),
                   figures / f"04_word_shuffle__{model}__{dataset}")
        plots.save(plots.attractor_bars(sv[sv.model == model], f"{model}: subject-verb agreement by attractor"),
                   figures / f"04_attractors__{model}__{dataset}")

# %% [markdown]
# ## Table 10: share of "A" answers of A/B prompting

# %%
if ready and ab_method:
    shares = prompting.ab_answers(scores)
    display(shares.round(3))
    report.save_table(shares, f"04_ab_share__{dataset}")
