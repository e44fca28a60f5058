"""Build the explorer over a score store into one folder: ``index.html`` (the tables), its
script and stylesheet, ``figures/`` (SVG per dataset) and ``items/`` (one script per dataset,
model and paradigm). The folder is written beside its target and swapped in whole; an existing
folder is replaced only when an earlier build wrote it (its ``.explorer`` marker)."""
from __future__ import annotations

import json
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from filelock import FileLock

from .. import methods as registry, paths
from ..files import atomic_path
from ..provenance import git_commit
from ..store import ScoreStore, load_files, load_scores, read_metadata, safe_name
from . import figures as figs
from .items import ItemWriter, method_order, sentences, token_method
from .page import write_page
from .tables import overview, pair_rows, paradigms, records
from .tokens import tokenizer_for

MARKER = ".explorer"


class ExploreError(ValueError):
    """What keeps the explorer from being built, said in one line with what to do."""


@dataclass
class Explorer:
    """A built explorer: its page and what it holds."""

    index: Path
    store: Path
    files: int
    rows: int
    datasets: list[str]
    models: list[str]
    item_files: int
    seconds: float
    notes: list[str] = field(default_factory=list)


def check_out(out: Path) -> None:
    """Refuse to replace a folder that an explorer build did not write."""
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / MARKER).is_file())):
        raise ExploreError(f"{out} exists and is not an explorer folder (no {MARKER} file inside): "
                           "choose a new or empty folder with --out")


def file_groups(files) -> dict[tuple, tuple[list[Path], dict]]:
    """(dataset, model, method, template) -> (its score files, the first file's metadata)."""
    groups: dict[tuple, tuple[list[Path], dict]] = {}
    for path in files:
        meta = read_metadata(path)
        key = (meta["dataset"], meta["model_name"], meta["method"], str(meta.get("template_id") or "none"))
        groups.setdefault(key, ([], meta))[0].append(Path(path))
    return groups


def order_averaged(groups: dict[tuple, tuple[list[Path], dict]]) -> frozenset:
    """The configuration hashes of the file groups (:func:`file_groups`) that decided Hu & Levy's two
    answer orders apart (``order_average="accuracy"``): their rows' ties are shares of the orders."""
    return frozenset(meta["config_hash"] for _, meta in groups.values() if meta.get("order_average") == "accuracy")


def unread_files(folder: str, folder_files, read) -> list[str]:
    """What the tables leave out of a folder, listed by kind (the files a notebook reads apart: primed,
    few-shot, explained, endings; the configurations load_scores did not choose), one note each."""
    read = {str(p) for p in read}
    kinds: dict[str, list[str]] = {}
    for path in folder_files:
        if str(path) in read:
            continue
        meta = read_metadata(path)
        kind = ("primed (06 reads them)" if meta.get("context") not in (None, "") else
                f"{meta['fewshot_k']}-shot (03's few-shot section reads them)" if meta.get("fewshot_k") else
                "explained (grammar prompting: 02/03 with explanations= read them)" if meta.get("explanations") else
                "endings (02 with endings=True reads them)" if meta.get("endings") else
                "another configuration or a partial run (the tables read one per method: the most pairs, newest)")
        kinds.setdefault(kind, []).append(Path(path).name)
    return [f"{folder}: {len(names)} file(s) not in these tables: {kind}: {', '.join(sorted(names)[:6])}"
            + (", ..." if len(names) > 6 else "") for kind, names in kinds.items()]


def _unique(name: str, taken: set[str]) -> str:
    out, n = name, 1
    while out in taken:
        n += 1
        out = f"{name}-{n}"
    taken.add(out)
    return out


class ItemFiles:
    """The item files of every (dataset, model), written one at a time; tokenizers and the data's
    sentences are read once each, and why one could not be read goes into ``notes``."""

    def __init__(self, out: Path, notes: list[str]):
        self.out, self.notes, self.cache, self.taken = out, notes, {}, set()
        self.paths: dict = {}  # dataset -> model -> paradigm -> file

    def _once(self, key, make, say):
        if key not in self.cache:
            self.cache[key] = make()
            if self.cache[key][1]:
                self.notes.append(say(self.cache[key][1]))
        return self.cache[key][0]

    def write(self, dataset: str, model: str, rows: pd.DataFrame, groups: dict) -> None:
        """The files of one (dataset, model): ``rows`` (its pair rows), ``groups`` (:func:`file_groups`)."""
        method, tokens, text, tokenizer, here = token_method(rows["method"].unique()), None, None, None, []
        if method is None:
            self.notes.append(f"{dataset} / {model}: no LP-pass score file (lp, meanlp, ...): no token view")
        else:
            files, meta = groups[(dataset, model, method, "none")]
            options = meta.get("dataset_options") or {}
            text = self._once(("text", dataset, json.dumps(options, sort_keys=True)),
                              lambda: sentences(dataset, options), lambda why: why)
            tokens, _ = pair_rows(load_files(files, token_columns=True))
            if {"token_lp_good", "token_ids_good"} <= set(tokens.columns):
                tokenizer = self._once(("tokenizer", model), lambda: tokenizer_for(meta),
                                       lambda why: f"{model}: tokens show as ids, its tokenizer could not be read ({why})")
                here = [f"token view from {method} ({', '.join(p.name for p in files)})"]
            else:
                self.notes.append(f"{dataset} / {model}: {method}'s files hold no token log-probs: no token view")
                tokens = None
        writer = ItemWriter(dataset, model, rows, tokens, text, tokenizer, here)
        folder = _unique(f"items/{safe_name(dataset)}/{safe_name(model)}", self.taken)
        self.paths.setdefault(dataset, {})[model] = writer.write(self.out, folder)

    @property
    def count(self) -> int:
        return sum(len(files) for models in self.paths.values() for files in models.values())


