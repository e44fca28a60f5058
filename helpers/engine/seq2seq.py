"""Encoder-decoder models (T5, Flan-T5) behind the scoring engine's interface.

Hu & Levy (2023) evaluate Flan-T5 small, large and XL beside causal models. An
encoder-decoder scores a target given a source, and a request takes one of three shapes:

- ``decoder`` (direct probability): the encoder reads a source (empty by default, or a
  task text), the decoder reads a context and then the target, whose tokens are scored.
  A plain :class:`~helpers.engine.encoding.Request` maps here, so every method of the
  project runs on an encoder-decoder as on a causal LM, with the decoder as the LM.
- ``span`` (T5's sentinel span, how Hu & Levy's released code scores Flan-T5): the encoder
  reads the text with ``<extra_id_0>`` where the target goes, the decoder reads
  ``<extra_id_0>`` and then the target; the token that closes the span (``</s>`` at the end
  of the text, ``<extra_id_1>`` inside it) is scored with the target, as their code sums it
  (``span_end=False`` leaves it out).
- ``answer`` (metalinguistic prompts): the prompt is the source, the answer the target,
  read from the decoder's start.

:class:`Seq2SeqScorer` offers what the runner and the methods use of
:class:`helpers.engine.interface.Scorer` (``score``, ``score_texts``, ``shaped``, ``loaded``,
``tokenizer``, ``start_token``, ``progress``); Hu & Levy's tasks ask for their shapes with
:func:`helpers.methods.hu_levy.adapt`, which leaves requests to a causal scorer unchanged. Batches are formed by a
token budget; a source shared by several requests of a batch (a prompt and its two answers)
runs through the encoder once; vocabulary logits are computed at the scored positions only;
log-softmax runs in float32 and sums in float64.
"""
from __future__ import annotations

from typing import Iterable, Literal, Sequence

import numpy as np
import torch

from .head import halving_on_oom, logprobs_at
from .interface import Request, RequestShape, Scored, checked_shape
from .scorer_base import ScoresRequests, check_text, checked_settings
from .seq2seq_encoding import (NEXT_SENTINEL, SENTINEL, SHAPES, Encoded2, Seq2SeqEncoder, Seq2SeqRequest, answer_request,
                               span_request)
from ..models import LoadedModel
from ..progress import bar as progress_bar
from ..settings import AUTO, Settings

__all__ = ["NEXT_SENTINEL", "SENTINEL", "SHAPES", "Encoded2", "Seq2SeqRequest", "Seq2SeqScorer", "answer_request",
           "span_request"]

