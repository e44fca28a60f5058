"""Hu & Levy (2023) summaries over stored scores: each prompt type's accuracy measure and
its internal consistency with the Direct measurement (Pearson r of the differentials)."""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from .accuracy import tie_range
from .metrics import balanced_accuracy

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


def _tie_share(s: pd.DataFrame, task: str) -> float:
    """The share of decisions that are ties: of the two answer orders where each order is decided
    apart (the paper's accuracy, ``order_average="accuracy"``: ``correct`` holds 0, 0.5 or 1),
    else of the pairs (the stored ``tie``: Direct, or log-probs averaged over the orders)."""
    orders = ORDER_COLUMNS.get(task)
    if orders and all(c in s for pair in orders for c in pair) and s["correct"].dtype != bool:
        return float(np.mean([(s[a] == s[b]).mean() for a, b in orders]))
    return float(s["tie"].eq(True).mean()) if "tie" in s else 0.0


def summarize(scores: pd.DataFrame) -> pd.DataFrame:
    """Per (model, dataset, task, prompt): items, the task's measure and consistency_r.

    ``scores`` are stored Hu & Levy score files (``load_scores(methods=HU_LEVY_METHODS)``):
    word prediction reports the mean log-prob of the true word; comparisons the accuracy
    (the mean of the stored ``correct``: for prompts scored with ``order_average="accuracy"``,
    the default, the two answer orders' accuracies averaged, as the paper reports; with
    "logprob", the accuracy of the log-probs averaged over the orders); sentence judgment the
    pair accuracy of the Yes differential and the balanced accuracy of Yes > No over single
    sentences. Beside each accuracy, its ties' share, the expected accuracy (ties half) and the
    accuracy with every tie right (:func:`helpers.analysis.accuracy.tie_range`).
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
                row["accuracy"] = float(s["correct"].astype(float).mean())
                row["tie_share"] = _tie_share(s, task)
                row["expected_accuracy"], row["accuracy_ties_right"] = tie_range(row["accuracy"], row["tie_share"])
            if task == "hl_sentence_judgment":
                row["balanced_accuracy"] = float("nan") if prompt == DIRECT else balanced_accuracy(
                    [True] * len(s) + [False] * len(s),
                    list(s["lp_yes_good"] > s["lp_no_good"]) + list(s["lp_yes_bad"] > s["lp_no_bad"]))
            rows.append(row)
    return pd.DataFrame(rows)
