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
# A tie counts as an error. Scores go to the results store (`outputs/scores/`), so later
# notebooks analyse them without the model; a rerun skips finished files.

# %% tags=["parameters"]
model = "demo-en"  # registry name (python -m helpers models), local folder or Hugging Face id
dataset = "blimp"  # a pairs dataset of 01_data_prep: blimp, climp, zhoblimp, sling, syntaxgym, li, ...
methods = "all"  # readout methods: a list, a comma-separated string, or "all"
templates = [1, 2, 3, 4, 5]  # template ids (1 to 5) for the in-template and comparative methods
limit = None  # pairs per paradigm (the first ones); None means all pairs
batch_size = "auto"  # "auto" (batches by a token budget) or a fixed number of sequences
quant = "auto"  # "auto" (the registry default: 4-bit from 30B up), None, "4bit" or "8bit"
unigram_corpus = None  # text file for the SLOR and Bayes-factor unigram model; None means the mirror corpora
shards = 1  # split the pairs into this many shards (by paradigm, then position) scored by separate runs
shard = None  # with shards > 1: the shard (1 to shards) this run scores; the store reads complete shards as one run

# %%
from IPython.display import display

from helpers import methods as method_registry
from helpers.plots import accuracy as plots
from helpers.analysis import accuracy
from helpers.reporting.notebook import NotebookReport
from helpers.data.selection import select
from helpers.store import load_files
from helpers.runner import run_methods
from helpers.engine import scorer_for
from helpers.selection_parser import parse_selection

template_list = parse_selection(templates, [1, 2, 3, 4, 5], what="template", convert=int)
method_list = method_registry.method_names(methods, method_registry.READOUT_METHODS)
selection = select(dataset, limit).sharded(shard, shards)
scorer = scorer_for(model, quant=quant, batch_size=None if batch_size == "auto" else int(batch_size))
config = {"model": model, "dataset": dataset, "methods": method_list,
          "templates": template_list, "limit": limit, "unigram_corpus": unigram_corpus}
tag = f"{scorer.loaded.name}__{dataset}" + (f"__{selection.shard.tag}" if selection.shard else "")  # tables of a shard: its pairs
report = NotebookReport("02_readout", config, tag)
print(f"{len(selection):,} pairs ({selection.frame.paradigm.nunique()} paradigms) of {dataset}; model "
      f"{scorer.loaded.name} ({scorer.loaded.dtype}, start token {scorer.start_policy}); methods: {', '.join(method_list)}")

# %% [markdown]
# ## Score (or reuse finished score files)

# %%
files = run_methods(scorer, selection, method_list, {"templates": template_list, "unigram_corpus": unigram_corpus})
scores = report.sources = load_files(files)
print(f"{len(files)} score files; forward passes this run: {scorer.forward_calls}")

# %% [markdown]
# ## Table 3: accuracy per method (mean ± sd over templates), best template, ties

# %%
t3 = accuracy.table3(scores)
display(accuracy.format_table3(t3))
report.table(t3, "readout")

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

# %%
matrix = accuracy.phenomenon_matrix(scores)
display((100 * matrix).round(1))
report.table(accuracy.by_phenomenon(scores), "readout_phenomena")
fig = plots.phenomenon_heatmap(matrix, f"{scorer.loaded.name} on {dataset}: accuracy by phenomenon")
report.figure(fig, "readout_phenomena")

# %% [markdown]
# ## Paper check
#
# Ide et al. (2024) Tables 3 and 9 for the readout methods and the BLiMP paper's GPT-2 accuracy,
# each beside this run's value, for the paper's models (a run of another model, such as the demo
# models, is not expected to agree: the note says so), and what the papers show only in figures.

# %%
report.paper_check(scores)
