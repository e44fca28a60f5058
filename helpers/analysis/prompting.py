"""Tables for A/B prompting: the share of "A" answers (Ide et al. Table 10) and the agreement of
two decision paths (``ab``, greedy constrained decoding: outlines, or the argmax of one-token letters'
logits, which is the same answer; ``ab_logit``, the logit comparison, a tie kept as a tie).
A method's answer is read from its decision: the slot of the acceptable sentence when it won,
the other slot when it lost, "tie" on a tie."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..methods.prompting import AB_ORDERS
from ..settings.lists import parse_list
from .accuracy import TIE_SHARE_COLUMN, with_tie_range

KEYS = ["model", "template"]
PAIR = ["model", "template", "paradigm", "pair_id"]


def of_method(scores: pd.DataFrame, method: str) -> pd.DataFrame:
    """The rows of one A/B method; an error naming the notebook to run when there are none."""
    rows = scores[scores["method"] == method]
    if rows.empty:
        raise ValueError(f"no scores of {method!r}: run 03_prompting with method {method!r} first")
    return rows


def answers(rows: pd.DataFrame) -> pd.Series:
    """The letter each row's method chose ("A", "B" or "tie"), from good_slot, correct and tie."""
    if "good_slot" not in rows:
        raise ValueError("the A/B answers read one order per pair, and these rows were prompted in several "
                         "(ab_orders 'both' or 'three': a correct is a share of orders): read the files scored with "
                         "ab_orders='seeded' (-p ab_orders seeded) for the share of A answers")
    other = np.where(rows["good_slot"] == "A", "B", "A")
    chosen = np.where(rows["tie"].astype(bool), "tie",
                      np.where(rows["correct"].astype(bool), rows["good_slot"], other))
    return pd.Series(chosen, index=rows.index, name="answer")


def ab_answers(scores: pd.DataFrame, methods="ab") -> pd.DataFrame:
    """Per (model, method, template) of ``methods`` (one A/B method or several): pairs, share of
    "A" answers, the share expected from the slots of the acceptable sentence, accuracy, ties and
    their share (a tie counts wrong)."""
    rows = pd.concat([of_method(scores, m) for m in parse_list(methods, what="A/B method")])
    answer = answers(rows)
    marked = rows.assign(is_a=answer == "A", expected_a=rows["good_slot"] == "A", is_tie=answer == "tie",
                         decided_by=decided_by(rows))
    return with_tie_range(marked.groupby(["model", "method", "template"], sort=False).agg(
        pairs=("correct", "size"), decided_by=("decided_by", "first"), share_A=("is_a", "mean"),
        share_A_expected=("expected_a", "mean"), accuracy=("correct", "mean"), ties=("is_tie", "sum"),
        **{TIE_SHARE_COLUMN: ("is_tie", "mean")}).reset_index())


def decided_by(rows: pd.DataFrame) -> pd.Series:
    """What produced each row's A/B answer: "letter logits" (``ab_logit``, and ``ab`` read from one-token
    letters' logits) or "outlines" (``ab`` decoded; files written before the path was recorded)."""
    path = rows["ab_path"] if "ab_path" in rows else pd.Series(np.nan, index=rows.index)
    return pd.Series(np.where(rows["method"] == "ab_logit", "letter logits", path.fillna("outlines")),
                     index=rows.index)


def paired_answers(scores: pd.DataFrame, a: str = "ab", b: str = "ab_logit") -> pd.DataFrame:
    """The answers of methods ``a`` and ``b`` on the same pairs (columns answer_a, answer_b,
    correct_a, correct_b)."""
    def pick(method):
        rows = of_method(scores, method)
        return rows[PAIR + ["correct"]].assign(answer=answers(rows))

    return pick(a).merge(pick(b), on=PAIR, suffixes=("_a", "_b"))


def agreement(scores: pd.DataFrame, a: str = "ab", b: str = "ab_logit") -> pd.DataFrame:
    """Per (model, template): how often ``a`` and ``b`` give the same answer, and each one's accuracy."""
    both = paired_answers(scores, a, b)
    both = both.assign(same=both["answer_a"] == both["answer_b"])
    return both.groupby(KEYS, sort=False).agg(
        pairs=("same", "size"), agreement=("same", "mean"), **{f"accuracy_{a}": ("correct_a", "mean"),
                                                               f"accuracy_{b}": ("correct_b", "mean")}).reset_index()


def disagreements(scores: pd.DataFrame, a: str = "ab", b: str = "ab_logit") -> pd.DataFrame:
    """The pairs where ``a`` and ``b`` answered differently."""
    both = paired_answers(scores, a, b)
    return both[both["answer_a"] != both["answer_b"]].reset_index(drop=True)


def path_agreement(sample: pd.DataFrame) -> pd.DataFrame:
    """Per (model, template) of a decoded sample (:func:`helpers.methods.constrained.decoded_sample`):
    prompts decoded with outlines and how often 'ab' (as scored) and 'ab_logit' gave outlines' answer."""
    return sample.assign(ab=sample["answer_ab"] == sample["answer_outlines"],
                         ab_logit=sample["answer_ab_logit"] == sample["answer_outlines"]).groupby(
        KEYS, sort=False).agg(prompts=("ab", "size"), ab_agrees_with_outlines=("ab", "mean"),
                              ab_logit_agrees_with_outlines=("ab_logit", "mean")).reset_index()


def first_prompt(scores: pd.DataFrame) -> str:
    """The first row's prompt exactly as scored (its acceptable sentence's, or the first A/B order's)."""
    row = scores.iloc[0]
    for column in ("prompt_good", "prompt", *(f"prompt_{order}" for order in AB_ORDERS["three"])):
        if column in row and isinstance(row[column], str):
            return row[column]
    raise ValueError("these scores hold no prompt (a sentence readout scores the sentence itself)")
