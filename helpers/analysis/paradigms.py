"""Accuracy by phenomenon against humans, word-shuffling paradigms and attractors
(Ide et al. 2024, Figures 3-5: Figure 4 is attractors, Figure 5 word shuffling), each method at
its best template; ``methods`` keeps those methods only (all when None)."""
from __future__ import annotations

import pandas as pd

from .accuracy import EXPECTED, TIES_RIGHT, at_best_template, by_phenomenon, of_methods, summarise


def phenomena_with_humans(scores: pd.DataFrame, methods=None) -> pd.DataFrame:
    """Per (model, method, phenomenon) of ``methods``: accuracy at the best template, its ties, and
    the humans' agreement (Figure 3; :func:`accuracy.by_phenomenon`)."""
    return by_phenomenon(of_methods(scores, methods))


def word_shuffle_paradigms(scores: pd.DataFrame, methods=None) -> pd.DataFrame:
    """Per (model, method, paradigm): accuracy (ties wrong) with its ties and their range
    (:func:`accuracy.summarise`), and whether every pair has the same bag of words (Figure 5)."""
    if "word_shuffle" not in scores:
        raise ValueError("these scores carry no word_shuffle flag (BLiMP only)")
    s = at_best_template(scores, methods)
    keys = ["model", "method", "paradigm"]
    return summarise(s, keys).merge(s.groupby(keys, sort=False)["word_shuffle"].all().reset_index(), on=keys)


def word_shuffle_means(table: pd.DataFrame) -> pd.DataFrame:
    """Mean paradigm accuracy (ties wrong, half and right) of word-shuffling vs other paradigms
    per (model, method)."""
    return table.groupby(["model", "method", "word_shuffle"]).agg(
        accuracy=("accuracy", "mean"), **{c: (c, "mean") for c in (EXPECTED, TIES_RIGHT)},
        paradigms=("paradigm", "size")).reset_index()


def attractors(scores: pd.DataFrame, methods=None) -> pd.DataFrame:
    """Subject-verb agreement accuracy by attractor type (none, relational noun, relative clause;
    Figure 4), ties wrong, with the pairs, ties and the accuracy's range (:func:`accuracy.summarise`)."""
    if "attractor" not in scores:
        raise ValueError("these scores carry no attractor column (BLiMP only)")
    s = at_best_template(scores, methods)
    return summarise(s[s["attractor"].notna()], ["model", "method", "attractor"])
