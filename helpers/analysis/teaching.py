"""Hu et al. (2025)'s Figure 1b as a teaching panel: eight strings {The, A} {moon, moons}
{emerge, emerges}. Three are grammatical; their probabilities mix meaning (how often one
talks of one moon or several, "the" or "a") with grammar (agreement), so a grammatical string
can be less probable than an ungrammatical one.
"""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from ..methods import measures

DETERMINERS, NOUNS, VERBS = ("The", "A"), ("moon", "moons"), ("emerge", "emerges")


def teaching_items() -> pd.DataFrame:
    """The eight strings (with a period) and what makes each grammatical or not."""
    rows = []
    for det, noun, verb in itertools.product(DETERMINERS, NOUNS, VERBS):
        plural = noun.endswith("s")
        det_ok = not (det == "A" and plural)
        verb_ok = verb.endswith("s") != plural  # singular subject: emerges; plural: emerge
        rows.append({"sentence": f"{det} {noun} {verb}.", "determiner": det, "noun": noun, "verb": verb,
                     "subject_number": "plural" if plural else "singular", "determiner_agrees": det_ok,
                     "verb_agrees": verb_ok, "grammatical": int(det_ok and verb_ok)})
    return pd.DataFrame(rows)


def ranked(items: pd.DataFrame, lp, n_tokens) -> pd.DataFrame:
    """``items`` with each string's LP, token count and MeanLP, ranked by LP (1 = most probable)."""
    lp, n = np.asarray(lp, dtype=float), np.asarray(n_tokens)
    items = items.assign(lp=lp, n_tokens=n, meanlp=measures.mean_lp(lp, n))
    return items.assign(rank=items["lp"].rank(ascending=False, method="min").astype(int))
