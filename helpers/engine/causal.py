"""The causal-LM scorer: text in, token log-probabilities out.

:class:`CausalScorer` implements the :class:`helpers.engine.interface.Scorer` protocol for
decoder-only models. A request is a (context, target) pair of strings. The engine
tokenizes context+target once (with character offsets), starts the sequence with
exactly one document-start token, and returns the log-prob of every target token given
everything before it.

The work is done in three parts (:mod:`helpers.engine`): the encoder turns text into
token ids, the plan (a prefix tree) lets requests that share a context (template
prefixes, priming contexts, the options after one prompt) or a common token prefix (the
two sentences of a minimal pair) run it once, and the executor runs the plan in batches
with key/value cache reuse and reads log-probs at the scored positions only (float32
log-softmax, float64 results), halving a batch on CUDA out-of-memory.

A ``word_boundary`` request also gets, from the same pass, the log-mass of word-initial tokens
(:mod:`.word_initial`) where each of its target tokens is predicted and after its last token
(``Scored.boundary_logmass``): the encoder appends one token after the text (EOS), which is only
predicted, never fed, so the text's last token is fed and the position after it is read; there
the mass of word-initial tokens and of EOS (whose log-prob the appended token reads) is taken.
"""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Sequence

import numpy as np
import torch

from . import cost_model, model_checks, row_attention, share_plan
from .encoding import Encoded, Encoder, distinct, encoded_ids
from .executor import Executor
from .attention_layout import AttentionLayout
from .constrained import Decoding
from .interface import SCORER_FEATURES, Features, Request, Scored
from .scorer_base import ScoresRequests, checked_settings
from .logit_transform import LogitTransform
from .projection import Projection
from .plan import Node, build_tree
from .word_initial import check_marks_words, end_of_word_suffix, marks_words, word_initial_mask
from ..models import LoadedModel
from ..progress import bar as progress_bar
from ..settings import Settings

__all__ = ["CausalScorer"]


