"""Reading the results store for an analysis, and writing its tables and figures, each with a
provenance sidecar (configuration, score files used, git commit)."""
from __future__ import annotations

import json
import os
import time
import warnings
from pathlib import Path

import pandas as pd

from .. import paths
from ..files import atomic_path, write_text
from ..provenance import git_commit, library_versions
from ..settings.stored import StoreConflictError
from ..store import load_scores
from ..settings.lists import parse_list

PROMPTING = ("yesno", "yesno_released", "ab", "ab_logit")
FIGURE_FORMATS = ("png", "pdf")


def producer(method: str) -> str:
    """The notebook that writes the scores of ``method``."""
    return "03_prompting" if method in PROMPTING else "02_readout"


def unscorable(model: str, method: str, parameter: str | None = None) -> str | None:
    """Why no notebook can score ``method`` for ``model`` (its kind lacks what the method needs,
    read from its configuration without loading weights), with the methods of the same kind it
    does run, set through the notebook ``parameter`` that chose it; None when it can, or when the
    model cannot be looked at here (not in the local cache)."""
    from ..engine.kinds import SCORER_KINDS
    from ..methods import get
    from ..models import check_loadable

    try:
        kind = check_loadable(model, None).kind
    except Exception:  # noqa: BLE001 - a model not here: the plain "run the notebook" message
        return None
    scorer = SCORER_KINDS[kind]
    reason = get(method).not_applicable(scorer)
    if reason is None:
        return None
    kin = PROMPTING if method in PROMPTING else ()
    runs = [m for m in kin if m != method and get(m).not_applicable(scorer) is None and get(m).family is get(method).family]
    choice = (f"set {parameter}={runs[0]!r} (or None to skip it)" if runs else f"set {parameter}=None to skip it") \
        if parameter else f"leave {method} out"
    return f"{reason}, so no notebook scores it for this {kind} model: {choice}"


def stored_scores(model, dataset: str, methods, parameters: dict[str, str] | None = None,
                  where: dict | None = None) -> tuple[pd.DataFrame, str]:
    """The stored scores of ``model`` (one name or a selection) x ``methods`` on ``dataset``, and
    a message naming what is missing and which notebook produces it, or, for a method the model's
    kind cannot run, the notebook parameter (``parameters``: method -> the parameter that chose
    it) to set instead (empty when nothing is missing). ``where`` chooses among settings
    (:meth:`helpers.settings.Settings.score_filter`); a model stored under several without a
    choice is an error naming them. ``attrs["score_files"]`` lists every score file used."""
    models = parse_list(model, what="model")
    methods = list(dict.fromkeys(parse_list(methods, what="method")))
    frames, problems, have = [], [], set()
    for m in models:  # every model read, so that one message says everything the store lacks or mixes
        try:
            frames.append(load_scores(dataset=dataset, model=m, methods=methods, where=where))
        except StoreConflictError as conflict:
            problems += conflict.problems
            have |= conflict.present
    scores = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["model", "method"])
    scores.attrs["score_files"] = [f for frame in frames for f in frame.attrs.get("score_files", [])]
    have |= set(zip(scores["model"], scores["method"]))
    missing = [f"{method} for {m}: " + (unscorable(m, method, (parameters or {}).get(method)) or
                                        f"run notebooks/{producer(method)}.ipynb with model={m!r}, dataset={dataset!r}")
               for m in models for method in methods if (m, method) not in have]
    if problems:
        raise StoreConflictError(problems + [f"no scores of {line}" for line in missing])
    message = ("The results store has no scores for:\n" + "\n".join(f"- {line}" for line in missing)) if missing else ""
    return scores, message


class MissingScoresError(RuntimeError):
    """An analysis asked for stored scores that no scoring notebook has written yet (shown without
    traceback frames: the message says what to run)."""

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


def required_scores(model, dataset: str, methods, parameters: dict[str, str] | None = None,
                    where: dict | None = None) -> pd.DataFrame:
    """:func:`stored_scores`, or a :class:`MissingScoresError` naming every missing (model,
    method) and the notebook that scores it: an analysis with nothing to read stops, so a sweep
    marks it failed (and reruns it) instead of calling it done."""
    scores, missing = stored_scores(model, dataset, methods, parameters, where)
    if missing:
        raise MissingScoresError(f"{missing}\nThis analysis reads stored scores only: run those notebooks first, "
                                 "then this one (a sweep with both submits it after them).")
    return scores


