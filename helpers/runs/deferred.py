"""A scorer that loads its model only when it must compute, so that a run whose score files are
all stored loads no weights.

What a run reads of a scorer before it scores (:class:`~helpers.engine.interface.Scorer`: its
name, provenance, record, features, positions, instruct decision, languages, tokenizer) decides
which score files the run needs and finds them in the store. A :class:`DeferredScorer` answers it
from the model's checked configuration, its tokenizer (read without the weights) and the model's
*card*: what the scorer of this model under these settings answered when it was last built,
written to ``outputs/scores/.scorers/<model>/<key>.json`` the first time it loads. The key covers
everything a scorer's answers depend on (the model's registry entry and weight files' fingerprint,
the loading and engine settings, the device kind, the library versions); a model without a card
loads at once, as before. Anything that computes (``score``, ``decode``, ``generate``...) loads the
model first, and the built scorer's answers are checked against the card they were read from: a
difference is an error before anything is written.
"""
from __future__ import annotations

import hashlib
import json
import sys
import time
import warnings
from pathlib import Path

import torch

from .. import paths
from ..files import write_text
from ..models import Loadable, LoadedModel, default_dtype, load
from ..models.loading import fingerprint, load_tokenizer
from ..provenance import library_versions
from ..settings import SCORER_SETTINGS, Settings
from ..store import safe_name
from ..engine.kinds import SCORER_KINDS, check_models, scorer_for

CARD_VERSION = 1
LIBRARIES = ("torch", "transformers", "tokenizers", "accelerate", "bitsandbytes", "gguf")
COUNTERS = ("forward_calls", "tokens_run")  # what a scorer has run: counted per run, a kept scorer's from its hand-over
RUNNING = ("share_used", *COUNTERS)  # the record's keys of what the scorer ran (the others fixed when it is built)
KEPT: dict[Path, object] = {}  # card path -> built scorer, kept for the next run of this process (keep_loaded)
_KEEPING: list[bool] = [False]


def keep_loaded(on: bool = True) -> None:
    """Keep each built scorer for the next deferred scorer of the same card in this process (a
    sweep's kernel of one model, :mod:`helpers.sweep.model_kernel`); ``on=False`` releases them."""
    _KEEPING[0] = on
    if not on:
        KEPT.clear()


def decoded_key(prompt: str, choices) -> str:
    """A prompt's key among the card's decoded answers: the prompt, the choices and outlines' version."""
    text = json.dumps([prompt, list(choices), library_versions().get("outlines")])
    return hashlib.sha256(text.encode()).hexdigest()[:20]


class CardMismatchError(RuntimeError):
    """A built scorer answers differently from the card a run read before it loaded."""


def card_path(checked: Loadable, settings: Settings) -> Path:
    """Where the card of ``checked`` under ``settings`` is kept (its key: :func:`card_key`)."""
    return paths.scores() / ".scorers" / safe_name(checked.spec.name) / f"{card_key(checked, settings)}.json"


def card_key(checked: Loadable, settings: Settings) -> str:
    """What a scorer's answers depend on, hashed: the model's registry entry and weight files, its
    precision as it would load here, the scorer's settings, the device kind and the libraries."""
    spec, arguments = checked.spec, settings.load_arguments()
    dtype = arguments["dtype"] or str(default_dtype(checked.quant)).removeprefix("torch.")
    versions = {k: v for k, v in library_versions().items() if k in LIBRARIES}
    key = {"card": CARD_VERSION, "model": [spec.name, spec.hf_id, spec.revision, spec.start, spec.kind, checked.kind],
           "weights": fingerprint(checked), "quant": checked.quant, "dtype": dtype,
           "settings": {n: getattr(settings, n) for n in SCORER_SETTINGS},
           "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu", "libraries": versions}
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:16]


def card_of(scorer) -> dict:
    """What a freshly built scorer answers (its record before it ran anything), with the line its
    instruct decision says where that was a choice (said again when a run reads it from the card)."""
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        found = scorer.is_instruct
    lines = [str(w.message) for w in said if "instruct=" in str(w.message)]
    return {"name": scorer.name, "provenance": scorer.provenance(), "record": scorer.record(),
            "features": sorted(scorer.features), "is_instruct": bool(found), "instruct_line": lines[0] if lines else None}


def read_card(path: Path) -> dict | None:
    """The card at ``path``, None where there is none or it cannot be read (the model then loads)."""
    try:
        card = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return card if isinstance(card, dict) and {"provenance", "record", "features"} <= set(card) else None


def _differences(card: dict, built: dict) -> list[str]:
    out = [f"{k}: card {card['provenance'].get(k)!r}, built {v!r}" for k, v in built["provenance"].items()
           if card["provenance"].get(k) != v]
    out += [f"record {k}: card {card['record'].get(k)!r}, built {v!r}" for k, v in built["record"].items()
            if card["record"].get(k) != v and k not in RUNNING]
    return out + [f"{k}: card {card.get(k)!r}, built {built[k]!r}" for k in ("features", "is_instruct")
                  if card.get(k) != built[k]]


