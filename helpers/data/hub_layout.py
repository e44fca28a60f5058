"""Which files of a Hugging Face dataset repository hold a config's split, and how to read them.

The Hub's documented convention: the dataset card (README.md) may declare, in its YAML front
matter, ``configs:`` entries ``{config_name, data_files}`` where ``data_files`` is a glob, a
list of globs, or a list of ``{split, path}`` (``path`` a glob or a list of globs); a glob
without a split is the split "train". A config the card does not declare is found by folder:
its data files are those under ``<config>/`` (for MultiBLiMP, ``<iso>/data.tsv``). A split with
a name of the dataset's own (XCOMPS's ``comps_de``) that the card does not declare is found by
the Hub's custom-split file names, ``data/<split>-xxxxx-of-xxxxx.<ext>``. One code path reads
every Hub dataset: the card where it speaks, the folders and file names where it does not.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import yaml

from . import text_files
from .schema import DataFormatError

CARD = "README.md"
DATA_SUFFIXES = (".parquet", ".tsv", ".csv", ".jsonl", ".json")


def front_matter(card: Path) -> dict:
    """The YAML between the card's leading ``---`` lines ({} for a card without one, or no card)."""
    if not card.is_file():
        return {}
    lines = card.read_text(encoding="utf-8").splitlines()
    if not lines or lines[0].strip() != "---":
        return {}
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), None)
    if end is None:
        raise DataFormatError(f"{card}: the front matter opened by '---' on line 1 is never closed")
    try:
        meta = yaml.safe_load("\n".join(lines[1:end])) or {}
    except yaml.YAMLError as err:
        raise DataFormatError(f"{card}: the front matter is not valid YAML ({err})") from None
    if not isinstance(meta, dict):
        raise DataFormatError(f"{card}: the front matter is not a mapping of keys to values")
    return meta


def _globs(value, where: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return list(value)
    raise DataFormatError(f"{where}: expected a glob or a list of globs, got {value!r}")


def card_configs(card: Path) -> dict[str, dict[str, list[str]]]:
    """config name -> {split: [glob, ...]} as the card's ``configs:`` declares them ({} if it does not)."""
    entries = front_matter(card).get("configs") or []
    if not isinstance(entries, list):
        raise DataFormatError(f"{card}: 'configs' must be a list of entries with config_name and data_files")
    out: dict[str, dict[str, list[str]]] = {}
    for entry in entries:
        if not isinstance(entry, dict) or "config_name" not in entry:
            raise DataFormatError(f"{card}: a 'configs' entry without config_name: {entry!r}")
        name, files = str(entry["config_name"]), entry.get("data_files")
        where = f"{card}, config {name}"
        if files is None:
            continue  # the Hub finds such a config's files by folder, as for an undeclared one
        if isinstance(files, list) and files and all(isinstance(f, dict) for f in files):
            splits: dict[str, list[str]] = {}
            for f in files:
                if "split" not in f or "path" not in f:
                    raise DataFormatError(f"{where}: a data_files entry needs split and path, got {f!r}")
                splits.setdefault(str(f["split"]), []).extend(_globs(f["path"], where))
            out[name] = splits
        else:
            out[name] = {"train": _globs(files, where)}
    return out


def split_globs(declared: dict[str, dict[str, list[str]]], config: str, split: str) -> list[str]:
    """The globs of ``config``'s ``split`` (a config with one split is read whatever its name);
    an undeclared config's folder, ``<config>/**/*``."""
    if config not in declared:
        return [f"{config}/**/*"]
    splits = declared[config]
    if split in splits:
        return splits[split]
    if len(splits) == 1:
        return next(iter(splits.values()))
    raise DataFormatError(f"config {config} declares the splits {sorted(splits)}, not {split!r}")


def matching_files(folder: Path, globs: list[str]) -> list[Path]:
    """The data files in ``folder`` that ``globs`` match, sorted."""
    return sorted({p for g in globs for p in folder.glob(g) if p.is_file() and p.suffix in DATA_SUFFIXES})


CUSTOM_SPLIT = "data/{split}-[0-9][0-9][0-9][0-9][0-9]-of-[0-9][0-9][0-9][0-9][0-9]*"


def named_split_globs(declared: dict[str, dict[str, list[str]]], config: str, split: str) -> list[str]:
    """The globs of ``config``'s split ``split`` where the dataset names its splits itself: those
    the card declares ([] when it declares ``config`` without that split), else the Hub's
    custom-split file names (:data:`CUSTOM_SPLIT`)."""
    if config in declared:
        return declared[config].get(split, [])
    return [CUSTOM_SPLIT.format(split=split)]


def download_patterns(declared: dict[str, dict[str, list[str]]], config: str) -> list[str]:
    """What to fetch of ``config`` (huggingface_hub's ``allow_patterns``: ``*`` crosses folders)."""
    if config not in declared:
        return [f"{config}/*"]
    return sorted({g for globs in declared[config].values() for g in globs})


def config_files(folder: Path, declared: dict[str, dict[str, list[str]]], config: str, split: str) -> list[Path]:
    """The data files of ``config``'s ``split`` in a local copy, sorted ([] when none are there);
    in an undeclared config's folder, the files named by the split if any are, else all."""
    found = matching_files(folder, split_globs(declared, config, split))
    if config not in declared:
        named = [p for p in found if split in p.stem]
        return named or found
    return found


def read_table(path: Path, expected: str = "a Hub data file (parquet, CSV, TSV or JSON lines)") -> pd.DataFrame:
    """A data file as strings (parquet and JSON keep their types), by suffix; a file that cannot be
    read is a :class:`DataFormatError` naming it (:mod:`text_files`)."""
    if path.suffix == ".parquet":
        try:
            return pd.read_parquet(path)
        except Exception as err:  # noqa: BLE001 - a damaged parquet fails anywhere in pyarrow (ArrowInvalid, OSError, KeyError in its pandas metadata ...)
            raise text_files.problem(path, f"not a readable parquet file ({type(err).__name__}: {err})",
                                     expected) from None
    if path.suffix in (".tsv", ".csv"):
        delimiter = "\t" if path.suffix == ".tsv" else ","
        return text_files.csv_frame(path, (), expected, delimiter).reset_index(drop=True)
    if path.suffix == ".json":  # one array of records, or (as the Hub also reads them) one record a line
        try:
            document = text_files.json_document(path, expected)
        except DataFormatError:
            document = None  # JSON lines: read below, where a bad line is named
        if document is not None:
            if not isinstance(document, list) or not all(isinstance(r, dict) for r in document):
                raise text_files.problem(path, "expected an array of records (JSON objects)", expected)
            return pd.DataFrame.from_records(document)
    return pd.DataFrame.from_records([row for _, row in text_files.jsonl(path, expected)])
