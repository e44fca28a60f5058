"""Accuracy by language, MultiBLiMP-style (Jumelet et al. 2025, Figure 3: one value per language,
sorted): per (model, method) at its best template, by ``language`` and, where the dataset has one,
by the relation or agreement type within it (the word-order pairs' moved dependent, MultiBLiMP's
SV-#, ...). A tie counts wrong in ``accuracy``; the expected accuracy (a tie half) and the
accuracy with every tie right stand beside it (:func:`helpers.analysis.accuracy.summarise`)."""
from __future__ import annotations

import pandas as pd
from pandas import read_parquet

from ..data import DATASETS, processed_path
from .accuracy import KEYS, at_best_template, summarise


def with_language(scores: pd.DataFrame) -> pd.DataFrame:
    """``scores`` with a ``language`` column; a row of a file scored before rows kept it reads its
    pair's language from the dataset's processed table (by paradigm and pair id), else the dataset's."""
    have = scores["language"] if "language" in scores else pd.Series(pd.NA, index=scores.index, dtype="object")
    if have.notna().all():
        return scores
    found = have.astype("object").copy()
    for name, rows in scores[have.isna()].groupby("dataset"):
        found.loc[rows.index] = _pair_languages(str(name), rows)
    return scores.assign(language=found)


def _pair_languages(dataset: str, rows: pd.DataFrame) -> pd.Series:
    """The language of each row's pair in ``dataset``'s processed table; the dataset's language
    where it has one language or no processed table, or the pair is not in it."""
    fallback = DATASETS[dataset].language if dataset in DATASETS else None
    path = processed_path(dataset) if dataset in DATASETS else None
    if fallback != "mul" or path is None or not path.is_file():
        return pd.Series(fallback, index=rows.index, dtype="object")
    table = read_parquet(path, columns=["paradigm", "pair_id", "language"]).astype(str).drop_duplicates(
        ["paradigm", "pair_id"])
    keys = pd.MultiIndex.from_frame(rows[["paradigm", "pair_id"]].astype(str))
    languages = table.set_index(["paradigm", "pair_id"])["language"].reindex(keys)
    return pd.Series(languages.to_numpy(), index=rows.index, dtype="object").fillna(fallback)


def by_language(scores: pd.DataFrame, within: str | None = None, best_only: bool = True) -> pd.DataFrame:
    """Accuracy, pairs, ties and the tie range per (model, method, language[, ``within``]),
    languages in the order of the first method's accuracy, best first."""
    scores = with_language(at_best_template(scores) if best_only else scores)
    table = summarise(scores, KEYS + ["language"] + ([within] if within else []))
    order = table[table["method"] == table["method"].iloc[0]].groupby("language")["accuracy"].mean()
    rank = {lang: k for k, lang in enumerate(order.sort_values(ascending=False, kind="stable").index)}
    return table.sort_values(["model", "method", "language"], key=lambda col: col.map(rank) if col.name == "language"
                             else col, kind="stable").reset_index(drop=True)


def language_matrix(table: pd.DataFrame, value: str = "accuracy") -> pd.DataFrame:
    """Languages x (model, method) of a :func:`by_language` table (one row per language)."""
    wide = table.pivot_table(index="language", columns=["model", "method"], values=value, sort=False)
    return wide.reindex(table["language"].drop_duplicates())


def several_languages(scores: pd.DataFrame) -> bool:
    """Whether the scores hold more than one language (02 shows the per-language results then)."""
    return with_language(scores)["language"].nunique() > 1
