"""Isolated judgments on CoLA: one sentence at a time, acceptable when its score exceeds a
threshold. The threshold of each (model, method, template) is the one that maximizes the
Matthews correlation (or accuracy) on CoLA's in-domain train set; the reported number is the
Matthews correlation on the in-domain dev set, CoLA's own metric.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics import accuracy_score, matthews_corrcoef

GROUP = ["model", "method", "template"]
CRITERIA = ("mcc", "accuracy")


def threshold_sweep(scores, labels) -> pd.DataFrame:
    """Every distinct decision "acceptable iff score > threshold" on these sentences: thresholds
    below all scores, between consecutive distinct scores, and at the top; the MCC and accuracy
    of each (MCC 0 where it is undefined, as scikit-learn has it)."""
    s, y = np.asarray(scores, dtype=np.float64), np.asarray(labels).astype(int)
    if s.size == 0 or s.size != y.size or np.isnan(s).any():
        raise ValueError("need one finite score per label")
    u = np.unique(s)
    thresholds = np.concatenate([[-np.inf], (u[:-1] + u[1:]) / 2, [u[-1]]])
    pos, neg = np.sort(s[y == 1]), np.sort(s[y == 0])
    tp = pos.size - np.searchsorted(pos, thresholds, "right")
    fp = neg.size - np.searchsorted(neg, thresholds, "right")
    fn, tn = pos.size - tp, neg.size - fp
    tp, fp, fn, tn = (a.astype(np.float64) for a in (tp, fp, fn, tn))
    denominator = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    mcc = np.divide(tp * tn - fp * fn, denominator, out=np.zeros_like(tp), where=denominator > 0)
    return pd.DataFrame({"threshold": thresholds, "mcc": mcc, "accuracy": (tp + tn) / s.size})


def choose_threshold(scores, labels, criterion: str = "mcc") -> float:
    """The threshold with the best ``criterion`` ("mcc" or "accuracy") on these sentences;
    among equals, the lowest."""
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {CRITERIA}, got {criterion!r}")
    sweep = threshold_sweep(scores, labels)
    return float(sweep["threshold"].iloc[int(np.argmax(sweep[criterion].to_numpy()))])


def isolated_judgments(train: pd.DataFrame, dev: pd.DataFrame, criterion: str = "mcc") -> pd.DataFrame:
    """Per (model, method, template) of the long per-sentence frames ``train`` and ``dev``
    (``grammatical``, ``score``): the threshold chosen on train, MCC and accuracy on train and
    on dev (scikit-learn's matthews_corrcoef)."""
    for name, frame in (("train", train), ("dev", dev)):
        if "dataset" in frame and frame["dataset"].nunique() > 1:
            raise ValueError(f"the {name} scores hold several datasets {sorted(frame['dataset'].unique())}: "
                             "pass the rows of one (e.g. cola for train, cola_dev for dev)")
    rows = []
    dev_groups = {key: g for key, g in dev.groupby(GROUP, sort=False)}
    for key, g in train.groupby(GROUP, sort=False):
        if key not in dev_groups:
            raise ValueError(f"{dict(zip(GROUP, key))} has train scores but no dev scores: score the dev split too")
        d = dev_groups[key]
        t = choose_threshold(g["score"], g["grammatical"], criterion)
        train_pred, dev_pred = (g["score"].to_numpy() > t).astype(int), (d["score"].to_numpy() > t).astype(int)
        rows.append({**dict(zip(GROUP, key)), "criterion": criterion, "threshold": t,
                     "train_mcc": matthews_corrcoef(g["grammatical"], train_pred),
                     "train_accuracy": accuracy_score(g["grammatical"], train_pred),
                     "dev_mcc": matthews_corrcoef(d["grammatical"], dev_pred),
                     "dev_accuracy": accuracy_score(d["grammatical"], dev_pred),
                     "dev_predicted_acceptable": float(dev_pred.mean()), "n_train": len(g), "n_dev": len(d)})
    return pd.DataFrame(rows)
