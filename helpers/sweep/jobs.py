"""Run notebooks headlessly over (notebook x model x dataset [x shard]) with papermill.

Executed notebooks go to ``outputs/notebooks/<notebook>__<model>__<dataset>[__params][__shardKofN].ipynb``;
a combination whose executed notebook finished without error is skipped on the next run.
Locally the jobs run one after another; ``executor="slurm"`` submits the unfinished ones as
one Slurm job array through submitit (:mod:`helpers.sweep.slurm`), and
:mod:`helpers.sweep.status` tells what each combination is doing. Every parameter a job
injects must be a parameter the notebook takes: one its parameters cell declares or a setting
(papermill itself would only warn and run the defaults). ``shards`` > 1 splits each dataset run's pairs into that many jobs
(:mod:`helpers.data.shards`); the score store reads their files as one run, and the analyses
of the sweep (``ANALYSES``) run once per model and dataset, after every shard
(:mod:`helpers.sweep.dependencies`).
"""
from __future__ import annotations

import hashlib
import itertools
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import papermill as pm

from .. import paths
from .kernel import KERNEL_ARGUMENTS
from ..settings import NAMES, TABLE, Settings
from ..store import safe_name
from ..data.shards import check as check_shards
from .notebook_datasets import taken
from .revisions import models_for, parse_revisions

NO_MODEL = "none"  # notebooks that take no model (01_data_prep)
SETTINGLESS = ("01_data_prep",)  # notebooks that neither score nor read scores: they take no setting
# analysis notebooks -> their parameters naming the methods whose stored scores they read (whole runs)
ANALYSES = {"04_ensembles": ("baseline", "l_method", "p_method", "ab_method"),
            "05_length_bias": ("methods", "gap", "linking"), "08_learning_curves": ("methods",)}
# notebooks whose sharded run ends with one job reading every shard's files as one run (shard None):
# the whole run's tables, after all its shards (helpers.sweep.dependencies)
GATHERED = ("03_prompting", "06_context_priming", "07_separability")
# a temporary file of helpers.files.atomic_path: ".<target>-<pid>-<8 hex>.tmp"
TEMP_FILE = re.compile(r"^\.(?P<target>.+)-\d+-[0-9a-f]{8}\.tmp$")


def declared_parameters(notebook: Path) -> set[str]:
    """The names a notebook takes: those its cell tagged "parameters" assigns and, in every notebook
    but those of :data:`SETTINGLESS`, every setting by its name (:data:`helpers.settings.NAMES`; the
    notebook's :func:`helpers.parameters.check_injected` admits them)."""
    cell = set(pm.inspect_notebook(str(notebook)))
    return cell if notebook.stem in SETTINGLESS else cell | set(NAMES)


