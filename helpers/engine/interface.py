"""What every scorer takes and returns, whatever the kind of model behind it.

A :class:`Request` asks for the log-probs of a target given a context; a :class:`Scored` is
its answer (one log-prob per target token, float64). :class:`Scorer` is the
protocol the methods and the runner use; the causal scorer (:mod:`.causal`), the
encoder-decoder scorer (:mod:`.seq2seq`) and the masked-LM scorer (:mod:`.masked`) implement
it, and :mod:`.kinds` picks one for a model.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, Sequence, runtime_checkable

import numpy as np

from ..settings import Settings

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

# What a scorer may offer beyond score(), which some methods need (a method's ``needs``); each scorer
# class lists what its kind offers in ``features``, and a scorer reads there what it offers (a causal
# LM whose tokenizer marks no word beginnings offers no token mass).
SCORER_FEATURES = {
    "continuation": "the log-probs of a target continuing a context left to right (a prompt's answer, a prefix's "
                    "next word, a region after the ones before it: a causal LM or an encoder-decoder's decoder; a "
                    "masked LM's pseudo-log-likelihood scores whole sentences)",
    "outlines": "constrained decoding with outlines continuing the prompt exactly as the engine encodes it (a "
                "causal LM; an encoder-decoder starts its answer with a word-initial token such as '▁A', which "
                "outlines' answer strings exclude)",
    "token_mass": "the probability mass of word-initial tokens where each target token is predicted and after "
                  "the last one, read in the scoring pass itself (a causal LM: the word-boundary correction)",
    "source": "a context read by an encoder and a continuation by a decoder (an encoder-decoder: lm-eval encodes "
              "the two apart, and a generated text is all new tokens)",
}



class Features:
    """A scorer class's ``features``: read on the class, what its kind offers of :data:`SCORER_FEATURES`;
    on a scorer, those less what ``lacking(scorer)`` names (a capability its model or tokenizer lacks)."""

    def __init__(self, offered: frozenset, lacking=None):
        self.offered, self.lacking = frozenset(offered), lacking

    def __get__(self, scorer, owner=None) -> frozenset:
        if scorer is None or self.lacking is None:
            return self.offered
        return self.offered - set(self.lacking(scorer))

# What Scorer.record() holds: score-file key -> what it is (a scorer attribute of the same meaning).
RECORD_KEYS = {
    "start_token": "start_token",  # the start token as applied, e.g. "bos:<s>", "none", "decoder_start:<pad>;..."
    "start_convention": "start",  # the start setting it came from, resolved: bos-else-eos, none, minicons, token, ...
    "share": "share",  # one of SHARE_MODES: how much of a run's input runs once and is reused
    "share_used": "share_used",  # the mode the last call ran: causal "auto" names the candidate it chose
    "token_budget": "token_budget",  # tokens per forward pass now
    "max_positions": "max_positions",  # the model's position limit (None: none known)
    "prompt_shape": "prompt_shape",  # seq2seq: "answer" (the prompt is the source) or "span"; else None
    "forward_calls": "forward_calls",  # forward passes run so far
    "tokens_run": "tokens_run",  # real (not padding) tokens fed to the model so far
    "weight_bytes": "weight_bytes",  # the loaded weights' memory footprint (None where the model cannot say)
    "head_path": "head_path",  # how the output head computed (helpers.engine.projection.Projection.path)
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



@runtime_checkable
class Scorer(Protocol):
    """What the methods, the runner and the runs ask of a scorer (of any kind of model): nothing
    else of a scorer is read outside the engine (tests/test_architecture.py scans for it). Where
    the kinds answer differently, the comments say how."""

    settings: Settings  # the settings it was built under (progress bars among them)
    features: frozenset  # what it offers of SCORER_FEATURES (on the class: what its kind may offer)
    max_positions: int | None  # the longest input it reads, in tokens (None: no limit known)
    config: object  # the model's configuration (lm-eval reads its window length from it)
    tokenizer: object  # the model's tokenizer: what methods encode with (counts, chat templates, unigram tables)
    name: str  # the model's name (its registry name, Hugging Face id or folder)
    is_instruct: bool  # whether the model is an instruct (chat) checkpoint: its prompts' default
    languages: tuple  # the languages it was trained on (its registry entry's; () where unknown: not registered)

    def provenance(self) -> dict:
        """What identifies the weights scored (model id, revision, weights' hash, quantization,
        dtype): every score file's configuration starts with it."""

    def serves(self, model) -> bool:
        """Whether it scores ``model`` (a registry name, Hugging Face id or folder)."""

    def score_continuations(self, pairs: Sequence[tuple[Sequence[int], Sequence[int]]], max_length: int,
                            greedy: bool = False, desc: str = "scoring") -> list[tuple]:
        """Token ids as lm-eval's ``hf`` model feeds them, each ``(context ids, continuation ids)``
        in a window of ``max_length`` (a causal LM: the last ``max_length + 1`` ids of the two; an
        encoder-decoder: each cut to its last ``max_length``): per pair the continuation's log-probs
        and, with ``greedy``, the greedy token at each of its positions. A masked LM refuses."""

    def generate(self, ids: Sequence[int], max_new_tokens: int, **kwargs) -> list[int]:
        """The ids ``transformers``' ``generate`` adds after ``ids`` (lm-eval's generation). A masked LM refuses."""

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

