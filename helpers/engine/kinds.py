"""Which scorer scores a model: one line per kind of model, and :func:`scorer_for`.

A new kind of scorer is one module implementing :class:`helpers.engine.interface.Scorer`
and one line of :data:`SCORER_KINDS`, keyed by :attr:`helpers.models.LoadedModel.kind`.
"""
from __future__ import annotations

from .causal import CausalScorer
from .interface import Scorer
from .masked import MaskedScorer
from .seq2seq import Seq2SeqScorer
from ..models import LoadedModel, load

SCORER_KINDS: dict[str, type] = {
    "causal": CausalScorer,  # decoder-only LMs (GPT-2, Llama, Qwen, Mixtral, ...)
    "seq2seq": Seq2SeqScorer,  # encoder-decoders (T5, Flan-T5)
    "masked": MaskedScorer,  # masked LMs (BERT, RoBERTa, DeBERTa, LTG-BERT): pseudo-log-likelihood
}

LOAD_OPTIONS = ("quant", "dtype", "device_map", "max_memory", "offload_folder", "revision")


def scorer_class(loaded: LoadedModel) -> type:
    """The scorer class for ``loaded``'s kind, or a clear error for a kind without one."""
    if loaded.kind not in SCORER_KINDS:
        raise TypeError(f"{loaded.name} is a {loaded.kind!r} model; the engine scores {', '.join(SCORER_KINDS)} models")
    return SCORER_KINDS[loaded.kind]


def scorer_for(model, **kwargs) -> Scorer:
    """The scorer of ``model``: a :class:`LoadedModel`, or a registry name, folder or Hugging
    Face id (or a :class:`~helpers.models.Loadable`, checked already) loaded with the load options
    among ``kwargs`` (quant, dtype, device_map, max_memory, offload_folder, revision); the other
    ``kwargs`` go to the scorer."""
    load_kw = {k: kwargs.pop(k) for k in LOAD_OPTIONS if k in kwargs}
    if isinstance(model, LoadedModel):
        if load_kw:
            raise TypeError(f"{', '.join(load_kw)} apply to loading; {model.name} is loaded already")
        loaded = model
    else:
        loaded = load(model, **load_kw)
    return scorer_class(loaded)(loaded, **kwargs)
