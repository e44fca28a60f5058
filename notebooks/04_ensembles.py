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
# `03_prompting` (Yes/No, A/B) first; with nothing stored, the first cell stops with an error naming
# what to run.
#
# - **Ensembles**: 10 predictors, Yes/No (P) and in-template LP (L) over their 5 templates.
#   Each setting draws 5 of the 10 without replacement (P-only 5+0, Mix-P3 3+2, Mix-L3 2+3,
#   L-only 0+5), judges each pair by majority vote, and averages 10 seeded trials; next to
#   the oracle (best single template) of each method. A predictor that tied on a pair does not
#   vote (`ties = "abstain"`, the default: the pair is right when more voters are right than
#   wrong); `ties = "wrong"` counts its vote as wrong instead.
# - **Ties both ways**: every accuracy counts a tie (an ensemble's even split of its voters) as an
#   error, and beside it gives the share of ties, the expected accuracy (a tie counts half) and
#   the accuracy with every tie right: the range from the accuracy to that bound.
# - **Phenomena** against human agreement (Figure 3), **subject-verb agreement by attractor**
#   (Figure 4), **word-shuffling** vs other paradigms (Figure 5), and the **share of "A"
#   answers** of A/B prompting (Table 10).
# - **Beyond the paper**: bootstrap 95% confidence intervals (resampling pairs, seeded) for the
#   accuracies, and McNemar's paired test for the headline comparisons; **where methods
#   disagree** (per pair, which models, methods, templates and precisions decided otherwise, and
#   how often two of them agree) and the **split-half reliability** of each method's accuracy
#   per paradigm.
#
# Every table and figure is written with a sidecar `<file>.json` naming the parameters below,
# the score files used and the git commit.

# %% tags=["parameters"]
model = "demo-en"  # model(s) whose scores to analyse: one name, a list or comma-separated
dataset = "blimp"  # dataset scored by 02_readout and 03_prompting
p_method = "yesno"  # the P predictors of the ensembles
l_method = "intemplate_lp"  # the L predictors of the ensembles
baseline = "lp"  # the sentence-probability baseline of the headline comparisons
ab_method = "ab"  # A/B method for the share of "A" answers (Table 10): "ab" (greedy constrained: the letters' logits, or outlines) or "ab_logit"; None skips it
trials = 10  # seeded ensemble trials per setting
ties = "abstain"  # a tied predictor's ensemble vote: "abstain" (it does not vote) or "wrong" (counts as wrong)
seed = 0  # seed of the ensemble draws and the bootstrap
resamples = 2000  # bootstrap resamples for the confidence intervals
margin = 0.01  # across models: a method wins a phenomenon when it beats the other by at least this accuracy (1 point)
k_models = None  # across models: phenomena marked when one method wins for at least k models; None means all models
splits = 1000  # random split-halves per predictor for the split-half reliability (its mean and central 95%)
precision_runs = True  # also compare the precision check's files (outputs/precision): one predictor per precision
top_items = 20  # rows of the table of the pairs the predictors disagree on most

# %%
from IPython.display import display

from helpers.plots import accuracy as plots
from helpers.plots import cross_model as plots_cross_model
from helpers.plots import disagreement as plots_disagreement
from helpers.analysis import accuracy, comparisons, cross_model, ensembles, paradigms, prompting, significance
from helpers.analysis import disagreement, precision_columns, split_half
from helpers.reporting import headline
from helpers.reporting.notebook import NotebookReport
from helpers.reporting.outputs import required_scores
from helpers.runs.reading import stored_choice

config = dict(model=model, dataset=dataset, p_method=p_method, l_method=l_method,
              baseline=baseline, ab_method=ab_method, trials=trials, ties=ties, seed=seed, resamples=resamples,
              margin=margin, k_models=k_models, splits=splits, precision_runs=precision_runs, top_items=top_items)
core = [baseline, l_method, p_method]
settings, chosen = stored_choice(globals())  # every setting by its name chooses the stored scores; a misspelt name stops
config |= settings.given_values()
scores = required_scores(model, dataset, core + ([ab_method] if ab_method else []),
                         {ab_method: "ab_method"}, where=chosen)  # an error naming what to run, or what to set instead
