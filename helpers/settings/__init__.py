"""The settings of a run: one object from a notebook's parameters (or the command line, or a
sweep) to the loader, the scorer and the methods, each field checked here once.

A notebook turns its parameters into one :class:`Settings` (a one-line error names the values
of a setting that does not exist); :func:`helpers.engine.kinds.check_models` checks the models
against it before anything loads, and :func:`helpers.engine.kinds.scorer_for` loads a model and
builds its scorer from it. The scorers take it too (``CausalScorer(loaded, settings)``) and
read the engine's fields; the loader reads :meth:`Settings.load_arguments`; the runner gives the
methods the run's :class:`Settings` (they read their own fields through
:class:`helpers.methods.base.PassContext`). ``"auto"`` has one meaning per field: the model's own value,
or the one default the field declares. Adding a setting is one field of :class:`Settings`, declared
with :func:`setting` (its values, what "auto" is, what the score files record, its check), and the
one place that reads it: every notebook that scores or reads scores, the sweep and the command line
take it by its name (:meth:`Settings.from_parameters`; no parameters cell gates one), and the reading
notebooks choose stored scores by it (:meth:`Settings.score_filter`). :data:`TABLE` (every setting)
and :data:`METHOD_SETTINGS` are read from the fields; a setting only some model kinds read names
them in its declaration (``kinds``).
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Mapping

from .checks import (AUTO, DTYPES, ORDER_AVERAGES, PASS_RULES, QUANTS, SHARE_MODES, START_CONVENTIONS, TOKEN, _as_given,
                     _corpus, _count, _device_map, _fewshot, _instruct, _max_memory, _outlines, _positive, _progress,
                     Recorded, _revision, _seed, _start, _templates, parse_max_memory)


def _choice(name: str, value) -> str:
    """``value`` if it is "auto" or one of the setting's values, else a one-line error naming them."""
    if value is None:  # papermill's None: full precision for quant, the default elsewhere
        return "none" if name == "quant" else AUTO
    if value == AUTO or value in TABLE[name][0]:
        return value
    raise ValueError(f"{name}={value!r} does not exist: use one of {', '.join(map(repr, (AUTO, *TABLE[name][0])))} "
                     f"('auto': {TABLE[name][1]})")


def method_setting(name: str, value):
    """A method setting (:data:`METHOD_SETTINGS`) as the methods use it: checked here (the one
    check, which the methods' option of the same name calls), "auto" and None its default."""
    value = _CHECKS[name](name, value)
    return METHOD_SETTINGS[name] if value == AUTO else value


def setting(values: tuple | str, auto: str, recorded: str, check=_choice, method: bool = False,
            method_default=None, record_as: str | None = None, kinds: tuple[str, ...] | None = None):
    """A field of :class:`Settings` that a notebook takes as a parameter (default "auto") and the
    command line as an option: ``values`` (its values besides "auto", or what a value is), what
    ``auto`` is, what the score files ``recorded``, its ``check`` ((name, value) -> the value as
    used, or a one-line error), for a setting the methods read (``method``) the value "auto"
    stands for (None: each model's own) and the configuration key under which the files of a
    method that reads it record its resolved value (``record_as``; None: recorded otherwise, e.g.
    through the template or the few-shot entries; for an engine setting, the key every file records it
    under where it is given: :meth:`Settings.engine_configuration`), and the model kinds that read it (``kinds``,
    :data:`helpers.engine.kinds`' names; None: every kind; the others refuse a value but "auto")."""
    return field(default=AUTO, metadata={"values": values, "auto": auto, "recorded": recorded, "check": check,
                                         "method": method, "method_default": method_default,
                                         "record_as": record_as, "kinds": kinds})


def placement(default, check):
    """A field of :class:`Settings` that places the weights or draws the progress bars (not a
    notebook parameter): its default and check."""
    return field(default=default, metadata={"check": check})


