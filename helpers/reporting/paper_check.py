"""The "paper check" of each notebook: every published number the notebook reproduces, the
paper's value for the paper's model beside this run's value and model.

Paper values are read from published materials in the data mirror, never typed from memory:
the BLiMP paper's released per-paradigm results (GPT-2's LP accuracy), the released per-item
SyntaxGym results of Hu et al. (2020) (GPT-2 and GPT-2 XL), Hu & Levy (2023)'s released
Mandarin results (Appendix D, Figure 11: text-davinci-003; their analysis notebook prints the
same values), and Hu et al. (2025)'s Table 1 counts (:data:`helpers.data.selection.HU2025`).
A run with another model (the demo models, the tiny ones) is not expected to agree, and the
table says so in its ``note``. Numbers a notebook reproduces whose published values are not
available offline are listed by :func:`not_available`.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..data.sources import DataSource, resolve
from ..analysis.cross_model import item_values

BLIMP_RESULTS = "blimp/raw_results/summary/models_summary.jsonl"
SG_RESULTS = "syntaxgym/cpllab-syntactic-generalization/data/raw/sg_results/syntaxgym_results_{}.csv"
HL_ZH = "hu-levy-2023/results_zh"
HL_PROMPTS = ("direct", "metaQuestionSimple", "metaInstruct", "metaQuestionComplex")


@dataclass(frozen=True)
class PaperValue:
    """One published number: which paper and file it comes from, what it measures, for which
    model, and which rows of a run's scores measure the same (``select``: column == value)."""

    paper: str
    source: str
    quantity: str
    paper_model: str
    value: float
    select: dict
    measure: str  # "accuracy", "pass_rate", "hu_levy" (the task's measure) or "pairs"
    same_models: tuple[str, ...] = field(default=())  # registry names of the paper's own model


def _blimp(source: DataSource | None) -> list[PaperValue]:
    """GPT-2's LP accuracy on BLiMP, overall and per phenomenon, from the BLiMP paper's results."""
    path = resolve(source).path(BLIMP_RESULTS)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    out = []
    for r in rows:
        if r["UID"] != "overall":
            continue
        term = r["linguistics_term"]
        select = {"dataset": "blimp", "method": "lp"} | ({} if term == "overall" else {"phenomenon": term})
        out.append(PaperValue("Warstadt et al. 2020 (BLiMP)", f"released results, {BLIMP_RESULTS}",
                              f"LP accuracy, {'all pairs' if term == 'overall' else term}",
                              "GPT-2 (the results file's 'gpt2')", float(r["gpt2"]), select, "accuracy"))
    return sorted(out, key=lambda v: v.quantity != "LP accuracy, all pairs")


def _syntaxgym(source: DataSource | None) -> list[PaperValue]:
    """GPT-2 and GPT-2 XL: share of SyntaxGym items passing, from Hu et al. (2020)'s results."""
    out = []
    for tag, name, registry in (("gpt-2-pretrained_", "GPT-2", ("gpt2",)),
                                ("gpt-2-xl-pretrained_", "GPT-2 XL", ("gpt2-xl",))):
        rel = SG_RESULTS.format(tag)
        table = pd.read_csv(resolve(source).path(rel))
        out.append(PaperValue("Hu et al. 2020 (SyntaxGym)", f"released per-item results, {rel}",
                              "SyntaxGym items passing (34 suites)", name, float(table["correct"].mean()),
                              {"method": "syntaxgym"}, "pass_rate", registry))
    return out


def _hl_results(rel: str, source: DataSource | None) -> pd.DataFrame:
    return pd.DataFrame(json.loads(resolve(source).path(f"{HL_ZH}/{rel}").read_text(encoding="utf-8"))["results"])