@dataclass(frozen=True)
class Job:
    notebook: Path
    model: str
    dataset: str
    parameters: dict = field(default_factory=dict, hash=False, compare=False)
    shard: int | None = None  # 1 to shards, with shards > 1
    shards: int = 1

    def __post_init__(self):
        if check_shards(self.shard, self.shards) == (None, self.shards) and self.shards > 1:
            raise ValueError(f"a job of {self.shards} shards scores one of them: shard must be 1 to {self.shards} "
                             "(the job reading every shard's files is a job of shards=1 with the shards parameter)")

    @property
    def output(self) -> Path:
        parts = [self.notebook.stem] + [p for p in (self.model, self.dataset) if p != NO_MODEL]
        # the extra parameters are part of the name, so a run with other settings is not skipped
        parts += [f"{k}-{_short(v)}" for k, v in sorted(self.parameters.items())]
        if self.shards > 1:
            parts.append(f"shard{self.shard}of{self.shards}")
        return paths.outputs() / "notebooks" / (safe_name("__".join(parts)) + ".ipynb")

    @property
    def gathers(self) -> int:
        """How many shards' files this job reads as one run (a GATHERED notebook's last job), else 1."""
        return int(self.parameters.get("shards", 1)) if self.shards == 1 and self.parameters.get("shard") is None else 1

    @property
    def partial(self) -> Path:
        """The notebook papermill writes while it runs (and leaves, with the error, when a cell fails)."""
        return self.output.with_name(self.output.stem + ".running.ipynb")

    @property
    def label(self) -> str:
        shard = f" shard {self.shard}/{self.shards}" if self.shards > 1 else ""
        if self.gathers > 1:
            shard = f" (its {self.gathers} shards read as one run)"
        return f"{self.notebook.stem} model={self.model} dataset={self.dataset}{shard}"

    def papermill_parameters(self) -> dict:
        """The parameters injected into the notebook: the extra ones, ``model``, and ``dataset``
        (or ``datasets``, a one-item list, for a notebook that takes several), and ``shard`` and
        ``shards`` for a sharded run. An error names any that the notebook does not declare."""
        declared = declared_parameters(self.notebook)
        params = dict(self.parameters)
        if self.model != NO_MODEL:
            params["model"] = self.model
        if self.dataset not in (NO_MODEL, "all"):
            if "datasets" in declared and "dataset" not in declared:
                params["datasets"] = [self.dataset]
            else:
                params["dataset"] = self.dataset
        if self.shards > 1:
            params.update(shard=self.shard, shards=self.shards)
        unknown = sorted(set(params) - declared)
        if unknown:
            hint = " (--shards needs a notebook with shard and shards parameters)" if "shards" in unknown else ""
            own = sorted(declared - set(NAMES))
            raise ValueError(f"{self.notebook.name} has no parameter {', '.join(unknown)} (its parameters: "
                             f"{', '.join(own)}{'; and every setting' if set(NAMES) <= declared else ''}){hint}")
        return params

    def run(self, km=None) -> Path:
        """Execute the notebook: in a kernel of its own, or in ``km``'s (a started kernel kept after it:
        :mod:`.model_kernel`)."""
        params = self.papermill_parameters()
        self.output.parent.mkdir(parents=True, exist_ok=True)
        kernel = {"km": km} if km is not None else {}
        pm.execute_notebook(str(self.notebook), str(self.partial), parameters=params, cwd=str(self.notebook.parent),
                            progress_bar=False, extra_arguments=KERNEL_ARGUMENTS, **kernel)
        self.partial.replace(self.output)
        return self.output


def _short(value) -> str:
    text = ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
    return text if len(text) <= 40 else text[:32] + "-" + hashlib.sha256(text.encode()).hexdigest()[:6]


def find_notebook(prefix: str) -> Path:
    """The notebook whose file name starts with ``prefix`` (e.g. "02")."""
    matches = sorted(paths.NOTEBOOKS.glob(f"{prefix}*.ipynb"))
    if len(matches) != 1:
        available = ", ".join(p.name for p in sorted(paths.NOTEBOOKS.glob("*.ipynb"))) or "none"
        raise FileNotFoundError(f"no single notebook starts with {prefix!r} in {paths.NOTEBOOKS} "
                                f"(available: {available})")
    return matches[0]


def finished(path: Path) -> bool:
    """Whether an executed notebook exists and ran to the end without an exception."""
    if not path.is_file():
        return False
    try:
        meta = json.loads(path.read_text())["metadata"].get("papermill", {})
    except (json.JSONDecodeError, KeyError):
        return False
    return meta.get("exception") is False or (meta.get("exception") is None and meta.get("end_time") is not None)


def parameters_for(notebook: Path, parameters: dict) -> dict:
    """The parameters of one notebook: plain keys go to every notebook, ``"02:methods"`` only to
    the notebooks whose name starts with "02"."""
    out = {}
    for key, value in parameters.items():
        prefix, sep, name = key.rpartition(":")
        if not sep:
            out[key] = value
        elif notebook.name.startswith(prefix):
            out[name] = value
    return out


def with_settings(found: dict[str, Path], parameters: dict, settings: dict | None) -> dict:
    """``parameters`` with each of ``settings`` (helpers.settings: start, share, quant, ..., and the
    selection's languages, paradigms, drop_identical and draw_seed) for every notebook of the sweep
    that takes it (every setting: each notebook that scores or reads scores); an error before anything
    runs for a setting value that does not exist (given here or as a parameter) or a setting that no
    notebook of the sweep takes."""
    parameters = dict(parameters)
    for name, value in (settings or {}).items():
        takers = [path for path in found.values() if name in declared_parameters(path)]
        if not takers:
            raise ValueError(f"no notebook of this sweep ({', '.join(found)}) takes the setting {name}: the settings "
                             "apply to the notebooks that score (00, 02, 03, 06, 07) and choose the stored scores of "
                             "those that read them (04, 05, 08); the languages, paradigms, drop_identical and "
                             "draw_seed to those that score")
        parameters.update({f"{path.stem}:{name}": value for path in takers})
    for key, value in parameters.items():
        name = key.rpartition(":")[2]
        if name in TABLE:
            Settings(**{name: value})  # a one-line error naming the values
    return parameters