class CausalScorer(ScoresRequests):
    """Score text with a causal LM, under ``settings`` (:class:`helpers.settings.Settings`: start,
    share, token_budget, batch_size and progress; default all "auto").
    ``start`` is the document-start convention (:data:`helpers.settings.START_CONVENTIONS`, a
    literal ``"token:<s>"``, or "auto": the registry entry's). ``share`` chooses the key/value reuse: "none" (plain path), "context" (requests with
    the same context tokens run them once), "prefix" (also the longest common token prefix
    of sentences, e.g. the two sentences of a pair), "tree" (every common prefix within a
    block of the run's requests, a compressed trie per block; "prefix" where nothing can be
    packed) or "auto" (the default: per call, the mode a cost model for this model's shape
    and device class predicts fastest among none, prefix cached, prefix packed and tree,
    :mod:`.share_plan`; :attr:`share_used` says which ran). ``pack`` runs a shared part and
    its continuations as one packed row with a tree attention mask, where the model's attention
    takes one (checked by a probe; off for flash attention), for shared parts of at least
    ``pack_min_stem`` tokens (default 0: every shared part packs, the start token under "tree"
    and a pair's opening words under "prefix", which run faster packed than from the cache now that
    packed rows attend segment by segment: benchmarks/profile_rows.py). ``attention`` says how a packed row
    attends (:mod:`.row_attention`): "segments" (segment by segment, no masked pair computed),
    "flex" (FlexAttention under a mask built from the row's segments), "dense" (a 4D tree
    mask); None: the device's default where its probe passes (segments on the CPU, FlexAttention
    on CUDA; "auto" also weighs the dense mask). Results agree across modes within float32 rounding.
    """

    # outlines and token mass (word boundaries; not where the tokenizer marks no word beginnings); no encoder
    features = Features(frozenset(SCORER_FEATURES) - {"source"}, lambda s: () if s.marks_words else ("token_mass",))
    _word_initial = _marks_words = _decoding = None  # made on first use (word_initial, marks_words, decode)

    def __init__(self, loaded: LoadedModel, settings: Settings | None = None, *, min_shared: int = 3,
                 kv_budget_bytes: int | None = None, pack: bool = True, pack_min_stem: int | None = None,
                 attention: str | None = None):
        if not isinstance(loaded, LoadedModel):
            raise TypeError(f"CausalScorer takes a LoadedModel (helpers.models.load, or LoadedModel.wrap(model, tokenizer)), "
                            f"got {type(loaded).__name__}")
        self.settings = settings = checked_settings(settings)
        share, token_budget, batch_size = settings.share, settings.given("token_budget"), settings.given("batch_size")
        if loaded.kind == "seq2seq":
            raise TypeError(f"{loaded.name} is an encoder-decoder: score it with helpers.engine.seq2seq.Seq2SeqScorer "
                            "(helpers.engine.kinds.scorer_for picks it)")
        if loaded.kind == "masked":
            raise TypeError(f"{loaded.name} is a masked LM: score it with helpers.engine.masked.MaskedScorer "
                            "(helpers.engine.kinds.scorer_for picks it)")
        model, tokenizer = loaded.model, loaded.tokenizer
        self._encode_seconds = self._plan_seconds = 0.0  # see :attr:`seconds`
        self.loaded, self.model, self.tokenizer = loaded, model, tokenizer
        self.max_positions = model_checks.max_positions(model)
        self.encoder = Encoder(tokenizer, settings.start_for(loaded.start), self.max_positions, settings)
        self.start_id, self.start_token = self.encoder.start_id, self.encoder.start_token
        self.start = self.encoder.start  # "bos-else-eos", "none", "minicons" or "token"
        self.share, self.progress, self.min_shared = share, settings.progress, int(min_shared)
        # ids go to the input embedding's device, logits come from the head's (either may be "meta" on disk)
        self.device, self.output_device = loaded.input_device, loaded.output_device
        head, body = model.get_output_embeddings(), model.base_model
        # logits as the model computes them: the output embedding, then any scale or soft-cap
        # its configuration names; a start-up probe refuses a model whose forward does more
        self.logit_transform = LogitTransform.of(model.config)
        project = Projection(head, self.logit_transform)
        diff, tol = model_checks.head_disagreement(model, project, body, self.start_id or 0, self.device)
        if not diff <= tol:
            raise NotImplementedError(
                f"{type(model).__name__}'s own log-probs differ from the engine's by {diff:.3g} nats on a probe "
                f"input (tolerance {tol:.3g}): its forward changes the logits after the output embedding in a way "
                f"its configuration does not name (from the configuration: {self.logit_transform.describe()}), "
                "so its scores would be wrong. Add the transform to helpers/engine/logit_transform.py "
                "and the architecture to the conformance test (tests/test_conformance.py)")
        # sliding windows (applied by position in every 4D mask) and the form of mask the
        # attention takes (probed with two branches packed after a shared stem)
        self.layout = AttentionLayout.of(model.config)
        mask_form = model_checks.tree_mask_kind(body, self.start_id or 0, self.device) \
            if pack or self.layout.slides else None
        self.can_share_cache = model_checks.can_share_cache(model, self.layout, mask_form)
        # shared subtrees packed in one row (tree attention) where the attention takes a custom mask
        self.pack = mask_form if pack and self.can_share_cache else None
        on_gpu = self.device.type == "cuda"
        # how packed rows attend: the preferred way first (auto also weighs the others)
        attentions = row_attention.usable(body, self.pack, self.start_id or 0, self.device, attention)
        first = attentions[0] if attentions else "dense"
        dense_waste = model_checks.PACK_WASTE_PER_WIDTH * model_checks.hidden_size(model)
        costs = cost_model.shipped(model, self.device)  # a batch splits where its padding costs more than a call
        self.executor = Executor(
            body, project, device=self.device, layout=self.layout, mask_form=mask_form, pad_id=tokenizer.pad_token_id or 0,
            # tokens per forward: on CPU mid-sized batches run fastest (benchmarks/bench_scoring.py)
            token_budget=token_budget or (32768 if on_gpu else 2048), batch_size=batch_size,
            # cached keys/values held at once (shared prefixes waiting for their continuations)
            kv_budget_bytes=kv_budget_bytes or (8 if on_gpu else 2) * 2**30,
            kv_bytes_per_token=model_checks.kv_bytes_per_token(model), pack=self.pack,
            row_attention=first, pack_waste=float("inf") if first != "dense" else dense_waste,
            output_device=self.output_device,
            pack_min_stem=0 if pack_min_stem is None else pack_min_stem,
            unpadded=self.device.type == "cpu"
            and body.get_input_embeddings().weight.dtype in (torch.bfloat16, torch.float16),
            call_tokens=costs.call / costs.token)
        self._auto = None
        if share == "auto":  # the mode of each call chosen by the cost model
            modes = share_plan.candidates(self.can_share_cache, attentions)
            if pack_min_stem is not None:
                modes = [replace(m, pack_min_stem=pack_min_stem) for m in modes]
            self._auto = share_plan.AutoShare(
                self.executor, modes, lambda enc, need, mode: build_tree(
                    enc, need, share=mode, min_shared=self.min_shared, block=self.executor.block),
                self.pack, dense_waste, model,
                self.executor.project.vocab, self.max_positions)

    @property
    def share_used(self) -> str:
        """The share mode the last call ran: under "auto" the chosen candidate's name (e.g.
        "prefix, packed"; "auto" before any call), else ``share``."""
        if self._auto is None:
            return self.share
        return self._auto.last.name if self._auto.last is not None else "auto"

    forward_calls = property(lambda self: self.executor.forward_calls)  # forward passes run so far
    tokens_run = property(lambda self: self.executor.tokens_run)  # real (not padding) tokens fed so far

    @property
    def seconds(self) -> dict[str, float]:
        """Wall seconds so far: "encode", "plan" (the prefix tree), "rows" (the body's batches) and
        "head" (log-softmax at the positions read; on a GPU it waits for the body's queued work)."""
        return {"encode": self._encode_seconds, "plan": self._plan_seconds, **self.executor.seconds}

    def decode(self, prompts: Sequence[str], choices: Sequence[str], where: str = "always") -> list[str] | None:
        """outlines' constrained answer to each prompt (:mod:`.constrained`, as the engine encodes
        it); ``where="auto"``: None where the choices' logits give it."""
        self._decoding = self._decoding or Decoding(self)
        return self._decoding(prompts, choices, where)

    @property
    def token_budget(self) -> int:
        """Tokens per forward pass now (halved for good after an out-of-memory error)."""
        return self.executor.token_budget

    # ---------------------------------------------------------------- encoding
    def encode(self, request: Request) -> Encoded:
        """Token ids of context+target with one start token, and where the target begins
        (:meth:`helpers.engine.encoding.Encoder.encode_many`: the boundary rule)."""
        return self.encode_many([request])[0]

    def encode_many(self, requests: Sequence[Request]) -> list[Encoded]:
        """:meth:`encode` for many requests, tokenized in one batch call."""
        start = time.perf_counter()
        try:
            return self.encoder.encode_many(requests)
        finally:
            self._encode_seconds += time.perf_counter() - start

    @property
    def word_initial(self) -> np.ndarray:
        """[vocabulary] bool: the tokenizer's word-initial tokens (:mod:`.word_initial`), found
        once per scorer."""
        if self._word_initial is None:
            self._word_initial = word_initial_mask(self.tokenizer, self.executor.project.vocab)
        return self._word_initial

    @property
    def marks_words(self) -> bool:
        """Whether the tokenizer marks word beginnings (word-boundary requests can be corrected), found once."""
        if self._marks_words is None:
            self._marks_words = (bool(self.word_initial.any()) and not end_of_word_suffix(self.tokenizer)
                                 if self._word_initial is not None
                                 else marks_words(self.tokenizer, self.executor.project.vocab))
        return self._marks_words

    # ---------------------------------------------------------------- scoring
    def _scored(self, enc: Encoded, lp: np.ndarray, raw: np.ndarray, mass: np.ndarray | None = None, *,
                with_context: bool) -> Scored:
        """One request's result from its sequence's log-probs and raw logits (and the log-mass of
        word-initial tokens, for a word_boundary request)."""
        end = len(enc.ids) - (enc.probe is not None)  # an appended probe is no part of the text
        target_ids = list(enc.ids[enc.first:end])
        ctx_from = 0 if self.start_id is None else 1
        boundary = initial = None
        if enc.probe is not None:
            boundary = np.array(mass[enc.first:], dtype=np.float64)  # [n + 1]: the last one after the text
            if enc.probe == self.tokenizer.eos_token_id:  # the text may end there: EOS counts too
                boundary[-1] = np.logaddexp(boundary[-1], lp[-1])  # lp[-1]: log p(EOS | the text)
            if all(start == stop == 0 for start, stop in enc.offsets[:enc.first]):
                boundary[0] = 0.0  # only added tokens before the target: it begins the text, and a word
            initial = self.word_initial[target_ids]
        return Scored(
            token_ids=target_ids,
            tokens=self.tokenizer.convert_ids_to_tokens(target_ids),
            logprobs=lp[enc.first:end],
            start_token=self.start_token,
            context_logprobs=lp[max(ctx_from, 1):enc.first] if with_context else None,
            context_offsets=list(enc.offsets[max(ctx_from, 1):enc.first]) if with_context else None,
            logits=raw[enc.first:end],
            offsets=list(enc.offsets[enc.first:end]),
            boundary_logmass=boundary,
            word_initial=initial,
        )

    @property
    def head_path(self) -> str:
        return self.executor.project.path()

    def score_ids(self, sequences: Sequence[tuple[Sequence[int], int]], greedy: bool = False,
                  desc: str = "scoring") -> list[tuple[np.ndarray, np.ndarray | None]]:
        """Sequences already tokenized, scored as given (no start token added, nothing moved):
        for each ``(ids, first)``, log p(ids[i] | ids[:i]) for i from ``first`` on (float64) and,
        with ``greedy``, the id of the greedy token (highest logit) at each of those positions,
        read from the same pass (else None); planned together as :meth:`score` plans requests
        (lm-evaluation-harness's requests come tokenized: :mod:`helpers.harness`)."""
        encoded = encoded_ids(sequences, self.max_positions)
        values = self.token_logprobs(encoded, desc=desc, greedy=greedy) if encoded else []
        return [(arrays[0][e.first:], arrays[-1][e.first:].astype(np.int64) if greedy else None)
                for e, arrays in zip(encoded, values)]

    def plan(self, encoded: Sequence[Encoded], with_context: bool = False) -> list[Node]:
        """The plan :meth:`token_logprobs` runs for ``encoded``: the prefix tree of the share
        mode this model allows, reading target tokens (and context tokens if ``with_context``);
        under "tree", one trie per block of the executor's requests; under "auto", the plan of
        the mode predicted fastest, the executor set for it."""
        need_from = [1 if with_context else e.first for e in encoded]
        if self._auto is not None:
            start = time.perf_counter()
            roots = self._auto.plan(encoded, need_from)
            self._plan_seconds += time.perf_counter() - start
            return roots
        share = self.share if self.can_share_cache else "none"
        if share == "tree" and not self.pack:  # a deep trie run level by level costs more than it saves
            share = "prefix"
        start = time.perf_counter()
        roots = build_tree(encoded, need_from, share=share, min_shared=self.min_shared, block=self.executor.block)
        self._plan_seconds += time.perf_counter() - start
        return roots

    def token_logprobs(self, encoded: Sequence[Encoded], with_context: bool = False,
                       desc: str = "scoring", only: Sequence[int] | None = None, greedy: bool = False
                       ) -> list[tuple[np.ndarray, ...] | None]:
        """For each sequence, (log p(token_i | tokens_<i), raw logit of token_i) for i >= 1 at
        the needed positions (target tokens, and context tokens if ``with_context``); index 0
        and unneeded entries are NaN. With ``only`` (indices), just those sequences, computed
        as in the whole list's run; the others are None. Where a sequence ends in a word-boundary
        probe (``Encoded.probe``), every result has a third array: the log-mass of word-initial
        tokens where each token is predicted (from the same logits); with ``greedy``, a last array:
        the greedy token's id there."""
        mass = None
        if any(e.probe is not None for e in encoded):
            check_marks_words(self.tokenizer, self.word_initial, self.loaded.name)
            mass = torch.from_numpy(self.word_initial).to(self.output_device)
        unique, which = distinct(encoded)
        wanted = None if only is None else sorted({which[i] for i in only})
        roots = self.plan(unique, with_context)
        total = len(unique) if wanted is None else len(wanted)
        bar = progress_bar(total=total, desc=desc, unit="seq", disable=not self.progress, leave=False)
        try:
            values = self.executor.run(roots, len(unique), on_result=bar.update, only=wanted, mass=mass, greedy=greedy)
        finally:
            bar.close()
        return [values[k] for k in which]
