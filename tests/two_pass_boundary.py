"""The word-corrected SyntaxGym region surprisal as it was computed before the engine read the
word-boundary mass in its own pass (kept here as the reference of the one-pass computation):
a plain scoring pass, then a second run of the model over the same encoded sequences, reading
the logits at the regions' edges only (float32 log-sum-exp over the word-initial tokens, and EOS
after the last token, float64 results)."""
from __future__ import annotations

import json
import math
from collections.abc import Sequence

import numpy as np
import torch

from helpers.engine.interface import Request
from helpers.engine.word_initial import word_initial_mask  # the same word-initial set: the passes differ, not the set
from helpers.methods import get
from helpers.methods.base import PassContext
from helpers.methods.prompt_text import with_context
from helpers.methods.syntaxgym import _Condition, _request
from helpers.settings import Settings

TOKEN_BUDGET = 4096  # real plus padding tokens per forward pass of the boundary run
LN2 = math.log(2.0)


def boundary_logmass(scorer, requests: Sequence[Request], wanted: Sequence[Sequence[int]], mask: np.ndarray,
                     end_ids: Sequence[int] = ()) -> list[np.ndarray]:
    """For each request and target-token index ``k`` in ``wanted``: log of the mass of ``mask``
    tokens at the position predicting target token ``k`` (``k`` = n: after the last one, where
    ``end_ids`` count too), from a second run of the model over the engine's encoding."""
    encoded = scorer.encode_many(list(requests))
    body, head, device = scorer.model.base_model, scorer.model.get_output_embeddings(), scorer.device
    vocab = head.weight.shape[0]
    inner = torch.zeros(vocab, dtype=torch.bool)
    inner[:min(vocab, len(mask))] = torch.as_tensor(mask[:vocab])
    final = inner.clone()
    final[[i for i in end_ids if i is not None and i < vocab]] = True
    inner, final = inner.to(scorer.output_device), final.to(scorer.output_device)
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
            rows.append(r), cols.append(enc.first + k - 1), ends.append(k == n), sinks.append((i, j))
    logits = head(hidden[torch.tensor(rows, device=device), torch.tensor(cols, device=device)]).float()  # [m, vocab]
    keep = torch.where(torch.tensor(ends, device=device)[:, None], final[None, :], inner[None, :])  # [m, vocab]
    values = (torch.logsumexp(logits.masked_fill(~keep, float("-inf")), dim=-1)
              - torch.logsumexp(logits, dim=-1)).double().cpu().numpy()
    for (i, j), v in zip(sinks, values):
        out[i][j] = v


def two_pass_region_surprisal(scorer, items: list[dict], context: str = "") -> tuple[list[dict], list[dict]]:
    """Per item, the plain and the corrected {(condition, region): bits}, computed the two-pass way."""
    pass_context = PassContext(scorer, "en", Settings(progress=False))
    family = get("syntaxgym").family  # the plain requests: what syntaxgym_word's first pass scored
    _, scored = family.score_pass(scorer, items, None, [context] * len(items), pass_context)
    head = with_context(context, "", pass_context.language)
    plans = [[_Condition.build(cond, s, head) for cond, s in zip(json.loads(item["conditions"]), results)]
             for item, results in zip(items, scored)]
    mask = word_initial_mask(scorer.tokenizer, scorer.model.get_output_embeddings().weight.shape[0])
    requests, wanted = [], []
    for plan, results in zip(plans, scored):
        for c, s in zip(plan, results):
            edges = {k for r in range(len(c.spans)) if (idx := c.tokens_of(r)) for k in (idx[0], idx[-1] + 1)}
            n = len(s.token_ids)
            requests.append(_request(c.head, c.sentence))
            wanted.append(sorted(k for k in edges if k == n or (mask[s.token_ids[k]] and (k > 0 or c.head))))
    values = boundary_logmass(scorer, requests, wanted, mask, [scorer.tokenizer.eos_token_id])
    plain_out, corrected_out, at = [], [], 0
    for plan, results in zip(plans, scored):
        plain, corrected = {}, {}
        for c, s in zip(plan, results):
            edges = dict(zip(wanted[at], values[at].tolist()))
            at += 1
            bits = -np.asarray(s.logprobs, dtype=np.float64) / LN2
            for r, (number, _) in enumerate(c.cond["regions"]):
                key, idx = (c.cond["condition"], int(number)), c.tokens_of(r)
                plain[key] = float(bits[idx].sum()) if idx else 0.0
                shift = edges.get(idx[-1] + 1, 0.0) - edges.get(idx[0], 0.0) if idx else 0.0
                corrected[key] = plain[key] - shift / LN2
        plain_out.append(plain)
        corrected_out.append(corrected)
    return plain_out, corrected_out
