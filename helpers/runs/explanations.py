"""Grammar prompting (Scheinberg et al., Findings of ACL 2025, "Explain-then-Process"): an
explanation of each paradigm's phenomenon placed before the judgment.

A user writes the explanations once per paradigm in a file (JSON or YAML: paradigm -> text; CSV or
TSV: columns ``paradigm`` and ``explanation``); :func:`explained_input` gives a run the selection and
a :class:`helpers.runner.RunSetup` that puts each pair's paradigm's explanation before every
method's whole input (an A/B or Yes/No prompt, a sentence readout), as 06's priming prefixes go.
Every pair of a paradigm shares its explanation, so the engine runs it once per paradigm (its
prefix sharing). Score files are tagged "explained" and record the file's name and sha256; each
row keeps its explanation. The explanations are the user's: the paper's are in its appendix and
not released with it.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import yaml

from .. import paths
from ..data.selection import DatasetSelection
from ..runner import RunSetup

TAG = "explained"
CONTROL_TAG = "control"  # a control file's runs (an irrelevant explanation per paradigm), apart from the explained ones
COLUMN = "explanation"  # the score rows' column of each item's explanation


def explanations_file(path: str | Path) -> Path:
    """The explanations file ``path`` names: as given, else (a relative path) under the project's
    folder, where a command starts (a notebook runs in notebooks/); an error naming every place looked."""
    given = Path(path).expanduser()
    places = [given] if given.is_absolute() else [Path.cwd() / given, paths.ROOT / given]
    found = next((p for p in places if p.is_file()), None)
    if found is None:
        raise FileNotFoundError(f"no explanations file {path} (looked for {' and '.join(map(str, dict.fromkeys(places)))}"
                                "; a relative path is read from the folder the notebook runs in, then the project's): "
                                "give its absolute path, or write one with each paradigm's explanation (JSON or YAML: "
                                "paradigm -> text; CSV/TSV: columns paradigm, explanation)")
    return found


def read_explanations(path: str | Path) -> dict[str, str]:
    """paradigm -> explanation from a JSON, YAML, CSV or TSV file (:func:`explanations_file`); a clear
    error for anything else."""
    path = explanations_file(path)
    if path.suffix.lower() in (".csv", ".tsv"):
        table = pd.read_csv(path, sep="\t" if path.suffix.lower() == ".tsv" else ",", dtype=str, keep_default_na=False)
        if not {"paradigm", COLUMN} <= set(table.columns):
            raise ValueError(f"{path.name} needs the columns paradigm and {COLUMN}; it has {', '.join(table.columns)}")
        if table.paradigm.duplicated().any():
            raise ValueError(f"{path.name} explains paradigm(s) {sorted(set(table.paradigm[table.paradigm.duplicated()]))} "
                             "twice: keep one explanation per paradigm")
        found = dict(zip(table.paradigm, table[COLUMN]))
    elif path.suffix.lower() in (".json", ".yaml", ".yml"):
        text = path.read_text(encoding="utf-8")
        found = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
        if not isinstance(found, dict):
            raise ValueError(f"{path.name} must map each paradigm to its explanation, got a {type(found).__name__}")
    else:
        raise ValueError(f"{path.name}: give the explanations as .json, .yaml, .csv or .tsv")
    empty = sorted(str(p) for p, text in found.items() if not isinstance(text, str) or not text.strip())
    if empty:
        raise ValueError(f"{path.name} has no explanation text for {', '.join(empty)}")
    return {str(p): text for p, text in found.items()}


def explained_input(selection: DatasetSelection, path: str | Path, tag: str = TAG) -> tuple[DatasetSelection, RunSetup]:
    """What :meth:`helpers.runs.run.Run.files` scores to put each pair of ``selection`` after its
    paradigm's explanation from the file at ``path``: the selection and its setup (its files tagged
    ``tag``: :data:`CONTROL_TAG` for a control file's). A paradigm the
    file does not explain is an error naming them; a shard plans over its whole run's explanations
    (its scores are the unsharded run's, bit for bit)."""
    path = explanations_file(path)
    texts = read_explanations(path)
    frames = [selection.frame] + ([selection.shard.whole] if selection.shard and selection.shard.whole is not None
                                  else [])
    missing = sorted({str(p) for frame in frames for p in frame.paradigm.unique()} - set(texts))
    if missing:
        raise ValueError(f"{path.name} explains no paradigm {', '.join(missing[:8])}"
                         f"{f' (and {len(missing) - 8} more)' if len(missing) > 8 else ''} of {selection.name}: "
                         "add an explanation for each, or leave those paradigms out of the selection")
    whole = [texts[str(p)] for p in frames[1].paradigm] if len(frames) > 1 else None
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return selection, RunSetup(context=[texts[str(p)] for p in selection.frame.paradigm], context_column=COLUMN,
                               configuration={"explanations": {"file": path.name, "sha256": digest}}, tag=tag,
                               whole_context=whole)
