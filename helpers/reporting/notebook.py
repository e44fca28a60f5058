"""One object per notebook that names and writes its tables and figures and runs its paper check.

    report = NotebookReport("02_readout", parameters, tag=f"{model}__{dataset}")
    report.sources = scores                      # the score files behind what follows
    report.table(t3, "readout")                  # tables/02_readout__<tag>.csv, .md and .csv.json
    report.figure(fig, "phenomena")              # figures/02_phenomena__<tag>.png, .pdf and .png.json
    report.paper_check(scores)                   # the published numbers beside this run's

Every file is ``<NN>_<what>__<tag>`` (``NN`` the notebook's number) under the outputs folder,
with a JSON sidecar of the notebook's parameters, the score files used and the commit
(:mod:`helpers.reporting.outputs`). The calls return None, so a cell that ends in one shows
its table or figure, not the paths written; :attr:`NotebookReport.written` lists them.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from . import outputs, paper_check


class NotebookReport:
    """Names and writes one notebook's outputs. ``parameters`` go into every sidecar (with the
    notebook's name); ``tag`` ends every name unless a call gives its own; ``sources`` (the
    frame of scores loaded from the store, or a list of score files) is what the outputs are
    computed from unless a call gives its own; ``root`` redirects the outputs folder."""

    def __init__(self, notebook: str, parameters: dict, tag: str, sources=None, root: Path | None = None):
        if not (len(notebook) > 3 and notebook[:2].isdigit() and notebook[2] == "_"):
            raise ValueError(f"notebook must be a notebook's name such as '02_readout', got {notebook!r}")
        self.notebook, self.number = notebook, notebook[:2]
        self.config = {"notebook": notebook, **parameters}
        self.tag, self.sources, self.root = tag, sources, root
        self.written: list[Path] = []
        self.checked: pd.DataFrame | None = None  # the last paper check

    def name(self, what: str, tag: str | None = None) -> str:
        """The file name (without extension) of output ``what``: ``<NN>_<what>__<tag>`` (a "/" of
        the tag, as in a Hugging Face id, written "_")."""
        if not what or "/" in what:
            raise ValueError(f"an output's name must be a short word such as 'phenomena', got {what!r}")
        return f"{self.number}_{what}__{(tag or self.tag).replace('/', '_')}"  # a Hub id's "/" is no folder

    def _sources(self, sources):
        sources = self.sources if sources is None else sources
        if sources is None:
            raise ValueError(f"no sources for this output of {self.notebook}: set report.sources to the scores "
                             "loaded from the store, or pass sources=[] for an output computed without scores")
        return sources

    def table(self, table: pd.DataFrame, what: str, *, sources=None, tag: str | None = None,
              note: str | None = None) -> None:
        """Write ``table`` as CSV and Markdown with its sidecar (``note`` under the Markdown table)."""
        self.written += outputs.save_table(table, self.name(what, tag), config=self.config,
                                           sources=self._sources(sources), root=self.root, note=note)

    def figure(self, fig, what: str, *, sources=None, tag: str | None = None) -> None:
        """Write ``fig`` as PNG and PDF with its sidecar."""
        self.written += outputs.save_figure(fig, self.name(what, tag), config=self.config,
                                            sources=self._sources(sources), root=self.root)

    def paper_check(self, scores: pd.DataFrame | None, *, show: bool = True) -> None:
        """The notebook's paper check against ``scores`` (None: nothing scored), displayed with
        its summary and written as ``<NN>_paper_check__<tag>``; the table stays in :attr:`checked`."""
        self.checked = paper_check.check(self.notebook, scores)
        if show:
            from IPython.display import display

            ran = set(scores["dataset"].astype(str)) if scores is not None and "dataset" in scores else set()
            mine = self.checked["dataset"].isna() | self.checked["dataset"].isin(ran)
            display(paper_check.shown(self.checked[mine]).drop(columns="dataset").reset_index(drop=True))
            others = sorted(set(self.checked.loc[~mine, "dataset"]))
            if others:  # the other datasets' published numbers: one line, the saved table holds them
                print(f"{int((~mine).sum())} published numbers of other datasets ({', '.join(others)}) are in "
                      f"{self.name('paper_check')}.csv, not shown")
            print(paper_check.summary(self.notebook, self.checked))
        self.table(self.checked, "paper_check", sources=scores if scores is not None else [])