report = NotebookReport("04_ensembles", config, dataset, sources=scores)
print(f"{len(scores):,} stored decisions of {', '.join(scores.model.unique())} on {dataset}")

# %% [markdown]
# ## The answer: accuracy per method, with its 95% interval
#
# Percent of pairs where the method prefers the grammatical sentence (a tie counted wrong), its 95%
# interval and n, the difference from the best method on the same pairs with a paired test, and the
# paper's number where one exists; under it, what changes how to read them.

# %%
head = headline.of(scores, "04_ensembles", dataset)
report.table(head.table, "headline", note=head.note)
head

# %% [markdown]
# ## Accuracy per method and template, with bootstrap 95% CIs

# %%
per_template = significance.by_template_with_ci(scores, resamples, seed)
display(accuracy.in_percent(per_template))
report.table(per_template, "accuracy_ci")

# %% [markdown]
# ## Table 5: voting ensembles of Yes/No (P) and in-template LP (L)

# %%
ensemble = ensembles.ensembles_by_model(scores, p_method, l_method, trials, seed, resamples, ties)
display(accuracy.in_percent(ensemble.drop(columns="draws")))
report.table(ensemble, "ensembles")

# %% [markdown]
# ## Headline comparisons (McNemar, same pairs; each method at its best template)
#
# A tie counts as an error in the test, as in the accuracy tables; `a_only_b_tie` and
# `b_only_a_tie` count the discordant pairs whose wrong side is a tie, and `p_value_ties_out`
# repeats the test without them (a tie is no preference). Each side's tie range is beside it.

# %%
mcnemar_table = comparisons.headline(scores, ensemble, baseline, l_method, p_method, trials, seed, ties)
display(mcnemar_table.round(4))
report.table(mcnemar_table, "mcnemar")

# %% [markdown]
# ## Figure 3: accuracy by phenomenon beside human agreement

# %%
phenomena = paradigms.phenomena_with_humans(scores, core)
report.table(phenomena, "phenomena")
fig = plots.phenomena_vs_humans(phenomena, head.title(f"accuracy by phenomenon on {dataset}"))
report.figure(fig, "phenomena")

# %% [markdown]
# ## Figure 4: subject-verb agreement by attractor (BLiMP)

# %%
if "attractor" in scores:
    sv = paradigms.attractors(scores, core)
    display(accuracy.in_percent(sv))
    report.table(sv, "attractors")
    fig = plots.attractor_bars(sv, head.title("subject-verb agreement by attractor"))
    report.figure(fig, "attractors")

# %% [markdown]
# ## Figure 5: word-shuffling paradigms vs the others (BLiMP)

# %%
if "word_shuffle" in scores:
    shuffle = paradigms.word_shuffle_paradigms(scores, core)
    shuffle_means = paradigms.word_shuffle_means(shuffle)
    display(accuracy.in_percent(shuffle_means))
    report.table(shuffle_means, "word_shuffle")
    fig = plots.word_shuffle_dots(shuffle, "word-shuffling paradigms")
    report.figure(fig, "word_shuffle")

# %% [markdown]
# ## Table 10: share of "A" answers of A/B prompting

# %%
if ab_method:
    shares = prompting.ab_answers(scores, ab_method)
    display(accuracy.in_percent(shares))
    report.table(shares, "ab_share")

# %% [markdown]
# ## Across models: Table 5 averaged, and the phenomena each method wins
#
# With several models (`model` a list), the ensembles' accuracy averaged over the models, and
# the phenomena where in-template LP beats Yes/No (or the reverse) by at least `margin` for at
# least `k_models` of the models, each method at its best template: the phenomena Ide et al.
# mark (bold in the figure). With one model these are that model's numbers.

# %%
ensemble_mean = cross_model.ensembles_mean(ensemble)
display(accuracy.in_percent(ensemble_mean))
report.table(ensemble_mean, "ensembles_mean")
wins = cross_model.phenomenon_wins(scores, l_method, p_method, margin, k_models)
display(wins.round(3))
report.table(wins, "phenomenon_wins")
fig = plots_cross_model.phenomenon_differences(wins, cross_model.phenomenon_differences(scores, l_method, p_method),
                                               f"{l_method} minus {p_method} per phenomenon on {dataset}")
