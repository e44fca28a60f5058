"""Accuracy by phenomenon against humans, word-shuffling paradigms and attractors
(Ide et al. 2024, Figures 3-5: Figure 4 is attractors, Figure 5 word shuffling), each method at
its best template; ``methods`` keeps those methods only (all when None)."""
from __future__ import annotations

import pandas as pd

from .accuracy import at_best_template, by_phenomenon, of_methods


def phenomena_with_humans(scores: pd.DataFrame, methods=None) -> pd.DataFrame:
    """Per (model, method, phenomenon) of ``methods``: accuracy at the best template, its ties, and
    the humans' agreement (Figure 3; :func:`accuracy.by_phenomenon`)."""
    return by_phenomenon(of_methods(scores, methods))


def word_shuffle_paradigms(scores: pd.DataFrame, methods=None) -> pd.DataFrame:
    """Per (model, method, paradigm): accuracy and whether every pair has the same bag of words
    (Figure 5)."""
    if "word_shuffle" not in scores:
        raise ValueError("these scores carry no word_shuffle flag (BLiMP only)")
    s = at_best_template(scores, methods)
    return s.groupby(["model", "method", "paradigm"], sort=False).agg(
        accuracy=("correct", "mean"), word_shuffle=("word_shuffle", "all")).reset_index()


def word_shuffle_means(table: pd.DataFrame) -> pd.DataFrame:
    """Mean paradigm accuracy of word-shuffling vs other paradigms per (model, method)."""
    return table.groupby(["model", "method", "word_shuffle"]).agg(
        accuracy=("accuracy", "mean"), paradigms=("paradigm", "size")).reset_index()


def attractors(scores: pd.DataFrame, methods=None) -> pd.DataFrame:
    """Subject-verb agreement accuracy by attractor type (none, relational noun, relative clause;
    Figure 4)."""
    if "attractor" not in scores:
        raise ValueError("these scores carry no attractor column (BLiMP only)")
    s = at_best_template(scores, methods)
    s = s[s["attractor"].notna()]
    return s.groupby(["model", "method", "attractor"], sort=False).agg(
        accuracy=("correct", "mean"), pairs=("correct", "size")).reset_index()
