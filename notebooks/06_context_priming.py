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
# # 06 · Judgments under priming contexts (Sinha et al. 2023)
#
# Sinha et al. ("Language model acceptability judgements are not always robust to context")
# put a prefix of sentences before **both** sentences of each minimal pair and watch the
# judgment move: long in-domain acceptable prefixes raise accuracy, in-domain unacceptable
# ones drive it far below chance, out-of-domain prefixes move it a little, WikiText not at all.
#
# Prefix types: `in_acceptable` / `in_unacceptable` (good / bad sentences of the target's own
# BLiMP paradigm or SyntaxGym suite), `out_acceptable` / `out_unacceptable` (of other
# paradigms or suites) and `wikitext` (WikiText-103 test sentences). Each prefix grows sentence
# by sentence to a grid of lengths in model tokens (the 400-token prefix extends the 200-token
# one), never past the model's positions. The default judgment is LP as in the paper; **any
# method** of 02 and 03 runs under the prefixes (the prefix goes before the whole input: before
# the template, before the prompt). The engine runs each prefix once for both sentences and all
# templates, and a longer prefix continues the cached shorter one.

# %% tags=["parameters"]
model = "demo-en-icl"  # registry name, local folder or Hugging Face id (demo-en-icl: the teaching model that shows the effect); a list: each in turn, compared in "Across models"
dataset = "blimp"  # "blimp" or "syntaxgym" (the 1,018-pair corpus of the 23 suites Sinha et al. primed)
methods = "lp"  # judgment methods under the prefixes: a list, comma-separated, or "all" (every method of 02 and 03)
templates = [1]  # template ids for templated and prompting methods
prefix_types = "all"  # in_acceptable, in_unacceptable, out_acceptable, out_unacceptable, wikitext (or "all")
lengths = [0, 25, 50, 100, 200, 400, 600, 800, 1000]  # target prefix lengths in model tokens (0: no prefix)
draws = 1  # prefixes drawn per pair and type
limit = 20  # pairs per paradigm (suite); None means all pairs
paradigms = "auto"  # "auto" (10 BLiMP paradigms drawn with draw_seed; all SyntaxGym suites), a number drawn with draw_seed, names, or None (all)
languages = "all"  # languages to score: "all" or codes (ISO 639-1 or 639-3), as in 02 (06's datasets are English)
drop_identical = False  # True: leave out pairs whose two sentences are the same string (BLiMP has 7)
draw_seed = 0  # seed of a drawn number of paradigms or languages (the same in every notebook and the sweep)
seed = 0  # seed of the prefix sampling and the bootstrap
# every setting of the table is a parameter too, by its name (-p quant 4bit, -p penlp_alpha 1.0, -p masked_variant within_word_l2r): python -m helpers settings lists them
phenomenon_sentences = 10  # sentences of one phenomenon (suite) before each target for Figures 6-8; 0 skips
parser = "spacy"  # dependency parser for the similarity analysis: "spacy" or "none" (token F1 only)
syntaxgym_regions = True  # dataset syntaxgym: region-based pass rates per suite (plain and word-corrected surprisal)
shards = 1  # split the target pairs into this many shards (by paradigm, then position) scored by separate runs
shard = None  # with shards > 1: the shard (1 to shards) this run scores; None: read all shards' files as one run (an error names any not scored)

# %%
import warnings

from IPython.display import display

from helpers import data, methods as method_registry
from helpers.plots import priming as plots_priming
from helpers.plots import similarity as plots_similarity
from helpers.data import priming
from helpers.analysis import accuracy, prefix_similarity, primed_separability, priming_effects, priming_tables
from helpers.reporting import headline
from helpers.reporting.notebook import NotebookReport
from helpers.data.picking import choose
from helpers.data.selection import DatasetSelection, select
from helpers.runs.primed import primed_input
from helpers.runs.run import Run
from helpers.store import load_files
from helpers.settings.lists import parse_list

if dataset not in priming.PRIMED_DATASETS:
    raise ValueError(f"06 primes the pairs of {' or '.join(priming.PRIMED_DATASETS)}, not {dataset!r}")
