"""The papers' conventions and the engine's settings as switches, one name each: the same in
every scoring notebook's parameters, the sweep (``python -m helpers sweep --start none``, or
``-p start=none``) and the command line (``python -m helpers score --start none``), and
recorded in every score file. ``"auto"`` is the model's registry default
(:class:`helpers.models.ModelSpec`: the paper's precision and start convention).

A notebook turns its parameters into a :class:`Switches` in one call, which checks every value
(a one-line error naming the values) and, per model, that it can run here before anything
loads or is computed (:meth:`Switches.check`); :meth:`Switches.scorer` loads the model with
the load switches and builds its scorer with the scorer switches, and
:meth:`Switches.method_options` gives the method options (``order_average``).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from ..engine.encoding import START_CONVENTIONS
from ..engine.interface import SHARE_MODES, Scorer
from ..engine.kinds import scorer_for
from ..methods.hu_levy import ORDER_AVERAGES
from ..methods.syntaxgym_pass import PASS_RULES
from ..models import Loadable, LoadedModel, check_loadable
from ..models.placement import DTYPES
from ..selection_parser import parse_selection

AUTO = "auto"
METHOD_SWITCHES = ("order_average", "syntaxgym_pass")  # method options; the others load and score
QUANTS = ("none", "4bit", "8bit")
# name -> (its values besides "auto", or what a value is; what "auto" is; what the score files record)
SWITCHES: dict[str, tuple[tuple | str, str, str]] = {
    "start": (tuple(START_CONVENTIONS), "the model's registry default (bos-else-eos; none for Qwen2, minicons "
              "for OPT, as the papers scored them)", "start_convention, start_token"),
    "order_average": (ORDER_AVERAGES, "accuracy (Hu & Levy's)", "order_average (None where a task has one order)"),
    "syntaxgym_pass": (tuple(PASS_RULES), "directional (predictions with < or > decide, as the released results)",
                       "syntaxgym_pass (SyntaxGym methods)"),
    "share": (tuple(m for m in SHARE_MODES if m != AUTO), "the causal scorer's auto: per call the mode its "
              "cost model, timed on the device, predicts fastest (prefix on an encoder-decoder)", "share, share_used"),
    "quant": (QUANTS, "the registry's (4bit for Ide et al.'s models)", "quant"),
    "dtype": (tuple(DTYPES), "bfloat16 on CUDA, float32 on the CPU", "dtype"),
    "token_budget": ("tokens per forward pass",
                     "the scorer's (32768 on a GPU; 2048 causal, 4096 encoder-decoder on the CPU)", "token_budget"),
    "revision": ("a commit, branch or tag", "the registry's (the newest cached weights)", "revision, weights"),
}


def _choice(name: str, value) -> str:
    """``value`` if it is "auto" or one of the switch's values, else a one-line error naming them."""
    if value is None:  # papermill's None: full precision for quant, the default elsewhere
        return "none" if name == "quant" else AUTO
    if value == AUTO or value in SWITCHES[name][0]:
        return value
    raise ValueError(f"{name}={value!r} does not exist: use one of {', '.join(map(repr, (AUTO, *SWITCHES[name][0])))} "
                     f"('auto': {SWITCHES[name][1]})")


def _budget(value):
    if value in (None, AUTO):
        return AUTO
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"token_budget={value!r} is not a number of tokens: use 'auto' or a whole number > 0 "
                         "(tokens per forward pass)")
    return value


def _revision(value):
    if value in (None, AUTO):
        return AUTO
    if not isinstance(value, str) or not value.strip() or value.strip() != value:
        raise ValueError(f"revision={value!r} is not a revision: use 'auto' (the registry's) or a commit hash, "
                         "branch or tag of the model's Hugging Face repository")
    return value


