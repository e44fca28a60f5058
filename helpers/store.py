"""The on-disk store of scores: one parquet file per (dataset, model, method, template).

``outputs/scores/<dataset>/<model>/<method>[__t<template>].parquet`` holds one row per pair (both
scores, decision, tie flag, token counts, and the token log-probs and ids needed to recompute every
measure without the model). The file's metadata carries the configuration (model id and revision,
quantization, dtype, document-start policy, template text, dataset options, limit) and its hash,
library versions, git commit and time, and the numerics key (the engine's numerics version, torch's
and transformers' major.minor). Writes are atomic, each data page with a checksum
(:mod:`helpers.parquet_io`: a damaged file is an error, never read as scores); a rerun with the same
configuration and numerics key finds the finished file and skips it; a different configuration is
written alongside as ``...__<hash>.parquet`` and never over the existing file. A file of the same
configuration under another numerics key is *stale*: it is recomputed (unless ``reuse_stale``, or
``HELPERS_REUSE_STALE=1``, asks to reuse it, with a warning), and the stale file, like a file that
cannot be read (truncated, damaged), is moved to ``<folder>/set_aside/`` before the new one is
written: kept, never read.
"""
from __future__ import annotations

import json
import re
import time
import warnings
from pathlib import Path

import pandas as pd
import pyarrow as pa

from . import paths
from .parquet_io import read_parquet, write_parquet
from .provenance import git_commit, library_versions, numerics
from .data.shards import Shard, group_runs, merge, run_key
from .score_files import (DAMAGED_FIX, META_KEY, SET_ASIDE, as_today, finished_file, finished_run, is_stale,
                          read_metadata, reuse_stale_default, stale_reason, writable_path)
from .settings import RECORDED_AS
from .store_format import STORE_FORMAT, config_hash
from .data.compared_pairs import selection_of, shared_pairs
from .settings.stored import (StoreConflictError, method_setting_values, mixed_method_settings, mixed_settings,
                              stored_setting)
# Columns of every score file of minimal pairs (the tidy frame of load_scores has these).
SCORE_COLUMNS = ["dataset", "paradigm", "phenomenon", "pair_id", "score_good", "score_bad", "correct", "tie",
                 "n_tokens_good", "n_tokens_bad"]
PAIR_SCORE_COLUMNS = ["dataset", "score_good", "score_bad", "correct", "tie"]
ITEM_SCORE_COLUMNS = ["dataset", "score"]  # single items (a sentence, a word after a prefix)


