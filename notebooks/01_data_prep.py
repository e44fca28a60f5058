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
# # 01 · Data preparation
#
# Every benchmark of the four papers becomes **one canonical table**: one row per minimal
# pair with `dataset, language, paradigm, phenomenon, field, pair_id, good, bad` plus the
# dataset's own columns (BLiMP's flags, attractor type and human agreement; LI's human
# ratings; SyntaxGym regions). Single-sentence sets (CoLA) get `sentence, label`.
#
# The data come from the read-only mirror (`MINIMAL_PAIRS_DATA`, default `../shared/data`)
# and every file is checked against the sha256 recorded in `data/sources.yaml`. The tables
# are written to `data/processed/<dataset>.parquet`, which the other notebooks read.
#
# A dataset's **variants** are datasets of their own name, so that their tables and scores never
# mix: `blimp` is BLiMP's 67,000 pairs (Ide et al. 2024), `blimp_hu2025` the 66,993 that Hu et
# al. (2025) count; `sling_hu2025` and `li_hu2025` are the SLING and LI selections of Hu et al.,
# `cola_dev` CoLA's in-domain dev split. Notebook 07 reads only prepared variants: prepare them
# here (`datasets="blimp_hu2025,sling_hu2025,li_hu2025,cola_dev"`, or "all").
#
# Beyond English and Chinese: **RuBLiMP** (`rublimp`, Russian, Taktasheva et al. 2024: 45
# paradigms x 1,000 pairs built by perturbing corpus sentences, with each pair's `domain`
# (librusec, wikipedia, wikinews), `tree_depth` and changed words) and **JBLiMP** (`jblimp`,
# Japanese, Someya & Oseki 2023: the 331 human-validated pairs from linguistics articles, or the
# 367 before validation with `jblimp_subset="raw"`; `type` and `phenomenon_2` kept). Score them
# with a model trained on the language: the offline demo models know English or Chinese only,
# and Ide et al.'s templates and the mirror's unigram corpora exist for English and Chinese only,
# so the template-free readouts (lp, meanlp, penlp, bf_uniform) are the ones that run on them
# (SLOR and BF-unigram given a `unigram_corpus` of the language).
#
# Six benchmarks of 2024-26 are published on the **Hugging Face Hub**; four of them are read here from
# their **GitHub releases in the mirror** (checksummed like every file, a downloaded Hub copy read the
# same way and giving the same rows): **TurBLiMP** (`turblimp`, Turkish, Başar et al. 2025: 16
# phenomena x 1,000, 20 pairs with one sentence twice), **BLiMP-NL** (`blimp_nl`, Dutch,
# Suijkerbuijk et al. 2025: 84 paradigms x 100, 10 identical; 8 rows of the release that cut a
# sentence at a comma are mended), **BHS** (`bhs`, Kryvosheieva & Levy 2025: Basque agreement,
# Hindi aspect and Swahili noun-class agreement, 22 tests x 1,000; a pair is a context and each
# final word, and 02's `endings=True` scores the endings after the context as its code does) and
# **QFrBLiMP** (`qfrblimp`, Quebec French, Beauchemin et al. 2026: 1,761 pairs of 20 phenomena from
# the unshuffled file, whose 13 annotators' share choosing the acceptable sentence is the
# `human_agreement` column). **MultiBLiMP 1.0** (`multiblimp`, Jumelet et al., TACL 2026:
# subject-verb and subject-participle agreement in 101 languages, 121,305 pairs;
# `multiblimp_languages` picks ISO 639-3 codes such as "rus,pol") comes from the Hub, but the mirror
# holds four of its languages (eng 770, ell 1,096, nld 2,331, tur 1,742 pairs), and **XCOMPS**
# (`xcomps`, He et al. 2025: COMPS's conceptual minimal pairs in 17 languages) from the Hub only.
# They are downloaded once, on a machine that reaches the Hub, with
# `python -m helpers.data --download multiblimp --languages rus,pol` (or `xcomps`, ...) into
# `data/raw/hub/`, and every file is checked against the `hub-lock.yaml` written then. With
# `datasets="all"` the ones not here are listed below with the command and left out, so that
# `make data` runs offline; named on their own they must be there. The table's `identical` column
# counts each dataset's pairs with one sentence twice (02's `drop_identical=True` leaves them out).

