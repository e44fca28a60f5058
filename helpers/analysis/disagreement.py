"""Where methods disagree: every stored decision of an item side by side, the items they
disagree on most (and who said what), who goes against the majority, and how often two
predictors decide alike (share of items and Cohen's kappa).

An item is a (dataset, paradigm, pair_id); a predictor (a column) is a (model, method,
template, precision) of the scores, or those of these columns the frame has
(:func:`helpers.analysis.precision_columns.with_precision` adds the precision). A decision is
right (1), wrong (0) or a tie (0.5): a tie is a decision of its own (no preference), which
agrees only with another tie. (A half credit, such as Hu & Levy's comparisons averaged over
the two answer orders, is coded 0.5 as well.) Accuracy-like measures elsewhere count a tie as
an error; here it is kept apart so that two predictors that tie are not said to agree with
one that chose the unacceptable sentence.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics import cohen_kappa_score

ITEM = ["dataset", "paradigm", "pair_id"]
COLUMN = ["model", "method", "template", "precision"]
RIGHT, TIE, WRONG = 1.0, 0.5, 0.0
NAMES = {RIGHT: "right", WRONG: "wrong", TIE: "tie"}
SPLIT = "split"  # the majority of an item whose most frequent decisions are equally frequent


def decisions(scores: pd.DataFrame) -> pd.Series:
    """Each row's decision: 1 right, 0 wrong, 0.5 a tie (see the module docstring)."""
    correct = scores["correct"].astype(float)
    if "tie" not in scores:
        return correct
    return correct.where(~scores["tie"].fillna(False).astype(bool), TIE)


def column_key(scores: pd.DataFrame) -> list[str]:
    """The columns of ``COLUMN`` that ``scores`` has: what tells its predictors apart."""
    return [c for c in COLUMN if c in scores]


def decision_matrix(scores: pd.DataFrame, value: str = "decision") -> pd.DataFrame:
    """Items x predictors: each predictor's ``value`` on each item ("decision": right, wrong or
    tie as 1, 0, 0.5; "correct": 1 or 0, a tie an error), NaN where it did not judge the item.
    Predictors are ordered by model, method, template and precision, each in the order
    ``scores`` first list them (a method's templates and precisions side by side)."""
    if value not in ("decision", "correct"):
        raise ValueError(f"value must be 'decision' (a tie its own decision) or 'correct' (a tie an error), "
                         f"got {value!r}")
    if scores.empty:
        raise ValueError("no scores to compare: run the scoring notebooks (02_readout, 03_prompting) first")
    key = column_key(scores)
    cells = (decisions(scores) if value == "decision" else scores["correct"].astype(float)).rename("value")
    frame = pd.concat([scores[ITEM + key].astype({c: str for c in key}), cells], axis=1)
    twice = frame.duplicated(ITEM + key)
    if twice.any():
        first = frame[twice].iloc[0]
        raise ValueError(f"{int(twice.sum())} decisions are stored twice for one item and predictor (e.g. "
                         f"{dict(first[ITEM + key])}): load the scores with helpers.store.load_scores, which keeps "
                         "one configuration per model, method and template")
    matrix = frame.set_index(ITEM + key)["value"].unstack(key)
    order = list(frame[key].drop_duplicates().itertuples(index=False, name=None))
    rank = [{v: i for i, v in enumerate(dict.fromkeys(k[j] for k in order))} for j in range(len(key))]
    order.sort(key=lambda k: tuple(rank[j][v] for j, v in enumerate(k)))  # a method's templates and precisions together
    return matrix.reindex(columns=pd.MultiIndex.from_tuples(order, names=key) if len(key) > 1
                          else [k[0] for k in order])


def _parts(columns) -> list[tuple[str, str | None]]:
    """Each predictor's name without its template, and its template ("3"; None without one)."""
    keys = [c if isinstance(c, tuple) else (c,) for c in columns]
    names = list(columns.names) if isinstance(columns, pd.MultiIndex) else [columns.name or "method"]
    varied = {n: len({k[i] for k in keys}) > 1 for i, n in enumerate(names)}
    out = []
    for k in keys:
        part = dict(zip(names, k))
        words = ([part["model"]] if varied.get("model") else []) + [part.get("method", "")]
        if varied.get("precision"):
            words.append(part["precision"])
        template = part.get("template")
        out.append((" ".join(w for w in words if w), None if template in (None, "none") else str(template)))
    return out


def labels(columns) -> list[str]:
    """Short names of predictors: the model when there are several, the method, the precision
    when there are several, and the template ("t3") when it has one."""
    return [stem if template is None else f"{stem} t{template}" for stem, template in _parts(columns)]


