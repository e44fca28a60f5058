"""BHS (Kryvosheieva & Levy 2025): Basque auxiliary agreement, Hindi aspect and Swahili noun-class
agreement, 22 test suites x 1,000 items of a context and two endings, read from the release
(dariakryvosheieva/syntactic_generalization_multilingual 7f44015, ``suites/<config>.json``: each
item ``[[context, context], [ending_good, ending_bad]]``, as its evaluate.py l.16-21 reads them),
else from the Hub copy (jmichaelov/bhs: rows of context, ending_good, ending_bad).

Its reference scores the ending after the context (evaluate.py l.27-29: minicons' partial_score,
the mean log-probability of the ending's tokens, the context joined with one space): the rows keep
``context``, ``ending_good`` and ``ending_bad``, and :func:`helpers.runs.endings.endings_input`
scores exactly that for any dataset with those columns.
"""
from __future__ import annotations

import pandas as pd

from . import hub_pairs, release_or_hub, text_files
from .hub_catalog import BHS_CONFIGS
from .schema import DataFormatError, finalize_pairs
from .sources import DataSource

FOLDER = "bhs/suites"
EXPECTED = "a JSON array of items [[context, context], [ending_good, ending_bad]] (BHS's suites)"


def suite_rows(config: str, source: DataSource) -> pd.DataFrame:
    """One suite's items as (context, ending_good, ending_bad); an item of another shape, or with
    two different contexts, is an error naming it."""
    path = source.path(f"{FOLDER}/{config}.json")
    items = text_files.json_document(path, EXPECTED)
    rows = []
    for k, item in enumerate(items if isinstance(items, list) else [None]):
        ok = (isinstance(item, list) and len(item) == 2 and all(isinstance(p, list) and len(p) == 2 for p in item)
              and all(isinstance(s, str) for p in item for s in p))
        if not ok or item[0][0] != item[0][1]:
            why = "two different contexts" if ok else "not [[context, context], [good, bad]] of strings"
            raise DataFormatError(f"{path}: item {k + 1} has {why}. To fix: {text_files.RESTORE}")
        rows.append({"context": item[0][0], "ending_good": item[1][0], "ending_bad": item[1][1]})
    return pd.DataFrame(rows)


def from_release(source: DataSource) -> pd.DataFrame:
    return finalize_pairs(pd.concat([hub_pairs.bhs_table(config, suite_rows(config, source))
                                     for config in BHS_CONFIGS], ignore_index=True), str(source.path(FOLDER)))


def load(source: DataSource | None = None) -> pd.DataFrame:
    """Every BHS item (22,000), from the release or a Hub copy (:mod:`release_or_hub`): ``good`` and
    ``bad`` the context and each ending joined with one space (:func:`hub_pairs.bhs_table`)."""
    return release_or_hub.read("bhs", FOLDER, from_release, hub_pairs.bhs_from_hub, source)
