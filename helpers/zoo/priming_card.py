"""The in-context section of a demo model's card: 06's Figure 2 (accuracy under each prefix type
minus the no-prefix accuracy of the same pairs, by prefix length) read from the table and figure
that ``notebooks/06_context_priming.ipynb`` wrote for the model, recorded in training.json and
rendered into README.md, the figure copied beside it as ``priming.png``.

    papermill notebooks/06_context_priming.ipynb out.ipynb -p model demo-en-icl
    python -m helpers model-card --model demo-en-icl --dataset blimp --priming
"""
from __future__ import annotations

import glob
import json
import re
import shutil
from pathlib import Path

import pandas as pd

from .. import paths

PRIMING_HEADING = "## In-context priming, measured by `notebooks/06_context_priming.ipynb`"
FIGURE = "priming.png"
_COLUMNS = ["prefix_type", "target_length", "accuracy", "baseline", "delta", "ci_low", "ci_high", "items"]


def record_priming(folder: Path, model: str, dataset: str = "blimp", outputs: Path | None = None) -> dict:
    """06's Figure 2 table of ``model`` on ``dataset`` (from ``outputs``, default the project's),
    as the record the card renders; its figure is copied into ``folder``."""
    from ..data.picking import choose, pick_tag
    from ..data.priming import paradigm_choice

    outputs = Path(outputs) if outputs else paths.outputs()
    teaching = choose(dataset, paradigms=paradigm_choice(dataset, "auto"))  # 06's default paradigms, named so
    stem = _largest_run(outputs / "tables", f"06_figure2__{model}__{dataset}{pick_tag(teaching)}")
    table_path, figure_path = outputs / "tables" / f"{stem}.csv", outputs / "figures" / f"{stem}.png"
    if not table_path.is_file() or not figure_path.is_file():
        raise FileNotFoundError(f"no {table_path} and {figure_path}: run notebooks/06_context_priming.ipynb with "
                                f"-p model {model} -p dataset {dataset} first")
    table = pd.read_csv(table_path)
    config = json.loads(table_path.with_name(table_path.name + ".json").read_text())["config"]
    shutil.copyfile(figure_path, Path(folder) / FIGURE)
    return {"dataset": dataset, "method": "lp",
            "grid": {k: config.get(k) for k in ("limit", "paradigms", "lengths", "draws", "seed")},
            "rows": table[[c for c in _COLUMNS if c in table]].round(4).to_dict("records")}


def _largest_run(tables: Path, stem: str) -> str:
    """``stem``'s name of the run of the most pairs stored in ``tables``: every pair, else the largest
    ``limit`` (06 runs 20 per paradigm by default: ``__limit-20``); ``stem`` itself where none is."""
    limits = [int(m.group(1)) for p in tables.glob(f"{glob.escape(stem)}__limit-*.csv")
              if (m := re.fullmatch(re.escape(stem) + r"__limit-(\d+)\.csv", p.name))]
    return stem if (tables / f"{stem}.csv").is_file() or not limits else f"{stem}__limit-{max(limits)}"


def priming_text(record: dict) -> str:
    """The card's section: the grid, the effects at the longest prefix, and the figure."""
    p = record["priming"]
    rows = pd.DataFrame(p["rows"])
    longest = int(rows["target_length"].max())
    at = rows[rows["target_length"] == longest].copy()
    at["accuracy"], at["baseline"] = (100 * at["accuracy"]).round(1), (100 * at["baseline"]).round(1)
    at["change (points)"] = (100 * at["delta"]).round(1)
    at["95% CI"] = [f"[{100 * lo:.1f}, {100 * hi:.1f}]" for lo, hi in zip(at["ci_low"], at["ci_high"])]
    grid = p["grid"]
    paradigms = grid.get("paradigms")
    which = (f"{len(paradigms)} BLiMP paradigms ({', '.join(paradigms)})" if paradigms else "every paradigm")
    shown = at[["prefix_type", "accuracy", "baseline", "change (points)", "95% CI", "items"]]
    return f"""{PRIMING_HEADING}

LP accuracy after prefixes of sentences (Sinha et al. 2023): {which}, the first {grid.get('limit')} pairs of each,
prefix lengths {grid.get('lengths')} model tokens, seed {grid.get('seed')}. At {longest} tokens, against the same
pairs without a prefix (accuracy and baseline in percent; 95% bootstrap intervals over pairs):

{shown.to_markdown(index=False)}

![accuracy change by prefix type and length]({FIGURE})
"""
