"""The teaching panel of 07 (Hu et al. 2025, Figure 1b) scored: the eight moon/moons strings
of :func:`helpers.analysis.teaching.teaching_items`, each alone, by one scorer, through the runner's
door (LP's own score of each string, as its score file would hold it)."""
from __future__ import annotations

import pandas as pd

from ..analysis.teaching import ranked, teaching_items
from ..engine.interface import Scorer
from ..runner import decide


def score_teaching(scorer: Scorer) -> pd.DataFrame:
    """The eight strings with their LP, token count and MeanLP under ``scorer``, ranked by LP."""
    items = teaching_items()
    rows, _ = decide(scorer, [{"sentence": text} for text in items["sentence"]], ["lp"], language="en",
                     sides=("sentence",))
    return ranked(items, rows["score"], rows["n_tokens_sentence"])
