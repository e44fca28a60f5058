"""The scorer of each kind of model, and the models of a run checked before anything loads.

A model's kind is decided in :mod:`helpers.models.kinds` (``LoadedModel.kind``); its scorer is
the class the kind names in the engine module of the kind's name (``helpers/engine/<kind>.py``), so
a new kind is that module and one row of :data:`helpers.models.kinds.MODEL_KINDS`. :func:`check_models` checks
models against a run's :class:`~helpers.settings.Settings` before anything loads, and
:func:`scorer_for` loads one and builds its scorer under them.
"""
from __future__ import annotations

from importlib import import_module

from .interface import Scorer
from ..models import Loadable, LoadedModel, check_loadable, load
from ..models.kinds import MODEL_KINDS
from ..settings.lists import parse_list
from ..settings import AUTO, KINDS, Settings


SCORER_KINDS: dict[str, type] = {k.name: getattr(import_module(f"{__package__}.{k.name}"), k.scorer)
                                 for k in MODEL_KINDS}


def unread_by_kind(settings: Settings, kind: str, name: str) -> str | None:
    """Why a setting given (not "auto") cannot apply to model ``name`` of ``kind``: a setting that
    only other kinds read (:data:`helpers.settings.KINDS`, declared with the setting), None else."""
    for setting, kinds in KINDS.items():
        if kind not in kinds and getattr(settings, setting) != AUTO:
            return (f"{setting}={getattr(settings, setting)!r} applies to {' and '.join(kinds)} models only, and {name} "
                    f"is a {kind} model: leave it 'auto' (its scores would not depend on it)")
    return None


def check_models(models, settings: Settings | None = None) -> list[Loadable | LoadedModel]:
    """For each model (a name, a list or "a,b", or a LoadedModel or Loadable): the errors loading would give,
    before any weights are read or anything is computed: an unknown model, a revision of a local
    model or one not in the local cache offline, a quantization this machine cannot run, a start
    convention the model's kind does not take. Returns each model checked (a
    :class:`~helpers.models.Loadable`, which loads without checking again, or the LoadedModel given)."""
    settings = settings or Settings()
    out = []
    one = isinstance(models, (LoadedModel, Loadable))
    for model in ([models] if one else parse_list(models, what="model")):
        if not isinstance(model, (LoadedModel, Loadable)):
            arguments = settings.load_arguments()
            model = check_loadable(model, arguments["quant"], arguments["revision"])
        if refused := unread_by_kind(settings, model.kind, model.spec.name) or \
                SCORER_KINDS[model.kind].refuses(settings, model.spec.name):  # each kind's own refusal
            raise ValueError(refused)
        out.append(model)
    return out


def scorer_for(model, settings: Settings | None = None, **kind_options) -> Scorer:
    """The scorer of ``model`` under ``settings`` (default: every setting "auto"): a
    :class:`LoadedModel`, or a registry name, folder or Hugging Face id checked
    (:func:`check_models`, once: a :class:`~helpers.models.Loadable` it returned is not checked
    again) and loaded with the settings' loading part. ``kind_options``
    go to the scorer of the model's kind (e.g. ``source=`` of an encoder-decoder, ``variant=`` of
    a masked LM)."""
    settings = settings or Settings()
    if isinstance(model, LoadedModel):
        if settings.loading():
            raise ValueError(f"{', '.join(settings.loading())} apply to loading, but {model.name} is loaded already: "
                             "pass the model's name")
        loaded = model
    else:
        checked = check_models(model, settings)
        if len(checked) != 1:
            raise ValueError(f"a scorer is built for one model, got {len(checked)}: {model!r}")
        arguments = {k: v for k, v in settings.load_arguments().items() if k not in ("quant", "revision")}
        loaded = load(checked[0], **arguments)  # quant and revision were checked with it
    return SCORER_KINDS[loaded.kind](loaded, settings, **kind_options)