type_list = parse_list(prefix_types, list(priming.PREFIX_TYPES), what="prefix type")
length_list = parse_list(lengths, what="length", convert=int)
selection = choose(dataset, limit, languages=languages, paradigms=priming.paradigm_choice(dataset, paradigms),
                   drop_identical=drop_identical, seed=draw_seed)
# settings (every setting by its name), every model checked (a list: the sections up to "Across models" are
# the first's), the first model's scorer, the pairs this run scores (a shard, or the whole run) and the methods
# its kind can run (the others are named with the reason); a bad value stops here, before anything is scored
run = Run.from_parameters(globals(), methods=method_registry.READOUT_METHODS + method_registry.PROMPT_METHODS,
                          selection=selection)
scorer, part, settings, models, method_list, template_list = (run.scorer, run.selection, run.settings, run.models,
                                                              run.methods, run.templates)
if note := priming.teaching_subset(dataset, paradigms, limit, len(selection), len(data.load(dataset))):
    warnings.warn(note)  # the teaching defaults, said out loud (a sweep's log shows it too)
count = priming.token_counter(scorer.tokenizer)
group = "phenomenon" if dataset == "blimp" else "paradigm"  # what single-group prefixes are drawn from
config = run.config(prefix_types=type_list, lengths=length_list, draws=draws, limit=limit,
                    paradigms=selection.paradigms, seed=seed, phenomenon_sentences=phenomenon_sentences)
tag = run.tag()  # tables of a shard: its pairs
report = NotebookReport("06_context_priming", config, tag)
print(f"{len(part):,} target pairs of {dataset}; {scorer.name} ({scorer.max_positions} positions); "
      f"methods: {', '.join(method_list)}")
for row in run.not_applicable.itertuples():
    print(f"not applicable: {row.not_applicable}")

# %% [markdown]
# ## The prefixes
#
# One row per (pair, prefix type, length, draw), each with its text; `capped` marks prefixes
# that stopped growing at the model's positions, `exhausted` those whose pool ran out (small
# SyntaxGym suites). Prefixes are drawn for the whole selection (each pair's draw is seeded by the
# pair), and a shard scores its pairs' rows of this table, bit for bit as the unsharded run.

# %%
prefixes = priming.build_prefixes(selection.frame, count, pool=data.load_processed(dataset),
                                  prefix_types=type_list, lengths=length_list, draws=draws, seed=seed,
                                  max_positions=scorer.max_positions,
                                  short_pool="stop" if dataset == "syntaxgym" else "error")
summary = priming_tables.prefix_summary(prefixes)
display(summary.round(1))
report.table(summary, "prefixes", sources=[])
print("example:", repr(prefixes[prefixes.target_length == prefixes.target_length.max()].prefix.iloc[0][:300]))

# %% [markdown]
# ## Scores under every prefix (or reuse finished score files)
#
# With `shards` > 1, a run with `shard` = k scores the k-th shard of the pairs, bit for bit as the unsharded
# run (its tables cover those pairs); `shard = None` scores nothing: it reads the shards' files as one run,
# or stops with an error naming the shards not scored yet.

# %%
files = run.files(method_list, *primed_input(part, prefixes))
scores = report.sources = load_files(files)
print(f"{len(scores):,} judgments in {len(files)} score files; {scorer.record()['tokens_run']:,} tokens run this session")

# %% [markdown]
# ## The answer without a prefix: accuracy per method, with its 95% interval
#
# The baseline every priming effect below is measured against: each method's accuracy on the target pairs
# alone, its 95% interval and n, and what changes how to read it.

# %%
head = headline.of(scores[scores["prefix_type"] == "none"], "06_context_priming", dataset)
report.table(head.table, "headline", note=head.note)
head

# %% [markdown]
# ## Figure 2: baselined accuracy by prefix type and length
#
# Accuracy with the prefix minus accuracy of the same pairs without one (eq. 2), 95% bootstrap
# intervals over pairs. A tie counts wrong; the tables give beside each accuracy (and the
# baseline's) the ties' share, the expected accuracy (a tie half) and the accuracy with every tie right.

# %%
fig2 = priming_effects.figure2(scores)
display(accuracy.in_percent(fig2))
report.table(fig2, "figure2")
report.figure(plots_priming.baselined_accuracy(fig2, f"{scorer.name} on {dataset}: prefix types"), "figure2")

