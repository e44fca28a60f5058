"""The "paper check" of each notebook: every published number the notebook reproduces, the
paper's value for the paper's model beside this run's value and model.

Paper values are read, never typed from memory, from two places. The data mirror: the BLiMP
paper's released per-paradigm results (GPT-2's LP accuracy), the released per-item SyntaxGym
results of Hu et al. (2020) (GPT-2 and GPT-2 XL) and Hu & Levy (2023)'s released Mandarin
results (Appendix D, Figure 11: text-davinci-003). And the papers folder
(:mod:`helpers.reporting.published`): Ide et al. (2024)'s Tables 3, 4, 5, 9 and 10, Hu & Levy's
Table 5, Hu et al. (2025)'s Table 1 and the results the four papers state in their text.
A run with another model (the demo models, the tiny ones) is not expected to agree, and the
table says so in its ``note``. What the papers show only in figures is listed by
:func:`not_available`.
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ..data.linking import paper_linking
from ..data.sources import DataSource, resolve
from ..analysis.cross_model import item_values
from . import published
from .published import PaperValue

BLIMP_RESULTS = "blimp/raw_results/summary/models_summary.jsonl"
SG_RESULTS = "syntaxgym/cpllab-syntactic-generalization/data/raw/sg_results/syntaxgym_results_{}.csv"
HL_ZH = "hu-levy-2023/results_zh"
HL_PROMPTS = ("direct", "metaQuestionSimple", "metaInstruct", "metaQuestionComplex")
COLUMNS = ["paper", "quantity", "paper_model", "paper_value", "model", "this_run", "difference", "note", "source",
           "dataset", "unit"]
SHARE_MEASURES = ("accuracy", "template_mean", "template_max", "pass_rate", "share_A")  # and ensemble:<setting>


def _blimp(source: DataSource | None) -> list[PaperValue]:
    """GPT-2's accuracy on BLiMP, overall and per phenomenon, from the BLiMP paper's results,
    read with the linking function the paper reports (:mod:`helpers.data.linking`: LP)."""
    method = paper_linking("blimp").method
    path = resolve(source).path(BLIMP_RESULTS)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    out = []
    for r in rows:
        if r["UID"] != "overall":
            continue
        term = r["linguistics_term"]
        select = {"dataset": "blimp", "method": method} | ({} if term == "overall" else {"phenomenon": term})
        out.append(PaperValue("Warstadt et al. 2020 (BLiMP)", f"released results, {BLIMP_RESULTS}",
                              f"{method.upper()} accuracy, {'all pairs' if term == 'overall' else term}",
                              "GPT-2 (the results file's 'gpt2')", float(r["gpt2"]), select, "accuracy"))
    return sorted(out, key=lambda v: v.quantity != f"{method.upper()} accuracy, all pairs")


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
    """Hu et al. (2025) Table 1(a): the pairs (sentences for CoLA) of each dataset, this project's
    counts (:data:`helpers.data.selection.HU2025`) beside the papers folder's, and HLL (no dataset here)."""
    from ..data.selection import HU2025

    table = published.read("hu2025_table1.csv")
    items = table[table["metric"] == "n_items"]
    printed = dict(zip(items["dataset"], items["value"]))
    out = []
    for row, (name, count) in HU2025.items():
        agrees = "equals" if printed.get(row) == count else f"differs from {printed.get(row)} in"
        out.append(PaperValue("Hu et al. 2025", f"Table 1 (helpers.data.selection.HU2025; {agrees} "
                              "papers/hu2025_table1.csv)", f"{row}: items", "(data)", float(count),
                              {"dataset": name}, "pairs"))
    return out + [PaperValue("Hu et al. 2025", "Table 1, papers/hu2025_table1.csv", f"{row}: items", "(data)",
                             float(value), {}, "none", comment=f"this project has no {row} dataset")
                  for row, value in printed.items() if row not in HU2025]


PAPER_VALUES = {"02_readout": [_blimp], "03_prompting": [_hu_levy_zh], "04_ensembles": [], "05_length_bias": [],
                "06_context_priming": [_syntaxgym], "07_separability": [_hu2025]}


