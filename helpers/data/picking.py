"""What a run scores of a dataset: ``languages`` and ``paradigms`` (a list, a comma-separated
string, "all", or a number drawn with ``draw_seed``, one seed for every notebook) and
``drop_identical``, the same in 02, 03, 06 and 07 and the sweep. The kept languages and paradigms (and the seed of a
draw) go into the score files' configuration (:meth:`DatasetSelection.config`).

A language is matched by either of its codes: the table's ``language`` (ISO 639-1 where one
exists) or ISO 639-3 (``eng``), so ``languages="eng"`` keeps the English rows of the word-order
pairs. MultiBLiMP reads only the asked languages (its ``languages`` option, in ISO 639-3).
"""
from __future__ import annotations

import hashlib
import inspect
from dataclasses import replace

import langcodes
import numpy as np

from . import DATASETS, variant_for
from .multiblimp_languages import language_tag
from .selection import DatasetSelection, select

ALL = "all"


def _is_all(value) -> bool:
    return value is None or (isinstance(value, str) and value.strip().lower() in {ALL, "none", ""})


def _count(value) -> bool:
    """Whether ``value`` is a number of languages or paradigms to draw."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _names(value, available: list[str], what: str, seed: int, convert=str) -> list[str]:
    """The kept names: a number n draws n of the sorted ``available`` with ``seed``; else the names given."""
    if _count(value):
        if not 1 <= value <= len(available):
            raise ValueError(f"{what}={value}: the selection has {len(available)} {what} ({', '.join(available[:8])}"
                             f"{', ...' if len(available) > 8 else ''}); pass a number from 1 to {len(available)}, "
                             "names, or 'all'")
        return sorted(np.random.default_rng(seed).choice(available, int(value), replace=False).tolist())
    text = value.strip().strip("[]") if isinstance(value, str) else None
    items = [p.strip().strip("'\"") for p in text.split(",") if p.strip()] if text is not None else list(value)
    return [convert(i) for i in items]


def language_of(code: str) -> str:
    """The table's language tag of a code a user types (``eng`` -> ``en``, ``en`` -> ``en``)."""
    return language_tag(code.strip().lower())


def pick_languages(selection: DatasetSelection, languages, seed: int = 0) -> DatasetSelection:
    """``selection``'s rows in ``languages`` ("all" keeps every row); unknown codes are an error
    that lists the selection's languages."""
    if _is_all(languages):
        return selection
    have = sorted(selection.frame["language"].astype(str).unique())
    kept = _names(languages, have, "languages", seed, language_of)
    unknown = [c for c in kept if c not in have]
    if unknown or not kept:
        raise ValueError(f"languages {unknown or kept} are not in {selection.name}; it has: {', '.join(have)} "
                         "(ISO 639-1 or 639-3 codes, e.g. 'en' or 'eng')")
    frame = selection.frame[selection.frame["language"].astype(str).isin(kept)].reset_index(drop=True)
    return replace(selection, frame=frame, kept_languages=tuple(sorted(set(kept))))


def choose(dataset: str, limit: int | None = None, *, languages=ALL, paradigms=ALL, drop_identical: bool = False,
           seed: int = 0, prepared_only: bool = False) -> DatasetSelection:
    """Dataset ``dataset``'s first ``limit`` pairs per paradigm in ``languages`` and ``paradigms``,
    less its identical pairs with ``drop_identical`` (a registered variant that drops them, such
    as blimp_hu2025, is selected under its own name)."""
    options = {"drop_identical": True} if drop_identical else {}
    if options:
        takes = [n for n, d in DATASETS.items() if d.base is None and "drop_identical" in inspect.signature(d.loader).parameters]
        if dataset not in takes:
            raise ValueError(f"{dataset} has no drop_identical option: the datasets with identical pairs are "
                             f"{', '.join(takes)}")
        variant = variant_for(dataset, options)
        dataset, options = (variant, {}) if variant else (dataset, options)
    if dataset == "multiblimp" and not _is_all(languages) and not _count(languages):  # only these languages' files
        options["languages"] = ",".join(langcodes.Language.get(c).to_alpha3() for c in _names(languages, [], "", 0))
    selection = select(dataset, limit, prepared_only=prepared_only and not options, **options)
    selection = pick_languages(selection, languages, seed)
    if not _is_all(paradigms):
        names = sorted(selection.frame["paradigm"].astype(str).unique())
        kept = paradigms if isinstance(paradigms, (int, np.integer)) else _names(paradigms, names, "paradigms", seed)
        selection = selection.pick_paradigms(kept, seed)
    return replace(selection, draw_seed=seed) if _count(languages) or _count(paradigms) else selection


