"""The kinds of model the toolkit scores, in one table: how a kind is recognised from a model's
configuration and registry entry, the transformers class that loads it, and the scorer class
that scores it, named as a class of the engine module of the kind's name
(``helpers/engine/<kind>.py``; :mod:`helpers.engine.kinds` imports it by name, so this floor
never imports the engine).

Adding a scorer kind is one module ``helpers/engine/<kind>.py`` and one row of :data:`MODEL_KINDS`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoModelForSeq2SeqLM


def is_masked_lm(config) -> bool:
    """A masked LM's configuration: not a decoder (``is_decoder`` False), not an encoder-decoder, and
    saved from a ``...ForMaskedLM`` class (BERT, RoBERTa, DeBERTa, LTG-BERT)."""
    if getattr(config, "is_decoder", False) or getattr(config, "is_encoder_decoder", False):
        return False
    return any(str(a).endswith("ForMaskedLM") for a in (getattr(config, "architectures", None) or ()))


@dataclass(frozen=True)
class ModelKind:
    """One kind: its ``name`` (also its engine module's), the transformers ``auto_class`` that loads
    it, its ``scorer`` (a class of that module), ``recognises(spec, config, model_class)`` and what
    models it covers."""

    name: str
    auto_class: type
    scorer: str
    recognises: Callable[..., bool]
    covers: str


# the first kind that recognises a model is its kind; the last recognises every model
MODEL_KINDS: tuple[ModelKind, ...] = (
    ModelKind("seq2seq", AutoModelForSeq2SeqLM, "Seq2SeqScorer",
              lambda spec, config, cls: getattr(config, "is_encoder_decoder", False),
              "encoder-decoders (T5, Flan-T5)"),
    ModelKind("masked", AutoModelForMaskedLM, "MaskedScorer",
              lambda spec, config, cls: spec.architecture == "masked" or is_masked_lm(config) or cls.endswith("ForMaskedLM"),
              "masked LMs (BERT, RoBERTa, DeBERTa, LTG-BERT): pseudo-log-likelihood"),
    ModelKind("causal", AutoModelForCausalLM, "CausalScorer", lambda spec, config, cls: True,
              "decoder-only LMs (GPT-2, Llama, Qwen, Mixtral, ...)"),
)
AUTO_CLASSES = {k.name: k.auto_class for k in MODEL_KINDS}


def model_kind(spec, config, model_class: str = "") -> str:
    """The kind of a model (a :class:`~helpers.models.registry.ModelSpec`, its configuration and,
    once loaded, its class name), decided here only: the first of :data:`MODEL_KINDS` that
    recognises it."""
    return next(k.name for k in MODEL_KINDS if k.recognises(spec, config, model_class))
