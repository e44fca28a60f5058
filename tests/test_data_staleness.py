"""A processed table records the sha256 of its rows and its reader's version; score files record
the table's hash, so a changed item makes them stale (named by the dataset), and a table an older
reader wrote is prepared again."""
from __future__ import annotations

import sys

import pandas as pd
import pytest

from helpers import data
from helpers.data import table_version
from helpers.data.selection import select
from helpers.engine import CausalScorer
from helpers.runner import run_methods
from helpers.settings import Settings
from helpers.store import ScoreStore, load_scores, read_metadata


def test_a_changed_item_makes_the_scores_stale_and_they_are_recomputed(scratch, tiny):
    prepared = data.prepare("syntaxgym")
    path = data.processed_path("syntaxgym")
    stamp = table_version.recorded(path)
    assert stamp["rows_sha256"] == table_version.rows_sha256(prepared)
    assert stamp["reader_version"] == "1"
    selection = select("syntaxgym", 1).pick_paradigms(2)
    assert selection.config()["data_sha256"] == stamp["rows_sha256"]
    scorer, store = CausalScorer(tiny("tiny-gpt2"), Settings(progress=False)), ScoreStore()
    (first,) = run_methods(scorer, selection, ["lp"], store=store)
    assert read_metadata(first)["data_sha256"] == stamp["rows_sha256"] and store.writes == 1
    # a reader fix changes one sentence; the table is prepared again
    changed = prepared.copy()
    changed.loc[0, "good"] = changed.loc[0, "good"] + " ."
    changed.attrs = {**prepared.attrs, "rows_sha256": table_version.rows_sha256(changed)}
    data.save_processed("syntaxgym", changed)
    with pytest.warns(UserWarning, match=r"1 of the score files read are stale \(.* the items of syntaxgym changed "
                                         r"since they were scored"):
        load_scores(dataset="syntaxgym")
    (second,) = run_methods(scorer, select("syntaxgym", 1).pick_paradigms(2), ["lp"], store=store)
    assert second != first and store.writes == 2  # recomputed, not reused
    assert read_metadata(second)["data_sha256"] == table_version.rows_sha256(changed)


def test_a_table_of_an_older_reader_is_prepared_again(scratch, monkeypatch):
    data.prepare("syntaxgym")
    module = sys.modules[data.DATASETS["syntaxgym"].loader.__module__]
    monkeypatch.setattr(module, "READER_VERSION", "2", raising=False)
    with pytest.raises(data.DataNotPreparedError, match=r"written by version 1 of the syntaxgym reader, now 2: "
                                                        r"prepare it again with notebook 01"):
        data.load_processed("syntaxgym", prepared_only=True)
    with pytest.warns(UserWarning, match="written by version 1 of the syntaxgym reader, now 2: prepared again"):
        again = data.load_processed("syntaxgym")
    assert again.attrs["reader_version"] == "2"
    assert table_version.recorded(data.processed_path("syntaxgym"))["reader_version"] == "2"
    pd.testing.assert_frame_equal(again, data.load_processed("syntaxgym"))  # read back as written, no warning