PICKS = ("languages", "paradigms", "drop_identical", "draw_seed")  # the notebooks' parameters of the same names
DRAW_SEED = 0  # the draw's seed where none is given: one for every notebook and the sweep


def draw_seed(value) -> int:
    """The seed that draws a number of languages or paradigms (``draw_seed``; None: :data:`DRAW_SEED`),
    the same in every notebook and the sweep and apart from every other seed."""
    if value is None:
        return DRAW_SEED
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"draw_seed={value!r} is not a whole number: the seed that draws a number of languages or "
                         "paradigms (default 0)")
    return int(value)


def picks(parameters) -> dict:
    """:func:`choose`'s keywords from a notebook's parameters (the draw's seed: ``draw_seed``)."""
    return {**{name: parameters[name] for name in PICKS[:3] if name in parameters},
            "seed": draw_seed(parameters.get("draw_seed"))}


def choose_each(datasets: list[str], limit: int | None = None, *, languages=ALL, paradigms=ALL, seed: int = 0,
                prepared_only: bool = False) -> dict[str, DatasetSelection]:
    """:func:`choose` over several datasets (07's): a dataset with none of ``languages``, or none of
    the named ``paradigms``, is left out (an error when none is left); a number of languages or
    paradigms is drawn in each dataset."""
    codes = None if _is_all(languages) or _count(languages) else {language_of(c) for c in _names(languages, [], "", 0)}
    names = None if _is_all(paradigms) or _count(paradigms) else set(_names(paradigms, [], "", 0))
    chosen = {}
    for name in datasets:
        here = choose(name, limit, seed=seed, prepared_only=prepared_only)
        have = set(here.frame["language"].astype(str))
        if codes is not None and not codes & have:
            continue
        here = pick_languages(here, sorted(codes & have) if codes is not None else languages, seed)
        if names is not None and not names & set(here.frame["paradigm"].astype(str)):
            continue
        here = here.pick_paradigms(sorted(names & set(here.frame["paradigm"].astype(str))) if names is not None
                                   else None if _is_all(paradigms) else paradigms, seed)
        chosen[name] = replace(here, draw_seed=seed) if _count(languages) or _count(paradigms) else here
    if not chosen:
        raise ValueError(f"none of {', '.join(datasets)} has languages={languages!r} and paradigms={paradigms!r}")
    return chosen


def pick_tag(selection: DatasetSelection) -> str:
    """What a run's table and figure names add for a selection of some languages ("__en-nl", or
    "__12languages-1a2b3c"), of some paradigms ("__10paradigms-4d5e6f"), of its first pairs per
    paradigm ("__limit-20") and without its identical pairs ("__drop-identical", where no variant of
    the dataset names that), so that a smaller run never overwrites a larger one's ("" for the whole
    dataset); the sidecar records the names."""
    def short(names: list[str], what: str, listed: int) -> str:
        return "-".join(names) if len(names) <= listed else \
            f"{len(names)}{what}-{hashlib.sha256(','.join(names).encode()).hexdigest()[:6]}"
    parts = [short(list(selection.kept_languages), "languages", 3)] if selection.kept_languages is not None else []
    parts += [short(sorted(selection.paradigms), "paradigms", 0)] if selection.paradigms is not None else []
    parts += [f"limit-{selection.limit}"] if selection.limit is not None else []
    parts += ["drop-identical"] if selection.options.get("drop_identical") else []
    return "".join(f"__{part}" for part in parts)