# %% [markdown]
# ## Figures 3-5: acceptable vs unacceptable, in- vs out-of-domain

# %%
compared = priming_effects.comparisons(scores)  # each figure whose two sides' prefix types were scored
for name, table in compared.items():
    by, _, title = priming_effects.COMPARED[name]
    report.table(table, name)
    report.figure(plots_priming.baselined_accuracy(table, title, by=by), name)
if left := [name for name in priming_effects.COMPARED if name not in compared]:
    print(f"not drawn: {', '.join(left)} (prefix_types={prefix_types!r} scores one of their two sides or none)")
longest = fig2[fig2.target_length == fig2.target_length.max()]
display(longest[["method", "prefix_type", "target_length", "accuracy", "baseline", "delta", "ci_low", "ci_high"]]
        .round(3))

# %% [markdown]
# ## PMI under priming
#
# The same judgments read by PMI-normalised LP: each sentence's log-probability after the prefix
# minus its log-probability alone, so a pair is right when the prefix raises the acceptable
# sentence more than the unacceptable one. Beside it, the accuracy of the scores as stored; ties
# count wrong, and each accuracy comes with its ties' share, expected accuracy (a tie half) and
# accuracy with every tie right (PMI's with the suffix `_pmi`).

# %%
if set(method_list) & set(priming_effects.PMI_METHODS):
    pmi = priming_effects.pmi_accuracy(scores)
    display(pmi.round(3))
    report.table(pmi, "pmi")
else:
    print(f"PMI applies to {', '.join(priming_effects.PMI_METHODS)} (log-probabilities); none of them was scored")

# %% [markdown]
# ## Mixed-effects logistic regressions
#
# correct ~ log(length) x domain x acceptability (sum-coded; domain[in] = +1,
# acceptability[acceptable] = +1) with a random intercept per paradigm, and BLiMP vs WikiText
# (length x source). Fitted with statsmodels' `BinomialBayesMixedGLM` (Laplace/MAP); the test
# suite checks the fixed effects against R's `lme4::glmer`.

# %%
fits = priming_effects.regressions(scores)
display(fits[["method", "regression", "term", "estimate", "se", "z", "p_value"]].round(4))
report.table(fits, "regressions")

# %% [markdown]
# ## Appendix C: the perplexity margin
#
# The gap between the pair's two scores against prefix length (dashed: without a prefix).

# %%
margin = priming_effects.perplexity_margin(scores)
report.table(margin, "margin")
report.figure(plots_priming.perplexity_margin(margin, f"{scorer.name} on {dataset}: score margin"), "margin")

# %% [markdown]
# ## Separability under priming (Sinha et al. x Hu et al. 2025)
#
# Does a prefix make grammatical and ungrammatical sentences separable when pooled, or does it
# move the two sentences of a pair together? Per method, prefix type and length: the AUC of all
# good against all bad scores, unpaired (Hu et al.'s prediction 3: near chance without a prefix
# even where pair accuracy is high), and Pearson r of the good and bad scores across pairs, each
# with a 95% bootstrap interval, beside the pair accuracy; a pair's scores are its means over
# draws. The no-prefix row is the baseline (dashed line). `scores_alone` is False for methods that
# score both sentences in one input (comparative LP, A/B): their pooled AUC compares answers, not
# sentences.

# %%
separable = primed_separability.primed_separability(scores, seed=seed)
display(separable.round(3))
report.table(separable, "separability")
report.figure(plots_priming.separability(separable, f"{scorer.name} on {dataset}: separability under priming"),
              "separability")

# %% [markdown]
# ## Section 5: does similarity to the prefix predict the judgment?
#
# Token F1 (the model's tokenizer) and dependency-label F1 between each prefix sentence and the
# target (mean over prefix sentences), and their point-biserial correlation with correctness,
# over acceptable prefixes only (a tie wrong); beside it the accuracy of those rows with its tie
# range, and the correlation when a tie counts half (`r_ties_half`) and right (`r_ties_right`).