@dataclass(frozen=True)
class Switches:
    """The switches of one run, checked; "auto" everywhere is the registry's setup of each model."""

    start: str = AUTO
    order_average: str = AUTO
    syntaxgym_pass: str = AUTO
    share: str = AUTO
    quant: str | None = AUTO
    dtype: str = AUTO
    token_budget: int | str = AUTO
    revision: str | None = AUTO

    def __post_init__(self):
        for name in ("start", *METHOD_SWITCHES, "share", "quant", "dtype"):
            object.__setattr__(self, name, _choice(name, getattr(self, name)))
        object.__setattr__(self, "token_budget", _budget(self.token_budget))
        object.__setattr__(self, "revision", _revision(self.revision))

    def record(self) -> dict:
        """The switches as given ("auto" kept), for a notebook's configuration."""
        return asdict(self)

    def load_options(self) -> dict:
        """:func:`helpers.models.load`'s arguments of the switches that are not "auto"."""
        out = {}
        if self.quant != AUTO:
            out["quant"] = None if self.quant == "none" else self.quant
        if self.dtype != AUTO:
            out["dtype"] = DTYPES[self.dtype]
        if self.revision != AUTO:
            out["revision"] = self.revision
        return out

    def scorer_options(self) -> dict:
        """The scorer's arguments: ``start`` (None: the registry's), and ``share`` and
        ``token_budget`` where they are not "auto"."""
        out = {"start": None if self.start == AUTO else self.start}
        out.update({k: getattr(self, k) for k in ("share", "token_budget") if getattr(self, k) != AUTO})
        return out

    def method_options(self) -> dict:
        """The method options of the switches (``run_methods``' ``options``)."""
        return {"order_average": ORDER_AVERAGES[0] if self.order_average == AUTO else self.order_average,
                "syntaxgym_pass": next(iter(PASS_RULES)) if self.syntaxgym_pass == AUTO else self.syntaxgym_pass}

    def check(self, models) -> list[Loadable | LoadedModel]:
        """For each model (a name, a list or "a,b"): the errors loading would give, before any
        weights are read or anything is computed: an unknown model, a revision of a local model
        or one not in the local cache offline, a quantization this machine cannot run, a start
        convention the model's kind does not take. Returns each model checked (a
        :class:`~helpers.models.Loadable`, which loads without checking again, or the LoadedModel given)."""
        out = []
        for model in ([models] if isinstance(models, LoadedModel) else parse_selection(models, what="model")):
            if not isinstance(model, LoadedModel):
                quant = self.load_options().get("quant", AUTO)
                model = check_loadable(model, quant, self.load_options().get("revision"))
            if model.kind != "causal" and self.start in ("none", "minicons"):
                what = ("an encoder-decoder, whose decoder always starts with its decoder start token"
                        if model.kind == "seq2seq" else "a masked LM, scored with its tokenizer's special tokens "
                        "around the text")
                raise ValueError(f"start={self.start!r} is a causal-model convention (first token unscored); "
                                 f"{model.spec.name} is {what}: use start='auto'")
            out.append(model)
        return out

    def scorer(self, model, **kwargs) -> Scorer:
        """The scorer of ``model`` (a name, folder or Hugging Face id, or a LoadedModel) under these
        switches, after :meth:`check` (which loading does not repeat); ``kwargs`` go to the scorer
        (e.g. batch_size, progress) and to loading (device_map, max_memory, offload_folder)."""
        if isinstance(model, LoadedModel) and self.load_options():
            raise ValueError(f"{', '.join(self.load_options())} apply to loading, but {model.name} is loaded already: "
                             "pass the model's name")
        checked = self.check(model)
        if len(checked) != 1:
            raise ValueError(f"a scorer is built for one model, got {len(checked)}: {model!r}")
        loading = {k: v for k, v in self.load_options().items() if k == "dtype"}  # quant and revision are checked
        return scorer_for(checked[0], **loading, **self.scorer_options(), **kwargs)

    def scorer_kwargs(self) -> dict:
        """:func:`helpers.engine.kinds.scorer_for`'s arguments (load and scorer switches), for code
        that loads models itself (after :meth:`check`)."""
        return {**self.load_options(), **self.scorer_options()}


def describe() -> str:
    """Every switch: its values, what "auto" is and what a score file records."""
    return "\n".join(f"{name}: auto, {values if isinstance(values, str) else ', '.join(values)} ('auto': {auto}; "
                     f"recorded as {rec})" for name, (values, auto, rec) in SWITCHES.items())


__all__ = ["AUTO", "METHOD_SWITCHES", "SWITCHES", "Switches", "describe"]
