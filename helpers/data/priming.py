"""Priming prefixes for 06 (Sinha et al. 2023, "Language model acceptability judgements are
not always robust to context").

For each target pair and prefix type, a context placed before *both* sentences: sentences
sampled without replacement from a pool and joined with single spaces, each ending in its
period. Every prefix is grown sentence by sentence, so the prefix of a longer target length
extends the shorter one; length 0 is one no-prefix row per pair (prefix type "none"). Pure
and seeded: tokens are counted by a function passed in (:func:`token_counter` makes one
from a tokenizer); the random order of one (pair, type, draw) depends on the seed and those
keys only, not on the other pairs.

The engine scores ``start token + prefix + " " + target``: with ``max_positions`` a prefix
stops growing before that sequence would exceed the model's positions (column ``capped``).

    counter = priming.token_counter(loaded.tokenizer)
    prefixes = priming.build_prefixes(targets, counter, pool=data.load("blimp"),
                                      unrelated=data.load("wikitext"), max_positions=1024)
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .. import data
from .priming_growth import Counter, TokenCounter, _fitter, _Growth, _rng, _Texts, as_sentence, join, token_counter

_SIDE = {"acceptable": "good", "unacceptable": "bad"}

__all__ = ["COLUMNS", "DEFAULT_LENGTHS", "NO_PREFIX", "PREFIX_TYPES", "SINGLE_COLUMNS", "TEACHING_PARADIGMS",
           "TokenCounter", "as_sentence", "build_prefixes", "join", "paradigm_choice", "single_phenomenon_prefixes",
           "token_counter"]

# prefix type -> (domain, acceptability of its sentences)
PREFIX_TYPES = {"in_acceptable": ("in", "acceptable"), "in_unacceptable": ("in", "unacceptable"),
                "out_acceptable": ("out", "acceptable"), "out_unacceptable": ("out", "unacceptable"),
                "wikitext": ("unrelated", "acceptable")}
PRIMED_DATASETS = ("blimp", "syntaxgym")  # the pairs 06 primes (Sinha et al.'s)
DEFAULT_LENGTHS = (0, 25, 50, 100, 200, 400, 600, 800, 1000)
TEACHING_PARADIGMS = 10  # BLiMP paradigms 06 primes by default (x 20 pairs: 200 pairs, minutes on a CPU)
NO_PREFIX = "none"  # prefix type (and domain, acceptability) of the one no-prefix row per pair: length 0
COLUMNS = ["paradigm", "pair_id", "prefix_type", "domain", "acceptability", "target_length", "actual_length",
           "n_sentences", "draw", "seed", "capped", "exhausted", "prefix"]
SINGLE_COLUMNS = ["paradigm", "pair_id", "target_phenomenon", "source_phenomenon", "acceptability", "n_sentences",
                  "actual_length", "draw", "seed", "capped", "prefix"]


def paradigm_choice(dataset: str, paradigms):
    """06's ``paradigms`` parameter as :meth:`~helpers.data.selection.DatasetSelection.pick_paradigms`
    takes it: "auto" is :data:`TEACHING_PARADIGMS` BLiMP paradigms (drawn with ``draw_seed``) and every
    SyntaxGym suite; a comma-separated string is a list of names."""
    if paradigms == "auto":
        return TEACHING_PARADIGMS if dataset == "blimp" else None
    if isinstance(paradigms, str) and "," in paradigms:
        return [p.strip() for p in paradigms.split(",") if p.strip()]
    return paradigms


def teaching_subset(dataset: str, paradigms, limit, scored: int, available: int) -> str | None:
    """What 06 says when its teaching defaults (``paradigms="auto"``) leave out pairs of the dataset,
    so that a sweep over large models does not prime a classroom's subset without a word; None
    when every pair is scored or the subset was chosen."""
    if paradigms != "auto" or scored >= available:
        return None
    drawn = f"{TEACHING_PARADIGMS} paradigms drawn with draw_seed" if dataset == "blimp" else "every suite"
    return (f"06 primes {scored:,} of the {available:,} pairs of {dataset}: its teaching defaults (paradigms='auto': "
            f"{drawn}; limit={limit} pairs each) keep a run to minutes on a CPU; pass paradigms=None and limit=None "
            "to prime every pair, as Sinha et al. did")


def _check_pairs(frame: pd.DataFrame, what: str) -> None:
    missing = [c for c in ("paradigm", "pair_id", "good", "bad") if c not in frame]
    if missing:
        raise ValueError(f"{what} lacks column(s) {missing}; pass a pairs table (helpers.data.load)")
    if frame.duplicated(["paradigm", "pair_id"]).any():
        raise ValueError(f"{what} has repeated (paradigm, pair_id); give each pair once")


def _sides(pool: pd.DataFrame) -> pd.DataFrame:
    """(paradigm, acceptability, text) of every pool sentence, dropping texts labelled both ways."""
    long = pd.concat([pd.DataFrame({"paradigm": pool["paradigm"].astype(str), "acceptability": acc,
                                    "text": pool[side].fillna("").map(as_sentence)}) for acc, side in _SIDE.items()])
    long = long[long["text"] != ""]
    both = long.groupby("text")["acceptability"].nunique()
    return long[~long["text"].isin(both.index[both > 1])].drop_duplicates()


def _unrelated(unrelated: pd.DataFrame | Sequence[str] | None) -> list[str]:
    """The sentences of the "wikitext" type (default: the mirror's WikiText-103 test sentences)."""
    if unrelated is None:
        unrelated = data.load("wikitext")
    unrelated = unrelated["sentence"] if isinstance(unrelated, pd.DataFrame) else unrelated
    return [t for t in map(as_sentence, unrelated) if t]


def _whole(value, what: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{what} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _lengths(lengths: Sequence[int]) -> list[int]:
    values = list(lengths)
    if not values or any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0 for v in values):
        raise ValueError(f"lengths must be non-negative integers (tokens), got {values!r}")
    return sorted({int(v) for v in values})


def _types(prefix_types: Sequence[str]) -> list[str]:
    types = [prefix_types] if isinstance(prefix_types, str) else list(prefix_types)
    unknown = [t for t in types if t not in PREFIX_TYPES]
    if unknown or not types:
        raise ValueError(f"unknown prefix type(s) {unknown or types}; choose from: {', '.join(PREFIX_TYPES)}")
    return types


def build_prefixes(targets: pd.DataFrame, count_tokens: Counter, *, pool: pd.DataFrame | None = None,
                   unrelated: pd.DataFrame | Sequence[str] | None = None,
                   prefix_types: Sequence[str] = tuple(PREFIX_TYPES),
                   lengths: Sequence[int] = DEFAULT_LENGTHS, draws: int = 1, seed: int = 0,
                   max_positions: int | None = None, reserved: int = 1, exclude_same: str | None = None,
                   short_pool: str = "error") -> pd.DataFrame:
    """One row per (target pair, prefix type, target length > 0, draw) and, with 0 in ``lengths``,
    one no-prefix row per pair (prefix type, domain and acceptability "none", draw 0, empty
    prefix: the baseline); see :data:`COLUMNS`.

    ``targets``: the pairs to prime (columns paradigm, pair_id, good, bad); ``pool``: the pairs
    whose sentences make the in-/out-of-domain prefixes (default ``targets``); ``unrelated``:
    sentences of the "wikitext" type (a list or a frame with ``sentence``; default
    ``helpers.data.load("wikitext")``). A target's own sentences (and, with ``exclude_same``,
    those of pool rows sharing that column's value, e.g. "syntaxgym_item") never enter its
    prefix; out-of-domain prefixes take no sentence of the target's paradigm; texts labelled
    both good and bad in the pool are left out. ``reserved``: positions taken besides prefix
    and target (the start token). ``short_pool="error"`` raises when a pool runs out before a
    length; "stop" keeps the shorter prefix (column ``exhausted``).
    """
    types, grid = _types(prefix_types), _lengths(lengths)
    draws, seed = _whole(draws, "draws", 1), _whole(seed, "seed", 0)
    if short_pool not in ("error", "stop"):
        raise ValueError(f"short_pool must be 'error' or 'stop', got {short_pool!r}")
    pool = targets if pool is None else pool
    _check_pairs(targets, "targets")
    _check_pairs(pool, "pool")
    if exclude_same is not None and (exclude_same not in pool or exclude_same not in targets):
        raise ValueError(f"exclude_same={exclude_same!r} is not a column of both targets and pool")
    wiki = _unrelated(unrelated) if "wikitext" in types else []
    same = {} if exclude_same is None else {
        (str(p), v): set(g["good"].map(as_sentence)) | set(g["bad"].map(as_sentence))
        for (p, v), g in pool.groupby([pool["paradigm"].astype(str), exclude_same])}
    sides = _sides(pool)
    texts = _Texts(list(sides["text"]) + wiki, count_tokens)
    ids = np.array([texts.index[t] for t in sides["text"]], dtype=np.int64)
    paradigms, sides_acc = sides["paradigm"].to_numpy(dtype=object), sides["acceptability"].to_numpy(dtype=object)
    every = {acc: np.unique(ids[sides_acc == acc]) for acc in _SIDE}
    wiki_ids = texts.ids(wiki)
    rows = []
    for paradigm, group in targets.groupby(targets["paradigm"].astype(str), sort=False):
        here = paradigms == paradigm
        pools = {"wikitext": wiki_ids}
        for acc in _SIDE:  # out of domain: no sentence of this paradigm, good or bad
            pools[f"in_{acc}"] = np.unique(ids[here & (sides_acc == acc)])
            pools[f"out_{acc}"] = np.setdiff1d(every[acc], ids[here])
        for row in group.itertuples(index=False):
            if grid[0] == 0:  # the baseline: one empty prefix per pair, whatever the types and draws
                rows.append((paradigm, row.pair_id, *[NO_PREFIX] * 3, 0, 0, 0, 0, seed, False, False, ""))
            own = {as_sentence(row.good), as_sentence(row.bad)}
            if exclude_same is not None:
                own |= same.get((paradigm, getattr(row, exclude_same)), set())
            own_ids = texts.ids(own)
            limit, fits = _fitter(texts, row, max_positions, reserved)
            for ptype in types:
                candidates = np.setdiff1d(pools[ptype], own_ids, assume_unique=True)
                domain, acceptability = PREFIX_TYPES[ptype]
                for draw in range(draws):
                    order = _rng(seed, "prefix", paradigm, row.pair_id, ptype, draw).permutation(candidates)
                    growth = _Growth(texts, order, limit, fits)
                    for length in grid[1:] if grid[0] == 0 else grid:
                        k, short = growth.cut(length)
                        if short == "exhausted" and short_pool == "error":
                            raise ValueError(
                                f"the {ptype} pool of {paradigm} pair {row.pair_id} ({len(candidates)} sentences) "
                                f"runs out at {growth.actual(k)} tokens, short of the {length}-token length; pass a "
                                "larger pool= (e.g. the whole dataset), shorter lengths, or short_pool='stop'")
                        rows.append((paradigm, row.pair_id, ptype, domain, acceptability, length, growth.actual(k), k,
                                     draw, seed, short == "capped", short == "exhausted", growth.text(k)))
    out = pd.DataFrame(rows, columns=COLUMNS)
    for column, why in (("capped", f"at the model's {max_positions} positions"),
                        ("exhausted", "when the pool ran out")):
        if out[column].any():
            warnings.warn(f"{int(out[column].sum())} of {len(out)} prefixes stopped short of their target length "
                          f"{why} (column {column})", stacklevel=2)
    return out


def single_phenomenon_prefixes(targets: pd.DataFrame, count_tokens: Counter, *, pool: pd.DataFrame | None = None,
                               sources: Sequence[str] | None = None, n_sentences: int = 10,
                               acceptability: str = "acceptable", draws: int = 1, seed: int = 0,
                               max_positions: int | None = None, reserved: int = 1) -> pd.DataFrame:
    """Sinha et al.'s Appendix A prefixes: ``n_sentences`` sentences of one source phenomenon
    (column ``phenomenon`` of ``pool``) before each target pair, for every (source, target
    pair); one row per (target pair, source phenomenon, draw), see :data:`SINGLE_COLUMNS`.
    A target's own sentences never enter its prefix; with ``max_positions`` the prefix drops
    its last sentences until prefix + target fit (column ``capped``)."""
    if acceptability not in _SIDE:
        raise ValueError(f"acceptability must be one of {list(_SIDE)}, got {acceptability!r}")
    n_sentences, draws, seed = _whole(n_sentences, "n_sentences", 1), _whole(draws, "draws", 1), _whole(seed, "seed", 0)
    pool = targets if pool is None else pool
    _check_pairs(targets, "targets")
    _check_pairs(pool, "pool")
    for what, frame in (("targets", targets), ("pool", pool)):
        if "phenomenon" not in frame:
            raise ValueError(f"{what} lacks column 'phenomenon'; pass BLiMP pairs (helpers.data.load('blimp'))")
    phenomena = dict(zip(pool["paradigm"].astype(str), pool["phenomenon"].astype(str)))
    sides = _sides(pool)
    sides = sides[sides["acceptability"] == acceptability]
    sides = sides.assign(phenomenon=sides["paradigm"].map(phenomena))
    known = sorted(sides["phenomenon"].unique())
    sources = known if sources is None else [sources] if isinstance(sources, str) else list(sources)
    if not sources or set(sources) - set(known):
        raise ValueError(f"unknown source phenomena {sorted(set(sources) - set(known)) or sources}; "
                         f"choose from: {', '.join(known)}")
    texts = _Texts(sides["text"], count_tokens)
    pools = {s: texts.ids(sides.loc[sides["phenomenon"] == s, "text"]) for s in sources}
    rows = []
    for row in targets.itertuples(index=False):
        own_ids = texts.ids({as_sentence(row.good), as_sentence(row.bad)})
        limit, fits = _fitter(texts, row, max_positions, reserved)
        for source in sources:
            candidates = np.setdiff1d(pools[source], own_ids, assume_unique=True)
            if len(candidates) < n_sentences:
                raise ValueError(f"source phenomenon {source} has {len(candidates)} {acceptability} sentences besides "
                                 f"{row.paradigm} pair {row.pair_id}, fewer than n_sentences={n_sentences}")
            for draw in range(draws):
                order = _rng(seed, "single", row.paradigm, row.pair_id, source, acceptability, draw).permutation(
                    candidates)
                growth = _Growth(texts, order[:n_sentences], limit, fits)
                while growth.extend():
                    pass
                k = len(growth.ids)
                while k > 0 and not growth.fits(k):
                    k -= 1
                rows.append((str(row.paradigm), row.pair_id, str(row.phenomenon), source, acceptability, k,
                             growth.actual(k), draw, seed, k < n_sentences, growth.text(k)))
    out = pd.DataFrame(rows, columns=SINGLE_COLUMNS)
    if out["capped"].any():
        warnings.warn(f"{int(out['capped'].sum())} of {len(out)} single-phenomenon prefixes hold fewer than "
                      f"{n_sentences} sentences to fit the model's {max_positions} positions (column capped)",
                      stacklevel=2)
    return out
