"""What a judgment method is: a basis (the engine requests it needs) and a reduction."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pandas as pd

# Bump when a method's computation changes: it is part of every score file's configuration.
METHODS_VERSION = "1"


@dataclass(frozen=True)
class Basis:
    """The engine requests behind one or more methods: what is scored and in which template.

    kind "sentence": each sentence alone; "single": inside an in-template readout template;
    "compar": inside a comparative template (target in slot A, the other sentence in B).
    """

    kind: str
    template_method: str | None = None  # "single" / "compar" (Ide et al. template sets)


@dataclass(frozen=True)
class Method:
    """A judgment method: per-sentence score from the basis columns; higher wins."""

    name: str
    family: str
    basis: Basis
    description: str
    score: Callable[[pd.DataFrame, str], pd.Series]  # (basis table, "good"/"bad") -> scores
    target_score: Callable[[pd.DataFrame, str], pd.Series] | None = None  # in-template: target only
    needs_unigram: bool = False

    @property
    def templated(self) -> bool:
        return self.basis.template_method is not None