def paper_values(notebook: str, source: DataSource | None = None) -> list[PaperValue]:
    """The published numbers that ``notebook`` (e.g. "02_readout") reproduces: the mirror's, then
    the papers folder's."""
    if notebook not in PAPER_VALUES:
        raise KeyError(f"no paper check for {notebook!r}; notebooks: {', '.join(PAPER_VALUES)}")
    return [v for reader in PAPER_VALUES[notebook] for v in reader(source)] + published.for_notebook(notebook)


def not_available(notebook: str) -> list[str]:
    """What ``notebook`` reproduces that the papers show only in figures (no number to check)."""
    return published.figures_only(notebook)


def _rows(scores: pd.DataFrame, select: dict, cache: dict) -> pd.DataFrame:
    """The rows of ``scores`` with every ``select`` value (``cache`` keeps the masks of one frame)."""
    if "suite" in scores and "circuit" not in scores and "circuit" in select:
        from ..data.syntaxgym import circuit

        scores = scores.assign(circuit=scores["suite"].map(circuit))
    mask = np.ones(len(scores), bool)
    for column, value in select.items():
        if column not in scores:
            return scores.iloc[:0]
        if (column, str(value)) not in cache:
            if column not in cache:
                cache[column] = scores[column].astype(str).to_numpy()
            cache[(column, str(value))] = cache[column] == str(value)
        mask &= cache[(column, str(value))]
    return scores[mask]


def _per_template(rows: pd.DataFrame, column: str) -> pd.Series:
    """The mean of ``column`` per template (one group when the rows have no template)."""
    values = rows[column].astype(float)
    return values.groupby(rows["template"].astype(str)).mean() if "template" in rows else pd.Series([values.mean()])


def _share_a(rows: pd.DataFrame) -> float:
    """Ide et al.'s Table 10: the share of "A" answers per template, averaged over templates."""
    from ..analysis.prompting import answers

    if not {"good_slot", "correct", "tie"} <= set(rows):
        return float("nan")
    return float(_per_template(rows.assign(is_a=answers(rows) == "A"), "is_a").mean())


def _point_biserial(rows: pd.DataFrame) -> float:
    """Point-biserial r of success and the token-length difference at the best template."""
    from ..analysis.accuracy import at_best_template
    from ..analysis.length_bias import point_biserial

    if not {"n_tokens_good", "n_tokens_bad"} <= set(rows):
        return float("nan")
    best = at_best_template(rows)
    return point_biserial(best["correct"], best["n_tokens_good"].astype(int) - best["n_tokens_bad"].astype(int))[0]


def _ensemble(rows: pd.DataFrame, setting: str) -> float:
    """Ide et al.'s Table 5 setting: mean accuracy of 10 seeded trials, tied predictors abstaining."""
    from ..analysis import ensembles

    try:
        matrix = ensembles.predictor_matrix(rows)
        abstain = ensembles.abstentions(rows)
    except ValueError:  # the run lacks one method or some of its 5 templates
        return float("nan")
    return float(ensembles.trial_votes(matrix, setting, 10, 0, abstain)[0].mean())


def measure(rows: pd.DataFrame, name: str) -> float:
    """This run's value of measure ``name`` on the selected ``rows`` (NaN when there are none):
    accuracy, pass_rate, hu_levy (the Hu & Levy task's measure), pairs, template_mean and
    template_max (mean and best of per-template accuracy), share_A, point_biserial,
    ensemble:<setting>, or none."""
    if rows.empty or name == "none":
        return float("nan")
    if name == "accuracy":
        return float(rows["correct"].astype(float).mean())
    if name in ("template_mean", "template_max"):
        accuracy = _per_template(rows, "correct")
        return float(accuracy.mean() if name == "template_mean" else accuracy.max())
    if name == "share_A":
        return _share_a(rows)
    if name == "point_biserial":
        return _point_biserial(rows)
    if name.startswith("ensemble:"):
        return _ensemble(rows, name.removeprefix("ensemble:"))
    if name == "pass_rate":
        return float(rows["score"].astype(float).mean())
    if name == "hu_levy":
        return float(item_values(rows)["value"].mean())
    if name == "pairs":
        if "method" in rows:  # one method's files count the items
            rows = rows[rows["method"] == rows["method"].iloc[0]]
        keys = [c for c in ("paradigm", "pair_id", "item_id", "sentence") if c in rows and rows[c].notna().all()]
        return float(len(rows.drop_duplicates(keys[:2] or None)))
    raise ValueError(f"unknown measure {name!r}")


