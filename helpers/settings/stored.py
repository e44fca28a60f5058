"""What a reader of stored scores checks of their settings: each score file's values of the
settings that tell files apart (:data:`helpers.settings.STORED_AS` across a model's methods,
:data:`helpers.settings.SETTING_KEYS` within one method and template), and the errors that name
them when a store holds several without a choice (:func:`helpers.store.load_scores`)."""
from __future__ import annotations

from . import RECORDED_AS, SETTING_KEYS, STORED_AS


def stored_setting(meta: dict) -> tuple:
    """A score file's values of :data:`STORED_AS`."""
    return tuple(meta.get(key) for key in STORED_AS.values())


def mixed_settings(model: str, dataset: str, found: dict[tuple, set]) -> str:
    """The error of a store holding scores of ``model`` under several settings (``found``: the
    values of :data:`STORED_AS` -> the methods scored so) without a choice among them."""
    listed = "; ".join(", ".join(f"{k}={v}" for k, v in zip(STORED_AS, values)) + f" ({', '.join(sorted(methods))})"
                       for values, methods in sorted(found.items(), key=str))
    return (f"{model} on {dataset} has scores under {len(found)} settings ({listed}), and a table never mixes them: "
            "choose one with the notebook's quant, dtype, start and revision settings by their names (-p quant none), "
            "or load_scores(where=Settings(...).score_filter())")


def method_setting_values(meta: dict) -> dict:
    """A score file's values of the method-setting keys (:data:`SETTING_KEYS` but :data:`STORED_AS`,
    which :func:`mixed_settings` checks across a model's methods)."""
    return {key: meta.get(key) for key in SETTING_KEYS if key not in STORED_AS.values()}


def mixed_method_settings(model: str, dataset: str, method: str, template, found: list[dict]) -> str:
    """The error of a store holding files of one (model, method, template) under several values
    of a setting (``found``: each file's :func:`method_setting_values`), naming the settings that
    differ, their values, and how to choose one."""
    differ = [key for key in found[0] if len({repr(f[key]) for f in found}) > 1]
    listed = "; ".join(f"{SETTING_KEYS[key]} (recorded as {key}: "
                       f"{', '.join(sorted({repr(f[key]) for f in found}))})" for key in differ)
    names = [SETTING_KEYS[key] for key in differ if SETTING_KEYS[key] in RECORDED_AS]
    values = {key: sorted({repr(f[key]) for f in found})[0] for key in differ}
    example = (f"-p {names[0]} {values[RECORDED_AS[names[0]]]}" if names else "the setting by its name")
    where = ", ".join(f"{key!r}: {value}" for key, value in values.items())
    return (f"{model} on {dataset}: {method}{'' if template in (None, 'None') else f' (template {template})'} has "
            f"score files under {len(found)} configurations that differ in {listed}, and a table never mixes "
            f"them: choose one with the reading notebook's setting of that name ({example}; 04, 05 and 08 take "
            "every setting by its name), or load_scores(where={" + where + "}), or move the files you do not "
            "want out of the store")


SELECTION_KEYS = ("languages", "paradigms", "limit", "dataset_options")  # which pairs a run scored of its dataset
PAIR_KEY = ["paradigm", "pair_id"]  # a pair of a dataset, across its methods' files


def selection_of(meta: dict) -> tuple:
    """A score file's selection of its dataset: languages and paradigms (empty: all of them), the
    limit per paradigm and the dataset options (drop_identical)."""
    return (tuple(meta.get("languages") or ()), tuple(meta.get("paradigms") or ()), meta.get("limit"),
            tuple(sorted((meta.get("dataset_options") or {}).items())))


def _shown(selection: tuple) -> str:
    languages, paradigms, limit, options = selection
    parts = [f"languages {', '.join(languages)}" if languages else "", f"paradigms {', '.join(paradigms)}" if paradigms
             else "", f"limit {limit}" if limit is not None else "", ", ".join(f"{k}={v}" for k, v in options)]
    return "; ".join(p for p in parts if p) or "every pair"


def _listed(found: dict[tuple, set]) -> str:
    return "; ".join(f"{_shown(selection)} ({', '.join(sorted(methods))})" for selection, methods in
                     sorted(found.items(), key=str))


def mixed_selections(model: str, dataset: str, found: dict[tuple, set]) -> str:
    """The error of the files chosen for ``model``'s methods covering different selections of the
    dataset with no pair in common (``found``: :func:`selection_of` -> the methods)."""
    return (f"{model} on {dataset}: the score files of its methods cover different pairs ({_listed(found)}), with "
            "none in common, and a table never compares methods on different pairs: score every method on the same "
            "languages and paradigms, or load_scores(where={'languages': [...]}) to choose one selection")


def shared_pairs(scores, model: str, dataset: str, found: dict[tuple, set]):
    """``scores`` with ``model``'s rows on ``dataset`` cut to the pairs every one of its methods
    scored, where its methods' files cover different selections (``found``), and the note saying
    so; the error of :func:`mixed_selections` where they share none (or rows name no pair)."""
    mine = (scores["model"] == model) & (scores["dataset"] == dataset)
    if not set(PAIR_KEY) <= set(scores.columns):
        raise ValueError(mixed_selections(model, dataset, found))
    keys = scores.loc[mine, PAIR_KEY].astype(str).agg("\x1f".join, axis=1)
    per_method = {method: set(group) for method, group in keys.groupby(scores.loc[mine, "method"])}
    common = set.intersection(*per_method.values())
    if not common:
        raise ValueError(mixed_selections(model, dataset, found))
    kept = scores[~mine | keys.reindex(scores.index).isin(common)]
    kept.attrs = dict(scores.attrs)
    counts = ", ".join(f"{method} {len(pairs):,}" for method, pairs in sorted(per_method.items()))
    note = (f"{model} on {dataset}: the score files of its methods cover different pairs ({_listed(found)}); "
            f"compared on the {len(common):,} pairs every method scored (of {counts}). To read one selection, "
            "give the reading notebook's limit, languages or paradigms as scored, or load_scores(where={'limit': ...})")
    return kept, note