def safe_name(name: str) -> str:
    """A model name or path as a folder name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", str(name).strip("/")).strip("_") or "model"


class ScoreStore:
    """Score files under ``root`` (default outputs/scores). ``reuse_stale`` (default: the
    ``HELPERS_REUSE_STALE`` environment variable) reuses a stale file instead of recomputing it."""

    SET_ASIDE = SET_ASIDE

    def __init__(self, root: str | Path | None = None, reuse_stale: bool | None = None):
        self.root = Path(root) if root else paths.scores()
        self.reuse_stale = reuse_stale_default() if reuse_stale is None else reuse_stale
        self.writes = 0

    def folder(self, dataset: str, model: str) -> Path:
        return self.root / safe_name(dataset) / safe_name(model)

    def stem(self, method: str, template, tag: str | None = None) -> str:
        """File stem: the method, its template and a tag that keeps a kind of run apart (e.g. "primed")."""
        stem = method if template in (None, "", "none") else f"{method}__t{template}"
        return f"{stem}__{safe_name(tag)}" if tag else stem

    def find(self, dataset: str, model: str, method: str, template, config: dict,
             tag: str | None = None) -> Path | None:
        """The finished file of exactly this configuration, if any."""
        return finished_file(self.folder(dataset, model), self.stem(method, template, tag), config_hash(config),
                             self.reuse_stale)

    def find_run(self, dataset: str, model: str, method: str, template, config: dict, tag: str | None = None,
                 shard: Shard | None = None) -> list[Path]:
        """The finished files of exactly this configuration: the file of ``shard`` when it is one to
        score, else the run's own file or, failing that, a complete set of its shard files (in
        shard order)."""
        return finished_run(self.folder(dataset, model), self.stem(method, template, tag), config_hash(config),
                            shard, self.reuse_stale)[0]

    def finished(self, dataset: str, model: str, method: str, template, config: dict, tag: str | None = None,
                 shard: Shard | None = None) -> tuple[str, list[Path], list[int]]:
        """The file stem of this configuration, its finished files (:meth:`find_run`) and, for a
        run read from its shards' files (``shard`` with index None) that finds none, the shards
        not scored yet."""
        stem = self.stem(method, template, tag)
        return (stem, *finished_run(self.folder(dataset, model), stem, config_hash(config), shard, self.reuse_stale))

    def target(self, dataset: str, model: str, method: str, template, config: dict, tag: str | None = None,
               shard: Shard | None = None) -> Path:
        """Where this configuration's file goes (a ``shard``'s named apart: ``lp__shard2of3``):
        the plain name, or alongside when it is taken (:func:`helpers.score_files.writable_path`)."""
        stem = self.stem(method, template, tag) + (f"__{shard.tag}" if shard is not None else "")
        return writable_path(self.folder(dataset, model), stem, config_hash(config), self.reuse_stale)

    def write(self, frame: pd.DataFrame, dataset: str, model: str, method: str, template, config: dict,
              extra_meta: dict | None = None, tag: str | None = None, shard: Shard | None = None) -> Path:
        """Write one score file atomically (temporary file, then rename); a ``shard``'s file is
        named apart (``lp__shard2of3.parquet``) and records which positions of the run it holds."""
        need = ITEM_SCORE_COLUMNS if "score" in frame.columns else PAIR_SCORE_COLUMNS
        missing = [c for c in need if c not in frame.columns]
        if missing:
            raise ValueError(f"score table for {method} lacks columns {missing}")
        if shard is not None and not shard.scored:
            raise ValueError("a run read from its shards' files writes no score file: score a shard (shard=k)")
        path = self.target(dataset, model, method, template, config, tag, shard)
        path.parent.mkdir(parents=True, exist_ok=True)
        if shard is not None:
            extra_meta = {**(extra_meta or {}), "shard": shard.meta()}
        meta = {**config, "config_hash": config_hash(config), "store_format": STORE_FORMAT, "n_pairs": int(len(frame)),
                "accuracy": float(frame["correct"].mean()) if len(frame) and "correct" in frame else None,
                "library_versions": library_versions(), "numerics": numerics(), "git_commit": git_commit(),
                "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "time_ns": time.time_ns(), **(extra_meta or {})}
        table = pa.Table.from_pandas(frame, preserve_index=False)
        table = table.replace_schema_metadata({**(table.schema.metadata or {}),
                                               META_KEY: json.dumps(meta, default=str).encode()})
        write_parquet(table, path)
        self.writes += 1
        return path

    def files(self, dataset: str | None = None, model: str | None = None) -> list[Path]:
        pattern = f"{safe_name(dataset) if dataset else '*'}/{safe_name(model) if model else '*'}/*.parquet"
        return sorted(p for p in self.root.glob(pattern) if not p.name.startswith("."))


def load_files(files, token_columns: bool = False) -> pd.DataFrame:
    """One tidy frame of the given score files (see :func:`load_scores`); the shard files of a
    run become one block of rows in the run's order."""
    frames, shard_sets = [], {}
    for path in files:
        table = read_parquet(path, DAMAGED_FIX)
        meta, df = as_today(json.loads((table.schema.metadata or {})[META_KEY])), table.to_pandas()
        if not token_columns:
            df = df[[c for c in df.columns if not c.startswith(("token_lp_", "token_ids_"))]]
        df.insert(0, "model", meta["model_name"])
        df.insert(1, "method", meta["method"])
        df.insert(2, "template", str(meta.get("template_id") or "none"))
        df["config_hash"] = meta["config_hash"]
        if meta.get("shard"):
            parts = shard_sets.setdefault(run_key(Path(path), meta), [])
            if not parts:
                frames.append(parts)  # the run's place; merged below
            parts.append((df, Shard.from_meta(meta["shard"])))
            continue
        frames.append(df)
    frames = [merge(f) if isinstance(f, list) else f for f in frames]
    out = (pd.concat(frames, ignore_index=True) if frames
           else pd.DataFrame(columns=["model", "method", "template"] + SCORE_COLUMNS))
    out.attrs["score_files"] = [str(p) for p in files]  # provenance for tables built from these scores
    return out


def _written(meta: dict) -> tuple:
    """When a score file was written, comparable across files (older files lack time_ns)."""
    return meta.get("time", ""), meta.get("time_ns", 0)


def matches(meta: dict, where: dict | None) -> bool:
    """Whether a score file's configuration has every value of ``where``; files scored under a
    priming context match only when ``where`` asks for that context, and few-shot files only
    when ``where`` names their ``fewshot_k``. A method setting's key (:data:`RECORDED_AS`, e.g.
    ``seed``) and the prompts' style match the files of methods that do not read them (they record None
    or nothing); a callable value is a test of the recorded value (:meth:`helpers.settings.Settings.score_filter`)."""
    where = where or {}
    if "context" not in where and meta.get("context") not in (None, ""):
        return False
    if "fewshot_k" not in where and meta.get("fewshot_k"):
        return False
    method_keys = {*RECORDED_AS.values(), "prompt_style"}
    return all(value(meta.get(key)) if callable(value) else
               meta.get(key) == value or (key in method_keys and meta.get(key) is None)
               for key, value in where.items())


