"""Masked LMs (BERT, RoBERTa, DeBERTa, LTG-BERT) behind the scoring engine's interface.

A masked LM has no left-to-right probability; it is scored by pseudo-log-likelihood (PLL):
each target token is replaced by the mask token in its own copy of the sequence, and its
log-prob is read at that position with every other token visible (Salazar et al. 2020,
``variant="pll"``). ``variant="within_word_l2r"`` also masks the tokens of the same word to
its right (Kauf & Ivanova 2023), so that a word split into pieces is not predicted from its
own later pieces. A sentence's PLL is the sum of its terms, so the sentence readouts (LP,
MeanLP, PenLP, SLOR...) read it as they read a causal LM's log-probs.

A request with a context: context and target are one text between the tokenizer's special
tokens; the context is visible and unscored, only the target tokens are masked (in turn) and
scored, and the target's own other tokens stay visible: the PLL of the target given the
context. This is not a left-to-right continuation, so the methods that need one (prompts,
next-word prediction, SyntaxGym regions) are not applicable (``features`` lacks
"continuation"). ``with_context`` also scores the context tokens the same way.

Every masked copy of the run's sequences is one row; rows are ordered by length and batched
under a token budget (copies of many sentences together, rows of one length only, so no
padding), the encoder runs once per batch and the vocabulary head only at the masked
positions (:func:`helpers.engine.head.logprobs_at`: float32 log-softmax, float64 results).
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import torch

from .head import halving_on_oom, logprobs_at
from .interface import Request, Scored
from .scorer_base import ScoresRequests, checked_settings
from .masked_encoding import VARIANTS, MaskedEncoded, checked_variant, encode_many, masked_positions
from ..models import LoadedModel
from ..progress import bar as progress_bar
from ..settings import AUTO, Settings

__all__ = ["MaskedScorer", "VARIANTS"]

HEAD_NAMES = ("cls", "lm_head", "head", "classifier", "generator_lm_head")  # the MLM head's attribute, by family


class MaskedScorer(ScoresRequests):
    """Score text with a masked LM (``AutoModelForMaskedLM``) by pseudo-log-likelihood.

    ``variant`` (else the ``masked_variant`` setting; "auto": "pll"): "pll" (Salazar et al. 2020) or
    "within_word_l2r" (Kauf & Ivanova 2023). Of ``settings``, ``token_budget`` bounds the tokens of one
    forward pass (rows x length), ``batch_size`` its rows; ``start`` takes only "auto": the tokenizer's own special tokens frame
    every text; every share mode runs identical sequences once.
    """

    features = frozenset()  # of SCORER_FEATURES: no continuation, no outlines, no token mass

    @classmethod
    def refuses(cls, settings, name: str) -> str | None:
        """A masked LM is framed by its tokenizer's special tokens: every start convention but "auto" is refused."""
        if settings.start != AUTO:
            return (f"start={settings.start!r} is a causal-model convention; {name} is a masked LM, scored with its "
                    "tokenizer's special tokens around the text: use start='auto'")
        return None

    def __init__(self, loaded: LoadedModel, settings: Settings | None = None, *, variant: str | None = None):
        if not isinstance(loaded, LoadedModel):
            raise TypeError(f"MaskedScorer takes a LoadedModel (helpers.models.load, or LoadedModel.wrap(model, "
                            f"tokenizer)), got {type(loaded).__name__}")
        if loaded.kind != "masked":
            raise TypeError(f"{loaded.name} is a {loaded.kind!r} model, not a masked LM; score it with "
                            "helpers.engine.kinds.scorer_for")
        tokenizer = loaded.tokenizer
        if not getattr(tokenizer, "is_fast", False):
            raise TypeError("the engine needs a fast tokenizer (it reads character offsets)")
        if tokenizer.mask_token_id is None:
            raise ValueError(f"{loaded.name}'s tokenizer has no mask token: pseudo-log-likelihood masks each token")
        self.settings = settings = checked_settings(settings)
        if refused := self.refuses(settings, loaded.name):
            raise ValueError(refused)
        share = "prefix" if settings.share == AUTO else settings.share  # identical sequences run once in any mode
        token_budget, batch_size = settings.given("token_budget"), settings.given("batch_size")
        self.variant = checked_variant(variant or settings.given("masked_variant") or "pll")
        self.loaded, self.model, self.tokenizer, self.share = loaded, loaded.model, tokenizer, share
        self.mask_id = tokenizer.mask_token_id
        limit = getattr(tokenizer, "model_max_length", None)
        self.max_positions = int(limit) if limit and limit < 1_000_000 else None
        self.progress = settings.progress
        self.start_id, self.start = None, "special-tokens"
        self.start_token = f"masked:{self.variant};special_tokens={tokenizer.cls_token or tokenizer.bos_token}"
        self.device = loaded.input_device
        self.base, self.head = _split_head(self.model, tokenizer, self.device)
        self.vocab = int(self.model.config.vocab_size)
        self.token_budget = int(token_budget or (32768 if self.device.type == "cuda" else 4096))
        self.batch_size = batch_size
        self.forward_calls = self.tokens_run = 0

    def encode_many(self, requests: Sequence[Request]) -> list[MaskedEncoded]:
        """Token ids of every request (see :class:`~helpers.engine.masked_encoding.MaskedEncoded`)."""
        return encode_many(self.tokenizer, requests, self.max_positions)

    def encode(self, request):
        raise NotImplementedError("constrained decoding (method 'ab' with outlines) needs a causal model")

    def _scored(self, enc: MaskedEncoded, lp: np.ndarray, raw: np.ndarray, with_context: bool) -> Scored:
        ids = list(enc.ids[enc.first:enc.end])
        return Scored(token_ids=ids, tokens=self.tokenizer.convert_ids_to_tokens(ids), logprobs=lp[enc.first:enc.end],
                      start_token=self.start_token,
                      context_logprobs=lp[enc.scorable:enc.first] if with_context else None,
                      context_offsets=list(enc.offsets[enc.scorable:enc.first]) if with_context else None,
                      offsets=list(enc.offsets[enc.first:enc.end]), logits=raw[enc.first:enc.end])

    def token_logprobs(self, encoded: Sequence[MaskedEncoded], with_context: bool = False, desc: str = "scoring",
                       only: Sequence[int] | None = None) -> list[tuple[np.ndarray, np.ndarray] | None]:
        """For each request, (PLL term, raw logit) of every position it scores (the target's, and
        the context's with ``with_context``), NaN elsewhere; identical sequences run once, in an
        order that does not depend on the requests' order. With ``only``, just the batches that
        hold those requests' copies run; the others' entries are None."""
        key = [(e.ids, e.scorable if with_context else e.first, e.end) for e in encoded]
        uniques = sorted(set(key), key=lambda k: (len(k[0]), k))
        index = {k: u for u, k in enumerate(uniques)}
        words = {index[k]: e for k, e in zip(key, encoded)}  # word indices (the within-word variant)
        wanted = None if only is None else {index[key[i]] for i in only}
        copies = [(u, p) for u, (ids, start, end) in enumerate(uniques) for p in range(start, end)]
        values = {u: (np.full(len(k[0]), np.nan), np.full(len(k[0]), np.nan)) for u, k in enumerate(uniques)
                  if wanted is None or u in wanted}
        bar = progress_bar(total=len(copies), desc=desc, unit="copy", disable=not self.progress, leave=False)
        try:
            for batch in self._batches(copies, uniques):
                if wanted is None or any(u in wanted for u, _ in batch):
                    halving_on_oom(batch, lambda part: self._forward(list(part), words, values), shrink=self._shrink,
                                   partial=wanted is not None, budget=lambda: self.token_budget)
                bar.update(len(batch))
        finally:
            bar.close()
        return [values.get(index[k]) for k in key]

    def _shrink(self) -> None:
        self.token_budget = max(1, self.token_budget // 2)

    def _batches(self, copies: list[tuple[int, int]], uniques) -> Iterable[list[tuple[int, int]]]:
        """Consecutive copies of one sequence length, at most ``token_budget`` tokens (and
        ``batch_size`` rows) a batch."""
        batch, length = [], 0
        for u, p in copies:
            n = len(uniques[u][0])
            full = (len(batch) + 1) * n > self.token_budget or (self.batch_size and len(batch) >= self.batch_size)
            if batch and (n != length or full):
                yield batch
                batch = []
            batch.append((u, p))
            length = n
        if batch:
            yield batch

    @torch.no_grad()
    def _forward(self, batch: list[tuple[int, int]], encoded: dict[int, MaskedEncoded], values) -> None:
        """Run one batch of masked copies (sequence ``u``, scored position ``p``) into ``values``."""
        rows, targets = [], []
        for u, p in batch:
            ids = list(encoded[u].ids)
            targets.append(ids[p])
            for j in masked_positions(encoded[u], p, self.variant):
                ids[j] = self.mask_id
            rows.append(ids)
        ids = torch.tensor(rows, dtype=torch.long, device=self.device)
        at = torch.tensor([p for _, p in batch], device=self.device)
        mask = torch.ones_like(ids)
        if self.head is None:  # logits only from the model's own forward
            picked, project = self.model(input_ids=ids, attention_mask=mask).logits[torch.arange(len(batch)), at], None
        else:
            hidden = self.base(input_ids=ids, attention_mask=mask)[0]
            picked, project = hidden[torch.arange(len(batch), device=self.device), at], self.head
        self.forward_calls += 1
        self.tokens_run += ids.numel()
        lp, raw = logprobs_at(project or (lambda x: x), self.vocab, picked, np.arange(len(batch)),
                              np.asarray(targets, dtype=np.int64))
        for k, (u, p) in enumerate(batch):
            if u in values:
                values[u][0][p], values[u][1][p] = lp[k], raw[k]


def _head_candidates(model):
    """Modules that may map the encoder's hidden states to the MLM logits: a named head, or a
    named transform head followed by the output embeddings (ModernBERT's ``head`` + ``decoder``)."""
    out = model.get_output_embeddings()
    for name in HEAD_NAMES:
        head = getattr(model, name, None)
        if isinstance(head, torch.nn.Module):
            yield head
            if isinstance(out, torch.nn.Module) and out is not head:
                yield torch.nn.Sequential(head, out)


@torch.no_grad()
def _split_head(model, tokenizer, device):
    """(the encoder, the MLM head) when head(encoder(ids)) is the model's own logits on a probe,
    else (None, None): logits then come from the full forward at the masked positions."""
    base = getattr(model, "base_model", None)
    if base is None or base is model:
        return None, None
    ids = torch.tensor([tokenizer("The cat sat on the mat.", add_special_tokens=True)["input_ids"]], device=device)
    ids[0, 2] = tokenizer.mask_token_id
    full = model(input_ids=ids).logits.float()
    hidden = base(input_ids=ids)[0]
    for head in _head_candidates(model):
        try:
            split = head(hidden).float()
        except (TypeError, RuntimeError):
            continue
        if split.shape == full.shape and torch.allclose(split, full, atol=1e-4, rtol=1e-4):
            return base, head
    return None, None
