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
# # 07 · What string probability says about grammaticality (Hu et al. 2025)
#
# Hu, Wilcox, Song, Mahowald and Levy argue that probability tracks grammaticality *within*
# minimal pairs but cannot separate grammatical from ungrammatical strings pooled together.
# Three predictions, five probability metrics (LP, MeanLP, SLOR, BF-uniform, BF-unigram):
#
# 1. within a pair, LP(good) and LP(bad) correlate, more so the closer the two sentences are
#    in meaning (bins of sentence-embedding cosine distance);
# 2. on LI, the model's LP difference tracks the human rating difference;
# 3. pooled and unpaired, grammatical and ungrammatical sentences overlap: AUC near chance
#    even where minimal-pair accuracy is high.
#
# Beyond the paper: the same AUC for Ide et al.'s prompt-based scores (in-template LP, Yes/No),
# isolated judgments on CoLA (threshold on train, Matthews correlation on in-domain dev), and
# MORCELA (Tjuatja et al. 2025): LP adjusted for frequency and length by weights fitted to LI's ratings.
# The datasets are Hu et al.'s Table 1 variants, prepared by 01 (`python -m helpers sweep
# --notebooks 01 --datasets blimp_hu2025,...`); scores come from the store, so a rerun scores nothing.

# %% tags=["parameters"]
model = "demo-en"  # registry name, local folder or Hugging Face id; a list: each in turn, compared in "Across models"
datasets = "all"  # Hu et al. Table 1 datasets (blimp_hu2025, scamp_plausible, scamp_implausible, syntaxgym, zhoblimp, sling_hu2025, cola, li_hu2025) or "all"
metrics = "all"  # lp, meanlp, slln_lp, lp_per_char, lp_per_byte, slor, bf_uniform, bf_unigram (or "all")
extra_methods = "penlp,intemplate_lp,yesno"  # single-sentence methods for the AUC and CoLA comparisons ("none" skips)
embedding_model = None  # sentence-transformers model for prediction 1; None: the paper's per language whenever it is in the cache (offline too), else a packaged stand-in, with a warning
limit = None  # items per paradigm of each dataset; None means all
languages = "all"  # languages: "all", codes ("eng" or "en"; "zh" keeps ZhoBLiMP and SLING) or a number drawn with draw_seed; datasets without them are left out
paradigms = "all"  # paradigms: "all", names (each dataset keeps those it has; one with none is left out) or a number drawn with draw_seed in each dataset
draw_seed = 0  # seed of a drawn number of languages or paradigms (the same in every notebook and the sweep)
bins = 10  # equal-size cosine-distance bins
seed = 0  # seed of the bootstrap intervals
# every setting of the table is a parameter too, by its name (-p quant 4bit, -p penlp_alpha 1.0, -p masked_variant within_word_l2r): python -m helpers settings lists them
shards = 1  # split each dataset's items into this many shards (by paradigm, then position) scored by separate runs
shard = None  # with shards > 1: the shard (1 to shards) this run scores; None: the analyses read all shards' files as one run (an error names any not scored)

# %%
import pandas as pd
from IPython.display import display

from helpers import methods as method_registry
from helpers.plots import separability as plots
from helpers.analysis import isolated, pair_correlation as pc, separability as sep
from helpers.runs.across_models import sentence_jobs
from helpers.runs.run import Run, model_major
from helpers.runs.teaching import score_teaching
from helpers.reporting import headline
from helpers.reporting.notebook import NotebookReport
from helpers.data.picking import choose_each
from helpers.data.selection import HU2025, select
from helpers.store import load_files
from helpers.settings.lists import parse_list

dataset_list = parse_list(datasets, [name for name, _ in HU2025.values()], what="dataset")
metric_list = parse_list(metrics, list(sep.METRICS), what="metric")
extras = parse_list(extra_methods, method_registry.READOUT_METHODS + method_registry.PROMPT_METHODS,
                         what="method", none=["none"])
selections = choose_each(dataset_list, limit, languages=languages, paradigms=paradigms, seed=draw_seed, prepared_only=True)
dataset_list = [name for name in dataset_list if name in selections]  # those with the languages and paradigms asked
if "cola" in selections:
    selections["cola_dev"] = select("cola_dev", limit, prepared_only=True)
