"""Executed examples a reader can see: notebooks 00-08 run headlessly on one model with small
limits (papermill; 03 with two tiny models beside it, for its introspection section, 06 and 07
with one, for their cross-model sections; 08 over two revisions of the model, prepared and scored
first: :mod:`.report_checkpoints`) and rendered to HTML (nbconvert), with an index page linking them.

Everything goes under one folder (``outputs/report`` by default): ``notebooks/`` (executed),
``html/`` (one page per notebook), ``results/`` (the scores, tables and figures of these runs,
kept apart from full runs in outputs/), ``explore/`` (the results explorer over these scores,
:mod:`helpers.explore`, with screenshots of it from headless Chromium where it is installed)
and ``index.html``. A notebook that fails is rendered too (its error shows in the page) and
marked in the index; the others still run.
"""
from __future__ import annotations

import html
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import papermill as pm

from .. import paths
from ..explore import ExploreError, build as build_explorer
from ..explore.snapshot import SnapshotUnavailable, snapshot
from .kernel import KERNEL_ARGUMENTS
from . import report_checkpoints
from .jobs import declared_parameters, find_notebook

TEACHING_PRIMING_MODEL = "demo-en-icl"  # a page naming its model runs on it, whatever the report's model
# (notebook prefix, parameters besides the model): small limits, every table and figure still made
SMALL = [
    ("00", {}),
    ("01", {"datasets": "blimp,blimp_hu2025,syntaxgym,li_hu2025,cola,cola_dev,hl_blimp"}),
    ("02", {"limit": 2}),  # two pairs a paradigm: 04's split-half reliability needs two halves
    ("03", {"limit": 2, "hu_levy_sets": "hl_blimp", "hu_levy_limit": 2}),
    ("04", {"resamples": 200, "trials": 4}),
    ("05", {"resamples": 200}),
    ("06", {"limit": 1, "paradigms": None, "lengths": [0, 25, 50], "phenomenon_sentences": 2}),  # every paradigm
    ("06", {"model": TEACHING_PRIMING_MODEL, "lengths": [0, 100, 400, 800]}),  # 06's teaching grid: the effect, seen
    ("07", {"datasets": "blimp_hu2025,syntaxgym,li_hu2025,cola", "limit": 2}),
    ("08", {"methods": report_checkpoints.SCORED["methods"]}),  # the model's two revisions: PREPARE scores them
]
# pages whose scores are prepared first: prefix -> f(model, out) -> the page's parameters over the plan's
PREPARE = {"08": report_checkpoints.prepare}
# notebooks that compare models run the report's model beside these (03's introspection section,
# 06's and 07's "Across models")
BESIDE = {"03": ["tiny-gpt2", "tiny-llama"], "06": ["tiny-gpt2"], "07": ["tiny-gpt2"]}


@dataclass
class Page:
    """One notebook of the report: what ran, how long, and whether it finished."""

    notebook: Path
    parameters: dict
    executed: Path
    page: Path
    seconds: float = 0.0
    error: str | None = None
    extra: dict = field(default_factory=dict)


def plan(model: str = "demo-en", only: list[str] | None = None, out: Path | None = None) -> list[Page]:
    """The report's pages; an error before anything runs when a notebook lacks a parameter."""
    out = Path(out or paths.outputs() / "report")
    pages = []
    for prefix, params in SMALL:
        if only and prefix not in only:
            continue
        notebook = find_notebook(prefix)
        params, stem = dict(params), notebook.stem
        if "model" in params:  # a page of its own model
            stem = f"{stem}__{params['model']}"
        elif "model" in declared_parameters(notebook):
            params["model"] = list(dict.fromkeys([model, *BESIDE[prefix]])) if prefix in BESIDE else model
        unknown = sorted(set(params) - declared_parameters(notebook))
        if unknown:
            raise ValueError(f"{notebook.name} has no parameter {', '.join(unknown)}")
        pages.append(Page(notebook, params, out / "notebooks" / f"{stem}.ipynb", out / "html" / f"{stem}.html"))
    if only and len({p.notebook.name[:2] for p in pages}) != len(set(only)):
        raise ValueError(f"--only {','.join(only)}: choose among {', '.join(p for p, _ in SMALL)}")
    return pages


def render(executed: Path, target: Path) -> Path:
    """The executed notebook as one self-contained HTML page (nbconvert's lab template)."""
    import nbformat
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter(template_name="lab").from_notebook_node(nbformat.read(executed, as_version=4))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(body, encoding="utf-8")
    return target


def run_page(page: Page) -> Page:
    """Execute one notebook (its errors recorded, not raised) and render it."""
    page.executed.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    try:
        pm.execute_notebook(str(page.notebook), str(page.executed), parameters=page.parameters,
                            cwd=str(page.notebook.parent), progress_bar=False, kernel_name="python3",
                            extra_arguments=KERNEL_ARGUMENTS)
    except pm.PapermillExecutionError as err:
        page.error = f"{err.ename}: {err.evalue}"
    page.seconds = time.perf_counter() - started
    if page.executed.is_file():
        render(page.executed, page.page)
    return page


