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
#   paper's way) and by comparing the two answer tokens' log-probs (the fast path).
#
# **Part 2 (Hu & Levy 2023)**: Direct probability vs MetaQuestionSimple, MetaInstruct and
# MetaQuestionComplex prompts on word prediction, word comparison, sentence judgment and
# sentence comparison, with internal consistency (Pearson r of each prompt's differential
# with the Direct one).

# %% tags=["parameters"]
model = "demo-en"  # registry name, local folder or Hugging Face id (instruct models use chat templates)
dataset = "blimp"  # a pairs dataset of 01_data_prep (English or Chinese)
methods = "all"  # prompting methods: yesno, yesno_released, ab (a list, comma-separated, or "all")
templates = [1, 2, 3, 4, 5]  # prompt template ids
limit = None  # pairs per paradigm (the first ones); None means all pairs
seed = 42  # seed for the slot of the acceptable sentence in A/B prompting
use_outlines = True  # also decode A/B answers with outlines (constrained greedy); the logit path always runs
hu_levy_sets = "default"  # Hu and Levy stimulus sets (list or comma-separated); "default" picks by language; "none" skips
hu_levy_limit = None  # items per Hu and Levy stimulus set; None means all
batch_size = "auto"  # "auto" (batches by a token budget) or a fixed number of sequences
quant = "auto"  # "auto" (the registry default), None, "4bit" or "8bit"

# %%
import pandas as pd
from IPython.display import display

from helpers import data, metalinguistic, methods as method_registry, paths
from helpers.analysis import accuracy, prompting as prompting_tables
from helpers.readout import run_methods, select_pairs
from helpers.results import load_files, safe_name
from helpers.scoring import scorer_for
from helpers.templates import template_ids

template_list = template_ids(templates)
method_list = method_registry.method_names(methods, method_registry.PROMPT_METHODS)
pairs = select_pairs(data.load_processed(dataset), limit)
language = str(pairs["language"].iloc[0])
scorer = scorer_for(model, quant=quant, batch_size=None if batch_size == "auto" else int(batch_size))
spec = scorer.model.helpers_spec
if hu_levy_sets == "default":
    hl_sets = ["hl_p18", "hl_news", "hl_dtfit", "hl_blimp", "hl_syntaxgym"] if language == "en" else ["hl_mandarin"]
elif hu_levy_sets in ("none", None):
    hl_sets = []
else:
    hl_sets = [s.strip() for s in hu_levy_sets.split(",")] if isinstance(hu_levy_sets, str) else list(hu_levy_sets)
tag = f"{safe_name(model)}__{dataset}"
tables = paths.OUTPUTS / "tables"
tables.mkdir(parents=True, exist_ok=True)
print(f"{len(pairs):,} pairs of {dataset}; {model} is {'an instruct' if spec.is_instruct else 'a base'} model: "
      f"{'chat' if spec.is_instruct else 'base'} templates; methods: {', '.join(method_list)}")

# %% [markdown]
# ## Part 1 · Yes/No and A/B prompting

# %%
files = run_methods(scorer, pairs, method_list, template_list, model_name=model, dataset=dataset, limit=limit,
                    seed=seed, use_outlines=use_outlines)
scores = load_files(files)
first = scores.iloc[0]
print("rendered prompt of the first item (exactly as scored):\n" + repr(first.get("prompt_good", first.get("prompt"))))

# %% [markdown]
# Table 3 rows: accuracy (mean ± sd over templates), the best template and ties.

# %%
t3 = accuracy.table3(scores)
display(accuracy.format_table3(t3))
t3.to_csv(tables / f"03_prompting__{tag}.csv", index=False)

# %% [markdown]
# A/B prompting: the share of "A" answers (Ide et al. Table 10; the acceptable sentence is in
# slot A for about half the pairs) and the agreement of the outlines and logit paths.

# %%
if "ab" in method_list:
    ab = prompting_tables.ab_answers(scores)
    display(ab.round(3))
    ab.to_csv(tables / f"03_ab_answers__{tag}.csv", index=False)
    diff = prompting_tables.disagreements(scores) if use_outlines else pd.DataFrame()
    print(f"outlines vs logit disagreements: {len(diff)}")
    display(diff.head(10))

# %% [markdown]
# ## Part 2 · Direct probability vs metalinguistic prompts (Hu & Levy 2023)

# %%
if hl_sets:
    hl_items, hl_summary = metalinguistic.run_experiments(scorer, hl_sets, hu_levy_limit)
    display(hl_summary.round(3))
    hl_summary.to_csv(tables / f"03_hu_levy__{safe_name(model)}.csv", index=False)
    for (stimuli, task), table in hl_items.items():
        table.to_csv(tables / f"03_hu_levy_items__{safe_name(model)}__{stimuli}__{task}.csv", index=False)
