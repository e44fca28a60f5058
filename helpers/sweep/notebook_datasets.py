"""The datasets each scoring notebook reads, so that a sweep plans every notebook over those it
takes: 06 primes BLiMP and SyntaxGym pairs, 07 reads Hu et al. (2025)'s Table 1 datasets; the
others read any. A dataset a notebook reads as a registered variant runs as that variant (07
reads ``blimp`` as ``blimp_hu2025``); one it cannot read is left out of that notebook. Both said."""
from __future__ import annotations

from ..data import DATASETS
from ..data.priming import PRIMED_DATASETS
from ..data.selection import HU2025

TAKES = {"06_context_priming": PRIMED_DATASETS, "07_separability": tuple(name for name, _ in HU2025.values())}
EVERY = ("none", "all")  # no dataset (01's jobs without one), or each notebook's own "all"


def taken(stem: str, datasets) -> tuple[list[str], list[str]]:
    """(the datasets notebook ``stem`` runs of ``datasets``, in order; a line for each dataset read
    as a variant or left out)."""
    takes = TAKES.get(stem)
    if takes is None:
        return list(datasets), []
    runs, said = [], []
    for name in datasets:
        variant = name if name in takes or name in EVERY else next(
            (t for t in takes if DATASETS[t].base == name), None)
        if variant is None:
            said.append(f"{stem} reads {', '.join(takes)}: {name} left out of it")
        elif variant != name:
            said.append(f"{stem} reads {name} as {variant} ({DATASETS[variant].description})")
        runs += [variant] if variant is not None and variant not in runs else []
    return runs, said
