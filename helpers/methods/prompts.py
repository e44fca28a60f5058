"""Prompt-based methods (Ide et al. 2024, §3.3): Yes/No probability and A/B prompting.

Basis tables come from :mod:`helpers.prompting`; the scores here reduce them.
"""
from __future__ import annotations

import pandas as pd

from ..prompting import released_ratio, yes_probability
from .base import Basis, Method

YESNO, AB = Basis("yesno", "yn"), Basis("ab", "ab")


def _yes_probability(t: pd.DataFrame, side: str) -> pd.Series:
    return pd.Series(yes_probability(t[f"lp_yes_{side}"], t[f"lp_no_{side}"]), index=t.index)


def _released(t: pd.DataFrame, side: str) -> pd.Series:
    return pd.Series(released_ratio(t[f"logit_yes_{side}"], t[f"logit_no_{side}"]), index=t.index)


def _ab(t: pd.DataFrame, side: str) -> pd.Series:
    """Log-prob of the letter of the slot holding this side's sentence."""
    good_is_a = t["good_slot"] == "A"
    is_a = good_is_a if side == "good" else ~good_is_a
    return t["lp_a"].where(is_a, t["lp_b"])


PROMPTS = [
    Method("yesno", "prompting", YESNO, "P(Yes) / (P(Yes) + P(No)) at the answer position (softmax probabilities)",
           _yes_probability),
    Method("yesno_released", "prompting", YESNO,
           "logit(Yes) / (logit(Yes) + logit(No)) of the RAW logits, as Ide et al.'s released code computes it",
           _released),
    Method("ab", "prompting", AB, "A/B prompting: log-prob of the letter of the acceptable sentence's slot "
           "(fast path); the outlines constrained answer is stored beside it", _ab),
]