def plan(notebooks: list[str], models: list[str], datasets: list[str], parameters: dict | None = None,
         shards: int = 1, settings: dict | None = None, revisions=None) -> list[Job]:
    """Every (notebook, model, dataset[, shard]) job, each notebook over the datasets of ``datasets``
    it reads (:mod:`.notebook_datasets`: a variant it reads instead, or left out, said); an error
    before anything runs when a notebook lacks a parameter that its job would inject or a setting
    value does not exist.
    ``parameters`` keys may name their notebook (``"02:methods"``); ``settings`` (start, share,
    quant, ...) go to every notebook that takes them; ``shards`` > 1 gives each combination that
    many jobs, except the analyses (``ANALYSES``) of a sweep with notebooks that score: one job
    each, reading the whole run; a ``GATHERED`` notebook gets one more job per combination
    (``shards`` given, ``shard`` None) reading its shards' files as one run. ``revisions`` (a list
    or "step1000,step2000") runs each model at each revision as a model of its own,
    ``<model>@<revision>``, except in a notebook that reads them together (08_learning_curves:
    one job per model, given the list; :mod:`.revisions`)."""
    found = {nb: find_notebook(nb) for nb in notebooks}
    revisions = parse_revisions(revisions) if revisions not in (None, "", []) else None
    if revisions and ((settings or {}).get("revision") not in (None, "auto")
                      or any(k.rpartition(":")[2] == "revision" for k in parameters or {})):
        raise ValueError("give either --revisions (a sweep over revisions) or --revision (one revision), not both")
    parameters = with_settings(found, parameters or {}, settings)
    for key in parameters:
        prefix, sep, _ = key.rpartition(":")
        if sep and not any(path.name.startswith(prefix) for path in found.values()):
            raise ValueError(f"parameter {key!r} is for notebook {prefix!r}, which is not in this sweep "
                             f"({', '.join(notebooks)})")
    check_shards(None if shards == 1 else 1, shards)  # a clear error for shards < 1 or not a number
    scoring = any(path.stem not in ANALYSES for path in found.values())

    def cuts(nb: str) -> list[tuple[int | None, int]]:
        if shards == 1 or (scoring and found[nb].stem in ANALYSES):
            return [(None, 1)]
        return [(s, shards) for s in range(1, shards + 1)]

    per_notebook = {nb: models_for(declared_parameters(found[nb]), models, revisions) for nb in notebooks}
    reads = {nb: taken(found[nb].stem, datasets) for nb in notebooks}  # each notebook's datasets of those asked
    for line in dict.fromkeys(line for _, said in reads.values() for line in said):
        print(f"note: {line}", file=sys.stderr)
    jobs = [Job(found[nb], m, d, {**parameters_for(found[nb], parameters), **per_notebook[nb][1]}, s, n)
            for nb in notebooks for m, d in itertools.product(per_notebook[nb][0], reads[nb][0]) for s, n in cuts(nb)]
    jobs += [Job(j.notebook, j.model, j.dataset, {**j.parameters, "shards": shards}) for j in jobs
             if j.shards > 1 and j.shard == shards and j.notebook.stem in GATHERED]  # after all its shards
    for job in jobs:
        job.papermill_parameters()
    return jobs


def clean_partials(root: str | Path | None = None) -> list[Path]:
    """Remove the temporary files that killed writers left in the score store (``root``, default
    outputs/scores): those whose target file exists, i.e. was finished by a later run. A
    temporary file is never read as scores; one whose target is missing may still be written
    by a running job and stays until a run finishes its target."""
    root = Path(root) if root else paths.scores()
    removed = []
    for tmp in sorted(root.glob("*/*/.*.tmp")):
        match = TEMP_FILE.match(tmp.name)
        if match and (tmp.parent / match["target"]).is_file():
            tmp.unlink(missing_ok=True)
            removed.append(tmp)
    return removed