# %%
labels = prefix_similarity.spacy_parser() if parser == "spacy" else None
primed = priming_tables.with_targets(scores[scores.prefix_type != priming.NO_PREFIX], selection.frame)
similar = prefix_similarity.item_similarity(primed, tokenizer=scorer.tokenizer, parser=labels)
r_table = prefix_similarity.correctness_correlation(
    similar, [c for c in ("token_f1", "dep_f1") if c in similar], acceptable="acceptability",
    by=["method", "target_length"])
display(r_table.round(3))
report.table(r_table, "similarity")

# %% [markdown]
# ## Figures 6-8: prefixes from one phenomenon (suite), overlap and gains
#
# Ten acceptable sentences of one source phenomenon (BLiMP) or suite (SyntaxGym) before every
# target pair; the accuracy matrix (rows source, columns target) against the token and
# dependency overlap of the groups (Spearman), and the gain over no prefix (Figure 8).

# %%
if phenomenon_sentences:
    pool = data.load_processed(dataset)
    pool = pool if group == "phenomenon" else pool.assign(phenomenon=pool.paradigm)
    targets = selection.frame if group == "phenomenon" else selection.frame.assign(phenomenon=selection.frame.paradigm)
    single = priming.single_phenomenon_prefixes(targets, count, pool=pool, n_sentences=phenomenon_sentences,
                                                seed=seed, max_positions=scorer.max_positions)
    single_part = DatasetSelection(dataset, targets, limit=limit).for_shards(shard, shards)  # as `part`
    single_scores = load_files(run.files(method_list[:1], *primed_input(single_part, single)))
    accuracy_matrix = prefix_similarity.accuracy_matrix(single_scores)  # a tie counted wrong; the range below
    tie_note = f"; {int(single_scores.tie.sum())} ties counted wrong (range: Figure 8's table)" if single_scores.tie.any() else ""
    overlaps = {"token": prefix_similarity.overlap_matrix(pool, prefix_similarity.token_features(scorer.tokenizer))}
    if labels is not None:
        overlaps["dependency"] = prefix_similarity.overlap_matrix(pool, labels)
    rho = priming_tables.correlations_with_tie_range(single_scores, overlaps)  # ties wrong, and right
    display(rho.round(3))
    report.table(rho, "overlap_spearman", sources=single_scores)
    report.figure(plots_similarity.matrices_figure(accuracy_matrix, overlaps, f"{scorer.name}: {group} x {group}{tie_note}"),
                  "figures6_7", sources=single_scores)
    base = scores[(scores.prefix_type == priming.NO_PREFIX) & (scores.method == method_list[0])]
    base = base.assign(phenomenon=base.paradigm if group == "paradigm" else base.phenomenon)
    gains = priming_tables.gain_matrix(accuracy_matrix, base.groupby("phenomenon")["correct"].mean())
    report.table(priming_tables.gains_with_tie_range(single_scores, base, "phenomenon"), "figure8_gains",
                 sources=single_scores)  # each gain with ties wrong, half and right, and the cell's ties
    report.figure(plots_similarity.matrix_heatmap(gains, f"accuracy gain after 10 sentences of one group{tie_note}",
                                                  label="gain", cmap="RdBu", center=0.0), "figure8", sources=single_scores)

# %% [markdown]
# ## SyntaxGym: region surprisal, every suite
#
# SyntaxGym's own test: sum of surprisal over a critical region, an item passing when every
# inequality (< or >) of its suite holds; fgd_hierarchy's second prediction, made of "=" only, is
# shown but not counted, as in Hu et al. (2020)'s released results (`syntaxgym_pass="strict"`
# counts it: then practically no item of that suite passes). The table gives each prediction's
# pass rate beside the item rate (`<method> p<i>`). `syntaxgym_word` corrects the region edges
# for tokenizers that attach a word's leading space to the next token (Pimentel & Meister 2024).

# %%
if dataset == "syntaxgym" and syntaxgym_regions:
    items = select("syntaxgym_items").for_shards(shard, shards)
    region_files = run.files(["syntaxgym", "syntaxgym_word"], items)  # the methods this kind can run
    for row in region_files.not_applicable.itertuples():
        print(f"not applicable: {row.not_applicable}")
    region_scores = load_files(region_files, token_columns=True)
    rates = priming_tables.suite_pass_rates(region_scores)
    display(rates.round(3))
    changed = priming_tables.verdict_changes(region_scores)
    print(f"{len(changed)} of {items.frame.shape[0]} items change their verdict with word-corrected surprisal")
    report.table(rates, "syntaxgym_suites", sources=region_scores, tag=scorer.name)

