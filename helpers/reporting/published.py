"""The papers' published numbers, read where they lie: the CSV files of :func:`helpers.paths.papers`
(one row per number a paper prints; the folder's README.md describes them), turned into the
:class:`PaperValue` rows of the paper check, and what the papers show only in figures.

Percentages (and percentage points) become fractions, as everywhere in the check; the papers'
method, dataset and model names become this project's registered names.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import pandas as pd

from .. import paths
from ..data import papers


@dataclass(frozen=True)
class PaperValue:
    """One published number: which paper and file it comes from, what it measures, for which
    model, and which rows of a run's scores measure the same (``select``: column == value).
    ``comment`` is added to the row's note (for a number no run computes, it is the note)."""

    paper: str
    source: str
    quantity: str
    paper_model: str
    value: float
    select: dict
    measure: str  # a measure of paper_check.measure, or "none" (no run computes it)
    same_models: tuple[str, ...] = field(default=())  # registry names of the paper's own model
    comment: str = ""


PAPERS = {"ide2024": "Ide et al. 2024", "hu2025": "Hu et al. 2025", "hulevy2023": "Hu & Levy 2023",
          "sinha2023": "Sinha et al. 2023"}
FILES = ("ide2024_table3.csv", "ide2024_table4.csv", "ide2024_table5.csv", "ide2024_table9.csv",
         "ide2024_table10.csv", "ide2024_text_numbers.csv", "hu2025_table1.csv", "hu2025_text_numbers.csv",
         "hulevy2023_table5.csv", "hulevy2023_text_numbers.csv", "sinha2023_text_numbers.csv")
# Ide et al.'s names -> the registry's (helpers.models.registry, helpers.methods, helpers.data)
MODELS = {"Llama-3": "llama3", "Llama-3-Instruct": "llama3-instruct", "Mixtral": "mixtral",
          "Mixtral-Instruct": "mixtral-instruct", "Qwen2": "qwen2", "Qwen2-Instruct": "qwen2-instruct"}
METHODS = {"LP": "lp", "MeanLP": "meanlp", "PenLP": "penlp", "In-template LP": "intemplate_lp",
           "In-template MeanLP": "intemplate_meanlp", "In-template PenLP": "intemplate_penlp",
           "In-template compar. LP": "comparative_lp", "In-template comparative LP": "comparative_lp",
           "Yes/No prob comp": "yesno", "A/B prompting": "ab"}
DATASETS = {"BLiMP": "blimp", "CLiMP": "climp"}
NOTEBOOK_METHODS = {"02_readout": ("lp", "meanlp", "penlp", "intemplate_lp", "intemplate_meanlp", "intemplate_penlp",
                                   "comparative_lp"),
                    "03_prompting": ("yesno", "ab")}
TEMPLATED = ("intemplate_lp", "intemplate_meanlp", "intemplate_penlp", "comparative_lp", "yesno", "ab")

# What the papers show only in figures (README, "Numbers that only figures show"), per notebook.
FIGURES_ONLY = {
    "02_readout": ["Ide et al. 2024: the accuracy of each single template (the tables give only the mean, SD "
                   "and best of the 5 templates)"],
    "03_prompting": ["Ide et al. 2024: the accuracy of each single Yes/No and A/B template (only mean, SD and best)",
                     "Hu & Levy 2023 Figure 2: every task result per model and prompt (Exp. 1 log-prob, Exp. 2 "
                     "accuracy, Exp. 3a balanced accuracy, Exp. 3b accuracy)",
                     "Hu & Levy 2023 Figures 3 and 6: internal consistency (Pearson r with Direct)",
                     "Hu & Levy 2023 Figures 4-5: the results per dataset; Figures 7-10: the scatterplots",
                     "Hu & Levy 2023 Figure 11: the Mandarin results, except Exp. 3b's Direct ~0.6 and others "
                     "~0.8 (this check reads the Mandarin values from their released results instead)"],
    "04_ensembles": ["Ide et al. 2024 Figure 3: accuracy per phenomenon of in-template LP, Yes/No and humans",
                     "Ide et al. 2024 Figure 4: subject-verb agreement per attractor type, method and model (the "
                     "text gives only the 94.5% and 90.4% averages, nothing for relational nouns)",
                     "Ide et al. 2024 Figure 5: accuracy per paradigm (the text gives only averages)"],
    "05_length_bias": ["Ide et al. 2024 Figure 2: accuracy against the token-length difference, per model",
                       "Ide et al. 2024 Figure 6: the Pearson r of each model (Table 4 gives only the averages "
                       "over models)"],
    "06_context_priming": ["Sinha et al. 2023: every model's no-prefix baseline accuracy (not in the text)",
                           "Sinha et al. 2023 Figures 2-5 and 10-12: the baselined-accuracy curves by prefix type, "
                           "domain, length and model",
                           "Sinha et al. 2023 Figure 6 (overlap matrices), Figure 7 (GPT2 per phenomenon), Figure 8 "
                           "(SyntaxGym gain per suite), Figure 9 (perplexity margins)",
                           "Sinha et al. 2023: the regression coefficients (the text gives only p-value bounds)"],
    "07_separability": ["Hu et al. 2025 Figure 1b: GPT-2's surprisals of the 8 toy strings",
                        "Hu et al. 2025 Figure 3: within-pair Pearson r per dataset, model and cosine-distance bin",
                        "Hu et al. 2025 Figure 4: model-human delta correlations on LI and HLL, overall and per bin",
                        "Hu et al. 2025 Figures 5-8: score distributions, ROC curves and AUCs per model and metric "
                        "(the text says only that no AUC exceeds 0.75)",
                        "Hu et al. 2025 Figure 9: minimal-pair accuracy per dataset and metric (the text says ~80%)"],
}


