"""Hu et al. (2025)'s Figure 1b as a dataset: eight strings {The, A} {moon, moons} {emerge,
emerges}, three grammatical, written here (no file is read). 07's teaching panel scores them
through the store like any dataset, so that a rerun finds its scores and loads no model."""
from __future__ import annotations

import itertools

import pandas as pd

from .schema import SENTENCE_COLUMNS

DETERMINERS, NOUNS, VERBS = ("The", "A"), ("moon", "moons"), ("emerge", "emerges")
PARTS = ["determiner", "noun", "verb", "subject_number", "determiner_agrees", "verb_agrees"]


def load(source=None) -> pd.DataFrame:
    """The eight strings (with a period), ``label`` 1 where grammatical, and what makes each so
    (``source`` is taken as every reader takes it; nothing is read)."""
    rows = []
    for det, noun, verb in itertools.product(DETERMINERS, NOUNS, VERBS):
        plural = noun.endswith("s")
        det_ok = not (det == "A" and plural)
        verb_ok = verb.endswith("s") != plural  # singular subject: emerges; plural: emerge
        rows.append({"dataset": "moon_teaching", "language": "en", "paradigm": "moon_agreement",
                     "phenomenon": "agreement", "field": "", "item_id": len(rows), "sentence": f"{det} {noun} {verb}.",
                     "label": int(det_ok and verb_ok), "determiner": det, "noun": noun, "verb": verb,
                     "subject_number": "plural" if plural else "singular", "determiner_agrees": det_ok,
                     "verb_agrees": verb_ok})
    strings = {c: "string" for c in SENTENCE_COLUMNS[:5] + ["sentence"]}
    return pd.DataFrame(rows)[SENTENCE_COLUMNS + PARTS].astype(strings)
