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
# # 02 · Probability readouts (Ide et al. 2024, §3.1–3.2)
#
# Each minimal pair is judged by which sentence the model scores higher:
#
# | method | input | score |
# |---|---|---|
# | `lp`, `meanlp`, `penlp` | the sentence alone, after the document-start token | sum of token log-probs; / length; / ((5+len)/6)^0.8 |
# | `slor`, `bf_uniform`, `bf_unigram` | the sentence alone | LP against a unigram model (mean per token), a uniform model, a unigram model |
# | `intemplate_lp`, `_meanlp`, `_penlp` | the sentence inside each of 5 templates ("The following sentence is grammatically acceptable.\n\n{sentence}") | the measure over the **whole input** (as Ide et al. report); the target-only measure is stored too |
# | `comparative_lp` | a template with the target in slot A and the other sentence in slot B | LP of the whole input |
#
# Every setting of the table (`python -m helpers settings`: `start`, `share`, `quant`, `dtype`, `penlp_alpha`,
# `max_tokens`, `masked_variant`, ...) is a parameter of this notebook by its name (`-p quant 4bit`), whether or
# not the parameters cell shows it, and takes the same name in the sweep and `python -m helpers score`; the
# settings become one `Settings` object, checked once; "auto" is the model's own value (its registry entry:
# the paper's setup). The first line printed says what the run used; every table's sidecar records every
# setting, and every score file the settings its numbers depend on.
#
# A tie counts as an error. Scores go to the results store (`outputs/scores/`), so later
# notebooks analyse them without the model; a rerun skips finished files.

# %% tags=["parameters"]
model = "demo-en"  # registry name (python -m helpers models), local folder or Hugging Face id; a list: the tables are the first's, the per-language ones every model's
dataset = "blimp"  # a pairs dataset of 01_data_prep: blimp, climp, zhoblimp, sling, syntaxgym, li, rublimp (ru), jblimp (ja), ...
methods = "all"  # readout methods: a list, a comma-separated string, or "all"
limit = None  # pairs per paradigm (the first ones); None means all pairs
languages = "all"  # languages to score: "all", codes (ISO 639-1 or 639-3: "eng" or "en"; a list or "eng,nld"), or a number drawn with draw_seed
paradigms = "all"  # paradigms to score: "all", names (a list or "a,b"), or a number drawn with draw_seed
draw_seed = 0  # seed of a drawn number of languages or paradigms (the same in every notebook and the sweep)
drop_identical = False  # True: leave out pairs whose two sentences are the same string (blimp, sling, multiblimp_word_order, turblimp, blimp_nl, qfrblimp)
explanations = None  # grammar prompting (Scheinberg et al. 2025): a file of each paradigm's explanation (JSON/YAML paradigm -> text, or CSV/TSV paradigm,explanation), placed before every judgment; None: none
endings = False  # True: judge each pair by its two endings after its context, as BHS's own code does (a dataset with context, ending_good, ending_bad columns: bhs); with meanlp that is BHS's score
length_matched = False  # True: the phenomenon table and figure read only the pairs whose two sentences have as many tokens (05's length analysis)
shards = 1  # split the pairs into this many shards (by paradigm, then position) scored by separate runs
shard = None  # with shards > 1: the shard (1 to shards) this run scores; the store reads complete shards as one run
precision_check = False  # True: the last section scores the model in float32, bfloat16, NF4 and int8 and compares
precision_limit = 10  # pairs per paradigm the precision check scores (None: all; it loads the model four times)
# every setting of the table is a parameter too, by its name (-p quant 4bit, -p penlp_alpha 1.0, -p masked_variant within_word_l2r): python -m helpers settings lists them
precision_methods = "default"  # "default" (lp, intemplate_lp, yesno, ab) or methods as above, for the precision check

# %%
from IPython.display import display

from helpers import methods as method_registry
from helpers.plots import accuracy as plots
from helpers.analysis import accuracy, length_bias
from helpers.analysis import languages as language_results
from helpers.analysis.languages import several_languages
from helpers.plots import languages as plots_languages
from helpers.reporting import headline
from helpers.reporting.notebook import NotebookReport
from helpers.data import linking
from helpers.engine.unknown_tokens import selection_texts, unknown_share
from helpers.runs.run import Run
from helpers.store import load_files

# settings, model, a shard's pairs (or the whole run), and the methods this kind of model can run (the others
# are listed with the reason in Table 3); a bad value stops here, before the model loads
run = Run.from_parameters(globals(), methods=method_registry.READOUT_METHODS)
scorer, selection, settings, method_list, template_list = run.scorer, run.selection, run.settings, run.methods, run.templates
report = NotebookReport("02_readout", run.config(limit=limit),
                        run.tag())  # tables of a shard: its pairs
print(f"{len(selection):,} pairs ({selection.frame.paradigm.nunique()} paradigms) of {dataset}; model "
      f"{scorer.name} ({scorer.provenance()['dtype']}, start token {scorer.record()['start_token']}); methods: {', '.join(method_list)}")
unknown = unknown_share(scorer.tokenizer, selection_texts(selection.frame))  # run_methods warns above 1%
print(f"characters the tokenizer makes unknown ({unknown.unk_token or 'it has no unknown token'}): {unknown.share:.2%} "
      f"of {unknown.characters:,} in {unknown.texts:,} of {unknown.of_texts:,} sentences"
      + (f", e.g. {', '.join(unknown.examples)}" if unknown.examples else ""))

# %% [markdown]
# ## Score (or reuse finished score files)

# %%
files = run.files()
scores = report.sources = load_files(files)
print(f"{len(files)} score files; forward passes this run: {scorer.record()['forward_calls']}")

