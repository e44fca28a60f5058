"""What a lower precision costs each method: one model's methods on a dataset in float32,
bfloat16, 4-bit NF4 (bfloat16 compute, as Ide et al. ran their large models) and 8-bit
LLM.int8, scored by the runner (:mod:`helpers.runs.precision`) and compared item by item with
float32 (:mod:`helpers.analysis.precision`).

    python -m helpers precision --model demo-en --dataset blimp --limit 20
    python -m helpers precision --model demo-en --dataset hl_blimp          # Hu & Levy's tasks too

Score files and tables go to outputs/precision/<dataset>/<model>/ (a rerun reuses the files):
precision__limit<N>.csv (or precision__all.csv), named with its methods where they are not the
default ones (precision__all__lp.csv).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..analysis.precision import REFERENCE, precision_table
from ..files import write_text
from ..runs.precision import PRECISIONS, default_methods, score_precisions, store_root
from ..settings import Settings
from ..store import ScoreStore

__all__ = ["PRECISIONS", "REFERENCE", "PrecisionReport", "markdown", "precision_report", "summary"]


@dataclass
class PrecisionReport:
    """A precision check: its table (``helpers.analysis.precision.COLUMNS``), the score files
    it was computed from, and where the table was written (CSV and markdown)."""

    table: pd.DataFrame
    score_files: list[Path]
    csv: Path
    markdown: Path


def table_stem(limit: int | None, methods: list[str] | None = None) -> str:
    """precision__all or precision__limit<N>, and the methods where they are not the default."""
    stem = "precision__all" if limit is None else f"precision__limit{limit}"
    return stem if methods is None else f"{stem}__{'+'.join(methods)}"


def _defaults(methods: list[str] | None, dataset: str) -> bool:
    """Whether ``methods`` are the dataset's default ones (None is)."""
    try:
        return methods is None or methods == default_methods(dataset)
    except ValueError:  # a dataset without default methods
        return False


def precision_report(model: str, dataset: str, methods=None, limit: int | None = None, precisions="all",
                     root: str | Path | None = None, settings: Settings | None = None) -> PrecisionReport:
    """Score ``methods`` (default :func:`helpers.runs.precision.default_methods`) on the first
    ``limit`` items per paradigm of ``dataset`` in every precision of ``precisions`` (float32
    first) under ``settings`` (the templates and other method settings among them; see
    :func:`helpers.runs.precision.score_precision`), compare them with float32 and write the
    table beside the score files under ``root`` (default outputs/precision)."""
    store = ScoreStore(root or store_root())
    runs = score_precisions(model, dataset, methods if methods is not None else default_methods(dataset), limit,
                            precisions, store, settings)
    files = [f for run in runs for f in run.files]
    table = precision_table(files, {run.precision: run.weight_bytes for run in runs})
    folder = Path(files[0]).parent
    chosen = None if methods is None else list(dict.fromkeys(table.method))
    stem = table_stem(limit, None if _defaults(chosen, dataset) else chosen)
    table.to_csv(folder / f"{stem}.csv", index=False)
    md = write_text(folder / f"{stem}.md", markdown(table) + "\n")
    return PrecisionReport(table, files, folder / f"{stem}.csv", md)


def _number(value, fmt: str) -> str:
    return "–" if pd.isna(value) else format(value, fmt)


def markdown(table: pd.DataFrame) -> str:
    """The table as markdown: one row per method, template and precision."""
    nan = pd.Series(float("nan"), index=table.index)
    shown = pd.DataFrame({
        "method": table.method, "template": table.template, "precision": table.precision,
        "quant": table.quant, "compute dtype": table.dtype,
        "items": table["items"].map("{:,}".format), "ties": [_number(v, ",.0f") for v in table.ties],
        "accuracy %": [_number(v, ".2f") for v in table.accuracy],
        "ties half / right %": ["–" if pd.isna(h) else f"{h:.2f} / {r:.2f}" for h, r in  # a table before them: –
                                zip(table.get("expected_accuracy", nan), table.get("accuracy_ties_right", nan))],
        "change (points)": [_number(v, "+.2f") for v in table.accuracy_change],
        "flips": ["–" if pd.isna(f) else f"{int(f):,} ({s:.2f}%)" for f, s in zip(table.flips, table.flip_share)],
        "to wrong / right": ["–" if pd.isna(w) else f"{int(w):,} / {int(r):,}" for w, r in zip(table.to_wrong,
                                                                                                table.to_right)],
        "McNemar p": [_number(v, ".2g") for v in table.mcnemar_p],
        "mean abs. score change": [_number(v, ".4f") for v in table.mean_abs_score_change],
        "weights MB": [_number(v / 1e6, ".1f") for v in table.weight_bytes]})
    return shown.to_markdown(index=False, disable_numparse=True)


def _method_sentence(method: str, rows: pd.DataFrame, precision: str) -> str:
    flips, items = int(rows.flips.sum()), int(rows["items"].sum())
    head = f"{method}: {precision} flips {flips:,} of {items:,} decisions ({100 * flips / items:.2f}%; " \
           f"{int(rows.to_wrong.sum()):,} to wrong, {int(rows.to_right.sum()):,} to right)"
    if len(rows) == 1:
        r = rows.iloc[0]
        return f"{head}, accuracy {r.accuracy_change:+.2f} points (McNemar p = {r.mcnemar_p:.2g})."
    low, high = rows.accuracy_change.min(), rows.accuracy_change.max()
    significant = int((rows.mcnemar_p < 0.05).sum())
    return (f"{head} over {len(rows)} templates, accuracy {low:+.2f} to {high:+.2f} points "
            f"(McNemar p < 0.05 in {significant} of {len(rows)}).")


def summary(table: pd.DataFrame, precision: str = "nf4") -> str:
    """One sentence per method (its templates together) on what ``precision`` did against float32."""
    rows = table[(table.precision == precision) & table.flips.notna()]
    return " ".join(_method_sentence(m, r, precision) for m, r in rows.groupby("method", sort=False))
