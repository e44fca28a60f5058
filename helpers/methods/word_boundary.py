"""Word-boundary probability for corrected word and region surprisal.

With a tokenizer that marks the *beginning* of a word (GPT-2's "Ġword", SentencePiece's
"▁word"), the space before a word travels with the word's first token, so summing a word's
(or a region's) own tokens leaves out the probability that it *ends* there and counts, in
its first token, the probability that the word before it ended (Pimentel & Meister 2024,
"How to compute the probability of a word"; Oh & Schuler 2024). The corrected
log-probability of the text between word boundaries at target tokens ``i`` and ``j`` is

    sum(lp[i:j]) + log B(j) - log B(i),   B(k) = sum over word-initial tokens t of p(t | tokens < k)

with B = 1 at the start of a text (it starts a word) and, after the last token, the mass of
word-initial tokens and end-of-sequence (the text may go on with a word or end).

The engine returns the log-probs of the tokens asked for only; these sums need the whole
vocabulary at a few positions, so :func:`boundary_logmass` runs the model once more over the
same encoded sequences (the engine's own encoding), reading the logits at the asked
positions only (float32 log-sum-exp, float64 results, as the engine does).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from ..engine.interface import Request

TOKEN_BUDGET = 4096  # real plus padding tokens per forward pass of the boundary run


def bow_mask(tokenizer, vocab_size: int) -> np.ndarray:
    """[vocab_size] bool: tokens whose text begins with whitespace (word-initial); special
    tokens and ids past the tokenizer's vocabulary are not. Each token is decoded after an
    anchor token, so that decoders that drop a text's leading space keep it."""
    anchor = tokenizer("a", add_special_tokens=False)["input_ids"][:1]
    base = len(tokenizer.decode(anchor, clean_up_tokenization_spaces=False))
    n = min(len(tokenizer), vocab_size)
    texts = tokenizer.batch_decode([anchor + [i] for i in range(n)], clean_up_tokenization_spaces=False)
    mask = np.zeros(vocab_size, dtype=bool)
    mask[:n] = [t[base:base + 1].isspace() for t in texts]
    mask[[i for i in tokenizer.all_special_ids if i < vocab_size]] = False
    return mask


def boundary_logmass(scorer, requests: Sequence[Request], wanted: Sequence[Sequence[int]], mask: np.ndarray,
                     end_ids: Sequence[int] = ()) -> list[np.ndarray]:
    """For each request and each target-token index ``k`` in its ``wanted`` list: log of the
    probability mass of ``mask`` tokens at the position that predicts target token ``k``
    (``k`` = the number of target tokens: the position after the last one, where ``end_ids``
    count too). Sequences are encoded by the scorer's encoder, so ids and start token are
    the engine's."""
    encoded = scorer.encode_many(list(requests))
    body, head, device = scorer.model.base_model, scorer.model.get_output_embeddings(), scorer.device
    vocab = head.weight.shape[0]
    inner = torch.zeros(vocab, dtype=torch.bool)
    inner[:min(vocab, len(mask))] = torch.as_tensor(mask[:vocab])
    final = inner.clone()
    final[[i for i in end_ids if i is not None and i < vocab]] = True
    inner, final = inner.to(scorer.output_device), final.to(scorer.output_device)  # compared with the head's logits
    out = [np.full(len(w), np.nan) for w in wanted]
    order = sorted((i for i, w in enumerate(wanted) if len(w)), key=lambda i: len(encoded[i].ids))
    batch: list[int] = []
    for i in order + [None]:
        if i is not None and (not batch or (len(batch) + 1) * len(encoded[i].ids) <= TOKEN_BUDGET):
            batch.append(i)
            continue
        if batch:
            _run(batch, encoded, wanted, body, head, inner, final, device, out)
        batch = [i] if i is not None else []
    return out


@torch.inference_mode()
def _run(batch, encoded, wanted, body, head, inner, final, device, out) -> None:
    width = max(len(encoded[i].ids) for i in batch)
    ids = torch.zeros((len(batch), width), dtype=torch.long)  # [rows, width], right-padded
    attention = torch.zeros((len(batch), width), dtype=torch.long)
    for r, i in enumerate(batch):
        ids[r, :len(encoded[i].ids)] = torch.tensor(encoded[i].ids)
        attention[r, :len(encoded[i].ids)] = 1
    positions = torch.arange(width).expand(len(batch), width)
    hidden = body(input_ids=ids.to(device), attention_mask=attention.to(device),
                  position_ids=positions.to(device)).last_hidden_state  # [rows, width, hidden]
    rows, cols, ends, sinks = [], [], [], []
    for r, i in enumerate(batch):
        enc, n = encoded[i], len(encoded[i].ids) - encoded[i].first
        for j, k in enumerate(wanted[i]):
            if not 0 <= k <= n:
                raise IndexError(f"target token index {k} outside 0..{n}")
            rows.append(r), cols.append(enc.first + k - 1), ends.append(k == n), sinks.append((i, j))
    logits = head(hidden[torch.tensor(rows, device=device), torch.tensor(cols, device=device)]).float()  # [m, vocab]
    keep = torch.where(torch.tensor(ends, device=device)[:, None], final[None, :], inner[None, :])  # [m, vocab]
    values = (torch.logsumexp(logits.masked_fill(~keep, float("-inf")), dim=-1)
              - torch.logsumexp(logits, dim=-1)).double().cpu().numpy()
    for (i, j), v in zip(sinks, values):
        out[i][j] = v