selections = {name: s.for_shards(shard, shards) for name, s in selections.items()}  # a shard's items, or all
part = next(iter(selections.values())).shard  # the same part of every dataset's run (None: unsharded)
# settings (every setting by its name; one template), every model checked (a list: the sections up to
# "Across models" are the first's) and the first model's scorer; a bad value stops here, before anything is scored
run = Run.from_parameters({**globals(), "templates": [1]})
scorer, settings, models = run.scorer, run.settings, run.models
if extras:  # those this kind of model can run; the others are named with the reason
    extras, not_applicable = method_registry.applicable(extras, scorer)
    for reason in not_applicable.not_applicable:
        print(f"not applicable: {reason}")
tag = run.tag(scorer.name, part)  # a shard's files and notebook
analyse = part is None or not part.scored  # a shard job scores only; the analyses read the whole run
# prediction 1's embedding model per language: the paper's whenever it is in the cache, else a stand-in (warned)
embedders = pc.embedders(embedding_model, [lang for n, s in selections.items() if n != "cola" for lang in s.languages]) \
    if analyse else {}
config = {"model": model, "datasets": dataset_list, "metrics": metric_list,
          "extra_methods": extras, "embedding_model": embedders,
          "limit": limit, "bins": bins, "seed": seed, "draw_seed": draw_seed, **settings.given_values()}  # every setting, recorded
report = NotebookReport("07_separability", config, tag)
display(pd.DataFrame([{"dataset": n, "items": len(s), "language": s.language} for n, s in selections.items()]))

# %% [markdown]
# ## Score every sentence (one engine pass gives every metric)
#
# With `shards` > 1, a run with `shard` = k scores the k-th shard of every dataset, bit for bit as the
# unsharded run, and stops there (the analyses below need the whole run); a run with `shard = None` scores
# nothing: it reads the shards' files as one run and analyses the whole, or stops with an error naming the
# shards not scored yet.

# %%
files = [f for part in run.files_each(sentence_jobs(selections, extras)) for f in part]
scores = report.sources = load_files(files, token_columns=False)
readouts = scores[scores.method.isin(sep.METRICS)]
table = sep.metrics_table(readouts, metric_list)
print(f"{len(table):,} sentences; unigram corpus: {table.unigram_source.dropna().unique().tolist()}")

# %% [markdown]
# ## The answer: minimal-pair accuracy per metric, with its 95% interval
#
# Per dataset with minimal pairs: percent of pairs where the metric scores the grammatical sentence
# higher (a tie counted wrong), its 95% interval and n, the difference from the best metric on the same
# pairs with a paired test, and what changes how to read them. Prediction 3 below sets these beside the
# AUC of the same sentences pooled.

# %%
pair_sets = [n for n in dataset_list if n not in ("cola", "li_hu2025")]
if pair_sets and analyse:
    head = headline.of_each(sep.pair_decisions(table[table.dataset.isin(pair_sets)], metric_list), "07_separability",
                            seed=seed)
    report.table(head.table, "headline", note=head.note)
    display(head)

# %% [markdown]
# ## Teaching panel (Figure 1b): probability mixes meaning and grammar
#
# The eight strings {The, A} {moon, moons} {emerge, emerges} are the data set `moon_teaching`, scored by LP
# through the store like any other (a rerun reads the file and loads no model).

# %%
if analyse:
    panel = score_teaching(scorer, settings)  # the LP file of data set moon_teaching: found in the store on a rerun
    display(panel)
    report.figure(plots.teaching_panel(panel), "teaching", sources=panel)

# %% [markdown]
# ## Prediction 1: within-pair correlation, by cosine-distance bin
#
# Sentence embeddings depend on the dataset and the embedding model, not on the language model:
# each dataset's are computed once into `data/cache/embeddings/<embedding model>/<dataset>.parquet`
# (with their provenance) and read by every model's run; `python -m helpers embed --datasets ...`
# computes whole datasets ahead (BLiMP's 133,938 sentences take minutes on a CPU).

# %%
if pair_sets and analyse:
    frames = pd.concat([selections[n].frame for n in pair_sets], ignore_index=True)
    pairs = pc.with_pair_text(sep.pairs_wide(table[table.dataset.isin(pair_sets)]), frames, ["language"])
    pairs = pc.assign_bins(pc.with_distances(pairs, embedders), n_bins=bins)
    binned = pc.binned_correlations(pairs, "lp_good", "lp_bad", seed=seed)
    display(binned.round(3))
    report.table(binned, "prediction1", sources=readouts)
    report.figure(plots.pair_scatter(pairs), "prediction1_scatter", sources=readouts)
    report.figure(plots.binned_r(binned), "prediction1_bins", sources=readouts)

# %% [markdown]
# ## Prediction 2: model vs human deltas on LI
#
# Pairs below the 75th percentile of Levenshtein distance; the mirror holds per-sentence mean
# z-scores (not per-participant responses), so the human side is read, not recomputed.