@dataclass(frozen=True)
class Settings:
    """One run's settings, checked; "auto" everywhere is each model's own setup (:data:`TABLE`).

    ``device_map``, ``max_memory`` (``{0: "20GiB", "cpu": "60GiB"}`` or ``"0=20GiB,cpu=60GiB"``) and
    ``offload_folder`` place the weights (:func:`helpers.models.load`, which checks them);
    ``progress`` draws the scorer's progress bars."""

    start: str = setting(tuple(START_CONVENTIONS), "the model's registry entry (bos-else-eos; none for Qwen2, "
                         "minicons for OPT, as the papers scored them)", "start_convention, start_token", _start)
    order_average: str = setting(ORDER_AVERAGES, "accuracy (Hu & Levy's)", "order_average (None where a task has "
                                 "one order)", method=True, method_default=ORDER_AVERAGES[0], record_as="order_average")
    syntaxgym_pass: str = setting(tuple(PASS_RULES), "directional (predictions with < or > decide, as the released "
                                  "results)", "syntaxgym_pass (SyntaxGym methods)", method=True,
                                  method_default="directional", record_as="syntaxgym_pass")
    instruct: str | bool = setting(("true", "false"), "the registry's entry; a model it does not list: its name "
                                   "(-Instruct, -it, -chat: instruct; -base, -pt: base), else whether its tokenizer "
                                   "ends a sequence at a chat turn's end (a chat template alone: base)", "instruct (prompts in the chat "
                                   "template)", _instruct, method=True)
    templates: tuple | str = setting("template ids (Ide et al.'s 1 to 5) and Hu & Levy prompt types", "every "
                                     "template of each family", "template_id, template_text (a file per template)",
                                     _templates, method=True)
    ab_seed: int | str = setting("a whole number", "42", "seed (A/B prompting: the acceptable sentence's slot)",
                                 _seed, method=True, method_default=42, record_as="seed")
    ab_orders: str = setting(("seeded", "both", "three"), "seeded (the acceptable sentence's slot drawn per pair "
                             "with ab_seed, as Ide et al.)", "ab_orders (A/B prompting; both: the acceptable sentence "
                             "first and last, averaged; three: those and the seeded slot, as Scheinberg et al. 2025)",
                             method=True, method_default="seeded", record_as="ab_orders")
    use_outlines: bool | str = setting(("true", "false"), "outlines decodes only where a letter's logit would not "
                                       "give its answer", "outlines (A/B prompting)", _outlines, method=True,
                                       method_default=AUTO, record_as="outlines")
    fewshot: object = setting("k solved examples before each item, or a FewShot", "0 (no examples)",
                              "fewshot_k, fewshot_source, fewshot_seed; files tagged <k>shot", _fewshot, method=True,
                              method_default=0)
    penlp_alpha: float | str = setting("a number > 0", "0.8 (Ide et al.'s; Lau et al. 2017's PenLP takes it as a "
                                       "parameter)", "penlp_alpha (PenLP methods)", _positive, method=True,
                                       method_default=0.8, record_as="penlp_alpha")
    unigram_corpus: object = setting("a text file or a Hugging Face dataset", "the mirror's corpora of the language",
                                     "unigram_source (SLOR, BF-unigram)", _corpus, method=True)
    share: str = setting(tuple(m for m in SHARE_MODES if m != AUTO), "the scorer's: on a causal LM per call the "
                         "mode its cost model (the model's shape times its device class's shipped costs) predicts "
                         "fastest; an encoder-decoder or masked LM runs each shared part once (prefix)",
                         "share, share_used")
    quant: str = setting(QUANTS, "the registry's (4bit for Ide et al.'s models)", "quant")
    dtype: str = setting(DTYPES, "bfloat16 on CUDA, float32 on the CPU", "dtype")
    token_budget: int | str = setting("tokens per forward pass", "the scorer's (32768 on a GPU; 2048 causal, 4096 "
                                      "encoder-decoder and masked on the CPU)", "token_budget", _count)
    revision: str = setting("a commit, branch or tag", "the registry's (the newest cached weights)",
                            "revision, weights", _revision)
    batch_size: int | str = setting("sequences per forward pass", "as many as the token budget holds", "-", _count)
    max_tokens: int | str = setting("tokens a sequence keeps, its start token included", "every token (no cut)",
                                    "max_tokens (where given)", _count, record_as="max_tokens", kinds=("causal",))
    masked_variant: str = setting(("pll", "within_word_l2r"), "pll: each token masked in turn (Salazar et al. 2020); "
                                  "within_word_l2r also masks the rest of its word (Kauf & Ivanova 2023)",
                                  "start_token (masked:<variant>;...)", kinds=("masked",))
    device_map: object = placement(AUTO, _device_map)
    max_memory: dict | None = placement(None, _max_memory)
    offload_folder: str | None = placement(None, _as_given)
    progress: bool = placement(True, _progress)

    def __post_init__(self):
        for f in fields(self):
            object.__setattr__(self, f.name, f.metadata["check"](f.name, getattr(self, f.name)))

    def start_for(self, registered: str) -> str:
        """The start convention (or literal token) to use for a model whose registry entry says
        ``registered``: that, under "auto"."""
        if self.start == AUTO:
            return registered
        return self.start.removeprefix(TOKEN) if self.start.startswith(TOKEN) else self.start

    def given(self, name: str):
        """The setting's value, None where it is "auto" (the scorer's or the model's own)."""
        value = getattr(self, name)
        return None if value == AUTO else value

    def but(self, **changes) -> "Settings":
        """These settings with ``changes`` (checked as any); an unknown name is an error listing them."""
        unknown = sorted(set(changes) - {f.name for f in fields(self)})
        if unknown:
            raise ValueError(f"unknown setting{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
                             f"the settings are: {', '.join(f.name for f in fields(self))}")
        return replace(self, **changes)

    @classmethod
    def from_parameters(cls, parameters: Mapping) -> "Settings":
        """The settings among a notebook's parameters (``globals()`` after its parameters cell, with
        papermill's injected ones), a sweep's or the command line's: every field's name, the
        settings of :data:`TABLE` and the placement (a setting's name means it in every notebook)."""
        return cls(**{k: v for k, v in parameters.items() if k in NAMES})

    def given_values(self) -> dict:
        """Every setting of :data:`TABLE` as given ("auto" kept, defaults included), for what a
        notebook ran with (its first line and every table's sidecar)."""
        return {name: getattr(self, name) for name in TABLE}

    def described(self) -> str:
        """One line of the settings given (not "auto"), for a notebook's first line."""
        given = {name: value for name, value in self.given_values().items() if value != AUTO}
        return ("settings: " + ", ".join(f"{k}={v!r}" for k, v in given.items()) + "; the others 'auto'") if given \
            else "settings: all 'auto' (each model's own)"

    def loading(self) -> dict:
        """The loading settings that are not "auto" (those a loaded model could not take)."""
        given = {k: getattr(self, k) for k in ("quant", "dtype", "revision") if getattr(self, k) != AUTO}
        placed = {"device_map": self.device_map} if self.device_map != AUTO else {}
        return {**given, **placed, **{k: v for k in ("max_memory", "offload_folder")
                                       if (v := getattr(self, k)) is not None}}

    def load_arguments(self) -> dict:
        """:func:`helpers.models.load`'s arguments: quant ("auto": the registry's; "none": full
        precision), dtype (a name; None: the device's), revision (None: the registry's) and placement."""
        return {"quant": None if self.quant == "none" else self.quant,
                "dtype": None if self.dtype == AUTO else self.dtype,
                "revision": None if self.revision == AUTO else self.revision,
                "device_map": self.device_map, "max_memory": self.max_memory, "offload_folder": self.offload_folder}

    def engine_configuration(self) -> dict:
        """The engine settings that change scores and are given (not "auto"), under the keys every
        score file's configuration records them by (:data:`ENGINE_RECORDED`)."""
        return {ENGINE_RECORDED[name]: getattr(self, name) for name in ENGINE_RECORDED if getattr(self, name) != AUTO}

    def score_filter(self) -> dict:
        """What an analysis reading stored scores asks of their recorded configuration (a
        ``where`` of :func:`helpers.store.load_scores`), for every setting given (not "auto") that
        tells stored scores apart: the quantization, dtype, start convention, revision and masked
        variant; each method setting under the key its methods' files record it by
        (:data:`RECORDED_AS`; files of methods that do not read it match any); instruct as the
        prompts' style, the templates, the few-shot k and the unigram corpus. A value may be a
        test of the recorded value (a callable). The settings of :data:`helpers.settings.stored.UNSTORED` choose nothing."""
        where = {RECORDED_AS[name]: method_setting(name, getattr(self, name)) for name in RECORDED_AS
                 if getattr(self, name) != AUTO}
        if self.quant != AUTO:
            where["quant"] = None if self.quant == "none" else self.quant
        if self.dtype != AUTO:
            where["dtype"] = self.dtype
        if self.start.startswith(TOKEN):
            where.update(start_convention="token", start_token=self.start.removeprefix(TOKEN))
        elif self.start != AUTO:
            where["start_convention"] = self.start
        if self.revision != AUTO:
            where["revision"] = self.revision
        where.update(self.engine_configuration())
        if self.instruct != AUTO:
            where["prompt_style"] = "chat" if self.instruct else "base"
        if self.masked_variant != AUTO:
            where["start_token"] = Recorded(f"masked_variant={self.masked_variant}",
                                             lambda v, prefix=f"masked:{self.masked_variant};": str(v).startswith(prefix))
        if self.templates != AUTO:
            where["template_id"] = Recorded(f"templates={list(self.templates)}",
                                             lambda v, ids={str(t) for t in self.templates}: str(v) in ids)
        if self.fewshot != AUTO:
            where["fewshot_k"] = getattr(self.fewshot, "k", self.fewshot) or None
        if self.unigram_corpus != AUTO:
            where["unigram_source"] = Recorded(f"unigram_corpus={self.unigram_corpus}",
                                                lambda v, name=str(self.unigram_corpus): name in str(v))
        return where