def write_figures(out: Path, table: pd.DataFrame, per_paradigm: pd.DataFrame) -> dict:
    """dataset -> {"accuracy": file, "paradigms": file} (SVG under figures/)."""
    found = {}
    for k, dataset in enumerate(sorted(table["dataset"].unique())):
        accuracy = figs.write_svg(figs.accuracy_figure(table[table["dataset"] == dataset], dataset),
                                  out / "figures" / f"d{k}-accuracy.svg")
        heat = figs.write_svg(figs.paradigm_heatmap(per_paradigm[per_paradigm["dataset"] == dataset], dataset),
                              out / "figures" / f"d{k}-paradigms.svg")
        found[dataset] = {"accuracy": accuracy.relative_to(out).as_posix(), "paradigms": heat.relative_to(out).as_posix()}
    return found


def build(root: str | Path | None = None, out: str | Path | None = None) -> Explorer:
    """The explorer of the store at ``root`` (default outputs/scores) in ``out`` (default
    outputs/explore); an :class:`ExploreError` when there is nothing to show. The store is read
    one (dataset, model) folder at a time, so memory follows the largest run, not the store."""
    out = Path(out) if out else paths.outputs() / "explore"
    out.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(out.with_name(f".{out.name}.lock"))):  # two builds at once: one after the other, each whole
        return _build(Path(root) if root else paths.scores(), out)


def _build(root: Path, out: Path) -> Explorer:
    started = time.perf_counter()
    check_out(out)
    if not root.is_dir():
        raise ExploreError(f"no score store at {root}: run a scoring notebook (02_readout, 03_prompting) or "
                           "pass the store's folder with --root")
    folders = sorted({(p.parent.parent.name, p.parent.name) for p in ScoreStore(root).files()})
    if not folders:
        raise ExploreError(f"no score files under {root}: run a scoring notebook (02_readout, 03_prompting) or "
                           "pass the store's folder with --root")
    notes: list[str] = []
    tables, per_paradigm, files, counts = [], [], [], {"rows": 0, "models": set(), "methods": set()}
    with atomic_path(out, directory=True) as tmp:
        (tmp / MARKER).write_text(f"built by python -m helpers explore from {root}\n", encoding="utf-8")
        items = ItemFiles(tmp, notes)
        for dataset_folder, model_folder in folders:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    scores = load_scores(dataset_folder, model_folder, root=root)
                except ValueError as refused:  # what the readers refuse is shown, with why
                    why = "; ".join(getattr(refused, "problems", None) or [str(refused)])
                    notes.append(f"not shown: {dataset_folder}/{model_folder}: {why}")
                    continue
            notes += [str(w.message) for w in caught]
            notes += unread_files(f"{dataset_folder}/{model_folder}", ScoreStore(root).files(dataset_folder, model_folder),
                                  scores.attrs["score_files"])
            groups = file_groups(scores.attrs["score_files"])  # each file's record read once
            pairs, single = pair_rows(scores, order_averaged(groups))
            notes += single
            files += scores.attrs["score_files"]
            if pairs.empty:
                continue
            for (dataset, model), rows in pairs.groupby(["dataset", "model"], sort=True):
                table = overview(rows)
                tables.append(table)
                per_paradigm.append(paradigms(rows, table))
                items.write(dataset, model, rows, groups)
            counts["rows"] += len(pairs)
            counts["models"] |= set(pairs["model"])
            counts["methods"] |= set(pairs["method"])
        if not tables:
            raise ExploreError(f"the score files under {root} hold no minimal pairs (single sentences only): "
                               "score a dataset of pairs (BLiMP, CLiMP, ...)")
        table = pd.concat(tables, ignore_index=True).sort_values(["dataset", "model", "method"], kind="stable")
        per_paradigm = pd.concat(per_paradigm, ignore_index=True).sort_values(
            ["dataset", "paradigm", "model", "method"], kind="stable")
        figures = write_figures(tmp, table, per_paradigm)
        methods = method_order(counts["methods"])
        data = {"store": str(root), "built": time.strftime("%Y-%m-%d %H:%M"), "commit": git_commit(),
                "counts": {"files": len(files), "rows": counts["rows"], "models": len(counts["models"]),
                           "methods": len(methods), "pairs": int(table.groupby("dataset")["pairs"].max().sum())},
                "datasets": sorted(table["dataset"].unique()),
                "models": {d: sorted(g["model"].unique()) for d, g in table.groupby("dataset")},
                "method_order": methods,
                "methods": {m: registry.get(m).description for m in methods if m in registry.METHODS},
                "overview": records(table), "paradigms": records(per_paradigm),
                "items": items.paths, "figures": figures, "notes": list(dict.fromkeys(notes))}
        write_page(tmp, data)
    return Explorer(out / "index.html", root, len(files), counts["rows"], data["datasets"],
                    sorted(counts["models"]), items.count, time.perf_counter() - started, data["notes"])
