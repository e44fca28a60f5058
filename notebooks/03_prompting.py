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
# # 03 · Prompting: Yes/No probability, A/B prompting, and metalinguistic prompts
#
# Instead of reading a sentence's probability, ask the model about the sentence.
#
# **Part 1 (Ide et al. 2024, §3.3)**, over the 5 prompt templates of the dataset's language
# (chat templates for instruct models, base templates ending in "Answer: " otherwise):
#
# - `yesno`: P(Yes) / (P(Yes) + P(No)) at the answer position, from softmax probabilities
#   (the paper's equation 4; 是/否 for Chinese); the sentence with the higher value wins.
# - `yesno_released`: the ratio of the **raw logits**, logit(Yes) / (logit(Yes) + logit(No)),
#   which is what Ide et al.'s released code computes. It is not a probability: with negative
#   logits the ratio can rank sentences differently from eq. 4. Both are shown.
# - `ab`: both sentences as A and B, the acceptable one's slot drawn per pair with a fixed
#   seed; the answer by greedy decoding constrained to exactly "A" or "B" with outlines (the
#   paper's way). `ab_logit` decides the same prompts by comparing the two answer tokens'
#   log-probs (the fast path); their agreement is shown below.
#
# **Part 2 (Hu & Levy 2023)**: Direct probability vs MetaQuestionSimple, MetaInstruct and
# MetaQuestionComplex prompts on word prediction, word comparison, sentence judgment and
# sentence comparison, with internal consistency (Pearson r of each prompt's differential
# with the Direct one).

# %% tags=["parameters"]
model = "demo-en"  # registry name, local folder or Hugging Face id (instruct models use chat templates)
dataset = "blimp"  # a pairs dataset of 01_data_prep (English or Chinese)
methods = "all"  # prompting methods: yesno, yesno_released, ab, ab_logit (a list, comma-separated, or "all")
templates = [1, 2, 3, 4, 5]  # prompt template ids
limit = None  # pairs per paradigm (the first ones); None means all pairs
seed = 42  # seed for the slot of the acceptable sentence in A/B prompting
use_outlines = True  # decide A/B by constrained decoding with outlines (method "ab"); False runs ab_logit only
hu_levy_sets = "default"  # Hu and Levy stimulus sets (list or comma-separated); "default" picks by language; "none" skips
hu_levy_prompts = "all"  # Hu and Levy prompt types: direct, metaQuestionSimple, metaInstruct, metaQuestionComplex
hu_levy_limit = None  # items per paradigm of each Hu and Levy stimulus set; None means all
batch_size = "auto"  # "auto" (batches by a token budget) or a fixed number of sequences
quant = "auto"  # "auto" (the registry default), None, "4bit" or "8bit"

# %%
from IPython.display import display

from helpers import methods as method_registry
from helpers.analysis import accuracy, hu_levy, prompting as prompting_tables, report
from helpers.data.selection import select
from helpers.methods.hu_levy import PROMPT_TYPES, TASKS, default_sets
from helpers.results import load_files
from helpers.runner import run_methods
from helpers.scoring import scorer_for
from helpers.selection import parse_selection

template_list = parse_selection(templates, [1, 2, 3, 4, 5], what="template", convert=int)
method_list = method_registry.method_names(methods, method_registry.PROMPT_METHODS)
if not use_outlines and "ab" in method_list:
    method_list.remove("ab")  # "ab" is the constrained-decoding decision; ab_logit stays
selection = select(dataset, limit)
scorer = scorer_for(model, quant=quant, batch_size=None if batch_size == "auto" else int(batch_size))
hl_sets = (default_sets(selection.language) if hu_levy_sets == "default"
           else parse_selection(hu_levy_sets, list(TASKS), what="Hu & Levy stimulus set", none=["none"]))
hl_prompts = parse_selection(hu_levy_prompts, list(PROMPT_TYPES), what="Hu & Levy prompt type")
instruct = scorer.loaded.is_instruct
config = {"notebook": "03_prompting", "model": model, "dataset": dataset, "methods": method_list,
          "templates": template_list, "limit": limit, "seed": seed, "use_outlines": use_outlines,
          "hu_levy_sets": hl_sets, "hu_levy_prompts": hl_prompts, "hu_levy_limit": hu_levy_limit}
tag = f"{scorer.loaded.name}__{dataset}"
print(f"{len(selection):,} pairs of {dataset}; {model} is {'an instruct' if instruct else 'a base'} model: "
      f"{'chat' if instruct else 'base'} templates; methods: {', '.join(method_list)}")

# %% [markdown]
# ## Part 1 · Yes/No and A/B prompting

# %%
files = run_methods(scorer, selection, method_list, template_list, seed=seed, use_outlines=use_outlines)
scores = load_files(files)
first = scores.iloc[0]
print("rendered prompt of the first item (exactly as scored):\n" + repr(first.get("prompt_good", first.get("prompt"))))

# %% [markdown]
# Table 3 rows: accuracy (mean ± sd over templates), the best template and ties.

# %%
t3 = accuracy.table3(scores)
display(accuracy.format_table3(t3))
report.save_table(t3, f"03_prompting__{tag}", config=config, sources=scores)

# %% [markdown]
# A/B prompting: the share of "A" answers (Ide et al. Table 10; the acceptable sentence is in
# slot A for about half the pairs) and the agreement of the outlines decision (`ab`) with the
# logit decision (`ab_logit`), and the pairs where they differ.

# %%
ab_methods = [m for m in ("ab", "ab_logit") if m in method_list]
if ab_methods:
    ab = prompting_tables.ab_answers(scores, ab_methods)
    display(ab.round(3))
    report.save_table(ab, f"03_ab_answers__{tag}", config=config, sources=scores)
if len(ab_methods) == 2:
    agree = prompting_tables.agreement(scores)
    display(agree.round(3))
    report.save_table(agree, f"03_ab_agreement__{tag}", config=config, sources=scores)
    diff = prompting_tables.disagreements(scores)
    print(f"outlines vs logit disagreements: {len(diff)}")
    display(diff.head(10))

# %% [markdown]
# ## Part 2 · Direct probability vs metalinguistic prompts (Hu & Levy 2023)
#
# Each stimulus set runs its tasks with every prompt type through the same runner and store;
# the summary gives each prompt's accuracy measure and its internal consistency (Pearson r of
# its differential with the Direct one).

# %%
hl_files = []
for stimuli in hl_sets:
    hl_files += run_methods(scorer, select(stimuli, hu_levy_limit), TASKS[stimuli], hl_prompts)
if hl_files:
    hl_scores = load_files(hl_files)
    hl_summary = hu_levy.summarize(hl_scores)
    display(hl_summary.round(3))
    report.save_table(hl_summary, f"03_hu_levy__{scorer.loaded.name}", config=config, sources=hl_scores)
