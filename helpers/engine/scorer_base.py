"""The common body of every scorer kind (:class:`ScoresRequests`: ``score`` from a kind's own
three steps, what the contract asks beyond them) and the checks of what callers pass a scorer."""
from __future__ import annotations

import logging
from typing import Iterable, Sequence

import torch

from ..settings import SHARE_MODES, Settings
from .interface import RECORD_KEYS, Request, RequestShape, SCORER_FEATURES, Scored, checked_shape

log = logging.getLogger(__name__)


class ScoresRequests:
    """:meth:`score` and :meth:`score_texts` of a scorer kind built from its own three steps:
    ``encode_many(requests)``, ``token_logprobs(encoded, with_context, desc, only)`` (per
    request, the log-probs and raw logits of its positions, and the word-boundary masses where a
    scorer with "token_mass" reads them) and ``_scored(encoded, *those, with_context=)`` (one
    :class:`Scored`). ``word_boundary`` requests to a scorer without "token_mass" are refused.
    Each kind refuses the settings it cannot take in its own :meth:`refuses`."""

    @property
    def name(self) -> str:
        return self.loaded.name

    @property
    def is_instruct(self) -> bool:
        return bool(self.loaded.is_instruct)

    @property
    def languages(self) -> tuple:
        """Its registry entry's languages; () for a model the registry does not list (unknown)."""
        return self.loaded.spec.known_languages

    def provenance(self) -> dict:
        return self.loaded.provenance()

    def serves(self, model) -> bool:
        return self.loaded.spec.names(model)

    @property
    def head_path(self) -> str:
        """How the output head computes: as the model's module, its logits taken in float32 (a
        causal LM's head has more paths: :meth:`helpers.engine.projection.Projection.path`)."""
        return "module"

    @property
    def config(self):
        return self.model.config

    def score_continuations(self, pairs, max_length: int, greedy: bool = False, desc: str = "scoring") -> list:
        """lm-eval's ``hf`` windows: a causal LM reads the last ``max_length + 1`` ids of context and
        continuation (the last one only predicted; the context cut from the left, with a warning),
        an encoder-decoder the last ``max_length`` of each (``score_ids`` and ``score_source_ids``)."""
        if "continuation" not in self.features:
            raise TypeError(f"{type(self).__name__} scores whole sentences (pseudo-log-likelihood), not tokenized "
                            "continuations: lm-eval's loglikelihood needs a causal LM or an encoder-decoder")
        if "source" in self.features:
            return self.score_source_ids([(list(c)[-max_length:], list(t)[-max_length:]) for c, t in pairs],
                                         greedy=greedy, desc=desc)
        sequences = []
        for context, continuation in pairs:
            ids = (list(context) + list(continuation))[-(max_length + 1):]
            if len(context) + len(continuation) > max_length + 1:
                log.warning("context (%d tokens) and continuation (%d) exceed max_length %d: the context is truncated "
                            "from the left, as lm-eval's hf model does", len(context), len(continuation), max_length)
            sequences.append((ids, len(ids) - len(continuation)))
        return self.score_ids(sequences, greedy=greedy, desc=desc)

    def generate(self, ids, max_new_tokens: int, **kwargs) -> list[int]:
        """The ids ``generate`` adds after ``ids`` (an encoder-decoder's decoder ids are all new)."""
        if "continuation" not in self.features:
            raise TypeError(f"{type(self).__name__} generates nothing: a masked LM fills masks, it does not continue")
        inputs = torch.tensor([list(ids)], device=self.loaded.input_device)
        with torch.no_grad():
            made = self.model.generate(input_ids=inputs, attention_mask=torch.ones_like(inputs),
                                       max_length=len(ids) + max_new_tokens, **kwargs)
        return made[0].tolist() if "source" in self.features else made[0, len(ids):].tolist()

    @property
    def weight_bytes(self) -> int | None:
        """The loaded weights' memory footprint in bytes (a precision check compares them)."""
        footprint = getattr(self.loaded.model, "get_memory_footprint", None)
        return int(footprint()) if footprint is not None else None

    @classmethod
    def refuses(cls, settings, name: str) -> str | None:
        """Why model ``name`` cannot be scored by this kind under ``settings`` (checked before it
        loads), None where it can; a causal LM takes every setting (those of other kinds only:
        :func:`helpers.engine.kinds.unread_by_kind`)."""
        return None

    def score(self, requests: Sequence, with_context: bool = False, desc: str = "scoring",
              only: Sequence[int] | None = None) -> list[Scored]:
        """Score every request; results in input order. With ``only`` (indices into
        ``requests``), score just those, planned and batched as part of the whole list, so
        that each value is bit for bit the one scoring the whole list gives (a shard of a
        run); results in the order of ``only``. ``with_context`` also returns the log-probs of
        the context tokens."""
        requests = list(requests)
        if not requests:
            return []
        if "token_mass" not in type(self).features and any(getattr(r, "word_boundary", False) for r in requests):
            raise ValueError(f"word_boundary requests need {SCORER_FEATURES['token_mass']}; the "
                             f"{type(self).__name__} has none: score them with a causal LM")
        encoded = self.encode_many(requests)
        only = checked_only(only, len(requests))
        values = self.token_logprobs(encoded, with_context=with_context, desc=desc, only=only)
        picked = range(len(encoded)) if only is None else only
        return [self._scored(encoded[i], *values[i], with_context=with_context) for i in picked]

    def score_texts(self, texts: Iterable[str], desc: str = "scoring") -> list[Scored]:
        """Score sentences on their own (an empty context)."""
        return self.score([Request("", t) for t in texts], desc=desc)

    @property
    def share_used(self) -> str:
        """The share mode the last call ran (the causal scorer's "auto" picks one per call)."""
        return self.share

    prompt_shape = None  # the text continues (seq2seq overrides)

    def record(self) -> dict:
        """:data:`RECORD_KEYS`, as this scorer now holds them."""
        return {key: getattr(self, attribute) for key, attribute in RECORD_KEYS.items()}

    def decode(self, prompts: Sequence[str], choices: Sequence[str], where: str = "always") -> list[str] | None:
        """Refused: constrained decoding continues a causal LM's prompt (the causal scorer overrides)."""
        raise ValueError(f"constrained decoding needs {SCORER_FEATURES['outlines']}; the {type(self).__name__} "
                         "has none: decide by the choices' log-probs")

    def shaped(self, requests: Sequence[Request], shape: RequestShape) -> list:
        """The requests as they are (a kind with another input shape overrides)."""
        checked_shape(shape)
        return requests


