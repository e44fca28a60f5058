"""Registry, loading and quantization configuration."""
from __future__ import annotations

import inspect

import pytest
import torch

from helpers import models

REQUIRED = {
    "llama3": "meta-llama/Meta-Llama-3-70B", "llama3-instruct": None, "llama3-8b": None, "llama3-8b-instruct": None,
    "mixtral": "mistralai/Mixtral-8x7B-v0.1", "mixtral-instruct": None, "qwen2": "Qwen/Qwen2-57B-A14B",
    "qwen2-instruct": None, "qwen2-7b": None, "qwen2-7b-instruct": None, "gpt2": None, "gpt2-xl": None,
    "opt-125m": None, "opt-350m": None, "opt-1.3b": None, "opt-2.7b": None, "opt-6.7b": None,
    "gpt2-chinese": "uer/gpt2-chinese-cluecorpussmall", "llama3-chinese-8b": "hfl/llama-3-chinese-8b",
}


def test_registry_has_every_model_with_its_spec():
    for name, hf_id in REQUIRED.items():
        spec = models.REGISTRY[name]
        if hf_id:
            assert spec.hf_id == hf_id
        assert spec.kind == ("instruct" if name.endswith("instruct") else "base")
    assert models.REGISTRY["llama3"].default_quant == "4bit"
    assert models.REGISTRY["mixtral"].default_quant == "4bit"
    assert models.REGISTRY["qwen2"].default_quant == "4bit"
    assert models.REGISTRY["llama3-8b"].default_quant is None
    assert models.REGISTRY["gpt2-chinese"].languages == ("zh",)


def test_unknown_name_lists_the_registry():
    with pytest.raises(models.ModelNotFoundError) as err:
        models.load("llama-9000")
    assert "unknown model 'llama-9000'" in str(err.value)
    assert "llama3-8b-instruct" in str(err.value) and "opt-6.7b" in str(err.value)


def test_folder_without_model(tmp_path):
    (tmp_path / "notes.txt").write_text("no weights here")
    with pytest.raises(models.ModelNotFoundError, match="holds no model"):
        models.load(str(tmp_path))


def test_offline_without_local_copy_fails_at_once(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    import huggingface_hub.constants as hc

    monkeypatch.setattr(hc, "HF_HUB_CACHE", str(tmp_path))
    called = []
    monkeypatch.setattr(models, "_hub_reachable", lambda timeout=3.0: called.append(1) or False)
    with pytest.raises(models.ModelNotFoundError, match="not in the local Hugging Face cache and HF_HUB_OFFLINE is set"):
        models.load("llama3-8b")
    assert not called  # offline is known: no network probe, no retry loop
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    with pytest.raises(models.ModelNotFoundError, match="cannot be reached"):
        models.load("gpt2")
    assert called == [1]


def test_local_folder_loads_like_a_name(tiny, tiny_dir):
    from helpers.tiny_models import ensure

    folder = ensure("tiny-qwen2")
    model, tok = models.load(str(folder))
    assert not model.training
    assert tok.pad_token is not None and tok.padding_side == "right"
    assert model.helpers_spec.local


def test_loaded_model_is_ready_for_scoring(tiny):
    model, tok = tiny("tiny-llama-instruct")
    assert not model.training and not any(p.requires_grad for p in model.parameters())
    assert tok.pad_token == tok.eos_token and tok.padding_side == "right"
    assert model.dtype == torch.float32
    assert tok.chat_template and "<|start_header_id|>" in tok.chat_template
    assert model.helpers_spec.is_instruct


def test_tiny_models_are_small_and_mixtral_has_experts(tiny):
    for arch in ("llama", "qwen2", "mixtral", "gpt2"):
        model, _ = tiny(f"tiny-{arch}")
        n = sum(p.numel() for p in model.parameters())
        assert 100_000 < n < 1_000_000, (arch, n)
    mixtral, _ = tiny("tiny-mixtral")
    assert mixtral.config.num_local_experts == 4 and mixtral.config.num_experts_per_tok == 2


def test_trust_remote_code_is_off_by_default():
    assert inspect.signature(models.load).parameters["trust_remote_code"].default is False


def test_bitsandbytes_configs():
    four = models.quantization_config("4bit")
    assert four.load_in_4bit and four.bnb_4bit_quant_type == "nf4"
    assert four.bnb_4bit_compute_dtype == torch.bfloat16
    eight = models.quantization_config("8bit")
    assert eight.load_in_8bit and not eight.load_in_4bit
    assert models.quantization_config(None) is None
    with pytest.raises(ValueError, match="'4bit' or '8bit'"):
        models.quantization_config("3bit")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU error")
def test_quantization_without_cuda_is_a_clear_error(tiny):
    with pytest.raises(RuntimeError, match="needs a CUDA GPU"):
        models.load("tiny-llama", quant="4bit")


@pytest.mark.gpu
def test_4bit_tiny_model_close_to_float32():
    from helpers.scoring import Scorer

    texts = ["The cat sees a dog.", "Every teacher admires the students."]
    m32, tok = models.load("tiny-llama", quant=None, dtype=torch.float32)
    m4, tok4 = models.load("tiny-llama", quant="4bit")
    a = [s.total for s in Scorer(m32, tok, progress=False).score_texts(texts)]
    b = [s.total for s in Scorer(m4, tok4, progress=False).score_texts(texts)]
    assert all(abs(x - y) < 1.0 for x, y in zip(a, b))


def test_weights_fingerprint_follows_the_weight_bytes(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"\x00" * 64)
    first = models.weights_fingerprint(tmp_path)
    (tmp_path / "config.json").write_text('{"changed": 1}')  # not weights
    assert models.weights_fingerprint(tmp_path) == first
    (tmp_path / "model.safetensors").write_bytes(b"\x00" * 63 + b"\x01")
    assert models.weights_fingerprint(tmp_path) not in (first, None)
    assert models.weights_fingerprint("org/model", "abc123") == "abc123"


def test_loaded_model_carries_its_weights_fingerprint(tiny, tiny_dir):
    model, _ = tiny("tiny-gpt2")
    assert model.helpers_weights == models.weights_fingerprint(tiny_dir / "tiny-gpt2")
    assert len(model.helpers_weights) == 16
