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

# %%
from pathlib import Path

import pandas as pd
from IPython.display import display

from helpers import data, methods as method_registry, paths, plots
from helpers.analysis import accuracy
from helpers.readout import run_methods, select_pairs, unigram_for
from helpers.results import load_files, safe_name
from helpers.scoring import scorer_for
from helpers.templates import template_ids

template_list = template_ids(templates)
method_list = method_registry.method_names(methods, method_registry.READOUT_METHODS)
pairs = select_pairs(data.load_processed(dataset), limit)
language = str(pairs["language"].iloc[0])
scorer = scorer_for(model, quant=quant, batch_size=None if batch_size == "auto" else int(batch_size))
needs_unigram = any(method_registry.get(m).needs_unigram for m in method_list)
unigram, unigram_source = unigram_for(scorer.tokenizer, language, unigram_corpus) if needs_unigram else (None, "")
tag = f"{safe_name(model)}__{dataset}"
print(f"{len(pairs):,} pairs ({pairs.paradigm.nunique()} paradigms) of {dataset}; model {model} "
      f"({scorer.model.dtype}, start token {scorer.start_policy}); methods: {', '.join(method_list)}")

# %% [markdown]
# ## Score (or reuse finished score files)

# %%
files = run_methods(scorer, pairs, method_list, template_list, model_name=model, dataset=dataset,
                     dataset_options={}, limit=limit, unigram=unigram, unigram_source=unigram_source)
scores = load_files(files)
print(f"{len(files)} score files; forward passes this run: {scorer.forward_calls}")

# %% [markdown]
# ## Table 3: accuracy per method (mean ± sd over templates), best template, ties

# %%
t3 = accuracy.table3(scores)
display(accuracy.format_table3(t3))

# %% [markdown]
# In-template methods measured over the target sentence only (stored beside the whole-input
# variant):

# %%
target_only = scores.dropna(subset=["correct_target"]) if "correct_target" in scores else scores.iloc[0:0]
if len(target_only):
    t3_target = accuracy.table3(target_only.assign(correct=target_only.correct_target.astype(bool),
                                                   tie=target_only.tie_target.astype(bool)))
    display(accuracy.format_table3(t3_target))

# %% [markdown]
# ## Accuracy by phenomenon (best template of each method)

# %%
matrix = accuracy.phenomenon_matrix(scores)
display((100 * matrix).round(1))
fig = plots.phenomenon_heatmap(matrix, f"{model} on {dataset}: accuracy by phenomenon")

# %%
tables = paths.OUTPUTS / "tables"
tables.mkdir(parents=True, exist_ok=True)
t3.to_csv(tables / f"02_readout__{tag}.csv", index=False)
accuracy.by_phenomenon(scores).to_csv(tables / f"02_readout_phenomena__{tag}.csv", index=False)
saved = plots.save(fig, paths.OUTPUTS / "figures" / f"02_readout_phenomena__{tag}")
print("wrote", tables / f"02_readout__{tag}.csv", "and", ", ".join(p.name for p in saved))
