"""Accuracy tables over stored scores (Ide et al. 2024, Tables 3 and 9; per phenomenon).

Accuracy is the share of pairs whose acceptable sentence scores strictly higher; a tie is
an error (as in every paper this repository reproduces) and every table reports the number of
ties and their share of the decisions, in a column whose name says how they were counted.
Beside it every summary gives what the ties are worth (:func:`tie_range`, the one place this
is computed): the expected accuracy, a tie counted half (a coin flip's worth: tie-aware
reporting), and the range from every tie wrong (the accuracy) to every tie right.
"""
from __future__ import annotations

import pandas as pd

KEYS = ["model", "method"]
# the share of a method's decisions (pairs x templates) that are exact ties, each counted as an error
TIE_SHARE = "ties (% of decisions, counted wrong)"
# the same share (0 to 1) in the tables written to disk
TIE_SHARE_COLUMN = "tie_share_counted_wrong"
# a tie counted half, and every tie counted right (the top of the range whose bottom is the accuracy)
EXPECTED = "expected_accuracy"
TIES_RIGHT = "accuracy_ties_right"


def tie_range(accuracy, tie_share) -> tuple:
    """(expected accuracy, accuracy with every tie right) from the accuracy with every tie wrong
    and the share of decisions that are ties (numbers, arrays or columns alike)."""
    return accuracy + tie_share / 2, accuracy + tie_share


def tie_credits(correct, tie) -> dict:
    """Each decision's credit under each tie rule, :func:`tie_range` of one decision (its tie
    share 1 or 0): {"wrong": ``correct``, "half": a tie worth 0.5, "right": a tie worth 1}."""
    half, right = tie_range(correct, tie)
    return {"wrong": correct, "half": half, "right": right}


def with_tie_range(table: pd.DataFrame, accuracy: str = "accuracy", tie_share: str = TIE_SHARE_COLUMN,
                   suffix: str = "") -> pd.DataFrame:
    """``table`` with :data:`EXPECTED` and :data:`TIES_RIGHT` (plus ``suffix``) after ``accuracy``."""
    expected, right = tie_range(table[accuracy], table[tie_share])
    return table.assign(**{EXPECTED + suffix: expected, TIES_RIGHT + suffix: right})


def by_template(scores: pd.DataFrame, correct: str = "correct", tie: str = "tie") -> pd.DataFrame:
    """Accuracy, pairs, ties and their share per (model, method, template)."""
    if scores.empty:
        raise ValueError("no scores to summarise: run the scoring notebook (02_readout / 03_prompting) first")
    return summarise(scores, KEYS + ["template"], correct, tie)


def tie_values(tie: pd.Series) -> pd.Series:
    """Each decision's tie: True/False, or the share of a decision's parts that tied (Hu & Levy's
    two answer orders decided apart: 0, 0.5 or 1), which sums and averages as a share of a tie."""
    if pd.api.types.is_float_dtype(tie):
        return tie.fillna(0.0)
    return tie.eq(True)


def summarise(scores: pd.DataFrame, keys: list[str], correct: str = "correct", tie: str = "tie") -> pd.DataFrame:
    """Per group of ``keys``: accuracy (a tie counted wrong), pairs, ties, the ties' share
    (:data:`TIE_SHARE_COLUMN`), the expected accuracy and the accuracy with every tie right."""
    g = scores.assign(**{tie: tie_values(scores[tie])}).groupby(keys, sort=False)
    return with_tie_range(g.agg(accuracy=(correct, "mean"), pairs=(correct, "size"), ties=(tie, "sum"),
                                **{TIE_SHARE_COLUMN: (tie, "mean")}).reset_index())