def load_scores(dataset: str | None = None, model: str | None = None, methods=None, root=None,
                token_columns: bool = False, where: dict | None = None) -> pd.DataFrame:
    """One tidy frame of the score files that match, with model, method, template and
    config_hash columns. Only the newest weights of each model are used (those of its most
    recently written file), so a retrained model's old scores never mix with its new ones;
    where one (model, method, template) has files of several configurations, the one with
    the most pairs (then the newest) is used (where the methods' chosen files cover different
    selections, e.g. limits, the methods are compared on the pairs they all scored, with a warning
    saying how many; an error where they share none), and where they differ in a setting a method reads
    (an A/B seed, PenLP's alpha, instruct: :data:`helpers.settings.SETTING_KEYS`) it is an error
    naming them (``where`` chooses one). ``where`` keeps only files whose configuration
    has those values (e.g. ``{"limit": 20}``); scores under a priming context are left out
    unless ``where`` names the context. Scores of one model under several quantizations, dtypes,
    start conventions or revisions are an error naming them (``where`` chooses one). Token-level
    list columns are left out unless ``token_columns``. A complete set of shard files counts as
    one file of the whole run; an incomplete set is left out with a warning."""
    metas = [(path, read_metadata(path)) for path in ScoreStore(root).files(dataset, model)]
    metas = [(path, meta) for path, meta in metas
             if (methods is None or meta["method"] in methods) and matches(meta, where)]
    newest: dict[tuple, tuple] = {}  # (dataset, model) -> (when written, weights) of its newest file
    for _, meta in metas:
        key = (meta["dataset"], meta["model_name"])
        if key not in newest or _written(meta) > newest[key][0]:
            newest[key] = (_written(meta), meta.get("weights"))
    chosen: dict[tuple, tuple] = {}
    configurations: dict[tuple, dict[str, dict]] = {}  # (dataset, model, method, template) -> its setting values
    stale: dict[tuple, int] = {}
    settings: dict[tuple, dict[tuple, set]] = {}  # (dataset, model) -> its settings -> methods
    runs, incomplete = group_runs(metas)
    for note in incomplete:
        warnings.warn(note)
    for path, meta in runs:  # path: the run's file, or its shard files
        model_key = (meta["dataset"], meta["model_name"])
        if meta.get("weights") != newest[model_key][1]:
            stale[model_key] = stale.get(model_key, 0) + 1
            continue
        settings.setdefault(model_key, {}).setdefault(stored_setting(meta), set()).add(meta["method"])
        key = (*model_key, meta["method"], str(meta.get("template_id")))
        values = method_setting_values(meta)
        configurations.setdefault(key, {})[repr(sorted(values.items()))] = values
        rank = (meta.get("n_pairs", 0), _written(meta))
        if key not in chosen or rank > chosen[key][0]:
            chosen[key] = (rank, path, meta)
    problems = [mixed_settings(name, ds, found) for (ds, name), found in settings.items() if len(found) > 1]
    mixed: dict[tuple, list] = {}  # (dataset, model, method, the values found) -> its templates: one line each
    for (ds, name, method, template), found in configurations.items():
        if len(found) > 1:
            mixed.setdefault((ds, name, method, tuple(sorted(found))), []).append(template)
    problems += [mixed_method_settings(name, ds, method, templates,
                                       list(configurations[(ds, name, method, templates[0])].values()))
                 for (ds, name, method, _), templates in mixed.items()]
    if problems:  # every conflict at once, with what the store holds (a reader adds what is missing)
        raise StoreConflictError(problems, {(name, method) for (_, name, method, _) in configurations})
    selections: dict[tuple, dict[tuple, set]] = {}  # (dataset, model) -> the chosen files' selection -> methods
    for (ds, name, method, _), (_, _, meta) in chosen.items():
        selections.setdefault((ds, name), {}).setdefault(selection_of(meta), set()).add(method)
    differing = {key: found for key, found in selections.items() if len(found) > 1}
    for (ds, name), n in stale.items():
        warnings.warn(f"left out {n} score file(s) of {name} on {ds} from earlier weights than its newest "
                      f"({newest[(ds, name)][1]}); rerun the notebooks for the methods they covered")
    old = [(run[0], meta) for _, run, meta in chosen.values() if is_stale(meta)]  # metadata read above
    if old:
        warnings.warn(f"{len(old)} of the score files read are stale ({old[0][0]} {stale_reason(old[0][1])}): "
                      "rerun the scoring notebooks to recompute them (a stale file is recomputed, not reused)")
    scores = load_files(sorted(p for _, run, _ in chosen.values() for p in run), token_columns)
    for (ds, name), found in differing.items():  # methods compared on the pairs they share, said
        scores, note = shared_pairs(scores, name, ds, found)
        warnings.warn(note)
    return scores
