"""What every scorer takes and returns, whatever the kind of model behind it.

A :class:`Request` asks for the log-probs of a target given a context; a :class:`Scored` is
its answer (one log-prob per target token, float64) and an :class:`OptionReadout` the answer
of a next-token readout (each option's log-prob after one prompt). :class:`Scorer` is the
protocol the methods and the runner use; the causal scorer (:mod:`.causal`), the
encoder-decoder scorer (:mod:`.seq2seq`) and the masked-LM scorer (:mod:`.masked`) implement
it, and :mod:`.kinds` picks one for a model.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Literal, Protocol, Sequence, runtime_checkable

import numpy as np

from ..settings import SHARE_MODES, Settings

# How much of a run's input the engine runs once and reuses (helpers.settings.SHARE_MODES; see
# helpers.engine.causal.CausalScorer). "auto": the causal scorer picks, per call, the mode its cost model
# predicts fastest (helpers.engine.share_plan); the other scorers share what they can under any mode but "none".
Share = Literal["none", "context", "prefix", "tree", "auto"]

# How a method's requests read (Scorer.shaped): "span", a word or sentence continuing its context (Hu &
# Levy's word tasks); "prompt", an answer after a prompt (metalinguistic prompts, Yes/No, A/B).
REQUEST_SHAPES = ("span", "prompt")
RequestShape = Literal["span", "prompt"]


def checked_shape(shape) -> str:
    """``shape`` if it is one of :data:`REQUEST_SHAPES`, else a clear error."""
    if shape not in REQUEST_SHAPES:
        raise ValueError(f"shape must be one of {', '.join(map(repr, REQUEST_SHAPES))}, got {shape!r}")
    return shape

# What a scorer may offer beyond score() and next_token(), which some methods need (a
# method's ``needs``); each scorer class lists what it offers in ``features``.
SCORER_FEATURES = {
    "continuation": "the log-probs of a target continuing a context left to right (a prompt's answer, a prefix's "
                    "next word, a region after the ones before it: a causal LM or an encoder-decoder's decoder; a "
                    "masked LM's pseudo-log-likelihood scores whole sentences)",
    "outlines": "constrained decoding with outlines continuing the prompt exactly as the engine encodes it (a "
                "causal LM; an encoder-decoder starts its answer with a word-initial token such as '▁A', which "
                "outlines' answer strings exclude)",
    "token_mass": "the probability mass of word-initial tokens where each target token is predicted and after "
                  "the last one, read in the scoring pass itself (a causal LM: the word-boundary correction)",
}


# What Scorer.record() holds: score-file key -> what it is (a scorer attribute of the same meaning).
RECORD_KEYS = {
    "start_token": "start_token",  # the start token as applied, e.g. "bos:<s>", "none", "decoder_start:<pad>;..."
    "start_convention": "start",  # the start setting it came from, resolved: bos-else-eos, none, minicons, token, ...
    "share": "share",  # one of SHARE_MODES: how much of a run's input runs once and is reused
    "share_used": "share_used",  # the mode the last call ran: causal "auto" names the candidate it chose
    "token_budget": "token_budget",  # tokens per forward pass now
    "max_positions": "max_positions",  # the model's position limit (None: none known)
    "prompt_shape": "prompt_shape",  # seq2seq: "answer" (the prompt is the source) or "span"; else None
    "marks_words": "marks_words",  # word-boundary requests can be corrected (a causal LM whose tokenizer marks words)
    "forward_calls": "forward_calls",  # forward passes run so far
    "tokens_run": "tokens_run",  # real (not padding) tokens fed to the model so far
    "weight_bytes": "weight_bytes",  # the loaded weights' memory footprint (None where the model cannot say)
}


def adds_start_token(record: dict) -> bool:
    """Whether the scorer of ``record`` puts one start token before each text (a causal LM's BOS,
    EOS or literal token; not "none" or "minicons", an encoder-decoder's decoder start or a masked
    LM's special tokens)."""
    return record["start_token"].split(":")[0] in ("bos", "eos", "token")


@dataclass(frozen=True)
class Request:
    """Score ``target`` given ``context`` (the context may be empty, the target not).

    By default context+target is tokenized as one text (a token may straddle the
    boundary, and belongs to the target), and the context's trailing spaces are scored
    with the target: "...spread the " + "icing" scores " icing" whole, also where the space
    tokenizes alone (:func:`helpers.engine.encoding.target_start`; line breaks stay in the
    context). ``separate=True`` tokenizes them apart and joins the ids: the target is
    read exactly at the position after the context's own tokens (a prompt ending in a
    space keeps its space token, unscored), as a constrained decoder sees it; the
    boundary rule does not apply, so the logit path and the decoder see the same input.

    ``word_boundary=True`` also asks for the probability that a word begins at each of the
    target's token edges, from the same pass (``Scored.boundary_logmass``; a causal LM only,
    the feature "token_mass"): the corrected word surprisal of Pimentel & Meister (2024).
    """

    context: str
    target: str
    separate: bool = False
    word_boundary: bool = False


@dataclass
class Scored:
    """Log-probs of a request's target tokens (and of its context tokens if asked)."""

    token_ids: list[int]
    tokens: list[str]
    logprobs: np.ndarray  # float64, one per target token
    start_token: str  # the document-start policy, e.g. "bos:<s>", "eos:<|endoftext|>", "none"
    context_logprobs: np.ndarray | None = None  # tokens between the start token and the target
    context_offsets: list[tuple[int, int]] | None = None  # their character spans in context+target
    offsets: list[tuple[int, int]] | None = None  # character span of each target token in context+target
    logits: np.ndarray | None = None  # raw (unnormalised) logit of each target token
    # word_boundary requests: log B(k) for k = 0..n_tokens, B(k) the probability mass of word-initial
    # tokens where target token k is predicted (k = n_tokens: after the last token, word-initial tokens
    # and EOS); B(0) = 1 where the target begins the text. And which target tokens are word-initial.
    boundary_logmass: np.ndarray | None = None
    word_initial: np.ndarray | None = None

    @property
    def n_tokens(self) -> int:
        return len(self.token_ids)

    @property
    def total(self) -> float:
        return float(np.sum(self.logprobs, dtype=np.float64))


@dataclass
class OptionReadout:
    """Log-probs of each option after one prompt, and the token form that was scored."""

    logprobs: dict[str, float]
    forms: dict[str, list[str]]  # option -> the tokens scored (e.g. ["ĠYes"])
    n_tokens: dict[str, int]
    logits: dict[str, float]  # raw logit of each option's first token at the answer position

    def best(self) -> str:
        """The option with the highest log-prob (ties go to the first option)."""
        return max(self.logprobs, key=self.logprobs.get)


@runtime_checkable
class Scorer(Protocol):
    """What the methods, the runner and the runs ask of a scorer (of any kind of model), eight
    members: nothing else of a scorer is read outside the engine. Where the kinds answer
    differently, the comments say how."""

    loaded: object  # helpers.models.LoadedModel (its name, model, tokenizer, spec and kind)
    settings: Settings  # the settings it was built under (progress bars among them)
    features: frozenset  # what it offers of SCORER_FEATURES

    def record(self) -> dict:
        """What a score file keeps of it and what it has run (:data:`RECORD_KEYS`)."""

    def decode(self, prompts: Sequence[str], choices: Sequence[str], where: str = "always") -> list[str] | None:
        """The answer constrained decoding gives each prompt among ``choices`` (the feature
        "outlines": a causal LM); with ``where="auto"``, None instead where the choices' logits give
        that answer (each choice one token that the decoder alone takes for it). Other kinds refuse."""

    def shaped(self, requests: Sequence[Request], shape: RequestShape) -> list:
        """A method's (context, target) requests in this kind's input shape: causal and masked
        take them as they are; seq2seq makes ``"span"`` requests a sentinel span after the context
        and ``"prompt"`` requests its :attr:`prompt_shape`."""

    def score(self, requests: Sequence, with_context: bool = False, desc: str = "scoring",
              only: Sequence[int] | None = None) -> list[Scored]:
        """Every request's :class:`Scored`, in input order (with ``only``, just those, computed
        as part of the whole list)."""

    def next_token(self, prompts: Sequence[str], options: Sequence[str], separate: bool = False,
                   desc: str = "readout") -> list[OptionReadout]:
        """Each option's log-prob after each prompt."""


def refuse_masked_variant(settings, name: str) -> str | None:
    """A masked LM's scoring variant given for a model of another kind (which would not read it)."""
    if getattr(settings, "masked_variant", "auto") != "auto":
        return (f"masked_variant={settings.masked_variant!r} applies to masked LMs only, and {name} is not one: "
                "leave it 'auto' (its scores would not depend on it)")
    return None


class ScoresRequests:
    """:meth:`score` and :meth:`score_texts` of a scorer kind built from its own three steps:
    ``encode_many(requests)``, ``token_logprobs(encoded, with_context, desc, only)`` (per
    request, the log-probs and raw logits of its positions, and the word-boundary masses where a
    scorer with "token_mass" reads them) and ``_scored(encoded, *those, with_context=)`` (one
    :class:`Scored`). ``word_boundary`` requests to a scorer without "token_mass" are refused.
    Each kind refuses the settings it cannot take in its own :meth:`refuses`."""

    @property
    def weight_bytes(self) -> int | None:
        """The loaded weights' memory footprint in bytes (a precision check compares them)."""
        footprint = getattr(self.loaded.model, "get_memory_footprint", None)
        return int(footprint()) if footprint is not None else None

    @classmethod
    def refuses(cls, settings, name: str) -> str | None:
        """Why model ``name`` cannot be scored by this kind under ``settings`` (checked before it
        loads), None where it can; a causal LM takes every setting but a masked LM's own."""
        return refuse_masked_variant(settings, name)

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
        if "token_mass" not in self.features and any(getattr(r, "word_boundary", False) for r in requests):
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
    marks_words = False  # no token mass (the causal scorer overrides)

    def record(self) -> dict:
        """:data:`RECORD_KEYS`, as this scorer now holds them."""
        return {key: getattr(self, attribute) for key, attribute in RECORD_KEYS.items()}

    def decode(self, prompts: Sequence[str], choices: Sequence[str], where: str = "always") -> list[str] | None:
        """Refused: constrained decoding continues a causal LM's prompt (the causal scorer overrides)."""
        raise ValueError(f"constrained decoding needs {SCORER_FEATURES['outlines']}; the {type(self).__name__} "
                         "has none: decide by the choices' log-probs (next_token)")

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


def checked_answers(options: Sequence[str]) -> list[str]:
    """The answer options of a next-token readout, each a non-empty string."""
    options = list(options)
    if not options:
        raise ValueError("give at least one option")
    for o in options:
        check_text(o, "option", allow_empty=False)
    return options


def option_readouts(n_prompts: int, options: list[str], scored: Sequence[Scored]) -> list[OptionReadout]:
    """``scored`` (prompt-major: every option of prompt 0, then of prompt 1...) as one
    :class:`OptionReadout` per prompt."""
    out = []
    for i in range(n_prompts):
        chunk = scored[i * len(options):(i + 1) * len(options)]
        out.append(OptionReadout(
            logprobs={o: s.total for o, s in zip(options, chunk)},
            forms={o: s.tokens for o, s in zip(options, chunk)},
            n_tokens={o: s.n_tokens for o, s in zip(options, chunk)},
            logits={o: float(s.logits[0]) for o, s in zip(options, chunk)},
        ))
    return out


def checked_only(only: Sequence[int] | None, n: int) -> list[int] | None:
    """``only`` as a list of request indices, or a clear error for one out of range."""
    if only is None:
        return None
    only = [int(i) for i in only]
    bad = [i for i in only if not 0 <= i < n]
    if bad:
        raise IndexError(f"only names request {bad[0]}, but there are {n} requests")
    return only