def table3(scores: pd.DataFrame, correct: str = "correct", tie: str = "tie") -> pd.DataFrame:
    """Per (model, method): accuracy mean and sample sd over templates, best template and its
    accuracy (Ide et al. Table 9), ties summed over templates, and the mean over templates of the
    expected accuracy and of the accuracy with every tie right (:func:`tie_range`)."""
    t = by_template(scores, correct, tie)
    rows = []
    for (model, method), g in t.groupby(KEYS, sort=False):
        best = g.loc[g["accuracy"].idxmax()]
        rows.append({"model": model, "method": method, "templates": len(g),
                     "accuracy_mean": g["accuracy"].mean(),
                     "accuracy_sd": g["accuracy"].std(ddof=1) if len(g) > 1 else float("nan"),
                     "best_template": best["template"], "best_accuracy": best["accuracy"],
                     "pairs": int(g["pairs"].iloc[0]), "ties": _count(g["ties"].sum()),
                     EXPECTED + "_mean": g[EXPECTED].mean(), TIES_RIGHT + "_mean": g[TIES_RIGHT].mean()})
    return pd.DataFrame(rows)


def _count(ties) -> int | float:
    """A number of ties: whole, or with halves where a decision's orders tied apart."""
    return int(ties) if float(ties).is_integer() else float(ties)


def empty_table3() -> pd.DataFrame:
    """:func:`table3`'s columns without rows: the table of a model no method of the list applies to."""
    return pd.DataFrame(columns=["model", "method", "templates", "accuracy_mean", "accuracy_sd", "best_template",
                                 "best_accuracy", "pairs", "ties", EXPECTED + "_mean", TIES_RIGHT + "_mean"])


def with_not_applicable(table: pd.DataFrame, not_applicable: pd.DataFrame | None) -> pd.DataFrame:
    """``table`` (one row per model and method) with a row for each method that could not run on
    the model (``not_applicable``: model, method and the reason, from
    :func:`helpers.methods.applicable`), its numbers empty; the column ``not_applicable`` holds
    the reason (empty for the methods that ran)."""
    table = table.assign(not_applicable="")
    if not_applicable is None or not len(not_applicable):
        return table
    out = pd.concat([table, not_applicable[["model", "method", "not_applicable"]]], ignore_index=True)
    counts = [c for c in ("templates", "pairs", "ties") if c in out]
    return out.astype({c: "Int64" for c in counts})  # whole numbers, empty for the methods that did not run