# %%
if "li_hu2025" in dataset_list and analyse:
    li = pc.with_pair_text(sep.pairs_wide(table[table.dataset == "li_hu2025"]), selections["li_hu2025"].frame,
                           ["language", "rating_good", "rating_bad"])
    deltas = pc.li_deltas(li)
    kept = deltas[deltas.kept]
    overall = pc.correlation(kept.model_delta, kept.human_delta, seed=seed)
    print(f"LI: {len(kept)} of {len(deltas)} pairs kept; r = {overall['r']:.3f} "
          f"[{overall['ci_low']:.3f}, {overall['ci_high']:.3f}]")
    li_bins = pc.binned_correlations(pc.assign_bins(pc.with_distances(kept, embedders), n_bins=bins),
                                     "model_delta", "human_delta", seed=seed)
    display(li_bins.round(3))
    report.table(li_bins, "prediction2", sources=readouts)
    report.figure(plots.li_scatter(deltas), "prediction2", sources=readouts)

# %% [markdown]
# ## MORCELA: learned frequency and length adjustments (Tjuatja et al. 2025)
#
# MORCELA(s) = (LP - β · unigram LP + γ) / |s|, fitted with a scale and an intercept by least
# squares to LI's per-sentence ratings (each sentence its own mean z-score, as the paper); SLOR is
# β = 1, γ = 0. Held out: 5 folds of LI pairs (both sentences of a pair in one fold, shuffled by
# `seed`); each fold's MORCELA (and the authors' ablations β = 1 and γ = 0) against LP, MeanLP,
# PenLP and SLOR on the same held-out sentences. BLiMP: the fit on all of LI applied unchanged (no
# BLiMP fit), each linking function's per-paradigm accuracy correlated with BLiMP's human agreement
# (a tie wrong; beside each accuracy its ties' share, expected accuracy and accuracy with every tie right).
# The unigram table is the model tokenizer's, the one SLOR uses above.

# %%
from helpers.analysis import morcela as mo
from helpers.plots import morcela as morcela_plots

if "li_hu2025" in dataset_list and analyse:
    li_sentences = mo.rated_sentences(sep.metrics_table(readouts[readouts.dataset == "li_hu2025"], ["lp", "slor"]),
                                      selections["li_hu2025"].frame)
    fitted = mo.evaluate(li_sentences, seed=seed)
    display(fitted.params.round(3))
    display(fitted.heldout.round(3))
    report.table(fitted.params, "morcela_params", sources=readouts)
    report.table(fitted.heldout, "morcela_heldout", sources=readouts)
    blimp_corr = None
    if "blimp_hu2025" in dataset_list:
        by_paradigm, blimp_corr = mo.blimp_agreement(
            sep.metrics_table(readouts[readouts.dataset == "blimp_hu2025"], ["lp", "slor"]),
            selections["blimp_hu2025"].frame.groupby("paradigm").human_agreement.first(), fitted.params)
        display(blimp_corr.round(3))
        report.table(blimp_corr, "morcela_blimp", sources=readouts)
        report.table(by_paradigm, "morcela_blimp_paradigms", sources=readouts)
    report.figure(morcela_plots.morcela_summary(fitted.heldout, fitted.folds, fitted.params, blimp_corr),
                  "morcela", sources=readouts)

# %% [markdown]
# ## Prediction 3: AUC of pooled sentences, beside minimal-pair accuracy (Figures 5-9)
#
# Pair accuracy counts a tie wrong; its table gives the ties, their share, the expected accuracy (a
# tie half) and the accuracy with every tie right.

# %%
if analyse:
    auc_sets = [n for n in dataset_list if n in ("blimp_hu2025", "scamp_plausible", "scamp_implausible", "syntaxgym",
                                                 "li_hu2025", "cola")]
    long = sep.metrics_long(table[table.dataset.isin(auc_sets)])
    if extras:
        long = pd.concat([long, sep.sentence_scores(scores[scores.dataset.isin(auc_sets)], extras)], ignore_index=True)
    auc = sep.auc_table(long, seed=seed)
    display(auc.pivot_table(index="dataset", columns="method", values="auc").round(3))
    report.table(auc, "auc")
    accuracy = sep.pair_accuracy(table)
    display(accuracy.pivot_table(index="dataset", columns="method", values="accuracy").round(3))
    report.table(accuracy, "pair_accuracy", sources=readouts)
    report.figure(plots.score_distributions(long, auc=auc), "figure5")
    report.figure(plots.roc_curves(sep.roc_table(long)), "roc")
    report.figure(plots.accuracy_beside_auc(accuracy, auc, title=head.title("High pair accuracy, low AUC") if pair_sets
                                            else "High pair accuracy, low AUC"), "figure9")

