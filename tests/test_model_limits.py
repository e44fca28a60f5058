"""What a model's configuration limits, read for every kind of source: the position limit from a
multimodal configuration's text part, and the refusal of weights too large for the GPUs for a
local folder and a GGUF file as for a Hub model (decided on the configuration, nothing loaded)."""
from __future__ import annotations

import json

import pytest
import torch
from transformers import Gemma3Config

from helpers.engine import model_checks
from helpers.models import check_loadable
from helpers.models import tiny_architectures as ta
from helpers.models.placement import too_large_refusal

GIB = 2**30


def test_the_position_limit_is_read_from_a_text_config():
    class Model:  # Gemma 3 4B and up: the limit lives in text_config only
        config = Gemma3Config(text_config={"max_position_embeddings": 131072})

    assert getattr(Model.config, "max_position_embeddings", None) is None
    assert model_checks.max_positions(Model()) == 131072


def test_a_local_folder_too_large_for_the_gpus_is_refused(tmp_path):
    folder = ta.build("llama", tmp_path / "llama")
    config = json.loads((folder / "config.json").read_text())
    config.update(hidden_size=8192, intermediate_size=28672, num_hidden_layers=80, num_attention_heads=64,
                  num_key_value_heads=8)  # Llama 3 70B's body (the tiny vocabulary kept)
    (folder / "config.json").write_text(json.dumps(config))
    loadable = check_loadable(folder, quant=None)
    refusal = too_large_refusal(loadable, torch.bfloat16, 80 * GIB)
    assert refusal and "take 107.8 GiB in bfloat16" in refusal and "quant='8bit'" in refusal  # 8-bit fits 80 GiB
    assert too_large_refusal(loadable, torch.bfloat16, 160 * GIB) is None


def test_a_gguf_file_too_large_for_the_gpus_is_refused():
    loadable = check_loadable("smollm2-135m-instruct", quant=None)
    assert loadable.checkpoint is not None
    refusal = too_large_refusal(loadable, torch.float32, 256 * 2**20)  # its 0.5 GiB of float32 in 256 MiB
    assert refusal and "smollm2-135m-instruct's weights" in refusal
    assert too_large_refusal(loadable, torch.float32, 8 * GIB) is None
