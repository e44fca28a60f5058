"""Classification metrics for judgments of single sentences."""
from __future__ import annotations

from typing import Sequence

import numpy as np
from sklearn.metrics import balanced_accuracy_score


def balanced_accuracy(labels: Sequence[bool], predictions: Sequence[bool]) -> float:
    """Mean of the recall on acceptable and on unacceptable items (scikit-learn)."""
    y = np.asarray(labels, bool)
    if y.all() or not y.any():
        raise ValueError("balanced accuracy needs both acceptable and unacceptable items")
    return float(balanced_accuracy_score(y, np.asarray(predictions, bool)))
