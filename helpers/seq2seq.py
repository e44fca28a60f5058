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
:class:`helpers.scoring.Scorer` (``score``, ``score_texts``, ``next_token``, ``loaded``,
``tokenizer``, ``start_policy``, ``progress``); Hu & Levy's tasks ask for their shapes with
:func:`adapt`, which leaves requests to a causal scorer unchanged. Batches are formed by a
token budget; a source shared by several requests of a batch (a prompt and its two answers)
runs through the encoder once; vocabulary logits are computed at the scored positions only;
log-softmax runs in float32 and sums in float64.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Literal, Sequence

import numpy as np
import torch
from .progress import bar as progress_bar

from .engine.encoding import Request, check_text
from .models import LoadedModel
from .scoring import SHARE_MODES, OptionReadout, Scored, checked_only

SENTINEL, NEXT_SENTINEL = "<extra_id_0>", "<extra_id_1>"
Shape = Literal["decoder", "span", "answer"]
SHAPES = ("decoder", "span", "answer")
LOGIT_ROWS = 1 << 12  # scored positions whose vocabulary logits are computed at once


@dataclass(frozen=True)
class Seq2SeqRequest:
    """One request to an encoder-decoder (see the module docstring for the shapes).

    ``source`` goes to the encoder (for ``span`` it holds ``<extra_id_0>`` once);
    ``context`` is decoder text before the target (``decoder`` shape only); ``separate``
    tokenizes the decoder context and target apart, as :class:`Request` does.
    """

    shape: Shape
    source: str
    target: str
    context: str = ""
    separate: bool = False


def span_request(before: str, target: str, after: str = "") -> Seq2SeqRequest:
    """The sentinel-span request for ``target`` between ``before`` and ``after``; whitespace
    leading the target stays in the source, before the sentinel ("prefix <extra_id_0>")."""
    word = target.lstrip()
    return Seq2SeqRequest("span", before + target[:len(target) - len(word)] + SENTINEL + after, word)


def answer_request(prompt: str, answer: str) -> Seq2SeqRequest:
    """The prompt as source, the answer as target."""
    return Seq2SeqRequest("answer", prompt, answer)


def is_seq2seq(scorer) -> bool:
    """Whether ``scorer`` is an encoder-decoder scorer."""
    return bool(getattr(scorer, "is_seq2seq", False))


def adapt(requests: list[Request], scorer, shape: Literal["span", "prompt"]) -> list:
    """Hu & Levy's requests for ``scorer``: unchanged for a causal scorer; for an
    encoder-decoder, each (context, target) becomes a sentinel span after the context
    (``"span"``: word prediction and comparison), or a prompt and its answer in the
    scorer's prompt shape (``"prompt"``: ``answer`` unless the scorer was built with
    ``prompts="span"``, Hu & Levy's own formulation)."""
    if not is_seq2seq(scorer):
        return requests
    if shape not in ("span", "prompt"):
        raise ValueError(f"shape must be 'span' or 'prompt', got {shape!r}")
    as_span = shape == "span" or scorer.prompts == "span"
    return [span_request(r.context, r.target) if as_span else answer_request(r.context, r.target) for r in requests]


@dataclass(frozen=True)
class Encoded2:
    """A request as token ids: the encoder's ids, the decoder's ids after its start token,
    the scored decoder positions [first, end), and the character span of each decoder token."""

    source_ids: tuple[int, ...]
    decoder_ids: tuple[int, ...]
    first: int
    end: int
    offsets: tuple[tuple[int, int], ...]
    shape: Shape