# name -> (its values besides "auto", or what a value is; what "auto" is; what the score files record)
TABLE: dict[str, tuple[tuple | str, str, str]] = {
    f.name: (f.metadata["values"], f.metadata["auto"], f.metadata["recorded"]) for f in fields(Settings)
    if "values" in f.metadata}
NAMES = tuple(f.name for f in fields(Settings))  # every setting and the placement, as notebooks take them
# setting -> the model kinds that read it (the settings that every kind reads are not listed)
KINDS = {f.name: f.metadata["kinds"] for f in fields(Settings) if f.metadata.get("kinds")}
# the settings given to the methods, with the value "auto" stands for; the others load and score
METHOD_SETTINGS: dict[str, object] = {f.name: f.metadata["method_default"] for f in fields(Settings)
                                      if f.metadata.get("method")}
# the settings a scorer is built under (loading, placement, engine): every one but the methods' and progress
SCORER_SETTINGS = tuple(n for n in NAMES if n not in METHOD_SETTINGS and n != "progress")
_CHECKS = {f.name: f.metadata["check"] for f in fields(Settings)}


# The settings that tell apart stored scores of one model, as score files record them: an
# analysis table never mixes two (helpers.store.load_scores).
STORED_AS = {"quant": "quant", "dtype": "dtype", "start": "start_convention", "revision": "revision"}
# method setting -> the configuration key under which the files of each method that reads it record
# its resolved value (helpers.methods.base.Method.config): those files' hash changes with it, no other's
RECORDED_AS = {f.name: f.metadata["record_as"] for f in fields(Settings) if f.metadata.get("record_as")
               and f.metadata.get("method")}
