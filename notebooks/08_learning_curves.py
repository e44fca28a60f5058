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
# # 08 · Learning curves over training checkpoints
#
# How each method's accuracy grows over training, per phenomenon, as the BabyLM evaluation
# pipeline draws it. Pythia's and OLMo's training checkpoints are revisions of their Hub
# repositories (`EleutherAI/pythia-160m` at `step1000`, OLMo at `step1000-tokens4B`); each revision
# is scored as a model of its own, `<model>@<revision>`, by the scoring notebooks (02, 03):
#
#     python -m helpers sweep --notebooks 02 08 --models EleutherAI/pythia-160m --revisions step0,step1000,step143000
#
# scores every revision (locally one after another, or as a Slurm job array with `--executor slurm`)
# and then runs this notebook, which reads the stored scores only (no model). With a revision not
# scored yet the first cell stops with an error naming what to run.
#
# - **The step of a revision** is read from its name: Pythia's `stepN`, OLMo's `stepN-tokensMB`
#   (the tokens go into the table too), a Trainer folder's `checkpoint-N`, or a plain number; give
#   `steps` (revision -> step) for other names (`main`, a commit).
# - **Accuracy** of a method at a step: the share of pairs judged right (a tie is an error), per
#   template, then the mean over templates (`sd` over templates beside it); per phenomenon and over
#   all pairs ("all phenomena").
# - **The figure**: one panel per phenomenon, one line per method, chance at 0.5; a log x axis when
#   the steps span two orders of magnitude or more (from 0, the initialisation, where it is one).

# %% tags=["parameters"]
model = "EleutherAI/pythia-160m"  # the model whose revisions were scored: a registry name or Hugging Face id
revisions = "step0,step1000,step8000,step64000,step143000"  # its revisions: a list or comma-separated
dataset = "blimp"  # the dataset the scoring notebooks scored
methods = "lp,meanlp,intemplate_lp"  # methods whose stored scores to draw: a list or comma-separated
steps = None  # revision -> training step for revisions whose names hold none, e.g. {"main": 143000}

# %%
from IPython.display import display

from helpers.analysis import learning_curves as curves
from helpers.plots import learning_curves as plots
from helpers.reporting import headline
from helpers.reporting.notebook import NotebookReport
from helpers.reporting.outputs import required_scores
from helpers.runs.reading import stored_choice
from helpers.settings.lists import parse_list

config = dict(model=model, revisions=revisions, dataset=dataset, methods=methods, steps=steps)
points = curves.checkpoints(model, parse_list(revisions, what="revision"), steps)  # a revision without a step stops here
method_list = list(dict.fromkeys(parse_list(methods, what="method")))
settings, chosen = stored_choice(globals(), refused={"revision": "08 reads the revisions of `revisions`, each scored "
                                                    "as a model of its own: list them there"})  # a misspelt name stops
config |= settings.given_values()
scores = required_scores(list(points.model), dataset, method_list, where=chosen)  # an error naming what to run
report = NotebookReport("08_learning_curves", config, f"{model}__{dataset}", sources=scores)
display(points)
print(f"{len(scores):,} stored decisions of {len(points)} revisions of {model} on {dataset}")

# %% [markdown]
# ## The answer per revision: accuracy per method, with its 95% interval

# %%
head = headline.of(scores, "08_learning_curves", dataset)
report.table(head.table, "headline", note=head.note)
head

# %% [markdown]
# ## Accuracy per method, phenomenon and step

# %%
table = curves.learning_curves(scores, points)
report.table(table, "learning_curves")
display((100 * curves.wide(table).set_index(["phenomenon", "step"])).round(1))

# %% [markdown]
# ## Figure: accuracy against training step, one panel per phenomenon

# %%
fig = plots.learning_curves(table, f"{model} on {dataset}: accuracy by training step")
report.figure(fig, "learning_curves")