class Seq2SeqScorer:
    """Score text with an encoder-decoder model (``AutoModelForSeq2SeqLM``).

    ``source`` is the encoder text of plain (``decoder``-shape) requests: empty by default,
    or a task source. ``prompts`` is the shape of Hu & Levy's metalinguistic prompts:
    "answer" (the prompt as source) or "span" (the prompt with a sentinel where the answer
    goes, as Hu & Levy's released code runs Flan-T5). ``span_end`` scores the token that
    closes a sentinel span. ``start`` overrides the decoder start token (a token string);
    there is no minicons mode: the decoder always starts with its start token.
    """

    is_seq2seq = True

    def __init__(self, loaded: LoadedModel, *, source: str = "", prompts: Literal["answer", "span"] = "answer",
                 span_end: bool = True, start: str | None = None, minicons: bool = False, share: str = "prefix",
                 token_budget: int | None = None, batch_size: int | None = None, progress: bool = True):
        if not isinstance(loaded, LoadedModel):
            raise TypeError(f"Seq2SeqScorer takes a LoadedModel (helpers.models.load, or LoadedModel.wrap(model, "
                            f"tokenizer)), got {type(loaded).__name__}")
        model, tokenizer = loaded.model, loaded.tokenizer
        if not getattr(model.config, "is_encoder_decoder", False):
            raise TypeError(f"{loaded.name} is not an encoder-decoder model; score it with helpers.scoring.Scorer")
        if not getattr(tokenizer, "is_fast", False):
            raise TypeError("the engine needs a fast tokenizer (it reads character offsets)")
        if minicons:
            raise ValueError("minicons mode (first token unscored) is for causal models; an encoder-decoder's "
                             "decoder always starts with its decoder start token")
        if prompts not in ("answer", "span"):
            raise ValueError(f"prompts must be 'answer' (prompt as source) or 'span' (sentinel), got {prompts!r}")
        if share not in SHARE_MODES:  # any mode but "none" runs a batch's shared sources once
            raise ValueError(f"share must be one of {', '.join(SHARE_MODES)}, got {share!r}")
        check_text(source, "source", allow_empty=True)
        self.loaded, self.model, self.tokenizer = loaded, model, tokenizer
        self.source, self.prompts, self.span_end, self.share = source, prompts, bool(span_end), share
        self.progress, self.minicons, self.max_positions = progress, False, None
        if start in ("none", "minicons"):
            raise ValueError(f"start={start!r} is a causal-model convention (first token unscored); an "
                             "encoder-decoder's decoder always starts with its decoder start token")
        if start in (None, "auto", "bos-else-eos"):
            self.start_id = model.config.decoder_start_token_id
            if self.start_id is None:
                raise ValueError(f"{loaded.name} has no decoder_start_token_id; pass start=<token string>")
        else:
            self.start_id = tokenizer.convert_tokens_to_ids(start)
            if self.start_id is None or self.start_id == tokenizer.unk_token_id:
                raise ValueError(f"start token {start!r} is not in the tokenizer's vocabulary")
        start_token = tokenizer.convert_ids_to_tokens(self.start_id)
        self.start_convention = "decoder-start"  # recorded by the runner beside start_policy
        self.start_policy = (f"decoder_start:{start_token};source={source!r};prompts={prompts};"
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
        """Token ids of every request (see :class:`Encoded2`)."""
        return [self._encode(r, i) for i, r in enumerate(requests)]

    def encode(self, request):
        raise NotImplementedError("constrained decoding (method 'ab' with outlines) needs a causal model; "
                                  "decide A/B prompts of an encoder-decoder with 'ab_logit' (use_outlines=False)")

    def _source_ids(self, text: str) -> tuple[int, ...]:
        return tuple(self.tokenizer(text, add_special_tokens=True)["input_ids"])

    def _target(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        enc = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        if not enc["input_ids"]:
            raise ValueError(f"target {text!r} tokenizes to no tokens")
        return list(enc["input_ids"]), [tuple(o) for o in enc["offset_mapping"]]

    def _encode(self, r, i: int) -> Encoded2:
        if isinstance(r, Request):
            r = Seq2SeqRequest("decoder", self.source, r.target, r.context, r.separate)
        if not isinstance(r, Seq2SeqRequest):
            raise TypeError(f"request {i} is a {type(r).__name__}; build requests with Request(context, target) "
                            "or helpers.seq2seq.Seq2SeqRequest")
        if r.shape not in SHAPES:
            raise ValueError(f"request {i}: shape must be one of {SHAPES}, got {r.shape!r}")
        check_text(r.source, "source", allow_empty=True)
        check_text(r.context, "context", allow_empty=True)
        check_text(r.target, "target", allow_empty=False)
        source = self._source_ids(r.source)
        if r.shape == "answer":
            ids, offsets = self._target(r.target)
            return Encoded2(source, tuple(ids), 0, len(ids), tuple(offsets), "answer")
        if r.shape == "span":
            return self._encode_span(r, source)
        if r.separate:
            ctx = self.tokenizer(r.context, add_special_tokens=False)["input_ids"] if r.context else []
            ids, offsets = self._target(r.target)
            at = len(r.context)
            return Encoded2(source, tuple(ctx) + tuple(ids), len(ctx), len(ctx) + len(ids),
                            tuple([(0, 0)] * len(ctx) + [(a + at, b + at) for a, b in offsets]), "decoder")
        enc = self.tokenizer(r.context + r.target, add_special_tokens=False, return_offsets_mapping=True)
        offsets = [tuple(o) for o in enc["offset_mapping"]]
        first = next((j for j, (_, end) in enumerate(offsets) if end > len(r.context)), None)
        if first is None:
            raise ValueError(f"target {r.target!r} tokenizes to no tokens after context {r.context[-40:]!r}")
        return Encoded2(source, tuple(enc["input_ids"]), first, len(offsets), tuple(offsets), "decoder")

    def _encode_span(self, r: Seq2SeqRequest, source: tuple[int, ...]) -> Encoded2:
        sentinel = self.tokenizer.convert_tokens_to_ids(SENTINEL)
        if sentinel is None or sentinel == self.tokenizer.unk_token_id or source.count(sentinel) != 1:
            raise ValueError(f"a span request's source must hold {SENTINEL} exactly once, and the tokenizer must "
                             f"know it (T5's sentinels); got source {r.source[-60:]!r}")
        after = r.source.split(SENTINEL, 1)[1]
        closing = self.tokenizer.convert_tokens_to_ids(NEXT_SENTINEL) if after.strip() else self.tokenizer.eos_token_id
        ids, offsets = self._target(r.target)
        n = len(r.target)
        return Encoded2(source, (sentinel, *ids, closing), 1, len(ids) + 1 + self.span_end,
                        ((0, 0), *offsets, (n, n)), "span")

    # ---------------------------------------------------------------- scoring
    def score(self, requests: Sequence[Request | Seq2SeqRequest], with_context: bool = False,
              desc: str = "scoring", only: Sequence[int] | None = None) -> list[Scored]:
        """Score every request; results in input order. ``with_context`` also returns the
        log-probs of the decoder context tokens (empty for span and answer requests). With
        ``only`` (indices), just those requests, in the whole list's batches (a shard of a run:
        the whole run's numbers bit for bit); results in the order of ``only``."""
        requests = list(requests)
        if not requests:
            return []
        encoded = self.encode_many(requests)
        only = checked_only(only, len(requests))
        values = self.token_logprobs(encoded, with_context=with_context, desc=desc, only=only)
        out = []
        for enc, (lp, raw) in ((encoded[i], values[i]) for i in (range(len(encoded)) if only is None else only)):
            ids = list(enc.decoder_ids[enc.first:enc.end])
            out.append(Scored(
                token_ids=ids, tokens=self.tokenizer.convert_ids_to_tokens(ids), logprobs=lp[enc.first:enc.end],
                start_token=self.start_policy,
                context_logprobs=(lp[:enc.first] if enc.shape == "decoder" else np.empty(0)) if with_context else None,
                context_offsets=(list(enc.offsets[:enc.first]) if enc.shape == "decoder" else []) if with_context
                else None,
                offsets=list(enc.offsets[enc.first:enc.end]), logits=raw[enc.first:enc.end]))
        return out

    def score_texts(self, texts: Iterable[str], desc: str = "scoring") -> list[Scored]:
        """Score sentences on their own (decoder shape after the scorer's source)."""
        return self.score([Request("", t) for t in texts], desc=desc)

    def next_token(self, prompts: Sequence[str], options: Sequence[str], separate: bool = False,
                   desc: str = "readout") -> list[OptionReadout]:
        """Log-prob of each option after each prompt, the prompt read in the scorer's prompt
        shape (``answer``: the prompt as source; ``span``: a sentinel after the prompt)."""
        options = list(options)
        if not options:
            raise ValueError("give at least one option")
        for o in options:
            check_text(o, "option", allow_empty=False)
        flat = adapt([Request(p, o) for p in prompts for o in options], self, "prompt")
        scored = self.score(flat, desc=desc)
        out = []
        for i in range(len(prompts)):
            chunk = scored[i * len(options):(i + 1) * len(options)]
            out.append(OptionReadout(logprobs={o: s.total for o, s in zip(options, chunk)},
                                     forms={o: s.tokens for o, s in zip(options, chunk)},
                                     n_tokens={o: s.n_tokens for o, s in zip(options, chunk)},
                                     logits={o: float(s.logits[0]) for o, s in zip(options, chunk)}))
        return out

    def token_logprobs(self, encoded: Sequence[Encoded2], with_context: bool = False,
                       desc: str = "scoring", only: Sequence[int] | None = None
                       ) -> list[tuple[np.ndarray, np.ndarray] | None]:
        """For each request, (log p(decoder token j | source, decoder tokens < j), raw logit)
        for every decoder position j; entries not needed are NaN. With ``only``, just the
        whole list's batches that hold those requests run; the others' entries are None."""
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
                self._run(batch, encoded, need, results)
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

    def _run(self, batch: list[int], encoded, need, results) -> None:
        """Run one batch, halving it on CUDA out-of-memory."""
        try:
            self._forward(batch, encoded, need, results)
        except torch.cuda.OutOfMemoryError:
            if len(batch) == 1:
                raise
            torch.cuda.empty_cache()
            self.token_budget = max(1, self.token_budget // 2)
            half = len(batch) // 2
            self._run(batch[:half], encoded, need, results)
            self._run(batch[half:], encoded, need, results)

    @torch.no_grad()
    def _forward(self, batch: list[int], encoded, need, results) -> None:
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
        label_t = torch.tensor(labels)
        lp_parts, raw_parts = [], []
        for at in range(0, len(labels), LOGIT_ROWS):
            chunk = picked[at:at + LOGIT_ROWS]
            logits = (chunk if self.scale is None else self.head(chunk)).float()  # [n, V]
            lab = label_t[at:at + LOGIT_ROWS, None].to(logits.device)
            raw_parts.append(logits.gather(1, lab)[:, 0])
            lp_parts.append(torch.log_softmax(logits, dim=-1).gather(1, lab)[:, 0])
        lp = torch.cat(lp_parts).double().cpu().numpy() if lp_parts else np.empty(0)
        raw = torch.cat(raw_parts).double().cpu().numpy() if raw_parts else np.empty(0)
        at = 0
        for b, (i, e) in enumerate(zip(batch, items)):
            n = e.end - need[i]
            values, logits = np.full(len(e.decoder_ids), np.nan), np.full(len(e.decoder_ids), np.nan)
            values[need[i]:e.end], logits[need[i]:e.end] = lp[at:at + n], raw[at:at + n]
            results[i] = (values, logits)
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