class PapersMissing(FileNotFoundError):
    """The folder of the papers' published numbers (or one of its files) is not there."""


def read(name: str) -> pd.DataFrame:
    """One CSV of the papers folder, checked against data/sources.yaml (:mod:`helpers.data.papers`);
    :class:`PapersMissing` says what is missing and where to put it."""
    folder = paths.papers()
    path = folder / name if folder else None
    if path is None or not path.is_file():
        named = f"{paths.PAPERS_ENV}={folder}" if os.environ.get(paths.PAPERS_ENV) else str(folder)
        where = f"{named} has no {name}" if folder else f"there is no folder {paths.DEFAULT_PAPERS}"
        raise PapersMissing(f"the papers' published numbers are missing: {where}. Put the folder of CSVs "
                            f"({', '.join(FILES)}, with its README.md) at {paths.DEFAULT_PAPERS}, or set "
                            f"{paths.PAPERS_ENV} to the folder that holds them")
    return pd.read_csv(papers.verify(path), keep_default_na=False, dtype={"value": float})


def fraction(paper: str, metric: str, value: float) -> float:
    """``value`` as a fraction when the paper prints it in percent (or percentage points)."""
    percent = metric.endswith(("_pct", "_pp")) or (metric.startswith("accuracy") and paper != "hulevy2023")
    return value / 100 if percent else value


def _source(row) -> str:
    return f"{row['table']}, papers/{row['paper']}_{row['table'].lower().replace(' ', '')}.csv"


def _ide(row, quantity: str, select: dict, measure: str, comment: str = "") -> PaperValue:
    return PaperValue(PAPERS["ide2024"], _source(row), quantity, row["model"],
                      fraction("ide2024", row["metric"], row["value"]), select, measure,
                      (MODELS[row["model"]],) if row["model"] in MODELS else (), comment)


def _label(row) -> str:
    return f"{row['method']} ({METHODS[row['method']]}) on {row['dataset']}"


def ide_accuracy(notebook: str) -> list[PaperValue]:
    """Ide et al. Table 3 (mean over the 5 templates, or the single score) and Table 9 (best
    template) of the methods ``notebook`` runs. Table 9's sentence-readout rows repeat Table 3's
    single scores and are left out."""
    methods, out = NOTEBOOK_METHODS.get(notebook, ()), []
    t3 = read("ide2024_table3.csv")
    sd = {(r.model, r.dataset, r.method): r.value for r in t3[t3["metric"] == "accuracy_sd"].itertuples()}
    for _, r in t3[t3["metric"] != "accuracy_sd"].iterrows():
        ours = METHODS[r["method"]]
        if ours not in methods:
            continue
        select = {"dataset": DATASETS[r["dataset"]], "method": ours}
        if r["metric"] == "accuracy_mean":
            spread = sd[(r["model"], r["dataset"], r["method"])]
            out.append(_ide(r, f"Table 3: {_label(r)}, mean accuracy over the 5 templates (paper SD {spread} points)",
                            select, "template_mean"))
        else:
            out.append(_ide(r, f"Table 3: {_label(r)}, accuracy", select, "accuracy"))
    for _, r in read("ide2024_table9.csv").iterrows():
        ours = METHODS[r["method"]]
        if ours in methods and ours in TEMPLATED:
            out.append(_ide(r, f"Table 9: {_label(r)}, best-template accuracy",
                            {"dataset": DATASETS[r["dataset"]], "method": ours}, "template_max"))
    return out


def ide_share_a() -> list[PaperValue]:
    """Ide et al. Table 10: the share of "A" answers of A/B prompting, averaged over templates."""
    return [_ide(r, f"Table 10: share of 'A' answers, {_label(r)}, mean over templates",
                 {"dataset": DATASETS[r["dataset"]], "method": "ab"}, "share_A")
            for _, r in read("ide2024_table10.csv").iterrows()]


