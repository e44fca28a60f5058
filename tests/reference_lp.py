"""An LP computation of the tests' own, independent of the engine: the model run through
transformers one length at a time (no padding, no cache, no prefix sharing), a float64
log-softmax over the full logits, summed over the sentence's tokens after the start token."""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def sentence_lps(folder: str | Path, sentences: list[str], start_token: str = "<|endoftext|>") -> np.ndarray:
    """LP of each sentence under the model saved in ``folder``, read after ``start_token``."""
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    start = tokenizer.convert_tokens_to_ids(start_token)
    by_length: dict[int, list[int]] = defaultdict(list)  # sequence length -> sentence indices
    ids = [[start] + tokenizer(s, add_special_tokens=False)["input_ids"] for s in sentences]
    for i, seq in enumerate(ids):
        by_length[len(seq)].append(i)
    out = np.full(len(sentences), np.nan)
    with torch.no_grad():
        for rows in by_length.values():
            batch = torch.tensor([ids[i] for i in rows])  # [rows, seq]
            logits = model(input_ids=batch).logits.double()  # [rows, seq, vocab]
            logprobs = torch.log_softmax(logits[:, :-1], dim=-1)  # predictions of tokens 1..seq-1
            picked = logprobs.gather(-1, batch[:, 1:, None]).squeeze(-1)  # [rows, seq - 1]
            out[rows] = picked.sum(-1).numpy()
    return out