# engine setting -> the configuration key under which every score file records it where it is given (not
# "auto": files scored without it keep their hash); its files' hash changes with it
ENGINE_RECORDED = {f.name: f.metadata["record_as"] for f in fields(Settings) if f.metadata.get("record_as")
                   and not f.metadata.get("method")}
# every configuration key of a score file that a setting decides -> that setting: one (model, method,
# template) of a table is read under one value of each (helpers.store.load_scores)
SETTING_KEYS = {**{key: name for name, key in STORED_AS.items()}, **{key: name for name, key in RECORDED_AS.items()},
                **{key: name for name, key in ENGINE_RECORDED.items()},
                "start_token": "start (or masked_variant)", "prompt_style": "instruct", "fewshot_k": "fewshot",
                "fewshot_source": "fewshot", "fewshot_seed": "fewshot", "unigram_source": "unigram_corpus"}


def scorer_arguments(options: dict, base: Settings | None = None) -> dict:
    """A scorer's keyword arguments from ``options`` that mix setting names with the scorer kind's
    own arguments (a benchmark's or test's table of modes, e.g. ``{"share": "tree", "pack_min_stem": 0}``):
    ``settings`` (``base`` with the settings among them) and the others as they are."""
    names = {f.name for f in fields(Settings)}
    own = {k: v for k, v in options.items() if k in names}
    return {"settings": (base or Settings()).but(**own), **{k: v for k, v in options.items() if k not in names}}


__all__ = ["AUTO", "DTYPES", "METHOD_SETTINGS", "ORDER_AVERAGES", "PASS_RULES", "QUANTS", "RECORDED_AS", "ENGINE_RECORDED", "KINDS", "NAMES",
           "SETTING_KEYS", "SHARE_MODES", "START_CONVENTIONS", "TABLE", "Settings", "parse_max_memory",
           "scorer_arguments"]