def _hu_levy_zh(source: DataSource | None) -> list[PaperValue]:
    """Hu & Levy (2023) Appendix D (Figure 11), text-davinci-003: mean log-prob of the true
    word on News-zh, the pair accuracy of Direct and the balanced accuracy of each prompt on
    Mandarin sentence judgment, and each prompt's accuracy on sentence comparison (the two
    option orders pooled, as their analysis does)."""
    model, paper, same = "text-davinci-003", "Hu & Levy 2023, Appendix D (Figure 11)", ("text-davinci-003",)
    where = f"released results, {HL_ZH}"
    out = []
    for prompt in HL_PROMPTS:
        r = _hl_results(f"exp1_word-prediction/news_zh_{model}_{prompt}.json", source)
        out.append(PaperValue(paper, where, f"word prediction, News-zh, {prompt}: mean log-prob of the true word",
                              model, float(r["logprob_of_gold_continuation"].mean()),
                              {"dataset": "hl_news_zh", "method": "hl_word_prediction", "template": prompt}, "hu_levy",
                              same))
    direct = _hl_results(f"exp3a_sentence-judgment/mandarin_{model}_direct.json", source)
    direct_acc = float((direct["logprob_of_good_sentence"] > direct["logprob_of_bad_sentence"]).mean())
    for task in ("sentence_judgment", "sentence_comparison"):
        out.append(PaperValue(paper, where, f"{task.replace('_', ' ')}, Mandarin, direct: pair accuracy", model,
                              direct_acc, {"dataset": "hl_mandarin", "method": f"hl_{task}", "template": "direct"},
                              "hu_levy", same))
    for prompt in HL_PROMPTS[1:]:
        r = _hl_results(f"exp3a_sentence-judgment/mandarin_{model}_{prompt}.json", source)
        tp = (r["logprob_of_yes_good_sentence"] > r["logprob_of_no_good_sentence"]).mean()
        tn = (r["logprob_of_no_bad_sentence"] > r["logprob_of_yes_bad_sentence"]).mean()
        out.append(PaperValue(paper, where, f"sentence judgment, Mandarin, {prompt}: balanced accuracy", model,
                              float((tp + tn) / 2),
                              {"dataset": "hl_mandarin", "method": "hl_sentence_judgment", "template": prompt},
                              "hu_levy", same))
    for prompt in HL_PROMPTS[1:]:
        orders = pd.concat([_hl_results(f"exp3b_sentence-comparison/mandarin_{model}_{prompt}_{o}.json", source)
                            for o in ("goodFirst", "badFirst")])
        acc = float((orders["logprob_of_good_continuation"] > orders["logprob_of_bad_continuation"]).mean())
        out.append(PaperValue(paper, where, f"sentence comparison, Mandarin, {prompt}: accuracy", model, acc,
                              {"dataset": "hl_mandarin", "method": "hl_sentence_comparison", "template": prompt},
                              "hu_levy", same))
    return out


def _hu2025(source: DataSource | None) -> list[PaperValue]:
    """Hu et al. (2025) Table 1: the pairs (sentences for CoLA) of each dataset."""
    from ..data.selection import HU2025

    return [PaperValue("Hu et al. 2025", "Table 1 (helpers.data.selection.HU2025)", f"{row}: items", "(data)",
                       float(count), {"dataset": name}, "pairs") for row, (name, count) in HU2025.items()]


PAPER_VALUES = {"02_readout": [_blimp], "03_prompting": [_hu_levy_zh], "04_ensembles": [], "05_length_bias": [],
                "06_context_priming": [_syntaxgym], "07_separability": [_hu2025]}

# Numbers the notebooks reproduce whose published values are not in the offline mirror.
NOT_AVAILABLE = {
    "02_readout": [("Ide et al. 2024 Table 3 and Table 9: accuracy of every readout method for their LLMs on "
                    "BLiMP and CLiMP (the paper's tables are not in the mirror)")],
    "03_prompting": ["Ide et al. 2024 Table 3 rows of Yes/No and A/B prompting, and Table 10 (share of A)",
                     ("Hu & Levy 2023 Figures 2-10 for English (Flan-T5 small, large, XL and the OpenAI models): "
                      "their results.zip is not in the mirror")],
    "04_ensembles": ["Ide et al. 2024 Table 5 (ensembles), Figures 3-5 and Table 10, and the phenomena the paper marks"],
    "05_length_bias": ["Ide et al. 2024 Figure 2, Table 4 (point-biserial r) and Figure 6"],
    "06_context_priming": ["Sinha et al. 2023 Figures 2-8 (accuracy against prefix length per prefix type)"],
    "07_separability": ["Hu et al. 2025's AUCs, pair accuracies and binned within-pair correlations"],
}


