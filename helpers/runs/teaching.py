"""The teaching panel of 07 (Hu et al. 2025, Figure 1b) scored: the eight moon/moons strings
of :func:`helpers.analysis.teaching.teaching_items`, each alone, by one scorer."""
from __future__ import annotations

import pandas as pd

from ..analysis.teaching import ranked, teaching_items
from ..engine.interface import Request, Scorer


def score_teaching(scorer: Scorer) -> pd.DataFrame:
    """The eight strings with their LP, token count and MeanLP under ``scorer``, ranked by LP."""
    items = teaching_items()
    scored = scorer.score([Request("", text) for text in items["sentence"]])
    return ranked(items, [s.total for s in scored], [s.n_tokens for s in scored])
