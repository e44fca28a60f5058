"""One scoring notebook's run, set up in one call from its parameters.

``Run.from_parameters(globals())`` after a notebook's parameters cell (or with a sweep's or the
command line's parameters) builds, in this order and before anything is scored:

- the :class:`helpers.settings.Settings` of every setting among the parameters (a bad value stops here);
- the models (``model``: one, or a list loaded in turn), each checked before any loads, and the first's scorer;
- the selection (``dataset`` and ``limit``, and ``shard`` of ``shards``): the shard this run scores, or
  with ``shard`` None the whole run read from its shards' files (``DatasetSelection.for_shards``);
- the methods the first model's kind can run, and those it cannot with the reason (``not_applicable``);
- the tag its tables and figures are named by (a shard's tables cover its pairs).

``run.scores()`` scores (or finds) the run's methods and reads them back; ``run.each(work)`` runs
``work(scorer)`` for every model of the list, one loaded at a time.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import pandas as pd

from .. import methods as registry
from ..data.selection import DatasetSelection, select
from ..data.shards import file_tag
from ..engine.kinds import check_models, scorer_for
from ..methods.applicability import NOT_APPLICABLE_COLUMNS
from ..methods.options import refuse_unread, template_ids
from ..runner import run_methods
from ..selection_parser import parse_selection
from ..settings import TABLE, Settings
from ..store import load_files
from .model_list import each_model


@dataclass
class Run:
    """A notebook's run: its parameters, settings, models, the first model's scorer, selection,
    methods (and those not applicable) and its report tag."""

    parameters: dict
    settings: Settings
    models: list
    scorer: object
    selection: DatasetSelection | None
    methods: list[str]
    not_applicable: pd.DataFrame
    checked: list = field(default_factory=list, repr=False)  # each model checked (loads without checking again)
    taken: tuple = ()  # the settings among the notebook's parameters (recorded in every table's sidecar)

    @classmethod
    def from_parameters(cls, parameters: Mapping, *, methods: Sequence[str] | None = None, skip: Sequence[str] = (),
                        models: Sequence | None = None, selection: DatasetSelection | None = None) -> "Run":
        """The run of a notebook's ``parameters``: ``methods`` is the universe its ``methods``
        parameter picks from ("all": every one of them; None: the notebook has no such parameter);
        ``skip`` names parameters that are not the setting of the same name (06's and 07's ``seed``);
        ``models`` are more models to check before anything loads (03's Hu & Levy models);
        ``selection`` the whole run's items where the notebook picks them itself (06's paradigms),
        else ``dataset`` and ``limit`` select them; either is cut to ``shard`` of ``shards``."""
        settings = Settings.from_parameters(parameters, skip)  # a bad value stops here
        asked = registry.method_names(parameters["methods"], list(methods)) if methods is not None else []
        refuse_unread(settings, map(registry.get, asked), registry.METHODS.values())  # an unknown template too
        names = parse_selection(parameters["model"], what="model")
        checked = check_models(list(dict.fromkeys([*names, *(models or [])])), settings)  # before anything loads
        scorer = scorer_for(checked[0], settings)
        runnable, not_applicable = registry.applicable(asked, scorer) if asked else \
            ([], pd.DataFrame(columns=NOT_APPLICABLE_COLUMNS))
        if selection is None and "dataset" in parameters:
            selection = select(parameters["dataset"], parameters.get("limit"))
        if selection is not None:
            selection = selection.for_shards(parameters.get("shard"), parameters.get("shards", 1))
        taken = tuple(name for name in TABLE if name in parameters and name not in skip)
        return cls(dict(parameters), settings, names, scorer, selection, runnable, not_applicable, checked, taken)

    @property
    def templates(self) -> list:
        """The templates the run selects (every Ide et al. template under "auto")."""
        return list(template_ids(self.settings))

    @property
    def model(self) -> str:
        """The first model's name (its registry name, or the loaded model's)."""
        return self.scorer.loaded.name

    def tag(self, name: str | None = None, shard=None) -> str:
        """The name the run's tables and figures carry: ``name`` (default: the first model and the
        dataset), and the part of a run that scores a shard (default: the selection's shard)."""
        dataset = self.parameters.get("dataset")
        base = name or (f"{self.model}__{dataset}" if dataset else self.model)
        return file_tag(base, shard if shard is not None or self.selection is None else self.selection.shard)

    def config(self, **entries) -> dict:
        """A notebook's configuration (the sidecar of every table): the model and dataset asked
        for, the methods run, ``entries`` (the notebook's own parameters, e.g. the limit), every
        setting it takes as given, and the templates selected: no setting is added by hand."""
        head = {k: self.parameters[k] for k in ("model", "dataset") if k in self.parameters}
        recorded = self.settings.record(self.taken)
        if "templates" in recorded:
            recorded["templates"] = self.templates
        return {**head, "methods": self.methods, **entries, **recorded}

    def scores(self, methods: Sequence[str] | None = None, selection: DatasetSelection | None = None,
               token_columns: bool = True, **changes) -> pd.DataFrame:
        """The first model's scores of ``methods`` (default: the run's) on ``selection`` (default:
        the run's), scored or found in the store, under the run's settings with ``changes``."""
        return load_files(self.files(methods, selection, **changes), token_columns=token_columns)

    def files(self, methods: Sequence[str] | None = None, selection: DatasetSelection | None = None,
              **changes) -> list:
        """The score files :meth:`scores` reads (found or written)."""
        chosen = self.methods if methods is None else list(methods)
        if not chosen:
            return []
        return run_methods(self.scorer, self.selection if selection is None else selection, chosen,
                           self.settings.but(**changes))

    def each(self, work: Callable, models=None) -> list:
        """``work(scorer)`` for every model of ``models`` (default: the run's), one loaded at a
        time; the first model's scorer is reused."""
        return each_model(self.models if models is None else models, work, scorer=self.scorer,
                          settings=self.settings)
