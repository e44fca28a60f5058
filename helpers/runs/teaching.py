"""The teaching panel of 07 (Hu et al. 2025, Figure 1b) scored: the eight moon/moons strings of
the dataset ``moon_teaching`` (:mod:`helpers.data.teaching`), each alone, by LP through the store
like any dataset's (found there on a rerun: no model loads), ranked."""
from __future__ import annotations

import pandas as pd

from ..analysis.teaching import ranked, teaching_items
from ..data.selection import select
from ..engine.interface import Scorer
from ..runner import run_methods
from ..settings import Settings
from ..store import ScoreStore, load_files

DATASET = "moon_teaching"


def teaching_files(scorer: Scorer, settings: Settings | None = None, store: ScoreStore | None = None) -> list:
    """The LP score file of the eight strings under ``scorer`` (and ``settings``): found, or scored."""
    return run_methods(scorer, select(DATASET), ["lp"], settings, store=store)


def score_teaching(scorer: Scorer, settings: Settings | None = None, store: ScoreStore | None = None) -> pd.DataFrame:
    """The eight strings with their LP, token count and MeanLP under ``scorer``, ranked by LP
    (``attrs["score_files"]``: the file read, a figure's source)."""
    rows = load_files(teaching_files(scorer, settings, store))
    files = rows.attrs["score_files"]
    rows = rows.sort_values("item_id")
    panel = ranked(teaching_items(), rows["score"].to_numpy(), rows["n_tokens_sentence"].to_numpy())
    panel.attrs["score_files"] = files
    return panel