def ide_ensembles() -> list[PaperValue]:
    """Ide et al. Table 5: the voting ensembles (mean of 10 trials) and the oracle (best template)
    of Yes/No and in-template LP."""
    out = []
    for _, r in read("ide2024_table5.csv").iterrows():
        dataset = DATASETS[r["dataset"]]
        if r["method"].endswith("(oracle)"):
            method = METHODS[r["method"].removesuffix(" (oracle)")]
            out.append(_ide(r, f"Table 5: oracle {r['method'].removesuffix(' (oracle)')} ({method}) on "
                               f"{r['dataset']}, best-template accuracy", {"dataset": dataset, "method": method},
                            "template_max"))
        else:
            out.append(_ide(r, f"Table 5: ensemble {r['method']} of yesno and intemplate_lp on {r['dataset']}, "
                               f"mean accuracy of 10 trials", {"dataset": dataset}, f"ensemble:{r['method']}",
                            "this run: 10 seeded trials (seed 0), a tied predictor abstains (04's defaults)"))
    return out


def ide_length_bias() -> list[PaperValue]:
    """Ide et al. Table 4: point-biserial r of success and the token-length difference, averaged
    over the paper's models; this run's r is one model's, each method at its best template."""
    return [_ide(r, f"Table 4: point-biserial r of success and token-length difference, {_label(r)}",
                 {"dataset": DATASETS[r["dataset"]], "method": METHODS[r["method"]]}, "point_biserial",
                 f"the paper averages r over its models ({r['note'].split('(')[-1].rstrip(')')}); this run's r is "
                 f"one model's at its best template, as the notebook's Table 4")
            for _, r in read("ide2024_table4.csv").iterrows()]


def hulevy_items() -> list[PaperValue]:
    """Hu & Levy (2023) Table 5: the items of Experiments 3a/3b, summed over the phenomena."""
    table = read("hulevy2023_table5.csv")
    out = []
    for name, dataset in (("SyntaxGym", "hl_syntaxgym"), ("BLiMP", "hl_blimp")):
        rows = table[table["dataset"] == name]
        out.append(PaperValue(PAPERS["hulevy2023"], "Table 5, papers/hulevy2023_table5.csv",
                              f"Table 5: items of Experiments 3a/3b from {name} ({len(rows)} phenomena)", "(data)",
                              float(rows["value"].sum()), {"dataset": dataset}, "pairs"))
    return out


# Text numbers that map directly onto a measure: (paper, table, method) -> (select, measure, registry models)
TEXT_MEASURES = {("hulevy2023", "Figure 11", "Direct"): (
    {"dataset": "hl_mandarin", "method": "hl_sentence_comparison", "template": "direct"}, "hu_levy",
    ("text-davinci-003",))}
TEXT_NOTEBOOKS = {"ide2024": "04_ensembles", "hulevy2023": "03_prompting", "sinha2023": "06_context_priming",
                  "hu2025": "07_separability"}


def _text_notebooks(paper: str, table: str) -> tuple[str, ...]:
    if paper == "ide2024" and table == "Table 10":
        return "03_prompting", "04_ensembles"
    return (TEXT_NOTEBOOKS[paper],)


def text_numbers(notebook: str) -> list[PaperValue]:
    """The results the papers state in their running text (note "result..."), for ``notebook``."""
    out = []
    for paper in PAPERS:
        table = read(f"{paper}_text_numbers.csv")
        for _, r in table[table["note"].str.startswith("result")].iterrows():
            if notebook not in _text_notebooks(paper, r["table"]):
                continue
            what = r["note"].removeprefix("result").lstrip(" :").removeprefix("(reference):").strip()
            what = what.split(";")[0]
            if what.startswith(("printed", "see previous", "as previous", "approximate", "quote copied")):
                what = ", ".join(x for x in (r["method"], r["dataset"]) if x) + f" ({what})"
            elif r["method"] and r["method"].lower() not in what.lower() and len(r["method"]) <= 30:
                what = f"{r['method']}: {what}"
            figure = f"; compare with this notebook's {r['table']} section" if r["table"] else ""
            select, measure, same = TEXT_MEASURES.get((paper, r["table"], r["method"]), ({}, "none", ()))
            out.append(PaperValue(PAPERS[paper], f"text, {r['where']}, papers/{paper}_text_numbers.csv",
                                  f"text ({r['table'] or r['where']}): {r['metric']}, {what}",
                                  r["model"] or "(not named)", fraction(paper, r["metric"], r["value"]), select,
                                  measure, same, f"\"{r['quote']}\" ({r['note']}){figure}"))
    return out


def for_notebook(notebook: str) -> list[PaperValue]:
    """Every number of the papers' CSVs that ``notebook`` reproduces (the mirror's are in paper_check)."""
    values = ide_accuracy(notebook)
    if notebook == "03_prompting":
        values += ide_share_a() + hulevy_items()
    if notebook == "04_ensembles":
        values += ide_ensembles() + ide_share_a()
    if notebook == "05_length_bias":
        values += ide_length_bias()
    return values + text_numbers(notebook)


def figures_only(notebook: str) -> list[str]:
    """What ``notebook`` reproduces that the papers show only in figures (no printed number)."""
    return list(FIGURES_ONLY.get(notebook, []))