def unit(value: PaperValue) -> str:
    """What ``value`` counts: "%" for a share of pairs or items (kept as a fraction in files), "r" for a
    correlation, "log-prob", "count", or "" where no run computes it."""
    if value.measure in SHARE_MEASURES or value.measure.startswith("ensemble:"):
        return "%"
    if value.measure == "hu_levy":
        return "log-prob" if value.select.get("method") == "hl_word_prediction" else "%"
    return {"point_biserial": "r", "pairs": "count"}.get(value.measure, "")


def shown(table: pd.DataFrame) -> pd.DataFrame:
    """The check as a person reads it: values in percent (one decimal) where ``unit`` is "%", the
    others to 3 decimals; the files keep fractions."""
    percent = table["unit"].eq("%").to_numpy()
    out = table.copy()
    for column in ("paper_value", "this_run", "difference"):
        values = table[column].astype(float)
        out[column] = np.where(percent, (100 * values).round(1), values.round(3))
    return out


def _note(value: PaperValue, model: str, measured: float) -> str:
    extra = f"; {value.comment}" if value.comment else ""
    if value.measure == "none":
        return f"not measured by this run: {value.comment}"
    if np.isnan(measured):
        needs = [f"{k}={v}" for k, v in value.select.items()]
        if value.measure.startswith("ensemble:"):
            needs.append("5 templates each of yesno and intemplate_lp")
        return f"not computed by this run (needs {', '.join(needs)}){extra}"
    if value.measure == "pairs":
        return "same count" if measured == value.value else "this run scored a selection (limit), not the whole set"
    if model in value.same_models:
        return "the paper's model: should agree" + extra
    return f"different model ({model} vs the paper's {value.paper_model}): the values are not expected to agree{extra}"


def check(notebook: str, scores: pd.DataFrame | None, source: DataSource | None = None) -> pd.DataFrame:
    """The paper check of ``notebook`` against this run's stored ``scores`` (the frame of score
    files the notebook analysed; several models give a row per model): paper, quantity, the
    paper's model and value, this run's model and value, their difference and a note."""
    values = paper_values(notebook, source)
    scored = scores is not None and len(scores) > 0
    models = list(dict.fromkeys(scores["model"])) if scored else ["(none)"]
    runs = {}
    for model in models:
        mine, cache = (scores[scores["model"] == model] if scored else pd.DataFrame()), {}
        for i, v in enumerate(values):
            runs[i, model] = measure(_rows(mine, v.select, cache), v.measure) if len(mine) else float("nan")
    rows = [{"paper": v.paper, "quantity": v.quantity, "paper_model": v.paper_model, "paper_value": v.value,
             "model": model, "this_run": runs[i, model],
             "difference": runs[i, model] - v.value if not np.isnan(runs[i, model]) else float("nan"),
             "note": _note(v, model, runs[i, model]), "source": v.source, "dataset": v.select.get("dataset"),
             "unit": unit(v)}
            for i, v in enumerate(values) for model in models]
    return pd.DataFrame(rows, columns=COLUMNS)


def summary(notebook: str, table: pd.DataFrame) -> str:
    """A few lines for under the table: what was compared, whether any row used the paper's own
    model, and what the papers show only in figures."""
    computed = table.dropna(subset=["this_run"]) if len(table) else table
    same = computed[computed["note"].str.startswith(("the paper's model", "same count"))] if len(computed) else computed
    lines = [(f"{notebook}: {len(table)} published numbers checked, {len(computed)} computed by this run, "
              f"{len(same)} with the paper's own model or data.")]
    if len(computed) and len(same) < len(computed):
        lines.append("The other rows compare a different model (or a selection of the data) with the paper's: "
                     "they are shown, not expected to agree.")
    lines += [f"Shown only in figures: {item}" for item in not_available(notebook)]
    return "\n".join(lines)