report.figure(fig, "phenomenon_wins")

# %% [markdown]
# ## Where methods disagree
#
# A predictor is a (model, method, template, precision); every predictor's decision on each
# pair is set beside the others': right (1), wrong (0) or a tie (0.5), a tie being a decision of
# its own that agrees only with another tie. The precision is read from each score file's
# configuration; with `precision_runs`, the precision check's score files of these models
# (`python -m helpers precision`, under outputs/precision) add one predictor per precision they
# hold (a predictor the results store already has keeps the store's file).
#
# - **The pairs they disagree on most**: the pairs with more than one decision, the smallest
#   majority first (share of predictors agreeing with the most frequent decision; "split" when
#   two decisions are equally frequent), the entropy of the decisions in bits, and which
#   predictors said right, wrong and tie (a method's templates together: "yesno t1,3").
# - **Against the majority**: per predictor, the share of the pairs with a clear majority on
#   which it decided otherwise.
# - **Agreement**: for every two predictors, the share of pairs decided alike and Cohen's
#   kappa (scikit-learn; 0 is the agreement expected by chance), over the pairs both judged; with
#   several models a predictor is a (method, template, precision) and each model's pairs count.

# %%
judged = (precision_columns.with_precision_runs(scores, precision_columns.precision_store(), dataset,
                                                scores.model.unique(), scores.method.unique())
          if precision_runs else precision_columns.with_precision(scores))
matrix = disagreement.decision_matrix(judged)
items = disagreement.item_table(matrix)
print(f"{len(items):,} pairs judged by {matrix.shape[1]} predictors; "
      f"{int((items.distinct > 1).sum()):,} of them with more than one decision")
worst = disagreement.most_disagreed(items, top_items)
display(worst.round(3))
report.table(worst, "disagreement", sources=judged)
against = disagreement.dissent(matrix)
display(against.round(3))
report.table(against, "dissent", sources=judged)

# %%
pairs = disagreement.agreement(matrix)
report.table(pairs, "agreement", sources=judged)
fig = plots_disagreement.agreement_heatmaps(pairs, f"agreement of the predictors' decisions on {dataset}")
report.figure(fig, "agreement", sources=judged)

# %% [markdown]
# ### Split-half reliability of each method's accuracy per paradigm
#
# Whether a predictor's accuracies per paradigm would come out the same on other pairs of the
# same paradigms: each paradigm's pairs are split at random in two halves, the accuracy per
# paradigm is computed in each half, the two are correlated across paradigms (Pearson r) and
# stepped up to the full length by Spearman-Brown (2r / (1 + r)); the mean over `splits` seeded
# splits, with the central 95% of the splits' values (how much it depends on the split drawn).
# Level "method" pools a method's templates (template "all"), level "template" takes each alone;
# a tie counts as an error, as in the accuracy tables; beside it each predictor's accuracy with its
# tie range, and the reliability with every tie counted half and right. It needs 3 paradigms of 2 pairs or more,
# and some spread of the accuracies across paradigms: otherwise the value is empty and `reason`
# says why. Then per phenomenon, across the paradigms of each phenomenon.

# %%
reliability = split_half.split_half_table(judged, splits, seed)
display(reliability.round(3))
report.table(reliability, "reliability", sources=judged)
fig = plots_disagreement.reliability_dots(reliability, f"split-half reliability of the accuracy per paradigm "
                                                       f"on {dataset}")
report.figure(fig, "reliability", sources=judged)
by_phenomenon = split_half.split_half(judged, splits, seed, "method", within="phenomenon")
display(accuracy.in_percent(by_phenomenon))
report.table(by_phenomenon, "reliability_phenomena", sources=judged)

# %% [markdown]
# ## Paper check
#
# Ide et al. (2024) Table 5, Table 10 and the numbers of its text, each beside this run's value,
# for the paper's models (a run of another model, such as the demo models, is not expected to
# agree: the note says so), and what the papers show only in figures.

# %%
report.paper_check(scores)