# %% [markdown]
# ## Isolated judgments on CoLA
#
# Each single-sentence score thresholded (threshold chosen on CoLA train to maximise MCC),
# Matthews correlation on the in-domain dev set.

# %%
if "cola" in dataset_list and analyse:
    mcc = isolated.isolated_judgments(sep.dataset_sentences(scores, "cola", metric_list, extras),
                                      sep.dataset_sentences(scores, "cola_dev", metric_list, extras))
    display(mcc.round(3))
    report.table(mcc, "cola_mcc")
    report.figure(plots.mcc_bars(mcc), "cola_mcc")

# %% [markdown]
# ## Across models
#
# With several models (`model` a list), the sections above are the first model's; each other model
# is loaded in turn and scores the same datasets with the same metrics and extra methods (those its
# kind can run; score files already stored are read, not recomputed). Then, every model together:
# the AUC of pooled sentences per dataset and method side by side, the models x methods AUC table,
# the within-pair correlation of LP(good) and LP(bad) per dataset (prediction 1 over all pairs, and
# per cosine-distance bin: the sentence embeddings are the dataset's, shared by every model) and a
# figure of both. Files are tagged with every model's name (`a+b`).

# %%
if len(models) > 1:
    from helpers.analysis import cross_model, cross_model_separability as cross_sep
    from helpers.plots import cross_model_separability as plots_cross_sep

    cross_tag = cross_model.models_tag(models) + tag.removeprefix(scorer.name)  # "a+b"
    asked = parse_list(extra_methods, method_registry.READOUT_METHODS + method_registry.PROMPT_METHODS,
                            what="method", none=["none"])
    other_parts = run.files_each(sentence_jobs(selections, asked), models=models[1:])
    other_files = model_major(other_parts)
    for reason in dict.fromkeys(r for part in other_parts for r in part.not_applicable.not_applicable):
        print(f"not applicable: {reason}")
else:
    print("across models: give `model` as a list of two or more")

# %%
if len(models) > 1 and analyse:  # a shard job scores its part of every model; the tables read the whole run
    other_scores = load_files(other_files, token_columns=False)
    every_model = files + other_files  # every model's score files: the sources of the tables below
    other_table = sep.metrics_table(other_scores[other_scores.method.isin(sep.METRICS)], metric_list)
    auc_models = pd.concat([auc, sep.auc_table(cross_sep.sentences_long(other_scores, metric_list, asked, auc_sets),
                                               seed=seed)], ignore_index=True)
    display(cross_model.side_by_side(auc_models, "auc", ["dataset", "method"]).round(3))
    report.table(auc_models, "auc_models", sources=every_model, tag=cross_tag)
    auc_by_model = cross_sep.auc_matrix(auc_models)
    display(auc_by_model.round(3))
    report.table(auc_by_model.reset_index(), "auc_matrix", sources=every_model, tag=cross_tag)
    pair_r = None
    if pair_sets:
        other_pairs = sep.pairs_wide(other_table[other_table.dataset.isin(pair_sets)]).merge(
            pairs[["dataset", "paradigm", "item", "distance"]], on=["dataset", "paradigm", "item"], how="left")
        pair_r = cross_sep.pair_correlations(pd.concat([pairs, other_pairs], ignore_index=True), seed=seed)
        display(cross_model.side_by_side(pair_r, "r", ["dataset"]).round(3))
        report.table(pair_r, "pair_r_models", sources=every_model, tag=cross_tag)
        binned_models = pd.concat([binned, pc.binned_correlations(pc.assign_bins(other_pairs, n_bins=bins), "lp_good",
                                                                  "lp_bad", seed=seed)], ignore_index=True)
        display(cross_model.side_by_side(binned_models, "r", ["dataset", "bin"]).round(3))
        report.table(binned_models, "prediction1_models", sources=every_model, tag=cross_tag)
    report.figure(plots_cross_sep.auc_across_models(auc_models, pair_r, f"{', '.join(models)}: AUC of pooled "
                                                    "sentences and within-pair correlation"), "auc_models",
                  sources=every_model, tag=cross_tag)

# %% [markdown]
# ## Paper check
#
# Hu et al. (2025)'s Table 1 and the numbers of its text, each beside this run's value, for the
# paper's models (a run of another model, such as the demo models, is not expected to agree: the
# note says so), and what the papers show only in figures.

# %%
if analyse:
    report.paper_check(scores)
