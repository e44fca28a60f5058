"""Which pairs a reader compares methods on: each score file's selection of its dataset (languages,
paradigms, limit, dataset options), and where a model's methods' chosen files cover different
selections, the pairs they all scored (with the note saying how many), or the error naming them
where they share none (:func:`helpers.store.load_scores`)."""
from __future__ import annotations

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
