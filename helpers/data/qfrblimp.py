"""QFrBLiMP (Beauchemin, Veilleux, Khoury & Roy, Findings of EACL 2026): 1,761 Quebec-French
minimal pairs of 20 phenomena, read from the GitHub release's unshuffled file
(davebulaval/QFrBLiMP bd14729, ``datastore/QFrBLiMP/human_llm_annotations.tsv``: sentence_good,
sentence_bad, type = the phenomenon id, 13 annotator columns coded 1 = chose sentence_good), else
from the Hub copy (graalul/qfrblimp: config ``qfrblimp``, split ``test``, ``qfrblimp.jsonl``). The
release's jsonl is not read: it shuffles the two sentences, and its majority label points at the
unacceptable one in 68 pairs.

Pairs per phenomenon id (the GitHub README's table): 1-20 hold 97, 95, 97, 96, 99, 97, 114, 106,
113, 91, 100, 100, 96, 97, 60, 60, 60, 60, 60, 63. The GitHub release has 18 pairs whose two
sentences are the same (flagged ``identical`` here, as every reader flags them).

A record has ``sentence_good``, ``sentence_bad`` and ``linguistic_phenomenon``, as the GitHub
README shows one (davebulaval/QFrBLiMP bd14729, README.md l.58-72: the phenomenon's French name,
and a ``label``); the Hub card's records add ``phenomenon_id`` and the English name in parentheses
("Accords participes passés (Past participle agreements)"). Without ``phenomenon_id`` the id is
the README's for the French name (its table, l.29-50: :data:`PHENOMENA`).
"""
from __future__ import annotations

import re
import warnings

import pandas as pd

from . import hub, release_or_hub, text_files
from .hub_catalog import spec_of
from .hub_pairs import read_files, release_columns
from .schema import DataFormatError, finalize_pairs, without_identical
from .sources import DataSource

REQUIRED = ("sentence_good", "sentence_bad", "linguistic_phenomenon")
# the GitHub README's "Linguistic Phenomena (LP)" table: id -> French name (README.md l.31-50)
PHENOMENA = {1: "Accords participes passés", 2: "Flexion du verbe", 3: "ne ... que",
             4: "Sélection morphologie fonctionnelle", 5: "Clitique dans la négation de l'infinitif",
             6: "Montée du clitique", 7: "Négation standard", 8: "Déterminants", 9: "Sémantique lexicale",
             10: "Accord dans l'expression idiomatique", 11: "Accord des adjectifs", 12: "-é / -er",
             13: "Sélection lexicale du complément", 14: "Négation de l'infinitif", 15: "Îlot sujet",
             16: "Îlot ajout", 17: "Îlot qu-", 18: "Îlot SN", 19: "Dépendance parasitique avec dont",
             20: "Préposition orpheline"}
ANNOTATOR = re.compile(r"annotator_\d+")
# the share of judgments choosing the acceptable sentence in the GitHub release's
# datastore/QFrBLiMP/human_llm_annotations.tsv (13 annotator columns x 1,761 pairs), counted here
RELEASE_CHOSE_GOOD = 0.8695


def annotator_agreement(raw: pd.DataFrame, where: str) -> pd.Series:
    """Per pair, the share of its annotators who chose the acceptable sentence: the mean of the
    ``annotator_<n>`` columns, each 1 where that annotator chose ``sentence_good`` and 0 where
    they chose ``sentence_bad`` (the coding of the GitHub release's human_llm_annotations.tsv,
    the file with these two columns); an empty cell (null) is an annotator who did not judge the pair.
    All NaN, with a warning, when the file has no annotator columns."""
    columns = [c for c in raw.columns if ANNOTATOR.fullmatch(str(c))]
    if not columns:
        warnings.warn(f"{where} has no annotator_<n> columns: QFrBLiMP's human column (human_agreement) is empty. "
                      "The GitHub release (davebulaval/QFrBLiMP, datastore/QFrBLiMP/human_llm_annotations.tsv) "
                      "holds the 13 annotators' choices", stacklevel=3)
        return pd.Series(float("nan"), index=raw.index)
    votes = raw[columns].apply(pd.to_numeric, errors="coerce")
    invalid = (votes.notna() & ~votes.isin([0, 1])) | (votes.isna() & raw[columns].notna())
    if invalid.any().any():
        row, column = invalid.stack().loc[lambda flags: flags].index[0]
        raise DataFormatError(f"{where}: record {row + 1}, {column} is {raw.at[row, column]}; an annotator's "
                              "choice is 1 (the acceptable sentence) or 0 (the other). To fix: restore the file "
                              "(download it again), or code your own annotations so")
    chose_good = float(votes.stack().mean())
    if chose_good < 0.5:
        warnings.warn(f"{where}: the annotators chose the acceptable sentence in {chose_good:.1%} of their judgments, "
                      f"against {RELEASE_CHOSE_GOOD:.1%} in the GitHub release (human_llm_annotations.tsv): this file "
                      "may code a choice the other way (0 = sentence_good), and human_agreement would then be "
                      "reversed. To fix: check the file's coding; recode it as 1 = chose sentence_good", stacklevel=3)
    return votes.mean(axis=1)


