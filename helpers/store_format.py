"""What a score file records, by the store format it was written in, and how a file of an earlier
format reads today.

Every file written now records ``store_format`` (:data:`STORE_FORMAT`) beside its configuration (not
in it, so configuration hashes stay those of earlier files). A file without one is of format 1 (every
file before 2026-12-06: before and after wave 6's d28b334 made a method record the settings it reads).
A file does not record the method settings added after it was written, which its code fixed; it reads
as the value that code used (:func:`upgraded`; :data:`LACKS` names them by format and reading method):
PenLP's alpha 0.8 (the only value before it was a setting), A/B's seeded order (before ``ab_orders``).
A selection of languages or paradigms, which that code could not make, is recorded only where one
was made, so a file without one is a whole dataset's then as now; a pair's language, which such a
file's rows lack, is read from the dataset (:func:`helpers.analysis.languages.with_language`).

Its configuration hash is then the one today's code gives that configuration (checked: the file's
configuration is recovered exactly, or the file is read as it is), so a run finds it instead of
scoring it again, and a reader never sees two values of a setting where there was one.
"""
from __future__ import annotations

import hashlib
import json

from .settings import METHOD_SETTINGS, RECORDED_AS

STORE_FORMAT = 2
# format -> the method settings files of that format may lack, each with the methods that read it: such
# a file was computed with the setting's default, the only value its code had. A closed record of the
# past (a format, once followed by another, never changes): a method setting added later that methods
# already written read adds its entry here and the next format
LACKS = {1: {"penlp_alpha": ("penlp", "intemplate_penlp"), "ab_orders": ("ab", "ab_logit")}}
# methods_version -> the methods whose computation that version changed (helpers/methods/base.py says how):
# a file of an earlier version of a method no later version changed reads as of the newest listed here
HU_LEVY = ("hl_word_prediction", "hl_word_comparison", "hl_sentence_judgment", "hl_sentence_comparison")
METHODS_CHANGED = {"4": HU_LEVY, "5": HU_LEVY}  # 4: a prefix's trailing space; 5: metaQuestionComplex's prefix
# what store.write records beside a file's configuration (bookkeeping, the engine's record of how it ran)
BESIDE = ("config_hash", "accuracy", "library_versions", "numerics", "git_commit", "time", "time_ns",
          "store_format", "share", "token_budget", "head_path", "unknown_tokens", "share_used", "shard")


def config_hash(config: dict) -> str:
    """The hash a file's configuration is found by (its first 10 hex digits of sha256 over sorted JSON)."""
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()[:10]


def configuration(meta: dict) -> dict:
    """A file's configuration: its metadata but what is recorded beside it (:data:`BESIDE`)."""
    return {key: value for key, value in meta.items() if key not in BESIDE}


def _read_then(meta: dict, rows_now: str | None) -> dict:
    """What a file of an earlier format lacks or names otherwise, as today's code reads it: the method
    settings its method reads, with the values its code used (:data:`LACKS`); the methods version, where
    no later version changed its method; its dataset's rows hash, where it recorded none."""
    written = meta.get("store_format", 1)
    lacking = {name: readers for format_, lacks in LACKS.items() if format_ >= written for name, readers in lacks.items()}
    fixed = {RECORDED_AS[name]: METHOD_SETTINGS[name] for name, readers in lacking.items()
             if meta.get("method") in readers and RECORDED_AS[name] not in meta}
    rows = {"data_sha256": rows_now} if rows_now and meta.get("store_format", 1) == 1 and "data_sha256" not in meta \
        else {}  # unknown to have changed, as staleness reads it (helpers.score_files.changed_data)
    return {**fixed, **_methods_version(meta), **rows}


def _methods_version(meta: dict) -> dict:
    """The newest methods version of :data:`METHODS_CHANGED`, for a file of version 3 or later whose
    method no later version changed (its numbers are that version's); else nothing."""
    version, newest = str(meta.get("methods_version", "")), max(METHODS_CHANGED, key=int)
    if not version.isdigit() or int(version) < 3 or int(version) >= int(newest):
        return {}
    later = [v for v in METHODS_CHANGED if int(v) > int(version)]
    return {} if any(meta.get("method") in METHODS_CHANGED[v] for v in later) else {"methods_version": newest}


def upgraded(meta: dict, rows_now: str | None = None) -> dict:
    """``meta`` as today's code would have written the same scores: a file of an earlier format with
    the values its code used for what it does not record, and the configuration hash of that
    configuration (``store_format`` says which format it was written in); ``rows_now``: its dataset's
    processed table's rows hash, for a file that recorded none. A file whose
    configuration cannot be recovered exactly (its hash disagrees) is returned as it is."""
    written = {"store_format": meta.get("store_format", 1)}
    added = _read_then(meta, rows_now)
    if not added:
        return {**meta, **written}
    then = configuration(meta)
    if config_hash(then) != meta.get("config_hash"):
        return {**meta, **written}
    return {**meta, **added, "config_hash": config_hash({**then, **added}), **written}
