"""Hu & Levy (2023) summaries over stored scores: each prompt type's accuracy measure and
its internal consistency with the Direct measurement (Pearson r of the differentials)."""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from .accuracy import EXPECTED, TIES_RIGHT, tie_range

DIRECT = "direct"


def _r(x, y) -> float:
    x, y = np.asarray(x, float), np.asarray(y, float)
    if len(x) < 3 or np.std(x) == 0 or np.std(y) == 0:
        return float("nan")
    return float(stats.pearsonr(x, y)[0])


def _differential(g: pd.DataFrame) -> pd.Series:
    return g["score"] if "score" in g else g["score_good"] - g["score_bad"]


# each comparison task's two answer orders: the log-probs compared in each (good side first)
ORDER_COLUMNS = {"hl_word_comparison": (("lp_good_first_good", "lp_good_first_bad"),
                                        ("lp_bad_first_good", "lp_bad_first_bad")),
                 "hl_sentence_comparison": (("lp_1_good_first", "lp_2_good_first"),
                                            ("lp_2_bad_first", "lp_1_bad_first"))}


def order_tie_share(s: pd.DataFrame, task: str) -> pd.Series | None:
    """Per item of a comparison task, the share of its two answer orders that tied (0, 0.5 or 1);
    None for a task without orders or rows without their columns."""
    orders = ORDER_COLUMNS.get("hl_" + task.removeprefix("hl_"))
    if not orders or not all(c in s for pair in orders for c in pair):
        return None
    return sum((s[a] == s[b]).astype(float) for a, b in orders) / len(orders)


def pair_ties(s: pd.DataFrame, task: str) -> pd.Series:
    """Per item, the share of its decisions that tied: of the two answer orders where each order
    is decided apart (the paper's accuracy, ``order_average="accuracy"``: ``correct`` holds 0, 0.5
    or 1), else the stored ``tie`` (Direct, or log-probs averaged over the orders; 0 without one)."""
    shares = order_tie_share(s, task)
    if shares is not None and s["correct"].dtype != bool:
        return shares
    return s["tie"].eq(True).astype(float) if "tie" in s else pd.Series(0.0, index=s.index)


def judgment(s: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """Per pair of a metalinguistic sentence-judgment prompt: its balanced-accuracy credit, half
    for the acceptable sentence judged Yes (log p(Yes) > log p(No)) and half for the unacceptable
    one judged No (log p(No) > log p(Yes)), so that the mean over pairs is the balanced accuracy;
    a Yes = No tie is an error on either side, never a No. And the share of its two judgments
    that tied (0, 0.5 or 1), whose mean is the balanced accuracy's tie share."""
    credit = ((s["lp_yes_good"] > s["lp_no_good"]).astype(float) + (s["lp_no_bad"] > s["lp_yes_bad"]).astype(float))
    ties = (s["lp_yes_good"] == s["lp_no_good"]).astype(float) + (s["lp_yes_bad"] == s["lp_no_bad"]).astype(float)
    return credit / 2, ties / 2


def item_measure(s: pd.DataFrame, task: str, prompt: str) -> tuple[pd.Series, pd.Series]:
    """Per item: the value whose mean is the task's measure (word prediction: log p of the true
    word; metalinguistic sentence judgment: :func:`judgment`'s credit; else ``correct``) and the
    share of its decisions that tied (NaN for word prediction, which decides nothing)."""
    task = task.removeprefix("hl_")
    if task == "word_prediction":
        return s["score"].astype(float), pd.Series(float("nan"), index=s.index)
    if task == "sentence_judgment" and prompt != DIRECT:
        return judgment(s)
    return s["correct"].astype(float), pair_ties(s, task)


def with_ties(row: dict, measure: str, value: float, tie_share: float, prefix: str = "") -> dict:
    """``row`` with ``measure`` (ties wrong), its tie share, the expected value (ties half) and
    the value with every tie right (:func:`tie_range`), the last three named with ``prefix``."""
    expected, right = tie_range(value, tie_share)
    return row | {measure: value, prefix + "tie_share": tie_share, prefix + EXPECTED: expected,
                  prefix + TIES_RIGHT: right}


def summarize(scores: pd.DataFrame) -> pd.DataFrame:
    """Per (model, dataset, task, prompt): items, the task's measure and consistency_r.

    ``scores`` are stored Hu & Levy score files (``load_scores(methods=HU_LEVY_METHODS)``):
    word prediction reports the mean log-prob of the true word; comparisons the accuracy
    (the mean of the stored ``correct``: for prompts scored with ``order_average="accuracy"``,
    the default, the two answer orders' accuracies averaged, as the paper reports; with
    "logprob", the accuracy of the log-probs averaged over the orders); sentence judgment the
    pair accuracy of the Yes differential and the balanced accuracy of Yes > No over single
    sentences (a Yes = No tie an error: :func:`judgment`). Beside each accuracy, its ties' share,
    the expected accuracy (ties half) and the accuracy with every tie right
    (:func:`helpers.analysis.accuracy.tie_range`; the balanced accuracy's prefixed "balanced_").
    """
    rows = []
    for (model, dataset, task), g in scores.groupby(["model", "dataset", "method"], sort=False):
        g = g.dropna(axis=1, how="all")  # scores of several sets: each set keeps its own columns
        key = "item_id" if "item_id" in g and g["item_id"].notna().all() else "pair_id"
        by_prompt = {t: s.set_index(key if key in s and s[key].notna().all() else "pair_id")
                     for t, s in g.groupby("template", sort=False)}
        if DIRECT not in by_prompt:
            raise ValueError(f"{task} on {dataset} for {model}: the Direct scores are missing; run it with "
                             "prompt type 'direct' too")
        direct = _differential(by_prompt[DIRECT])
        for prompt, s in by_prompt.items():
            diff = _differential(s).reindex(direct.index)
            row = {"model": model, "stimuli": dataset, "task": task.removeprefix("hl_"), "prompt": prompt,
                   "items": len(s), "consistency_r": 1.0 if prompt == DIRECT else _r(direct, diff)}
            if "score" in s:
                row["mean_logprob"] = float(s["score"].mean())
            else:
                row = with_ties(row, "accuracy", float(s["correct"].astype(float).mean()),
                                float(pair_ties(s, task).mean()))
            if task == "hl_sentence_judgment":
                credit, ties = judgment(s) if prompt != DIRECT else (pd.Series(np.nan), pd.Series(np.nan))
                row = with_ties(row, "balanced_accuracy", float(credit.mean()), float(ties.mean()), "balanced_")
            rows.append(row)
    return pd.DataFrame(rows)