# %% tags=["parameters"]
datasets = "all"  # dataset names: a list, a comma-separated string, or "all"
source = "mirror"  # "mirror", or "download" to fetch missing files into data/raw/ (needs network)
climp_add_period = True  # CLiMP: append "。" to every sentence, as Ide et al. (2024) do
sling_include_small = False  # SLING: also the 14 small paradigms of 40 pairs
jblimp_subset = "validated"  # JBLiMP: "validated" (the paper's 331 pairs) or "raw" (the 367 before validation)
multiblimp_languages = "all"  # MultiBLiMP: "all" (101 languages) or ISO 639-3 codes, e.g. "rus,pol"
cola_split = "in_domain_train"  # CoLA split: in_domain_train, in_domain_dev, out_of_domain_dev
examples = 2  # example pairs shown per dataset

# %%
import pandas as pd

from helpers import data
from helpers.methods import templates
from helpers.data import DataSource, blimp
from helpers.data.hub_status import prepare_plan
from helpers.data.selection import HU2025
from helpers.parameters import check_injected

check_injected(globals(), settings=False)  # a misspelt papermill parameter stops here (01 scores nothing: no settings)
data_source = DataSource.default(mode=source)  # the mirror, then data/raw/ (downloads go there)
print(f"mirror: {data_source.mirror}; downloads: {data_source.raw_dir}; mode: {data_source.mode}")
options = {  # the base datasets' options (a variant's are fixed by its name); the file records them
    "climp": {"add_period": climp_add_period},
    "sling": {"include_small": sling_include_small},
    "jblimp": {"subset": jblimp_subset},
    "multiblimp": {"languages": multiblimp_languages},
    "cola": {"split": cola_split},
}
names, hub_status = prepare_plan(datasets, data_source, options)  # "all": the Hub datasets not downloaded left out
for name, status in hub_status.items():
    print(f"{name} (Hugging Face Hub): {status}")
pd.set_option("display.max_colwidth", 80)

# %% [markdown]
# ## Read, validate and save

# %%
tables = {}
for name in names:
    tables[name] = data.prepare(name, source=data_source, **options.get(name, {}))
summary = data.summary(tables)
summary

# %% [markdown]
# ## Example pairs

# %%
for name, df in tables.items():
    cols = [c for c in ("paradigm", "good", "bad", "sentence", "label", "prefix", "continuation",
                        "good_continuation", "bad_continuation", "suite", "condition", "content") if c in df]
    print(f"\n== {name}")
    print(df[cols].head(examples).to_string(index=False))

# %% [markdown]
# ## BLiMP: word-shuffling paradigms and identical pairs
#
# Ide et al. (2024) call a paradigm *word-shuffling* when both sentences of every pair have
# the same bag of words (case ignored). BLiMP's own `lexically_identical` flag is broader:
# it also marks paradigms where the two sentences differ only in an inflection of the same word.

# %%
if "blimp" in tables:
    report = blimp.word_shuffle_report(tables["blimp"])
    print(f"word-shuffling paradigms: {int(report.word_shuffle_paradigm.sum())}; "
          f"lexically_identical paradigms: {int((report.lexically_identical == 1).sum())}; "
          f"paradigms where they differ: {int((~report.agrees).sum())}")
    print(f"pairs with identical sentences: {int(tables['blimp'].identical.sum())}")
    display_cols = ["paradigm", "word_shuffle", "lexically_identical"]
    print(report.loc[~report.agrees, display_cols].to_string(index=False))

# %% [markdown]
# ## MultiBLiMP: pairs per language
#
# The pairs read here per language beside the count of the dataset card (the table of
# `helpers/data/multiblimp_languages.py`), when MultiBLiMP was prepared.

# %%
if "multiblimp" in tables:
    from helpers.data.multiblimp_languages import LANGUAGES

    counts = tables["multiblimp"].groupby("lang").size()
    per_language = pd.DataFrame([{"iso": code, "language": LANGUAGES[code][0], "card": LANGUAGES[code][1],
                                  "here": int(n)} for code, n in counts.items()])
    print(f"{len(per_language)} languages; pairs differing from the card: "
          f"{int((per_language.card != per_language.here).sum())}")
    print(per_language.to_string(index=False))

# %% [markdown]
# ## Hu et al. (2025), Table 1
#
# The counts of the paper's datasets, for those prepared here: BLiMP and SLING without their
# pairs whose two sentences are identical (7 and 24), LI restricted to the pairs whose two
# sentences differ in length by at most one word (the rule that gives the paper's 1,883; see
# `helpers.data.english.load_li`).

# %%
hu = pd.DataFrame([{"dataset (paper)": label, "name": name, "paper": n, "here": len(tables[name])}
                   for label, (name, n) in HU2025.items() if name in tables])
hu

# %% [markdown]
# ## Template sets
#
# Ide et al.'s released templates carry two slips in the Chinese set; they are reported here
# and used as released, so that results stay comparable with the paper.

# %%
for note in templates.known_slips(source=data_source):
    print("-", note)