def phenomenon_ids(names: pd.Series, where: str) -> pd.Series:
    """Each record's phenomenon id from its French name (:data:`PHENOMENA`; an English name in
    parentheses after it is ignored), for records without ``phenomenon_id``."""
    by_name = {name: pid for pid, name in PHENOMENA.items()}
    ids = french_name(names).map(by_name)
    if ids.isna().any():
        row = int(ids[ids.isna()].index[0])
        raise DataFormatError(f"{where}: record {row + 1} has no phenomenon_id and its linguistic_phenomenon "
                              f"{names.iloc[row]!r} is none of the README's 20 ({', '.join(PHENOMENA.values())}). "
                              "To fix: restore the file (download it again)")
    return ids.astype(float)


FOLDER = "qfrblimp/datastore/QFrBLiMP"
RELEASE = f"{FOLDER}/human_llm_annotations.tsv"
RELEASE_EXPECTED = "QFrBLiMP's human_llm_annotations.tsv (id, sentence_good, sentence_bad, type, annotator_<n> ...)"


def french_name(names: pd.Series) -> pd.Series:
    """The phenomenon's French name, less an English one in parentheses after it (the Hub card's)."""
    return names.astype(str).str.replace(r"\s*\([^()]*\)\s*$", "", regex=True).str.strip()


def pairs_table(raw: pd.DataFrame, ids: pd.Series, where: str) -> pd.DataFrame:
    """The canonical rows of either source: ``paradigm`` "LP<id>", ``phenomenon`` the README's
    French name of the id, ``pair_id`` the position within the phenomenon, ``human_agreement``."""
    if ids.isna().any() or (ids != ids.round()).any() or not ids.isin(list(PHENOMENA)).all():
        row = int(ids[ids.isna() | (ids != ids.round()) | ~ids.isin(list(PHENOMENA))].index[0])
        raise DataFormatError(f"{where}: record {row + 1} has the phenomenon id {ids.iloc[row]!r}, not a whole number "
                              "from 1 to 20. To fix: restore the file (download it again)")
    ids = ids.astype(int).reset_index(drop=True)
    raw = raw.reset_index(drop=True)
    paradigm = "LP" + ids.astype(str)
    table = pd.DataFrame({"dataset": "qfrblimp", "language": "fr", "paradigm": paradigm,
                          "phenomenon": ids.map(PHENOMENA), "field": "",
                          "pair_id": paradigm.groupby(paradigm).cumcount(), "good": raw["sentence_good"],
                          "bad": raw["sentence_bad"], "human_agreement": annotator_agreement(raw, where)})
    kept = release_columns(raw, {"sentence_good", "sentence_bad", "human_agreement"})
    return finalize_pairs(pd.concat([table, kept], axis=1), where)


def from_release(source: DataSource) -> pd.DataFrame:
    """The GitHub release's unshuffled pairs with its 13 annotators' choices (the release's jsonl
    shuffles the two sentences, and its majority label points at the unacceptable one in 68 pairs)."""
    path = source.path(RELEASE)
    raw = text_files.csv_frame(path, ("sentence_good", "sentence_bad", "type"), RELEASE_EXPECTED, "\t")
    return pairs_table(raw, pd.to_numeric(raw["type"], errors="coerce").reset_index(drop=True), str(path))


def from_hub(source: DataSource | None = None) -> pd.DataFrame:
    """The Hub copy (graalul/qfrblimp, config ``qfrblimp``, split ``test``): records with
    ``phenomenon_id``, else the French name's id (:func:`phenomenon_ids`); its
    ``linguistic_phenomenon`` is kept as ``release_phenomenon``."""
    spec = spec_of("qfrblimp")
    files = hub.find("qfrblimp", None, source)["qfrblimp"]
    where = str(files[0])
    raw = read_files(files, REQUIRED, spec.name).rename(columns={spec.good: "sentence_good", spec.bad: "sentence_bad"})
    ids = pd.to_numeric(raw["phenomenon_id"], errors="coerce") if "phenomenon_id" in raw \
        else phenomenon_ids(raw["linguistic_phenomenon"], where)
    return pairs_table(raw.rename(columns={"linguistic_phenomenon": "release_phenomenon"}), ids, where)


def load(drop_identical: bool = False, source: DataSource | None = None) -> pd.DataFrame:
    """QFrBLiMP's 1,761 pairs from the release or a Hub copy (:mod:`release_or_hub`):
    ``paradigm`` "LP<phenomenon_id>" (LP1 ... LP20: the README's "Linguistic Phenomena (LP)"),
    ``phenomenon`` the README's French name, ``pair_id`` the pair's position within its phenomenon,
    ``human_agreement`` the share of annotators who chose the acceptable sentence
    (:func:`annotator_agreement`: 13 in the release, 12 on the Hub), the human column of 04's
    Figure 3; the source's other columns are kept. ``drop_identical`` removes the 18 pairs that
    hold one sentence twice. Its paper reads the lower perplexity, i.e. the higher MeanLP
    (:mod:`helpers.data.linking`)."""
    frame = release_or_hub.read("qfrblimp", FOLDER, from_release, from_hub, source)
    return without_identical(frame, drop_identical)
