"""The precision section of a demo model's card: the table of ``python -m helpers precision
... --card`` recorded in the model's training.json (rows of several runs merged by method:
a method's new rows replace its old ones) and rendered into README.md in place of the
previous section."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from .. import paths
from ..files import write_text
from ..models import resolve
from .precision import markdown, summary

PRECISION_HEADING = "## Precision: what bfloat16, 4-bit NF4 and 8-bit cost each method"
OLD_HEADINGS = ("## Precision: what bfloat16, 4-bit NF4 and 8-bit cost",)  # sections of earlier cards, replaced


def _dataset_name(dataset: str) -> str:
    return {"blimp": "BLiMP", "climp": "CLiMP"}.get(dataset, dataset)


def _coverage(p: dict, table: pd.DataFrame) -> str:
    """Which pairs each method's rows cover, and why a subset where one was taken."""
    lines, subsets = [], {}
    for method, rows in table.groupby("method", sort=False):
        limit, items = rows["limit"].iloc[0], int(rows["items"].iloc[0])
        templates = ", ".join(str(t) for t in dict.fromkeys(rows.template) if str(t) != "none")
        which = "all pairs" if pd.isna(limit) else f"the first {int(limit)} pairs of every paradigm"
        why, note = (p.get("why_subset") or {}).get(method), (p.get("notes") or {}).get(method)
        lines.append(f"- `{method}`{f' (template {templates})' if templates else ''}: {which}, {items:,} pairs"
                     + (f". {note.rstrip('.')}." if note else ""))
        if why and not pd.isna(limit):
            subsets.setdefault(why, []).append(f"`{method}`")
    lines += [f"\nA subset for {', '.join(methods)}: {why}." for why, methods in subsets.items()]
    return "\n".join(lines)


def precision_text(record: dict) -> str:
    """The card's precision section, from the table recorded in training.json."""
    p = record["precision"]
    table = pd.DataFrame(p["rows"])
    dataset, model = _dataset_name(p["dataset"]), p.get("model", "<model>")
    return f"""{PRECISION_HEADING}

Each method on {dataset}, scored by the runner of the notebooks with the model loaded in float32, bfloat16,
4-bit NF4 (bfloat16 compute: how Ide et al. (2024) ran their 30B+ models) and 8-bit LLM.int8 (bitsandbytes
computes its products in float16), and compared item by item with float32: the decisions that flipped
(ties are errors), those that turned wrong or right with McNemar's exact test, the accuracy and its change,
and the mean absolute change of a sentence's score in the method's own units (LP and in-template LP: nats;
Yes/No: P(Yes); A/B: 1 where constrained decoding chose the sentence). Weights MB is the loaded model's
memory footprint. Measured with `python -m helpers precision --model {model} --dataset {p['dataset']} --card`
on {p['machine']}; the pairs of each method:

{_coverage(p, table)}

{markdown(table)}

{summary(table, "nf4")}
"""


def _merged(old: dict | None, table: pd.DataFrame, settings: dict) -> dict:
    """The recorded precision entry with ``table``'s methods replaced (rows of other methods kept
    where the model and dataset are the same and the old rows have this table's form)."""
    rows = json.loads(table.to_json(orient="records"))
    why = {m: settings.get("why_subset") for m in table.method.unique() if settings.get("why_subset")}
    notes = {m: settings.get("note") for m in table.method.unique() if settings.get("note")}
    same = (old and old.get("dataset") == settings["dataset"] and old.get("model") == settings["model"]
            and all("method" in r for r in old.get("rows", [])))
    if same:
        new_methods = set(table.method)
        order = list(dict.fromkeys([r["method"] for r in old["rows"]] + list(table.method)))  # a method keeps its place
        by_method = {m: [r for r in (rows if m in new_methods else old["rows"]) if r["method"] == m] for m in order}
        rows = [r for m in order for r in by_method[m]]
        why = {**{m: w for m, w in old.get("why_subset", {}).items() if m not in new_methods}, **why}
        notes = {**{m: n for m, n in old.get("notes", {}).items() if m not in new_methods}, **notes}
    return {"model": settings["model"], "dataset": settings["dataset"], "machine": settings["machine"],
            "why_subset": why, "notes": notes, "rows": rows}


def update_card_precision(model: str, table: pd.DataFrame, settings: dict) -> Path:
    """Record a precision table (``helpers.zoo.precision.precision_report``) in demo model
    ``model``'s training.json, merged by method with what is recorded, and put its section in
    the card (README.md) in place of the previous one. ``settings``: model, dataset, machine,
    why_subset (why its rows cover a subset, if they do) and a note on what its rows show."""
    folder = paths.ROOT / resolve(model).hf_id
    if not (folder / "training.json").is_file():
        raise FileNotFoundError(f"{model} has no card to record in ({folder / 'training.json'} is missing): "
                                "--card is for the project's demo models")
    record = json.loads((folder / "training.json").read_text())
    record["precision"] = _merged(record.get("precision"), table, settings)
    write_text(folder / "training.json", json.dumps(record, indent=1, ensure_ascii=False))
    card = (folder / "README.md").read_text()
    section = precision_text(record)
    heading = next((h for h in (PRECISION_HEADING, *OLD_HEADINGS) if h + "\n" in card), None)
    if heading:
        start = card.index(heading + "\n")
        end = card.find("\n## ", start)
        card = card[:start] + section + (card[end:] if end >= 0 else "")
    elif "\n## Status" in card:
        at = card.index("\n## Status")
        card = card[:at] + "\n" + section + card[at:]
    else:
        card = card.rstrip("\n") + "\n\n" + section
    return write_text(folder / "README.md", card)
