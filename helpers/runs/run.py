"""The one door to scoring: a run of the methods over models, set up from a notebook's parameters.

``Run.from_parameters(globals())`` after a notebook's parameters cell (or with a sweep's or the
command line's parameters) builds, in this order and before anything is scored:

- the :class:`helpers.settings.Settings` of every setting among the parameters (a bad value stops here);
- the models (``model``: one, or a list loaded in turn), each checked before any loads, and the first's scorer;
- the selection (``dataset`` and ``limit``, and ``shard`` of ``shards``): the shard this run scores, or
  with ``shard`` None the whole run read from its shards' files (``DatasetSelection.for_shards``), and
  with ``explanations`` (a file: paradigm -> text) each pair after its paradigm's explanation
  (:mod:`.explanations`, grammar prompting);
- the methods the first model's kind can run, and those it cannot with the reason (``not_applicable``);
- the tag its tables and figures are named by (a shard's tables cover its pairs).

Every scoring notebook (so the sweep's jobs), the precision check and the benchmarks score through
:meth:`Run.files` (one :class:`Job`) or :meth:`Run.files_each` (several jobs in one pass over the
models): it owns the model loop (each model loaded once, released before the next), the split of
the methods a model's kind cannot run, and the call of the runner. What a kind of run puts around
the methods comes from builders that return a selection and a :class:`helpers.runner.RunSetup`
(:mod:`.primed`, :mod:`.hu_levy`, :mod:`.across_models`, :mod:`.precision`,
:mod:`.explanations`); settings change only through a job's ``changes``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

import pandas as pd

from .. import methods as registry
from ..analysis.cross_model import models_tag
from ..data.picking import PICKS, choose, pick_tag, picks
from ..data.selection import DatasetSelection
from ..data.shards import file_tag
from .deferred import deferred_scorer
from ..engine.kinds import check_models
from ..methods.applicability import NOT_APPLICABLE_COLUMNS
from ..methods.setting_readers import refuse_unread, template_ids
from ..parameters import check_injected
from ..runner import RunSetup, refuse_unserved, run_methods, served
from ..settings import METHOD_SETTINGS, Settings
from ..settings.lists import parse_list
from ..store import ScoreStore, load_files
from .endings import endings_input
from .explanations import explained_input
from .model_list import each_model

# a job's input: a selection, or a function of the model's scorer giving (selection, setup) for
# inputs that depend on the model (06's prefixes, counted in each model's own tokens)
Input = DatasetSelection | Callable[[object], tuple[DatasetSelection, RunSetup]]


@dataclass(frozen=True)
class Job:
    """One scoring of a run: ``methods`` (None: the run's) on ``selection`` (None: the run's) with
    ``setup`` around them, under the run's settings with ``changes``."""

    methods: Sequence[str] | None = None
    selection: Input | None = None
    setup: RunSetup | None = None
    changes: Mapping = field(default_factory=dict)


class ScoreFiles(list):
    """Score files (found or written), in model order; ``not_applicable`` (model, method,
    not_applicable: the reason) lists the methods a model's kind cannot run, left out; ``by_model``
    each model's files and ``records`` its scorer's record after its work (what it ran)."""

    def __init__(self, files=()):
        super().__init__(files)
        self.not_applicable = pd.DataFrame(columns=NOT_APPLICABLE_COLUMNS)
        self.by_model: dict[str, list[Path]] = {}
        self.records: dict[str, dict] = {}


def model_major(parts: Sequence[ScoreFiles]) -> list[Path]:
    """The files of several jobs of one pass, model by model (each model's in job order)."""
    models = dict.fromkeys(m for part in parts for m in part.by_model)
    return [f for m in models for part in parts for f in part.by_model.get(m, [])]


