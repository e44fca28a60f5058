"""Few-shot examples: k solved items before the scored one (Ide et al. 2024 name few-shot
readouts as future work).

:class:`FewShot` says how many examples (``k``; 0 is the zero-shot run, unchanged), where
they come from (``source``: "other" paradigms, the default, or the item's "same" paradigm)
and the ``seed`` of the draw. Examples are other items of the selection being scored, never
the item itself: no example shares a sentence with the item it precedes.

The draw is one seeded permutation of the items cut into chunks of k: an item's examples are
the first chunk its source admits (see :func:`draw`), so almost every item gets the same
examples, and each block of examples runs once through the engine's shared context. A Yes/No example is a pair's acceptable sentence
answered "Yes" or its unacceptable one answered "No"; the k answers are balanced (one more
"Yes" for odd k) in a seeded order that is the same for every item.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

SOURCES = ("other", "same")


@dataclass(frozen=True)
class FewShot:
    """``k`` solved examples before each item, drawn with ``seed`` from the ``source`` paradigms."""

    k: int = 0
    source: str = "other"
    seed: int = 0

    def __post_init__(self):
        if isinstance(self.k, bool) or not isinstance(self.k, (int, np.integer)) or self.k < 0:
            raise ValueError(f"few-shot k must be a whole number >= 0 (0: no examples), got {self.k!r}")
        if self.source not in SOURCES:
            raise ValueError(f"few-shot source must be 'other' (other paradigms) or 'same' (the item's own "
                             f"paradigm), got {self.source!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)):
            raise ValueError(f"few-shot seed must be an integer, got {self.seed!r}")

    def config(self) -> dict:
        """What a score file records: k, and the draw's source and seed (None when nothing is drawn)."""
        drawn = self.k > 0
        return {"fewshot_k": int(self.k), "fewshot_source": self.source if drawn else None,
                "fewshot_seed": int(self.seed) if drawn else None}

    def file_tag(self, tag: str | None) -> str | None:
        """A run's file tag with the few-shot k added: few-shot files are named apart
        (``yesno__t1__4shot.parquet``)."""
        if not self.k:
            return tag
        return f"{tag}-{self.k}shot" if tag else f"{self.k}shot"


NO_SHOTS = FewShot()


def as_fewshot(value) -> FewShot:
    """A :class:`FewShot` from itself, a k (int) or None (no examples)."""
    if value is None:
        return NO_SHOTS
    if isinstance(value, FewShot):
        return value
    return FewShot(value)




def _check_pairs(items: Sequence[Mapping]) -> None:
    if items and not {"good", "bad"} <= set(items[0]):
        raise ValueError("few-shot examples are drawn from minimal pairs (columns good and bad); this selection "
                         "has single items: run it with k=0")


def draw(items: Sequence[Mapping], fewshot: FewShot) -> list[list[int]]:
    """For each item, the indices (into ``items``) of its k examples, in the order shown.

    One seeded permutation of the items (for source "same": of each paradigm's items) is cut
    into chunks of k; an item takes the first chunk it admits (no item of its own paradigm for
    "other", none sharing a sentence with it), else the first k items of the order it admits.
    Different blocks then differ from their first example on, and each runs once.
    """
    if fewshot.k == 0:
        return [[] for _ in items]
    _check_pairs(items)
    n, k, same = len(items), fewshot.k, fewshot.source == "same"
    paradigm = [str(it.get("paradigm", "")) for it in items]
    sentences = [{it["good"], it["bad"]} for it in items]
    order = np.random.default_rng(fewshot.seed).permutation(n)
    sub_orders: dict[str, list[int]] = {}
    if same:
        for j in order:
            sub_orders.setdefault(paradigm[j], []).append(int(j))
    admitted: dict[str, list[int]] = {}  # paradigm -> its items' candidate order

    def candidates(p: str) -> list[int]:
        if p not in admitted:
            admitted[p] = sub_orders[p] if same else [int(j) for j in order if paradigm[j] != p]
        return admitted[p]

    first_fit: dict[str, int] = {}  # paradigm -> start of the first chunk of the order it admits
    chosen = []
    for i in range(n):
        p = paradigm[i]
        ok = (lambda j: paradigm[j] == p) if same else (lambda j: paradigm[j] != p)
        picked = None
        at = first_fit.get(p, 0)
        seq = sub_orders[p] if same else order
        while at + k <= len(seq):
            chunk = [int(j) for j in seq[at:at + k]]
            if all(ok(j) for j in chunk):
                first_fit.setdefault(p, at)
                if not any(sentences[j] & sentences[i] for j in chunk):
                    picked = chunk
                    break
            at += k
        first_fit.setdefault(p, at)  # no chunk fits this paradigm: its items go straight to the fallback
        if picked is None:  # no whole chunk fits: the first k items it admits
            picked = [j for j in candidates(p) if not sentences[j] & sentences[i]][:k]
        if len(picked) < k:
            where = f"paradigm {p!r}" if same else f"the paradigms other than {p!r}"
            raise ValueError(f"{where} hold(s) {len(picked)} items that can be examples for item {i}, fewer than "
                             f"k={k}: select more items per paradigm (a larger limit), a smaller k, or "
                             f"source={'other' if same else 'same'!r}")
        chosen.append(picked)
    return chosen


def answers_order(fewshot: FewShot) -> list[bool]:
    """Which of the k Yes/No examples are acceptable (answered Yes): balanced, in a seeded order."""
    k = fewshot.k
    labels = np.array([True] * ((k + 1) // 2) + [False] * (k // 2))
    # a generator of its own (seed + 1), so the labels never move the draw of the items
    return [bool(x) for x in np.random.default_rng(fewshot.seed + 1).permutation(labels)]


def acceptable_examples(items: Sequence[Mapping], fewshot: FewShot) -> list[list[str]]:
    """Each item's k examples as acceptable sentences (in-template LP)."""
    return [[items[j]["good"] for j in idx] for idx in draw(items, fewshot)]


def judged_examples(items: Sequence[Mapping], fewshot: FewShot) -> list[list[tuple[str, bool]]]:
    """Each item's k examples as (sentence, acceptable) for Yes/No prompts."""
    labels = answers_order(fewshot)
    return [[(items[j]["good" if ok else "bad"], ok) for j, ok in zip(idx, labels)] for idx in draw(items, fewshot)]


def k_values(selection) -> list[int]:
    """The k of a notebook parameter: a list, "0,1,2,4,8", one number, or [] / "none" (no few-shot runs)."""
    if selection is None or selection == [] or (isinstance(selection, str) and selection.strip().lower() in
                                                ("", "none", "[]")):
        return []
    from ..settings.lists import parse_list

    ks = parse_list(selection, what="few-shot k", convert=int)
    for k in ks:
        FewShot(k)  # a clear error for a negative or non-integer k
    return [int(k) for k in ks]