def check_text(value, what: str, allow_empty: bool) -> str:
    """``value`` if it is a string (non-empty unless allowed), else a clear error."""
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a string, got {type(value).__name__}: {value!r:.80}")
    if not allow_empty and not value:
        raise ValueError(f"{what} is empty: there is nothing to score")
    return value


def checked_settings(settings) -> Settings:
    """A scorer's ``settings`` (None: every setting "auto"), or a clear error for anything else."""
    if settings is None:
        return Settings()
    if not isinstance(settings, Settings):
        raise TypeError(f"a scorer takes its settings as one helpers.settings.Settings (e.g. Settings(share='none', "
                        f"progress=False)), got {type(settings).__name__}: {settings!r}")
    return settings


def checked_share(share) -> str:
    """``share`` if it is a share mode, else a clear error."""
    if share not in SHARE_MODES:
        raise ValueError(f"share must be one of {', '.join(map(repr, SHARE_MODES))}, got {share!r}")
    return share


def checked_only(only: Sequence[int] | None, n: int) -> list[int] | None:
    """``only`` as a list of request indices, or a clear error for one out of range."""
    if only is None:
        return None
    only = [int(i) for i in only]
    bad = [i for i in only if not 0 <= i < n]
    if bad:
        raise IndexError(f"only names request {bad[0]}, but there are {n} requests")
    return only
