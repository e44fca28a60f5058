"""Tables of 06 beyond the paper's figures: what the prefixes are, the targets' text beside
primed scores, SyntaxGym pass rates per suite, and gain matrices after single-group prefixes."""
from __future__ import annotations

import pandas as pd

from .accuracy import tie_credits
from .prefix_similarity import accuracy_matrix, matrix_correlations

KEY = ["paradigm", "pair_id"]


def prefix_summary(prefixes: pd.DataFrame) -> pd.DataFrame:
    """Per prefix type and target length: rows, mean actual length, mean sentences, capped and
    exhausted rows (prefixes that stopped early at the model's positions or an empty pool)."""
    flags = {c: (c, "sum") for c in ("capped", "exhausted") if c in prefixes}
    return prefixes.groupby(["prefix_type", "target_length"], sort=False).agg(
        rows=("prefix", "size"), mean_length=("actual_length", "mean"), mean_sentences=("n_sentences", "mean"),
        **flags).reset_index()


def with_targets(scores: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """``scores`` with the pair's sentences (good, bad) joined on (paradigm, pair_id)."""
    text = pairs[KEY + ["good", "bad"]].drop_duplicates(KEY)
    out = scores.merge(text, on=KEY, how="left", validate="many_to_one")
    if out["good"].isna().any():
        raise ValueError("some scored pairs are not in the given pairs table: pass the selection the scores came from")
    return out


def suite_pass_rates(scores: pd.DataFrame) -> pd.DataFrame:
    """SyntaxGym per suite (rows): each method's share of items passing (column named by the
    method) and beside it the share of items holding each prediction (``<method> p<i>``, empty
    past the suite's count), the number of items and the predictions that decide a pass
    (``counted``, e.g. "1": fgd_hierarchy's second, a null "=" prediction, is reported but not
    counted under the default ``syntaxgym_pass``)."""
    predictions = sorted((c for c in scores.columns if c.startswith("prediction_")), key=lambda c: int(c[11:]))
    rates = scores.groupby(["suite", "method"])[["score", *predictions]].mean()
    columns = {}
    for method in sorted(scores["method"].unique()):
        of = rates.xs(method, level="method")
        columns[method] = of["score"]
        for c in predictions:
            if of[c].notna().any():
                columns[f"{method} p{c[11:]}"] = of[c]
    table = pd.DataFrame(columns).assign(items=scores.groupby("suite")["item"].nunique())
    if "counted_predictions" in scores:
        table["counted"] = scores.groupby("suite")["counted_predictions"].agg(lambda s: " / ".join(sorted(set(s))))
    return table.rename_axis("suite").reset_index()


def verdict_changes(scores: pd.DataFrame, a: str = "syntaxgym", b: str = "syntaxgym_word") -> pd.DataFrame:
    """SyntaxGym items whose verdict differs between methods ``a`` and ``b`` (plain and
    word-corrected surprisal), with both verdicts."""
    keys = ["suite", "item"]
    wide = scores[scores["method"].isin([a, b])].pivot_table(index=keys, columns="method", values="score")
    missing = [m for m in (a, b) if m not in wide]
    if missing:
        raise ValueError(f"no SyntaxGym scores of {missing}: run both methods")
    return wide[wide[a] != wide[b]].reset_index()


def gain_matrix(accuracy: pd.DataFrame, baseline: pd.Series) -> pd.DataFrame:
    """Accuracy after prefixes from each source group (rows) on each target group (columns)
    minus the target group's accuracy without a prefix (Sinha et al. Figure 8)."""
    missing = sorted(set(map(str, accuracy.columns)) - set(map(str, baseline.index)))
    if missing:
        raise KeyError(f"no baseline accuracy for target groups {missing[:5]}")
    return accuracy - baseline.reindex(accuracy.columns).to_numpy()[None, :]


def gains_with_tie_range(primed: pd.DataFrame, unprimed: pd.DataFrame, group: str) -> pd.DataFrame:
    """Figure 8's gains in long form, per (source, target) group: the gain with ties counted wrong
    (the figure's), half and right, each against the unprimed accuracy under the same rule, and
    the primed ties of the cell (``primed``: single-group prefix scores; ``unprimed``: the targets'
    scores without a prefix, with a ``group`` column)."""
    out = None
    for rule in ("wrong", "half", "right"):
        base = unprimed.assign(credit=tie_credits(unprimed["correct"].astype(float),
                                                  unprimed["tie"].astype(float))[rule])
        gains = gain_matrix(accuracy_matrix(primed, ties=rule), base.groupby(group)["credit"].mean())
        column = gains.rename_axis(index="source", columns="target").stack().rename(
            "gain" if rule == "wrong" else f"gain_ties_{rule}")
        out = column.to_frame() if out is None else out.join(column)
    ties = primed.pivot_table(index="source_phenomenon", columns="target_phenomenon", values="tie", aggfunc="sum",
                              sort=False).rename_axis(index="source", columns="target").stack().rename("ties")
    return out.join(ties.astype(int)).reset_index()


def correlations_with_tie_range(primed: pd.DataFrame, overlaps) -> pd.DataFrame:
    """Figures 6-7's Spearman rho of the accuracy matrix against each overlap matrix, with ties
    counted wrong and right (column ``ties``): where the two differ, the ties decide the rho."""
    return pd.concat([matrix_correlations(accuracy_matrix(primed, ties=rule), overlaps).assign(ties=rule)
                      for rule in ("wrong", "right")], ignore_index=True)