def paper_values(notebook: str, source: DataSource | None = None) -> list[PaperValue]:
    """The published numbers that ``notebook`` (e.g. "02_readout") reproduces."""
    if notebook not in PAPER_VALUES:
        raise KeyError(f"no paper check for {notebook!r}; notebooks: {', '.join(PAPER_VALUES)}")
    return [v for reader in PAPER_VALUES[notebook] for v in reader(source)]


def not_available(notebook: str) -> list[str]:
    """What ``notebook`` reproduces whose published values are not available offline."""
    return list(NOT_AVAILABLE.get(notebook, []))


def _rows(scores: pd.DataFrame, select: dict) -> pd.DataFrame:
    if "suite" in scores and "circuit" not in scores and "circuit" in select:
        from ..data.syntaxgym import circuit

        scores = scores.assign(circuit=scores["suite"].map(circuit))
    mask = np.ones(len(scores), bool)
    for column, value in select.items():
        if column not in scores:
            return scores.iloc[:0]
        mask &= (scores[column].astype(str) == str(value)).to_numpy()
    return scores[mask]


def _measure(rows: pd.DataFrame, measure: str) -> float:
    if rows.empty:
        return float("nan")
    if measure == "accuracy":
        return float(rows["correct"].astype(float).mean())
    if measure == "pass_rate":
        return float(rows["score"].astype(float).mean())
    if measure == "hu_levy":
        return float(item_values(rows)["value"].mean())
    if measure == "pairs":
        keys = [c for c in ("paradigm", "pair_id", "item_id", "sentence") if c in rows and rows[c].notna().all()]
        return float(len(rows.drop_duplicates(keys[:2] or None)))
    raise ValueError(f"unknown measure {measure!r}")


def _note(value: PaperValue, model: str, run: float) -> str:
    if np.isnan(run):
        return f"not computed by this run (needs {', '.join(f'{k}={v}' for k, v in value.select.items())})"
    if value.measure == "pairs":
        return "same count" if run == value.value else "this run scored a selection (limit), not the whole set"
    if model in value.same_models:
        return "the paper's model: should agree"
    return f"different model ({model} vs the paper's {value.paper_model}): the values are not expected to agree"


def check(notebook: str, scores: pd.DataFrame | None, source: DataSource | None = None) -> pd.DataFrame:
    """The paper check of ``notebook`` against this run's stored ``scores`` (the frame of score
    files the notebook analysed; several models give a row per model): paper, quantity, the
    paper's model and value, this run's model and value, their difference and a note."""
    values = paper_values(notebook, source)
    models = list(dict.fromkeys(scores["model"])) if scores is not None and len(scores) else ["(none)"]
    rows = []
    for v in values:
        for model in models:
            mine = scores[scores["model"] == model] if scores is not None and len(scores) else pd.DataFrame()
            if v.measure == "pairs" and len(mine) and "method" in mine:  # one method's files count the items
                mine = mine[mine["method"] == mine["method"].iloc[0]]
            run = _measure(_rows(mine, v.select), v.measure) if len(mine) else float("nan")
            rows.append({"paper": v.paper, "quantity": v.quantity, "paper_model": v.paper_model,
                         "paper_value": v.value, "model": model, "this_run": run,
                         "difference": run - v.value if not np.isnan(run) else float("nan"),
                         "note": _note(v, model, run), "source": v.source})
    return pd.DataFrame(rows, columns=["paper", "quantity", "paper_model", "paper_value", "model", "this_run",
                                       "difference", "note", "source"])


def summary(notebook: str, table: pd.DataFrame) -> str:
    """A few lines for under the table: what was compared, whether any row used the paper's own
    model, and what could not be checked offline."""
    computed = table.dropna(subset=["this_run"]) if len(table) else table
    same = computed[computed["note"].str.startswith(("the paper's model", "same count"))] if len(computed) else computed
    lines = [(f"{notebook}: {len(table)} published numbers checked, {len(computed)} computed by this run, "
              f"{len(same)} with the paper's own model or data.")]
    if len(computed) and len(same) < len(computed):
        lines.append("The other rows compare a different model (or a selection of the data) with the paper's: "
                     "they are shown, not expected to agree.")
    lines += [f"Not available offline: {item}" for item in not_available(notebook)]
    return "\n".join(lines)