class Seq2SeqScorer(ScoresRequests):
    """Score text with an encoder-decoder model (``AutoModelForSeq2SeqLM``).

    ``source`` is the encoder text of plain (``decoder``-shape) requests: empty by default,
    or a task source. ``prompts`` is the shape of Hu & Levy's metalinguistic prompts:
    "answer" (the prompt as source) or "span" (the prompt with a sentinel where the answer
    goes, as Hu & Levy's released code runs Flan-T5). ``span_end`` scores the token that
    closes a sentinel span. Of ``settings`` (:class:`helpers.settings.Settings`), ``start="token:<pad>"``
    overrides the decoder start token ("auto" and "bos-else-eos": the configuration's); there is no
    minicons or "none" mode: the decoder always starts with its start token; every share mode but
    "none" runs a batch's shared sources once ("auto": "prefix").
    """

    # of SCORER_FEATURES: continuations (the decoder reads left to right), neither outlines' answers nor the
    # causal body's token mass
    features = frozenset({"continuation", "source"})

    @classmethod
    def refuses(cls, settings, name: str) -> str | None:
        """The decoder always starts with its decoder start token ("auto", "bos-else-eos" or a token
        string): the causal-model conventions that leave the first token unscored are refused."""
        start = settings.start_for(AUTO)
        if start in ("none", "minicons"):
            return (f"start={start!r} is a causal-model convention (first token unscored); {name} is an "
                    "encoder-decoder, whose decoder always starts with its decoder start token: use start='auto'")
        return None

    def __init__(self, loaded: LoadedModel, settings: Settings | None = None, *, source: str = "",
                 prompts: Literal["answer", "span"] = "answer", span_end: bool = True):
        if not isinstance(loaded, LoadedModel):
            raise TypeError(f"Seq2SeqScorer takes a LoadedModel (helpers.models.load, or LoadedModel.wrap(model, "
                            f"tokenizer)), got {type(loaded).__name__}")
        model, tokenizer = loaded.model, loaded.tokenizer
        if not getattr(model.config, "is_encoder_decoder", False):
            raise TypeError(f"{loaded.name} is not an encoder-decoder model; score it with helpers.engine.interface.Scorer")
        if not getattr(tokenizer, "is_fast", False):
            raise TypeError("the engine needs a fast tokenizer (it reads character offsets)")
        if prompts not in ("answer", "span"):
            raise ValueError(f"prompts must be 'answer' (prompt as source) or 'span' (sentinel), got {prompts!r}")
        self.settings = settings = checked_settings(settings)
        start = settings.start_for(AUTO)  # "auto": the decoder start token
        token_budget, batch_size = settings.given("token_budget"), settings.given("batch_size")
        share = "prefix" if settings.share == AUTO else settings.share  # any mode but "none": shared sources run once
        check_text(source, "source", allow_empty=True)
        self.loaded, self.model, self.tokenizer = loaded, model, tokenizer
        self.source, self.prompt_shape, self.span_end, self.share = source, prompts, bool(span_end), share
        self.encoding = Seq2SeqEncoder(tokenizer, source, self.span_end)
        self.progress, self.max_positions = settings.progress, None
        if refused := self.refuses(settings, loaded.name):
            raise ValueError(refused)
        if start in (AUTO, "bos-else-eos"):
            self.start_id = model.config.decoder_start_token_id
            if self.start_id is None:
                raise ValueError(f"{loaded.name} has no decoder_start_token_id; pass start=<token string>")
        else:
            self.start_id = tokenizer.convert_tokens_to_ids(start)
            if self.start_id is None or self.start_id == tokenizer.unk_token_id:
                raise ValueError(f"start token {start!r} is not in the tokenizer's vocabulary")
        start_token = tokenizer.convert_ids_to_tokens(self.start_id)
        self.start = "decoder-start"  # recorded by the runner beside start_token
        self.start_token = (f"decoder_start:{start_token};source={source!r};prompts={prompts};"
                             f"span_end={'scored' if self.span_end else 'unscored'}")
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        self.device = loaded.input_device  # the input embedding's device (accelerate's, with a device map)
        self.encoder, self.decoder, self.head = model.get_encoder(), model.get_decoder(), model.get_output_embeddings()
        self.scale = _head_scale(model, self.encoder, self.decoder, self.head, self.start_id, self.device)
        on_gpu = self.device.type == "cuda"
        self.token_budget = int(token_budget or (32768 if on_gpu else 4096))
        self.batch_size = batch_size
        self.forward_calls = self.tokens_run = 0

    # ---------------------------------------------------------------- encoding
    def encode_many(self, requests: Sequence[Request | Seq2SeqRequest]) -> list[Encoded2]:
        """Token ids of every request (see :class:`~helpers.engine.seq2seq_encoding.Encoded2`)."""
        return self.encoding.encode_many(requests)

    def encode(self, request):
        raise NotImplementedError("constrained decoding (method 'ab' with outlines) needs a causal model; "
                                  "decide A/B prompts of an encoder-decoder with 'ab_logit' (use_outlines=False)")

    # ---------------------------------------------------------------- scoring
    def _scored(self, enc: Encoded2, lp: np.ndarray, raw: np.ndarray, with_context: bool) -> Scored:
        """One request's result; ``with_context`` gives the decoder context tokens' log-probs
        (none for span and answer requests)."""
        ids = list(enc.decoder_ids[enc.first:enc.end])
        decoder = enc.shape == "decoder"
        return Scored(
            token_ids=ids, tokens=self.tokenizer.convert_ids_to_tokens(ids), logprobs=lp[enc.first:enc.end],
            start_token=self.start_token,
            context_logprobs=(lp[:enc.first] if decoder else np.empty(0)) if with_context else None,
            context_offsets=(list(enc.offsets[:enc.first]) if decoder else []) if with_context else None,
            offsets=list(enc.offsets[enc.first:enc.end]), logits=raw[enc.first:enc.end])

    def shaped(self, requests: Sequence[Request], shape: RequestShape) -> list[Seq2SeqRequest]:
        """Each (context, target) as a sentinel span after the context (``"span"``: Hu & Levy's
        word prediction and comparison), or a prompt and its answer in :attr:`prompt_shape`
        (``"prompt"``: ``answer`` unless built with ``prompts="span"``, Hu & Levy's own formulation)."""
        as_span = checked_shape(shape) == "span" or self.prompt_shape == "span"
        return [span_request(r.context, r.target) if as_span else answer_request(r.context, r.target)
                for r in requests]

    def score_source_ids(self, pairs: Sequence[tuple[Sequence[int], Sequence[int]]], greedy: bool = False,
                         desc: str = "scoring") -> list[tuple[np.ndarray, np.ndarray | None]]:
        """Requests already tokenized, each ``(source ids, target ids)``: the encoder reads the
        source, the decoder its start token and then the target, every target token scored
        (float64); with ``greedy``, also the greedy token's id at each of them, from the same pass
        (lm-evaluation-harness's seq2seq requests: :mod:`helpers.harness`)."""
        encoded = [Encoded2(tuple(map(int, src)), tuple(map(int, tgt)), 0, len(tgt), (), "decoder") for src, tgt in pairs]
        if any(not e.source_ids or not e.decoder_ids for e in encoded):
            raise ValueError("every request needs a source token and a target token")
        values = self.token_logprobs(encoded, desc=desc, greedy=greedy)
        return [(v[0], v[-1].astype(np.int64) if greedy else None) for v in values]

    def token_logprobs(self, encoded: Sequence[Encoded2], with_context: bool = False,
                       desc: str = "scoring", only: Sequence[int] | None = None, greedy: bool = False
                       ) -> list[tuple[np.ndarray, ...] | None]:
        """For each request, (log p(decoder token j | source, decoder tokens < j), raw logit[,
        greedy id]) for every decoder position j; entries not needed are NaN. With ``only``, just
        the whole list's batches that hold those requests run; the others' entries are None."""
        need = [0 if with_context else e.first for e in encoded]
        order = sorted(range(len(encoded)), key=lambda i: (len(encoded[i].source_ids), len(encoded[i].decoder_ids)))
        results: list = [None] * len(encoded)
        wanted = None if only is None else set(only)
        bar = progress_bar(total=len(encoded) if wanted is None else len(wanted), desc=desc, unit="seq",
                           disable=not self.progress, leave=False)
        try:
            for batch in self._batches(order, encoded):
                if wanted is not None and wanted.isdisjoint(batch):
                    continue
                self._run(batch, encoded, need, results, partial=wanted is not None, greedy=greedy)
                bar.update(len(batch) if wanted is None else len(wanted.intersection(batch)))
        finally:
            bar.close()
        return results

    def _batches(self, order: list[int], encoded: Sequence[Encoded2]) -> Iterable[list[int]]:
        """Batches whose padded tokens (each distinct source once, every decoder row) fit the
        token budget, and of at most ``batch_size`` requests."""
        batch, sources, src_len, dec_len = [], set(), 0, 0
        for i in order:
            e = encoded[i]
            new = self.share != "none" and e.source_ids in sources
            grown_src, grown_dec = max(src_len, len(e.source_ids)), max(dec_len, len(e.decoder_ids))
            n_src = len(sources) + (0 if new else 1) if self.share != "none" else len(batch) + 1
            cost = n_src * grown_src + (len(batch) + 1) * grown_dec
            if batch and (cost > self.token_budget or (self.batch_size and len(batch) >= self.batch_size)):
                yield batch
                batch, sources, grown_src, grown_dec = [], set(), len(e.source_ids), len(e.decoder_ids)
            batch.append(i)
            sources.add(e.source_ids)
            src_len, dec_len = grown_src, grown_dec
        if batch:
            yield batch

    def _run(self, batch: list[int], encoded, need, results, partial: bool, greedy: bool = False) -> None:
        """Run one batch, halved on CUDA out-of-memory (:func:`helpers.engine.head.halving_on_oom`;
        never when only some requests run, ``partial``)."""
        def shrink() -> None:
            self.token_budget = max(1, self.token_budget // 2)

        halving_on_oom(batch, lambda part: self._forward(list(part), encoded, need, results, greedy), shrink=shrink,
                       partial=partial, budget=lambda: self.token_budget)

    @torch.no_grad()
    def _forward(self, batch: list[int], encoded, need, results, greedy: bool = False) -> None:
        items = [encoded[i] for i in batch]
        sources = list(dict.fromkeys(e.source_ids for e in items)) if self.share != "none" else \
            [e.source_ids for e in items]
        where = {s: k for k, s in enumerate(sources)} if self.share != "none" else None
        src, src_mask = _pad(sources, self.pad_id, self.device)  # [U, Ls]
        index = torch.tensor([where[e.source_ids] for e in items] if where else list(range(len(items))),
                             device=self.device)
        dec, dec_mask = _pad([(self.start_id, *e.decoder_ids[:-1]) for e in items], self.pad_id, self.device)  # [B, Ld]
        rows, cols, labels = [], [], []
        for b, (i, e) in enumerate(zip(batch, items)):
            for j in range(need[i], e.end):
                rows.append(b)
                cols.append(j)
                labels.append(e.decoder_ids[j])
        if self.scale is None:  # logits only from the model's own forward
            logits_all = self.model(attention_mask=src_mask[index], decoder_input_ids=dec,
                                    decoder_attention_mask=dec_mask, input_ids=src[index]).logits  # [B, Ld, V]
            picked = logits_all[rows, cols]
        else:
            enc = self.encoder(input_ids=src, attention_mask=src_mask).last_hidden_state  # [U, Ls, d]
            hidden = self.decoder(input_ids=dec, attention_mask=dec_mask, encoder_hidden_states=enc[index],
                                  encoder_attention_mask=src_mask[index]).last_hidden_state  # [B, Ld, d]
            picked = hidden[rows, cols] * self.scale  # [N, d]
        self.forward_calls += 1
        self.tokens_run += int(src_mask.sum()) + int(dec_mask.sum())
        project = (lambda rows: rows) if self.scale is None else self.head
        read = logprobs_at(project, picked.shape[-1] if self.scale is None else self.head.weight.shape[0], picked,
                           np.arange(len(labels)), np.asarray(labels, dtype=np.int64), greedy=greedy)
        at = 0
        for b, (i, e) in enumerate(zip(batch, items)):
            n = e.end - need[i]
            results[i] = tuple(np.full(len(e.decoder_ids), np.nan) for _ in read)  # log-probs, logits[, greedy ids]
            for array, got in zip(results[i], read):
                array[need[i]:e.end] = got[at:at + n]
            at += n


def _pad(rows: Sequence[Sequence[int]], pad_id: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded ids [n, longest] and their attention mask."""
    longest = max(len(r) for r in rows)
    ids = torch.full((len(rows), longest), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), longest), dtype=torch.long)
    for k, r in enumerate(rows):
        ids[k, :len(r)] = torch.tensor(r, dtype=torch.long)
        mask[k, :len(r)] = 1
    return ids.to(device), mask.to(device)


@torch.no_grad()
def _head_scale(model, encoder, decoder, head, start_id: int, device) -> float | None:
    """The factor on the decoder's last hidden state before the output embedding (1, or
    d_model**-0.5 for T5s that tie their embeddings), checked against the model's own
    logits on a probe; None when neither matches (logits then come from the full forward)."""
    src = torch.tensor([[3, 4, 5, 1]], device=device)
    dec = torch.tensor([[start_id, 3, 4]], device=device)
    full = model(input_ids=src, decoder_input_ids=dec).logits.float()
    hidden = decoder(input_ids=dec, encoder_hidden_states=encoder(input_ids=src).last_hidden_state).last_hidden_state
    width = getattr(model.config, "d_model", None) or hidden.shape[-1]
    for scale in (1.0, width ** -0.5):
        split = head(hidden * scale).float()
        if split.shape == full.shape and torch.allclose(split, full, atol=1e-3, rtol=1e-3):
            return scale
    return None