# %% [markdown]
# ## Across models
#
# With several models (`model` a list), the sections above are the first model's; each other model
# is loaded in turn and scored under its own prefixes (the same types, lengths, draws and seed,
# counted in its own tokens and capped at its positions; score files already stored are read, not
# recomputed). Then, every model together:
#
# - **the priming curves**: accuracy against prefix length, one panel per prefix type, one line
#   per model, starting at length 0 from the model's accuracy without a prefix on the same pairs,
#   with the 95% band of the baselined effect; a tie counts wrong, and a bar at each point runs up to
#   the accuracy with every tie right (a cross: the expected accuracy, a tie half);
# - **the effect at the longest prefix**: each model's accuracy minus its no-prefix accuracy
#   (Sinha et al.'s eq. 2) per prefix type, with its bootstrap 95% interval;
# - **the length interaction**: the change of that effect per doubling of the prefix (least-squares
#   slope against log2 length), and the log(length) terms of each model's mixed-effects regressions
#   (length alone and with domain, acceptability and source).
#
# Files are tagged with every model's name (`a+b__<dataset>`).

# %%
if len(models) > 1:
    import pandas as pd
    from helpers.analysis import cross_model, cross_model_priming
    from helpers.plots import cross_model_priming as plots_cross_priming

    cross_tag = cross_model.models_tag(models) + tag.removeprefix(scorer.name)  # "a+b__<dataset>"
    prefix_pool = data.load_processed(dataset)

    def prefixes_for(other):
        """The prefix grid above, counted in ``other``'s tokens and capped at its positions."""
        return priming.build_prefixes(selection.frame, priming.token_counter(other.tokenizer), pool=prefix_pool,
                                      prefix_types=type_list, lengths=length_list, draws=draws, seed=seed,
                                      max_positions=other.max_positions,
                                      short_pool="stop" if dataset == "syntaxgym" else "error")

    other_files = run.files(method_registry.method_names(methods, method_registry.READOUT_METHODS
                                                          + method_registry.PROMPT_METHODS),
                            lambda other: primed_input(part, prefixes_for(other)), models=models[1:])
    for row in other_files.not_applicable.itertuples():
        print(f"not applicable: {row.not_applicable}")
    others = load_files(other_files)
    every_model = files + other_files  # every model's score files: the sources of the tables below
    curves = pd.concat([fig2, priming_effects.figure2(others)], ignore_index=True)
    report.table(curves, "curves", sources=every_model, tag=cross_tag)
    report.figure(plots_cross_priming.priming_curves(curves, f"{', '.join(models)} on {dataset}: accuracy under "
                                                             "prefixes"), "curves", sources=every_model, tag=cross_tag)
    at_longest = cross_model_priming.longest_effects(curves)
    display(cross_model.side_by_side(at_longest, "delta", ["method", "prefix_type"]).round(3))
    report.table(at_longest, "longest_effects", sources=every_model, tag=cross_tag)
    slopes = cross_model_priming.length_slopes(curves)
    display(cross_model.side_by_side(slopes, "slope_per_doubling", ["method", "prefix_type"]).round(3))
    report.table(slopes, "length_slopes", sources=every_model, tag=cross_tag)
    length_terms = cross_model_priming.length_terms(pd.concat([fits, priming_effects.regressions(others)],
                                                              ignore_index=True))
    display(cross_model.side_by_side(length_terms, "estimate", ["method", "regression", "term"]).round(3))
    report.table(length_terms, "length_terms", sources=every_model, tag=cross_tag)
else:
    print("across models: give `model` as a list of two or more")

# %% [markdown]
# ## Paper check
#
# Sinha et al. (2023)'s numbers and Hu et al. (2020)'s SyntaxGym pass rates, each beside this
# run's value, for the paper's models (a run of another model, such as the demo models, is not
# expected to agree: the note says so), and what the papers show only in figures.

# %%
report.paper_check(region_scores if dataset == "syntaxgym" and syntaxgym_regions else scores)
