"""The end of a demo-training stage: --init-share mixes the starting weights back in exactly as
documented (float16 operands, float32 sum, float16 result), tied weights once."""
from __future__ import annotations

import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel

from helpers.zoo.demo_training import Recipe, train
from helpers.zoo.stage_end import mix_with_start


def test_mix_with_start_is_the_documented_weighted_sum(tmp_path):
    torch.manual_seed(0)
    start = GPT2LMHeadModel(GPT2Config(vocab_size=50, n_positions=16, n_embd=8, n_layer=1, n_head=2))
    start.half().save_pretrained(tmp_path)
    trained = GPT2LMHeadModel.from_pretrained(tmp_path, dtype=torch.float32)
    with torch.no_grad():
        for p in trained.parameters():
            p.add_(torch.randn_like(p))
    before = {k: v.clone() for k, v in trained.state_dict().items()}
    saved = GPT2LMHeadModel.from_pretrained(tmp_path, dtype=torch.float16).state_dict()
    mix_with_start(trained, str(tmp_path), 0.25)
    after = trained.state_dict()
    for name, weight in after.items():
        expected = (0.75 * before[name].half().float() + 0.25 * saved[name].float()).half().float()
        assert torch.equal(weight, expected), name
    assert trained.lm_head.weight.data_ptr() == trained.transformer.wte.weight.data_ptr()  # still tied, mixed once
    assert not torch.equal(after["transformer.wte.weight"], before["transformer.wte.weight"].half().float())


def test_a_share_without_a_starting_model_is_refused_before_training(tmp_path):
    with pytest.raises(ValueError, match="--init-share 0.3 mixes the starting model back in: it needs --init-from"):
        train(tmp_path, Recipe(init_share=0.3))
    with pytest.raises(ValueError, match="a share between 0 and 1"):
        train(tmp_path, Recipe(init_share=1.5, init_from="data/models/demo-en"))
