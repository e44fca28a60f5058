"""Store access and output helpers shared by the analysis notebooks (04, 05)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from .. import paths
from ..results import load_scores

PRODUCER = {"lp": "02_readout", "meanlp": "02_readout", "penlp": "02_readout", "intemplate_lp": "02_readout",
            "intemplate_meanlp": "02_readout", "intemplate_penlp": "02_readout", "comparative_lp": "02_readout",
            "slor": "02_readout", "bf_uniform": "02_readout", "bf_unigram": "02_readout",
            "yesno": "03_prompting", "yesno_released": "03_prompting", "ab": "03_prompting"}


def names(selection) -> list[str]:
    """A list from a list or a comma-separated string."""
    if isinstance(selection, str):
        return [s.strip() for s in selection.split(",") if s.strip()]
    return list(selection)


def stored_scores(models: list[str], dataset: str, methods: list[str]) -> tuple[pd.DataFrame, str]:
    """The stored scores of ``models`` x ``methods`` on ``dataset``, and a message naming what is
    missing and which notebook produces it (empty when everything is there)."""
    frames = [load_scores(dataset=dataset, model=m, methods=methods) for m in models]
    scores = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    missing = []
    for m in models:
        have = set(scores.loc[scores["model"] == m, "method"]) if len(scores) else set()
        for method in methods:
            if method not in have:
                nb = PRODUCER.get(method, "the scoring notebooks")
                missing.append(f"- {method} for {m}: run notebooks/{nb}.ipynb with model={m!r}, dataset={dataset!r}")
    message = ("The results store has no scores for:\n" + "\n".join(missing)) if missing else ""
    return scores, message


def save_table(table: pd.DataFrame, stem: str) -> list[Path]:
    """Write a table as CSV and Markdown under outputs/tables/."""
    folder = paths.OUTPUTS / "tables"
    folder.mkdir(parents=True, exist_ok=True)
    csv, md = folder / f"{stem}.csv", folder / f"{stem}.md"
    table.to_csv(csv, index=False)
    md.write_text(table.to_markdown(index=False, floatfmt=".3f") + "\n")
    return [csv, md]