# %% [markdown]
# ## The answer: accuracy per method, with its 95% interval
#
# Percent of pairs where the method prefers the grammatical sentence (a tie counted wrong), its 95%
# interval and n, the difference from the best method on the same pairs with a paired test, and the
# paper's number where one exists; under it, what changes how to read them. The tables below break it
# down (Table 3: over templates; by phenomenon; by language).

# %%
head = headline.of(scores, "02_readout", dataset)
report.table(head.table, "headline", note=head.note)
head

# %% [markdown]
# ## Table 3: accuracy per method (mean ± sd over templates), best template, ties
#
# A method the model's kind cannot run (it needs a scorer feature this model's scorer lacks) is
# listed with the reason instead of a number.

# %%
t3 = accuracy.with_not_applicable(accuracy.table3(scores), run.not_applicable)
display(accuracy.format_table3(t3))
report.table(t3, "readout")
print(linking.describe(dataset, scorer.record()['start_convention'], endings))

# %% [markdown]
# In-template methods measured over the target sentence only (stored beside the whole-input
# variant):

# %%
t3_target = accuracy.table3_target_only(scores)
if len(t3_target):
    display(accuracy.format_table3(t3_target))
    report.table(t3_target, "readout_target_only")

# %% [markdown]
# ## Accuracy by phenomenon (best template of each method)
#
# Where the data has human judgments (BLiMP's validation per paradigm, QFrBLiMP's 13 annotators
# per pair), the last column is the humans' agreement with the labels. Each cell of the figure shows
# its n and a ° where its 95% interval covers 50%; `length_matched=True` draws them on the pairs
# whose two sentences have as many tokens, so that length cannot decide (notebook 05 analyses it).

# %%
read, matched = length_bias.length_matched(scores) if length_matched else (scores, "")
phenomena = accuracy.by_phenomenon(read)
matrix = accuracy.phenomenon_matrix(phenomena)
display((100 * accuracy.phenomenon_matrix(phenomena, humans=True)).round(1))
name = "readout_phenomena" + ("_length_matched" if length_matched else "")
report.table(phenomena, name)
fig = plots.phenomenon_heatmap(matrix, head.title(f"{scorer.name} on {dataset}: accuracy by phenomenon{matched}"),
                               counts=accuracy.phenomenon_matrix(phenomena, value="pairs"))
report.figure(fig, name)

# %% [markdown]
# ## Accuracy by language
#
# For a dataset of several languages (MultiBLiMP, its word-order pairs, BHS, XCOMPS), each language's
# accuracy, best first (MultiBLiMP's Figure 3), and within it each relation or agreement type; the dot is
# the expected accuracy (a tie counted half), the line runs from every tie wrong to every tie right. Given a
# list of models (`model="a,b"`), the table and figure hold every model's, side by side.

# %%
if several_languages(scores):  # with a list of models, each model's (scored or found, one loaded at a time)
    across = load_files(run.files(models=run.models)) if len(run.models) > 1 else scores
    by_language = language_results.by_language(across)
    display((100 * language_results.language_matrix(by_language)).round(1))
    every = run.tag(models=run.models)  # "a+b__<dataset>" with several models: never the first model's alone
    report.table(by_language, "readout_languages", tag=every)
    report.table(language_results.by_language(across, within="phenomenon"), "readout_languages_phenomena", tag=every)
    report.figure(plots_languages.language_ranges(by_language, f"{' and '.join(run.models) if len(run.models) > 1 else scorer.name} "
                                                  f"on {dataset}: accuracy by language"), "readout_languages", tag=every)
else:
    print(f"one language ({selection.language}): the tables above are its results")

# %% [markdown]
# ## Paper check
#
# Ide et al. (2024) Tables 3 and 9 for the readout methods and the BLiMP paper's GPT-2 accuracy,
# each beside this run's value, for the paper's models (a run of another model, such as the demo
# models, is not expected to agree: the note says so), and what the papers show only in figures.

# %%
report.paper_check(scores)

# %% [markdown]
# ## What a lower precision costs each method (`precision_check=True`)
#
# Ide et al. ran their 30B+ models in 4-bit NF4. With `precision_check=True` this section loads the
# model in float32, bfloat16, 4-bit NF4 (bfloat16 compute) and 8-bit LLM.int8 in turn, scores LP,
# in-template LP, Yes/No and A/B (the templates above; `precision_methods` to choose) on the first
# `precision_limit` pairs of every paradigm, and compares each precision with float32 pair by pair:
# decision flips (count and share; a tie is an error), accuracy and its change with McNemar's exact
# p, the mean absolute change of a score (in the method's units) and the size of the loaded weights.
# Off by default: it costs four model loads and four scoring passes. Scores go to
# `outputs/precision/` (a rerun reuses them); `python -m helpers precision --model ... --dataset ...`
# runs the same from the command line, and `data/models/demo-en/README.md` holds demo-en's table on BLiMP.

# %%
from IPython.display import Markdown

from helpers.zoo.precision import markdown as precision_markdown
from helpers.zoo.precision import precision_report, summary as precision_summary

if precision_check:
    check = precision_report(model, dataset, None if precision_methods == "default" else
                             method_registry.method_names(precision_methods), precision_limit,
                             settings=settings.but(quant="auto", dtype="auto"))  # the precisions set these
    report.table(check.table, "readout_precision", sources=[str(f) for f in check.score_files])
    display(Markdown(precision_markdown(check.table)))
    print(precision_summary(check.table, "nf4"))
else:
    print("precision check skipped (precision_check=False)")
