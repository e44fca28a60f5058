"""Hu et al. (2025)'s Figure 1b as a teaching panel: eight strings {The, A} {moon, moons}
{emerge, emerges}. Three are grammatical; their probabilities mix meaning (how often one
talks of one moon or several, "the" or "a") with grammar (agreement), so a grammatical string
can be less probable than an ungrammatical one.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..data import teaching
from ..methods import measures


def teaching_items() -> pd.DataFrame:
    """The eight strings (with a period) and what makes each grammatical or not (``grammatical``)."""
    items = teaching.load()
    return pd.DataFrame({"sentence": items["sentence"].astype(str), **{c: items[c] for c in teaching.PARTS},
                         "grammatical": items["label"].astype(int)})


def ranked(items: pd.DataFrame, lp, n_tokens) -> pd.DataFrame:
    """``items`` with each string's LP, token count and MeanLP, ranked by LP (1 = most probable)."""
    lp, n = np.asarray(lp, dtype=float), np.asarray(n_tokens)
    items = items.assign(lp=lp, n_tokens=n, meanlp=measures.mean_lp(lp, n))
    return items.assign(rank=items["lp"].rank(ascending=False, method="min").astype(int))