@dataclass
class Run:
    """A run: its parameters, settings, models, the first model's scorer (its model loaded when
    first asked to compute), selection, methods (and those not applicable) and its report tag."""

    parameters: dict
    settings: Settings
    models: list
    selection: DatasetSelection | None = None
    methods: list[str] = field(default_factory=list)
    not_applicable: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=NOT_APPLICABLE_COLUMNS))
    checked: list = field(default_factory=list, repr=False)  # each model checked (loads without checking again)
    built: object = field(default=None, repr=False)  # the first model's scorer, once loaded
    setup: RunSetup | None = None  # what the run puts around its methods on its own selection (explanations)

    @classmethod
    def from_parameters(cls, parameters: Mapping, *, methods: Sequence[str] | None = None,
                        models: Sequence | None = None, selection: DatasetSelection | None = None) -> "Run":
        """The run of a notebook's ``parameters`` (every setting of the table among them, whether its
        parameters cell names it or papermill injected it): ``methods`` is the universe its ``methods``
        parameter picks from ("all": every one of them; None: the notebook has no such parameter);
        ``models`` are more models to check before anything loads (03's Hu & Levy models);
        ``selection`` the whole run's items where the notebook picks them itself (06's paradigms),
        else ``dataset`` and ``limit`` select them; either is cut to ``shard`` of ``shards``."""
        check_injected(parameters)  # a misspelt papermill parameter stops here
        settings = Settings.from_parameters(parameters)  # a bad value stops here
        print(settings.described())  # what the notebook runs with, first
        asked = registry.method_names(parameters["methods"], list(methods)) if methods is not None else []
        refuse_unread(settings, map(registry.get, asked), registry.METHODS.values())  # an unknown template too
        names = parse_list(parameters["model"], what="model")
        checked = check_models(list(dict.fromkeys([*names, *(models or [])])), settings)  # before anything loads
        if selection is None and "dataset" in parameters:
            selection = choose(parameters["dataset"], parameters.get("limit"), **picks(parameters))
        if selection is not None:
            selection = selection.for_shards(parameters.get("shard"), parameters.get("shards", 1))
        setup = None
        if parameters.get("explanations") and parameters.get("endings"):
            raise ValueError("explanations and endings=True both put a text before each item: choose one")
        if parameters.get("explanations") and selection is not None:  # grammar prompting: each paradigm explained
            selection, setup = explained_input(selection, parameters["explanations"])
        if parameters.get("endings") and selection is not None:  # BHS: each ending after its context
            selection, setup = endings_input(selection)
        if setup is not None and setup.serves is not None and parameters.get("methods") == "all":
            asked = served(setup, asked)  # "all": those it can serve
            print(f"{setup.tag}: methods 'all' are those it can serve: {', '.join(asked)}")
        if setup is not None and asked:
            refuse_unserved(setup, asked)  # before anything loads
        run = cls(dict(parameters), settings, names, selection, checked=checked, setup=setup)
        if asked:
            run.methods, run.not_applicable = registry.applicable(asked, run.scorer)
        return run

    @classmethod
    def of(cls, model, settings: Settings | Mapping | None = None, *, selection: DatasetSelection | None = None,
           methods: Sequence[str] = ()) -> "Run":
        """A run outside a notebook: ``model`` a scorer already built (its settings are the run's),
        or model names (one, a list or "a,b"), checked now and loaded when first needed, under
        ``settings`` (or a dict of them)."""
        if hasattr(model, "score") and hasattr(model, "settings"):
            base = model.settings if settings is None else _settings(settings, model.settings)
            return cls({}, base, [model.name], selection, list(methods), built=model)
        base = _settings(settings, Settings())
        names = parse_list(model, what="model")
        return cls({}, base, names, selection, list(methods), checked=check_models(names, base))

    @property
    def scorer(self):
        """The first model's scorer, its model loaded when first asked to compute
        (:class:`helpers.runs.deferred.DeferredScorer`: a run whose files are stored loads none)."""
        if self.built is None:
            self.built = deferred_scorer(self.checked[0] if self.checked else self.models[0], self.settings)
        return self.built

    @property
    def templates(self) -> list:
        """The templates the run selects (every Ide et al. template under "auto")."""
        return list(template_ids(self.settings))

    @property
    def model(self) -> str:
        """The first model's name (its registry name, or the loaded model's)."""
        return self.scorer.name

    def tag(self, name: str | None = None, shard=None, *, models=None) -> str:
        """The name the run's tables and figures carry: ``name`` (default: the first model, or every
        model of ``models`` as "a+b", and the dataset), and the part of a run that scores a shard
        (default: the selection's shard)."""
        dataset = self.selection.name if isinstance(self.selection, DatasetSelection) else self.parameters.get("dataset")
        model = models_tag(models) if models is not None and len(models) > 1 else self.model
        base = name or (f"{model}__{dataset}" if dataset else model)  # a variant chosen (blimp_hu2025): its name
        if self.setup is not None and self.setup.tag and name is None:  # e.g. explained runs' tables apart
            base = f"{base}__{self.setup.tag}"
        if self.selection is not None and name is None:  # a run of some languages or paradigms: its tables apart
            base += pick_tag(self.selection)
        return file_tag(base, shard if shard is not None or self.selection is None else self.selection.shard)

    def config(self, **entries) -> dict:
        """A notebook's configuration (the sidecar of every table): the model and dataset asked
        for, the methods run, ``entries`` (the notebook's own parameters, e.g. the limit), the languages,
        paradigms, drop_identical and draw seed asked for (and those kept), every setting as given
        (defaults included), and the templates selected: no setting is added by hand."""
        head = {k: self.parameters[k] for k in ("model", "dataset") if k in self.parameters}
        recorded = {**self.settings.given_values(), "templates": self.templates}
        around = self.setup.configuration if self.setup is not None else {}
        picked = {k: self.parameters[k] for k in PICKS if k in self.parameters}  # as asked; the files: as kept
        if isinstance(self.selection, DatasetSelection):
            picked |= {f"kept_{k}": v for k, v in self.selection.config().items() if k in ("languages", "paradigms")}
        return {**head, "methods": self.methods, **entries, **picked, **recorded, **around}

    def scores(self, methods: Sequence[str] | None = None, selection: Input | None = None,
               token_columns: bool = True, **changes) -> pd.DataFrame:
        """The first model's scores of ``methods`` (default: the run's) on ``selection`` (default:
        the run's), scored or found in the store, under the run's settings with ``changes``."""
        return load_files(self.files(methods, selection, **changes), token_columns=token_columns)

    def files(self, methods: Sequence[str] | None = None, selection: Input | None = None,
              setup: RunSetup | None = None, *, models=None, store: ScoreStore | None = None,
              **changes) -> ScoreFiles:
        """The score files (found or written) of ``methods`` (default: the run's) on ``selection``
        (default: the run's) with ``setup``, for every model of ``models`` (default: the first),
        under the run's settings with ``changes`` (e.g. ``templates=[1]``, ``ab_seed=7``)."""
        return self.files_each([Job(methods, selection, setup, changes)], models=models, store=store)[0]

    def files_each(self, jobs: Sequence[Job], *, models=None, store: ScoreStore | None = None) -> list[ScoreFiles]:
        """Every job for every model of ``models`` (default: the first), one model loaded at a time
        (the run's own scorer serves its model where the jobs change no engine or loading setting);
        per job, the score files of all models in model order, with the methods a model's kind
        cannot run (left out) and each model's record."""
        settings = [self.settings.but(**job.changes) for job in jobs]
        engine = {name for job in jobs for name in job.changes if name not in METHOD_SETTINGS}
        if engine and len({repr({k: getattr(s, k) for k in engine}) for s in settings}) > 1:
            raise ValueError(f"the jobs of one pass over the models load them one way: give {', '.join(sorted(engine))} "
                             "the same value in every job (or run them apart)")
        out = [ScoreFiles() for _ in jobs]
        refused: list[list[pd.DataFrame]] = [[] for _ in jobs]

        def work(scorer) -> None:
            for job, job_settings, files, left in zip(jobs, settings, out, refused):
                chosen = self.methods if job.methods is None else registry.method_names(job.methods)
                if not chosen:
                    continue
                runnable, left_out = registry.applicable(chosen, scorer)
                if len(left_out):
                    left.append(left_out)
                selection, setup = job.selection, job.setup
                if callable(selection):
                    selection, setup = selection(scorer)
                elif selection is None and setup is None:  # the run's own selection, with what it puts around it
                    setup = self.setup
                found = run_methods(scorer, self.selection if selection is None else selection, runnable,
                                    job_settings, setup=setup, store=store) if runnable else []
                files += found
                files.by_model.setdefault(scorer.name, []).extend(found)
                files.records[scorer.name] = scorer.record()

        loading = settings[0] if engine else self.settings
        self.each(work, self.models[:1] if models is None else models, loading)
        for files, left in zip(out, refused):
            if left:
                files.not_applicable = pd.concat(left, ignore_index=True)
        return out

    def each(self, work: Callable, models=None, settings: Settings | None = None) -> list:
        """``work(scorer)`` for every model of ``models`` (default: the run's), one loaded at a
        time under ``settings`` (default: the run's); the run's own scorer serves its model under
        the run's settings."""
        settings = self.settings if settings is None else settings
        own = self.built if settings == self.settings else None
        return each_model(self.models if models is None else models, work, scorer=own, settings=settings)


def _settings(given: Settings | Mapping, base: Settings) -> Settings:
    """``given``, or ``base`` with the changes of a mapping (an unknown name is an error listing them)."""
    return given if isinstance(given, Settings) else base.but(**dict(given))


__all__ = ["Job", "Run", "ScoreFiles", "model_major"]