def prepare_page(page: Page, model: str, out: Path) -> bool:
    """Score what ``page`` reads (``PREPARE``) and set its parameters; whether it can run (else
    the page records why not, and the other pages still run)."""
    print(f"prepare: {page.notebook.name}", flush=True)
    try:
        with paths.environment(HF_HUB_CACHE=str(out / "hub")):  # the kernels find the prepared revisions here
            page.parameters.update(PREPARE[page.notebook.name[:2]](model, out))
    except Exception as err:  # noqa: BLE001 -- recorded in the index; the other pages still run
        page.error = f"preparing its scores failed: {type(err).__name__}: {err}"
        print(f"  FAILED {page.error}", flush=True)
        return False
    return True


@dataclass
class ExplorerLink:
    """The report's explorer: its page (None when it could not be built), screenshots, and why
    one or the other is missing."""

    index: Path | None
    shots: list[Path] = field(default_factory=list)
    note: str | None = None


def add_explorer(out: Path) -> ExplorerLink:
    """The explorer over the report's scores (``results/scores``) in ``explore/``, and its
    screenshots there; what failed is said in the link's note, nothing raised."""
    try:
        explorer = build_explorer(out / "results" / "scores", out / "explore")
    except ExploreError as err:
        return ExplorerLink(None, note=f"no explorer: {err}")
    try:
        shots = snapshot(explorer.index, out / "explore", stem="snapshot")
    except (SnapshotUnavailable, TimeoutError, OSError) as err:
        return ExplorerLink(explorer.index, note=f"no snapshot: {err}")
    return ExplorerLink(explorer.index, shots)


def explorer_html(link: ExplorerLink | None, out: Path) -> str:
    """The index's section on the explorer: a link and the screenshots, or why they are missing."""
    if link is None:
        return ""
    parts = ["<h2>Results explorer</h2>"]
    if link.index is not None:
        href = html.escape(link.index.relative_to(out).as_posix())
        parts.append(f'<p><a href="{href}">The results explorer</a> over these scores: accuracy per model, method '
                     "and dataset, per paradigm, and each pair with its per-token surprisal "
                     "(<code>make explore</code> builds it over outputs/scores).</p>")
        parts += [f'<a href="{href}"><img class="snapshot" src="{html.escape(shot.relative_to(out).as_posix())}" '
                  f'alt="the explorer: {html.escape(shot.stem)}"></a>' for shot in link.shots]
    if link.note:
        parts.append(f'<p class="failed">{html.escape(link.note)}</p>')
    return "\n".join(parts)


def index_html(pages: list[Page], model: str, seconds: float, explorer: ExplorerLink | None = None,
               out: Path | None = None) -> str:
    """The index page: one row per notebook with its parameters, time, status and link."""
    rows = []
    for p in pages:
        status = "ok" if p.error is None else f"failed: {html.escape(p.error[:200])}"
        link = f'<a href="html/{p.page.name}">{html.escape(p.page.stem)}</a>' if p.page.is_file() else \
            html.escape(p.page.stem)
        params = html.escape(", ".join(f"{k}={json.dumps(v)}" for k, v in p.parameters.items()))
        rows.append(f"<tr><td>{link}</td><td><code>{params}</code></td><td>{p.seconds:.0f} s</td>"
                    f'<td class="{"ok" if p.error is None else "failed"}">{status}</td></tr>')
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>Executed notebooks ({html.escape(model)})</title>
<style>body{{font-family:sans-serif;max-width:70em;margin:2em auto}} td,th{{padding:4px 10px;text-align:left}}
tr:nth-child(even){{background:#f4f4f4}} .ok{{color:#256029}} .failed{{color:#b42318}}
img.snapshot{{width:32em;border:1px solid #ccc;margin:0.5em 1em 0 0;vertical-align:top}}</style></head>
<body><h1>Executed notebooks on {html.escape(model)}</h1>
<p>Each notebook ran headlessly (papermill) with the small limits shown, in {seconds:.0f} s in all
({time.strftime("%Y-%m-%d %H:%M")}). Their scores, tables and figures are in <code>results/</code>.</p>
<table><tr><th>notebook</th><th>parameters</th><th>time</th><th>status</th></tr>
{chr(10).join(rows)}
</table>
{explorer_html(explorer, Path(out) if out else Path("."))}
</body></html>
"""


def build(model: str = "demo-en", only: list[str] | None = None, out: Path | None = None) -> tuple[Path, list[Page]]:
    """Run and render every page, then write the index; returns (index.html, pages)."""
    out = Path(out or paths.outputs() / "report")
    pages = plan(model, only, out)
    started = time.perf_counter()
    # the kernels inherit the outputs folder; started from a notebook, its kernels are still headless
    with paths.environment(**{paths.OUTPUTS_ENV: str(out / "results"), "JPY_SESSION_NAME": None}):
        for page in pages:
            if page.notebook.name[:2] in PREPARE and not prepare_page(page, model, out):
                continue
            print(f"run: {page.notebook.name} {page.parameters}", flush=True)
            run_page(page)
            print(f"  {'ok' if page.error is None else 'FAILED ' + page.error} ({page.seconds:.0f} s) -> {page.page}",
                  flush=True)
    print("explore: the results explorer over the report's scores", flush=True)
    explorer = add_explorer(out)
    print(f"  {explorer.note or 'ok'} -> {explorer.index}", flush=True)
    index = out / "index.html"
    index.write_text(index_html(pages, model, time.perf_counter() - started, explorer, out), encoding="utf-8")
    return index, pages
