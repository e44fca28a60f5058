"""The item files of the explorer: one script per (dataset, model, paradigm), loaded when the
paradigm is opened, holding every pair's sentences, each method's decision at each template
(score of either side, credit, tie) and the token view of the LP pass (:mod:`.tokens`).

A file is ``explorerItems("<its path>", {...});``: a ``<script>`` tag loads it from a server or
from the disk alike. Pairs are matched across score files on (paradigm, pair id) and, where a
pair id repeats within a paradigm, its occurrence.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from .. import methods as registry
from ..data import DataNotPreparedError, load_processed
from .tokens import SideTokens, pair_view

KEY = ["paradigm", "item", "occurrence"]
DECISION_FIELDS = {"g": "score_good", "b": "score_bad", "c": "correct", "t": "tie"}


def method_order(names) -> list[str]:
    """Methods in the registry's order (then any others, alphabetically)."""
    known = list(registry.METHODS)
    return sorted(dict.fromkeys(names), key=lambda m: (known.index(m) if m in known else len(known), m))


def token_method(methods) -> str | None:
    """The method whose files hold the quickstart's token view: LP's, or another method of the
    sentence family (each sentence alone after the start token)."""
    sentence = [m for m in method_order(methods) if m in registry.METHODS and registry.get(m).family.name == "sentence"]
    return sentence[0] if sentence else None


def id_column(frame: pd.DataFrame) -> str | None:
    return next((c for c in ("pair_id", "item_id", "item") if c in frame and frame[c].notna().all()), None)


def keyed(frame: pd.DataFrame, by=("method", "template")) -> pd.DataFrame:
    """``frame`` with the key columns: the pair id (the row's position in its file when there is
    none) and its occurrence within (file, paradigm, id)."""
    by = [c for c in by if c in frame]
    column = id_column(frame)
    item = frame[column] if column else frame.groupby(by, sort=False).cumcount() if by else pd.Series(range(len(frame)))
    if pd.api.types.is_float_dtype(item) and (item == item.round()).all():
        item = item.astype("int64")  # ids read as floats where other files lacked the column
    out = frame.assign(item=item.to_numpy())
    return out.assign(occurrence=out.groupby(by + ["paradigm", "item"], sort=False).cumcount())


def sentences(dataset: str, options: dict | None) -> tuple[pd.DataFrame | None, str | None]:
    """The pairs' sentences from data/processed (paradigm, item, good, bad), or None and why."""
    try:
        frame = load_processed(dataset, prepared_only=True)
    except DataNotPreparedError:
        return None, (f"{dataset}: not prepared in data/processed (notebook 01), so its sentences are decoded from "
                      "the stored token ids")
    except (KeyError, OSError, ValueError) as err:
        why = f"{type(err).__name__}: {str(err).splitlines()[0]}"
        return None, f"{dataset}: sentences not read from data/processed ({why})"
    if dict(frame.attrs.get("dataset_options", {})) != dict(options or {}):
        return None, (f"{dataset}: data/processed holds other options ({frame.attrs.get('dataset_options')}) than "
                      f"the scores ({options}): sentences decoded from the token ids")
    if not {"paradigm", "pair_id", "good", "bad"} <= set(frame.columns):
        return None, f"{dataset}: data/processed has no good/bad sentences per pair id"
    frame = keyed(frame.assign(paradigm=frame["paradigm"].fillna("").astype(str)), by=())
    return frame[KEY + ["good", "bad"]], None


def _values(series: pd.Series) -> list:
    """A column as JSON values: missing or infinite as None."""
    values = series.to_numpy()
    out = values.tolist()
    if values.dtype.kind == "f":
        bad = ~np.isfinite(values)
    else:
        bad = np.array([v is None or (isinstance(v, float) and not np.isfinite(v)) for v in out], dtype=bool)
    for i in np.flatnonzero(bad):
        out[i] = None
    return out


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