def best_templates(scores: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(model, method) -> the template with the highest accuracy."""
    t = table3(scores)
    return {(r.model, r.method): r.best_template for r in t.itertuples()}


def of_methods(scores: pd.DataFrame, methods=None) -> pd.DataFrame:
    """The rows of ``methods`` (all rows when None)."""
    return scores if methods is None else scores[scores["method"].isin(list(methods))]


def at_best_template(scores: pd.DataFrame, methods=None) -> pd.DataFrame:
    """The rows of each (model, method) at its best template (of ``methods`` only, when given)."""
    scores = of_methods(scores, methods)
    best = best_templates(scores)
    keep = [best[(m, me)] == t for m, me, t in zip(scores["model"], scores["method"], scores["template"])]
    return scores[keep]


def by_phenomenon(scores: pd.DataFrame, best_only: bool = True) -> pd.DataFrame:
    """Accuracy per phenomenon for each (model, method), at its best template by default, and
    the humans' agreement beside it where the data has one (:func:`human_by_phenomenon`)."""
    if best_only:
        scores = at_best_template(scores)
    out = summarise(scores, KEYS + ["phenomenon"])
    humans = human_by_phenomenon(scores)
    if humans is not None:
        out["human"] = out["phenomenon"].map(humans)
    return out


def human_by_phenomenon(scores: pd.DataFrame) -> pd.Series | None:
    """Per phenomenon, the humans' agreement with the pairs' labels: the mean over its paradigms
    of their mean over pairs (BLiMP's validation gives one value a paradigm, QFrBLiMP's
    annotators one a pair); None where the data has none."""
    if "human_agreement" not in scores or not scores["human_agreement"].notna().any():
        return None
    pairs = scores.drop_duplicates(["paradigm", "pair_id"])
    return pairs.groupby(["phenomenon", "paradigm"])["human_agreement"].mean().groupby("phenomenon").mean()


def phenomenon_matrix(phenomena: pd.DataFrame, humans: bool = False, value: str = "accuracy") -> pd.DataFrame:
    """Phenomena x methods ``value`` (accuracy, or pairs) of a :func:`by_phenomenon` table, for display;
    ``humans`` adds its humans' agreement as a last column "humans" where it has one."""
    matrix = phenomena.pivot_table(index="phenomenon", columns="method", values=value, sort=False)
    if not humans or "human" not in phenomena:
        return matrix
    return matrix.assign(humans=matrix.index.map(phenomena.drop_duplicates("phenomenon").set_index("phenomenon")
                                                 ["human"]))


def format_table3(t: pd.DataFrame) -> pd.DataFrame:
    """Table 3 as text: "mean ± sd" in percent, best template, ties and their share of the
    decisions (a tie counts as an error, as in every paper this repository reproduces; the tie
    columns only where there are ties) and why a method did not run, after :func:`with_not_applicable`."""
    def cell(r):
        if pd.isna(r.accuracy_mean):
            return "not applicable"
        sd = "" if pd.isna(r.accuracy_sd) else f" ± {100 * r.accuracy_sd:.1f}"
        return f"{100 * r.accuracy_mean:.1f}{sd}"
    out = pd.DataFrame({"model": t["model"], "method": t["method"], "accuracy (%)": [cell(r) for r in t.itertuples()],
                        "best template": t["best_template"],
                        "best (%)": (100 * t["best_accuracy"]).round(1), "ties": t["ties"],
                        TIE_SHARE: (100 * t["ties"] / (t["pairs"] * t["templates"])).round(2),
                        EXPECTED_SHOWN: (100 * t[EXPECTED + "_mean"].astype(float)).round(1),
                        RANGE_SHOWN: [tie_range_text(r.accuracy_mean, getattr(r, TIES_RIGHT + "_mean"))
                                      for r in t.itertuples()],
                        "pairs": t["pairs"]})
    if "not_applicable" in t and t["not_applicable"].astype(bool).any():  # the reason a method did not run
        out["why not applicable"] = t["not_applicable"]
    if not (t["ties"].fillna(0) > 0).any():  # tie columns only where there are ties
        out = out.drop(columns=["ties", TIE_SHARE, EXPECTED_SHOWN, RANGE_SHOWN])
    return out


EXPECTED_SHOWN = "expected (%, ties half)"
RANGE_SHOWN = "range (%, ties wrong to right)"
# the columns that hold a share of pairs (accuracies, their intervals and tie ranges, baselines, effects)
SHARE_PREFIXES = ("accuracy", "best_accuracy", "ci_low", "ci_high", EXPECTED, TIES_RIGHT, TIE_SHARE_COLUMN, "baseline",
                  "delta", "gain", "share_A", "expected")


def in_percent(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` as a person reads it: every column holding a share of pairs (:data:`SHARE_PREFIXES`)
    in percent with one decimal, named "<column> (%)"; the other numbers rounded to 3 decimals. Files
    keep the fractions."""
    shares = [c for c in table.columns if isinstance(c, str) and c.startswith(SHARE_PREFIXES)
              and pd.api.types.is_numeric_dtype(table[c])]
    shown = table.round(3)
    shown[shares] = (100 * table[shares]).round(1)
    return shown.rename(columns={c: f"{c} (%)" for c in shares})


def tie_range_text(low, high) -> str:
    """The range of an accuracy over its ties, in percent ("" where it did not run)."""
    return "" if pd.isna(low) else f"{100 * low:.1f}-{100 * float(high):.1f}"


def table3_target_only(scores: pd.DataFrame) -> pd.DataFrame:
    """:func:`table3` of the in-template methods measured over the target sentence only (the
    variant stored beside the whole-input score); empty when no such scores are present."""
    if "correct_target" not in scores:
        return pd.DataFrame()
    target = scores.dropna(subset=["correct_target"])
    if target.empty:
        return pd.DataFrame()
    return table3(target.assign(correct=target.correct_target.astype(bool), tie=target.tie_target.astype(bool)))
