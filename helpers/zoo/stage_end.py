"""What a demo-training stage does after its last step: mix the starting weights back in (when
asked) and measure the held-out loss."""
from __future__ import annotations

import numpy as np
import torch
from transformers import GPT2LMHeadModel


def mix_with_start(model, init_from: str, share: float) -> None:
    """Weight-space ensembling (WiSE-FT, Wortsman et al. 2022): every weight becomes (1 - share) x
    trained + share x the starting model's, both in the float16 that is saved, the sum in float32
    and rounded to float16 again: the stage keeps part of what the model it continues could do."""
    if not init_from or not 0 < share < 1:
        raise ValueError(f"init_share {share} needs --init-from and a share between 0 and 1")
    start = GPT2LMHeadModel.from_pretrained(init_from, dtype=torch.float16).state_dict()
    weights = model.state_dict()  # tied weights appear twice: every mix is computed before any is written
    mixed = {name: ((1 - share) * w.half().float() + share * start[name].float()).half() for name, w in weights.items()}
    with torch.no_grad():
        for name, weight in weights.items():
            weight.copy_(mixed[name].float())


def heldout_loss(model, stream: np.ndarray, length: int) -> float:
    """Mean next-token loss over ``stream`` cut into rows of ``length`` tokens."""
    n = len(stream) // length
    if n == 0:
        return float("nan")
    ids = torch.from_numpy(stream[:n * length].reshape(n, length).astype(np.int64))
    losses = []
    with torch.no_grad():
        for i in range(0, n, 8):
            losses.append(model(input_ids=ids[i:i + 8], labels=ids[i:i + 8]).loss.item())
    return round(float(np.mean(losses)), 4)