class ItemWriter:
    """The item files of one (dataset, model): ``pairs`` (every method's rows), ``tokens`` (the
    token method's rows with token columns, or None), the data's sentences (``text``, keyed, or
    None), the model's tokenizer (or None) and notes shown with every item."""

    def __init__(self, dataset: str, model: str, pairs: pd.DataFrame, tokens: pd.DataFrame | None,
                 text: pd.DataFrame | None, tokenizer, notes: list[str]):
        self.dataset, self.model, self.notes = dataset, model, notes
        pairs = keyed(pairs)
        self.columns = [(m, t) for m in method_order(pairs["method"])
                        for t in sorted(pairs.loc[pairs["method"] == m, "template"].unique())]
        label = pairs["method"] + "\x00" + pairs["template"]
        wide = pairs.assign(column=label).set_index(KEY + ["column"])[list(DECISION_FIELDS.values())]
        self.wide = wide.unstack("column")
        index = self.wide.index
        self.keys = list(index)
        self.values = [{short: _values(self.wide[(field, f"{method}\x00{template}")])
                        for short, field in DECISION_FIELDS.items()} for method, template in self.columns]
        self.phenomenon = pairs.drop_duplicates(KEY).set_index(KEY)["phenomenon"].reindex(index).to_numpy()
        text = text.set_index(KEY).reindex(index) if text is not None else pd.DataFrame(index=index,
                                                                                          columns=["good", "bad"])
        self.text = {side: text[side].to_numpy(dtype=object) for side in ("good", "bad")}
        self.token_at = np.full(len(index), -1)
        self.tokens_from = None
        if tokens is not None and {"token_lp_good", "token_ids_good"} <= set(tokens.columns):
            tokens = keyed(tokens).set_index(KEY)
            tokens = tokens[tokens.index.isin(index)]
            if len(tokens):
                at = index.get_indexer(tokens.index)
                self.token_at[at] = np.arange(len(tokens))
                self.sides = {side: SideTokens(tokenizer, self.text[side][at].tolist(),
                                               tokens[f"token_ids_{side}"].tolist(),
                                               tokens[f"token_lp_{side}"].tolist()) for side in ("good", "bad")}
                self.tokens_from = str(tokens["method"].iloc[0])

    def paradigms(self) -> list[str]:
        return list(dict.fromkeys(self.wide.index.get_level_values("paradigm")))

    def payload(self, paradigm: str, path: str) -> dict:
        """The item file of one paradigm (``path``: where the page finds it)."""
        rows = np.flatnonzero(self.wide.index.get_level_values("paradigm") == paradigm)
        decisions = [{short: [values[r] for r in rows] for short, values in column.items()} for column in self.values]
        items = []
        for r in rows:
            _, item, occurrence = self.keys[r]
            k = int(self.token_at[r])
            sides = {side: self.sides[side].view(k) for side in ("good", "bad")} if k >= 0 else {}
            decoded = {side: sides[side].pop("text") if sides else None for side in ("good", "bad")}
            view = pair_view(sides["good"], sides["bad"]) if sides else None
            text = {side: self.text[side][r] if isinstance(self.text[side][r], str) else decoded[side]
                    for side in ("good", "bad")}
            items.append({"id": item, "occurrence": int(occurrence), **text, "tokens": view})
        return {"path": path, "dataset": self.dataset, "model": self.model, "paradigm": paradigm,
                "phenomenon": self.phenomenon[rows[0]] if len(rows) else "",
                "columns": [{"method": m, "template": t} for m, t in self.columns],
                "decisions": decisions, "pairs": items, "tokens_from": self.tokens_from, "notes": self.notes}

    def write(self, out: Path, folder: str) -> dict[str, str]:
        """Every paradigm's file under ``out``/``folder``; paradigm -> its path (relative to ``out``)."""
        (out / folder).mkdir(parents=True, exist_ok=True)
        written = {}
        for k, paradigm in enumerate(self.paradigms()):
            path = f"{folder}/p{k}.js"
            body = json.dumps(self.payload(paradigm, path), ensure_ascii=False, separators=(",", ":"),
                              allow_nan=False, default=_json_default)
            (out / path).write_text(f"explorerItems({json.dumps(path)},{body});\n", encoding="utf-8")
            written[paradigm] = path
        return written