def _counts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per item: how many predictors gave each decision (items x [right, wrong, tie]) and how many judged it."""
    counts = np.stack([(values == v).sum(axis=1) for v in NAMES], axis=1)
    return counts, counts.sum(axis=1)


def item_table(matrix: pd.DataFrame) -> pd.DataFrame:
    """One row per item: predictors that judged it, distinct decisions, the majority decision
    ("split" when the most frequent are equally frequent), the share agreeing with it, the
    entropy of the decisions (bits; 0 when all agree, 1 for an even right/wrong split), and
    which predictors said right, wrong and tie (grouped: "m1 yesno t1,3")."""
    values = matrix.to_numpy(float)
    counts, judged = _counts(values)
    top = counts.max(axis=1)
    names = np.array(list(NAMES.values()))
    majority = np.where((counts == top[:, None]).sum(axis=1) > 1, SPLIT, names[counts.argmax(axis=1)])
    with np.errstate(divide="ignore", invalid="ignore"):
        p = counts / judged[:, None]
        entropy = -np.nansum(np.where(p > 0, p * np.log2(p), 0.0), axis=1)
        share = top / judged
    out = matrix.index.to_frame(index=False).assign(
        decisions=judged, distinct=(counts > 0).sum(axis=1), majority=majority, majority_share=share,
        entropy_bits=entropy + 0.0)
    who = _parts(matrix.columns)
    for value, name in NAMES.items():
        out[name] = [_grouped([w for w, v in zip(who, row) if v == value]) for row in values]
    return out


def _grouped(parts: list[tuple[str, str | None]]) -> str:
    """Predictors as "m1 yesno t1,3; m1 lp": the templates of one stem together."""
    groups: dict[str, list[str]] = {}
    for stem, template in parts:
        groups.setdefault(stem, [])
        if template is not None:
            groups[stem].append(template)
    return "; ".join(f"{stem} t{','.join(t)}" if t else stem for stem, t in groups.items())


def most_disagreed(items: pd.DataFrame, top: int | None = 20) -> pd.DataFrame:
    """The items whose predictors do not all agree (more than one distinct decision), the least
    agreed first (smallest majority share, then highest entropy); the first ``top`` (all: None)."""
    shown = items[items["distinct"] > 1].sort_values(["majority_share", "entropy_bits"] + ITEM,
                                                      ascending=[True, False] + [True] * len(ITEM), kind="stable")
    return (shown if top is None else shown.head(top)).reset_index(drop=True)


def dissent(matrix: pd.DataFrame) -> pd.DataFrame:
    """Per predictor: items it judged, the items of a clear majority (not split) among them, how
    many of those it decided otherwise, and that share: who goes against the others."""
    items = item_table(matrix)
    clear = (items["majority"] != SPLIT).to_numpy()
    code = items["majority"].map({n: v for v, n in NAMES.items()}).to_numpy(float)
    rows = []
    for label, column in zip(labels(matrix.columns), matrix.columns):
        own = matrix[column].to_numpy(float)
        judged, counted = ~np.isnan(own), ~np.isnan(own) & clear
        against = int(np.sum(counted & (own != code)))
        key = dict(zip(matrix.columns.names, column)) if isinstance(column, tuple) else {"method": column}
        rows.append({**key, "predictor": label, "items": int(judged.sum()), "clear_majority": int(counted.sum()),
                     "against_majority": against,
                     "share_against": against / counted.sum() if counted.any() else np.nan})
    return pd.DataFrame(rows)


def agreement(matrix: pd.DataFrame, pool: str | None = "model") -> pd.DataFrame:
    """Every pair of predictors (a, b), each once and each with itself: the items both judged,
    the share decided the same, and Cohen's kappa (scikit-learn; right, wrong and tie as three
    categories; NaN when both gave one and the same decision throughout, where chance agreement
    is 1). With ``pool="model"`` (and several models) a predictor is a (method, template,
    precision) and its items are pooled over the models: each model's items count once per
    model, compared with the same model's items."""
    if pool and isinstance(matrix.columns, pd.MultiIndex) and pool in matrix.columns.names:
        matrix = matrix.stack(pool, future_stack=True)
    columns = list(matrix.columns)
    names = labels(matrix.columns)
    rows = []
    for i, a in enumerate(columns):
        for j in range(i, len(columns)):
            x, y = matrix[a].to_numpy(float), matrix[columns[j]].to_numpy(float)
            both = ~np.isnan(x) & ~np.isnan(y)
            x, y = x[both], y[both]
            same = float(np.mean(x == y)) if both.any() else np.nan
            constant = len(np.unique(np.r_[x, y])) < 2
            kappa = np.nan if constant else float(cohen_kappa_score(_category(x), _category(y), labels=[2, 0, 1]))
            rows.append({"a": names[i], "b": names[j], "items": int(both.sum()), "agreement": same, "kappa": kappa})
    return pd.DataFrame(rows)


def _category(values: np.ndarray) -> np.ndarray:
    """Decisions as the whole numbers scikit-learn takes for categories: right 2, wrong 0, tie 1."""
    return np.rint(2 * values).astype(int)


def square(pairs: pd.DataFrame, value: str) -> pd.DataFrame:
    """The symmetric predictors x predictors matrix of ``value`` ("agreement" or "kappa") from
    :func:`agreement`'s pairs."""
    order = list(dict.fromkeys(pairs["a"]))
    half = pairs.pivot(index="a", columns="b", values=value)
    full = half.combine_first(half.T).reindex(index=order, columns=order)
    full.index.name, full.columns.name = None, None
    return full