class DeferredScorer:
    """The scorer of a checked model (a :class:`~helpers.models.Loadable`) under ``settings``,
    loaded when first asked to compute; what it reads before that comes from its card (a model
    without one loads at once). :attr:`loads` counts its loads (0 or 1)."""

    def __init__(self, checked: Loadable, settings: Settings):
        self.checked, self.settings, self.spec = checked, settings, checked.spec
        self.path = card_path(checked, settings)
        self.card = read_card(self.path)
        self.built, self.loads, self._tokenizer, self._said, self._offsets = None, 0, None, False, {}

    def __repr__(self) -> str:
        return f"DeferredScorer({self.name!r}, {'loaded' if self.built is not None else 'not loaded'})"

    @property
    def name(self) -> str:
        return self.spec.name

    def _card(self) -> dict:
        if self.card is None:
            self.load()  # no card yet: what the run reads comes from the model itself
        return self.card

    def load(self):
        """The built scorer, loading the model the first time (and writing its card, or checking it)."""
        if self.built is not None:
            return self.built
        if self.path in KEPT:  # built by an earlier run of this process (a sweep's kernel): handed over
            self.built = KEPT[self.path]
            self._offsets = {k: self.built.record()[k] for k in COUNTERS}
            print(f"{self.name} is loaded already (kept by this kernel)", file=sys.stderr)
            return self.built
        started = time.perf_counter()
        arguments = {k: v for k, v in self.settings.load_arguments().items() if k not in ("quant", "revision")}
        loaded = load(self.checked, tokenizer=self._tokenizer, **arguments)  # quant and revision checked with it
        built = SCORER_KINDS[loaded.kind](loaded, self.settings)
        fresh = json.loads(json.dumps(card_of(built), default=str))  # as a card holds it
        if self.card is not None and (differ := _differences(self.card, fresh)):
            raise CardMismatchError(f"{self.name} built under these settings answers differently from its card "
                                    f"{self.path} ({'; '.join(differ)}): nothing was written; delete the card and "
                                    "run again (the score files it found may name the same difference)")
        if self.card is None:
            write_text(self.path, json.dumps(fresh, indent=1))
            self.card = fresh
        self.built, self.loads = built, self.loads + 1
        if _KEEPING[0]:
            KEPT[self.path] = built
        print(f"loaded {self.name} ({fresh['provenance'].get('dtype')}) in {time.perf_counter() - started:.1f} s",
              file=sys.stderr)
        return built

    # ---- what a run reads before it scores: the card (and the checked configuration, the tokenizer)
    def provenance(self) -> dict:
        return dict(self._card()["provenance"])

    def record(self) -> dict:
        """The built scorer's record (what it ran counted from when this scorer got it), else the card's."""
        if self.built is None:
            return dict(self._card()["record"])
        return {k: v - self._offsets.get(k, 0) if k in COUNTERS else v for k, v in self.built.record().items()}

    @property
    def features(self) -> frozenset:
        return frozenset(self._card()["features"])

    @property
    def max_positions(self):
        return self._card()["record"]["max_positions"]

    @property
    def is_instruct(self) -> bool:
        card = self._card()
        if card.get("instruct_line") and not self._said:  # said once, as the loaded model says it
            self._said = True
            warnings.warn(card["instruct_line"], stacklevel=2)
        return bool(card["is_instruct"])

    @property
    def languages(self) -> tuple:
        return self.spec.known_languages

    @property
    def tokenizer(self):
        if self.built is not None:
            return self.built.tokenizer
        if self._tokenizer is None:
            self._tokenizer = load_tokenizer(self.checked)
        return self._tokenizer

    @property
    def config(self):
        return self.built.config if self.built is not None else self.checked.config

    def serves(self, model) -> bool:
        return self.spec.names(model)

    # ---- what computes: the model loads first
    def score(self, *args, **kwargs):
        return self.load().score(*args, **kwargs)

    def score_texts(self, *args, **kwargs):
        return self.load().score_texts(*args, **kwargs)

    def score_continuations(self, *args, **kwargs):
        return self.load().score_continuations(*args, **kwargs)

    def generate(self, *args, **kwargs):
        return self.load().generate(*args, **kwargs)

    def decode(self, prompts, choices, where: str = "always"):
        """The built scorer's, kept on the card: asked with no prompts under "auto" (whether the
        choices' logits give outlines' answer: a property of the tokenizer), and outlines' answer to
        each prompt under "always" (greedy, so the same each time: 03's check of a stored run
        decodes nothing); answered from the card where it holds them all."""
        key = "|".join(choices)
        if not prompts and where == "auto" and key in self._card().get("logits_decode", {}):
            return None if self.card["logits_decode"][key] else []
        kept = self._card().get("decoded", {}) if prompts and where == "always" else None
        keys = [decoded_key(prompt, choices) for prompt in prompts] if kept is not None else []
        if kept is not None and all(k in kept for k in keys):
            return [kept[k] for k in keys]
        answer = self.load().decode(prompts, choices, where)
        if not prompts and where == "auto":
            self.card.setdefault("logits_decode", {})[key] = answer is None
        if kept is not None:
            self.card.setdefault("decoded", {}).update(zip(keys, answer))
        if kept is not None or (not prompts and where == "auto"):
            write_text(self.path, json.dumps(self.card, indent=1, default=str))
        return answer

    def shaped(self, *args, **kwargs):
        return self.load().shaped(*args, **kwargs)

    def __getattr__(self, name: str):
        """Anything else of the built scorer (its model, engine parts): the model loads first."""
        if name.startswith("__") or name in ("checked", "settings", "spec", "path", "card", "built", "loads",
                                              "_tokenizer", "_said", "_offsets"):
            raise AttributeError(name)
        return getattr(self.load(), name)


def deferred_scorer(model, settings: Settings | None = None):
    """The scorer of ``model`` (a registry name, folder, Hugging Face id or checked
    :class:`~helpers.models.Loadable`, checked once: :func:`.kinds.check_models`) as a
    :class:`DeferredScorer`; a :class:`~helpers.models.LoadedModel` gets its built scorer."""
    settings = settings or Settings()
    if isinstance(model, LoadedModel):
        return scorer_for(model, settings)
    checked = check_models(model, settings)
    if len(checked) != 1:
        raise ValueError(f"a scorer is built for one model, got {len(checked)}: {model!r}")
    return DeferredScorer(checked[0], settings) if isinstance(checked[0], Loadable) else scorer_for(checked[0], settings)