def score_files(sources) -> list[str]:
    """The score files behind ``sources``: a frame from the store (its ``attrs["score_files"]``)
    or a list of paths."""
    if isinstance(sources, pd.DataFrame):
        if "score_files" not in sources.attrs:
            raise ValueError("this frame does not name its score files: pass the scores as loaded from the store")
        files = sources.attrs["score_files"]
    else:
        files = sources
    return [str(f) for f in files]


def _recorded(path: str, root: Path) -> str:
    """``path`` as a sidecar records it: relative to the outputs folder ``root`` the sidecar sits in
    (``scores/blimp/demo-en/lp.parquet``) where the file is under it, else as given."""
    resolved = Path(path).resolve()
    return resolved.relative_to(root).as_posix() if resolved.is_relative_to(root) else str(path)


def sidecar_score_files(sidecar: str | os.PathLike) -> list[Path]:
    """The score files a sidecar (``<table>.csv.json`` or ``<figure>.png.json``) lists, as paths: one
    recorded relative to its outputs folder is read from there, wherever that folder has moved."""
    sidecar = Path(sidecar)
    root = sidecar.parent.parent  # outputs/tables/<name>.json -> outputs
    return [p if p.is_absolute() else root / p for p in map(Path, json.loads(sidecar.read_text())["score_files"])]


def write_sidecar(target: Path, written: list[Path], config: dict, sources) -> Path:
    """``<target>.json``: what was written, from which configuration, score files (relative to the outputs
    folder: :func:`sidecar_score_files` reads them back) and commit."""
    sidecar = target.with_name(target.name + ".json")
    root = target.parent.parent.resolve()
    record = {"files": [p.name for p in written], "config": config,
              "score_files": [_recorded(f, root) for f in score_files(sources)],
              "git_commit": git_commit(), "library_versions": library_versions(),
              "time": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    write_text(sidecar, json.dumps(record, indent=2, default=str) + "\n")
    return sidecar


def save_table(table: pd.DataFrame, name: str, *, config: dict, sources, root: Path | None = None,
               note: str | None = None) -> list[Path]:
    """Write ``table`` as ``tables/<name>.csv`` and ``.md`` under the outputs folder (or ``root``),
    with the sidecar ``<name>.csv.json``; ``note`` (its caveats, how it was computed) goes under the
    Markdown table and into the sidecar's configuration. Returns the three paths."""
    folder = Path(root or paths.outputs()) / "tables"
    csv, md = folder / f"{name}.csv", folder / f"{name}.md"
    files = score_files(sources)  # fail before writing anything when the sources are unknown
    with atomic_path(csv) as tmp:
        table.to_csv(tmp, index=False)
    write_text(md, table.to_markdown(index=False, floatfmt=".3f") + "\n" + (f"\n{note}\n" if note else ""))
    return [csv, md, write_sidecar(csv, [csv, md], config | ({"note": note} if note else {}), files)]


def say_undrawable(fig) -> None:
    """Each text of ``fig`` drawn with the script fonts it needs (:func:`helpers.plots.fonts.fit_fonts`);
    where no installed font draws some characters (empty boxes), the figure says so under itself, and a
    warning names them and what to install."""
    from ..plots.fonts import INSTALL, fit_fonts

    missing = fit_fonts(fig)
    if missing:
        note = f"no installed font draws {''.join(missing[:8])!r}: shown as boxes (install {INSTALL})"
        fig.text(0.01, 0.0, note, fontsize=7, color="dimgrey", va="top")
        warnings.warn(f"a figure holds characters no installed font draws: {note}")


def save_figure(fig, name: str, *, config: dict, sources, root: Path | None = None) -> list[Path]:
    """Write ``fig`` as ``figures/<name>.png`` and ``.pdf`` under the outputs folder (or ``root``),
    with the sidecar ``<name>.png.json``; returns the three paths."""
    folder = Path(root or paths.outputs()) / "figures"
    files = score_files(sources)
    say_undrawable(fig)
    written = []
    for fmt in FIGURE_FORMATS:
        target = folder / f"{name}.{fmt}"
        with atomic_path(target) as tmp:
            fig.savefig(tmp, format=fmt, dpi=150, bbox_inches="tight")
        written.append(target)
    return written + [write_sidecar(written[0], written, config, files)]
