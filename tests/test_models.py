"""Registry, loading and quantization configuration."""
from __future__ import annotations

import pytest
import torch

from helpers import models
from helpers.settings import Settings


def test_papers_models_resolve_and_large_ones_load_in_4bit():
    """Ide et al. ran the 30B+ models in 4-bit NF4; every registry entry resolves to itself and
    its default precision follows the size rule."""
    for name, spec in models.REGISTRY.items():
        assert models.resolve(name) is spec
        assert spec.default_quant == ("4bit" if spec.billions >= models.registry.QUANTIZE_FROM_BILLIONS else None), name
        assert (spec.kind == "instruct") == name.endswith("instruct"), name
    for big in ("llama3", "mixtral", "qwen2"):
        assert models.resolve(big).default_quant == "4bit"
    table = models.registry_table()
    assert all(name in table for name in models.REGISTRY)


def test_hub_ids_and_folders_resolve(tmp_path):
    hub = models.resolve("org/some-model")
    assert (hub.name, hub.hf_id, hub.local) == ("org/some-model", "org/some-model", False)
    (tmp_path / "config.json").write_text("{}")
    folder = models.resolve(str(tmp_path))
    assert folder.local and folder.hf_id == str(tmp_path.resolve()) and folder.name == tmp_path.name
    with pytest.raises(TypeError, match="registry name, a folder or a Hugging Face id"):
        models.resolve(3)


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
    import huggingface_hub.constants as hc

    from helpers.models import locate

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # read when used (helpers.paths.hub_offline)
    monkeypatch.setattr(hc, "HF_HUB_CACHE", str(tmp_path))
    called = []
    monkeypatch.setattr(locate, "_hub_reachable", lambda timeout=3.0: called.append(1) or False)
    with pytest.raises(models.ModelNotFoundError, match="not in the local Hugging Face cache and HF_HUB_OFFLINE is set"):
        models.load("llama3-8b")
    assert not called  # offline is known: no network probe, no retry loop
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    with pytest.raises(models.ModelNotFoundError, match="cannot be reached"):
        models.load("gpt2")
    assert called == [1]


def test_local_folder_loads_like_a_name(tiny, tiny_dir):
    from helpers.models.tiny import ensure

    folder = ensure("tiny-qwen2")
    lm = models.load(str(folder))
    assert not lm.model.training
    assert lm.tokenizer.pad_token is not None and lm.tokenizer.padding_side == "right"
    assert lm.spec.local and lm.name == "tiny-qwen2" and lm.weights == models.fingerprint.weights_fingerprint(folder)


def test_loaded_model_is_ready_for_scoring(tiny):
    lm = tiny("tiny-llama-instruct")
    model, tok = lm.model, lm.tokenizer
    assert not model.training and not any(p.requires_grad for p in model.parameters())
    assert tok.pad_token == tok.eos_token and tok.padding_side == "right"
    assert model.dtype == torch.float32 and lm.dtype == "float32"
    assert tok.chat_template and "<|start_header_id|>" in tok.chat_template
    assert lm.is_instruct and lm.quant is None
    assert not [a for a in vars(model) if a.startswith("helpers_")]  # nothing patched onto the HF object


def test_tiny_models_are_small_and_mixtral_has_experts(tiny):
    for arch in ("llama", "qwen2", "mixtral", "gpt2"):
        model = tiny(f"tiny-{arch}").model
        n = sum(p.numel() for p in model.parameters())
        assert 100_000 < n < 1_000_000, (arch, n)
    mixtral = tiny("tiny-mixtral").model
    assert mixtral.config.num_local_experts == 4 and mixtral.config.num_experts_per_tok == 2


def test_bitsandbytes_configs():
    four = models.quantization_config("4bit")
    assert four.load_in_4bit and four.bnb_4bit_quant_type == "nf4"
    assert four.bnb_4bit_compute_dtype == torch.bfloat16
    eight = models.quantization_config("8bit")
    assert eight.load_in_8bit and not eight.load_in_4bit
    assert models.quantization_config(None) is None
    with pytest.raises(ValueError, match="'4bit' or '8bit'"):
        models.quantization_config("3bit")


def test_quantization_runs_where_bitsandbytes_does_and_is_a_clear_error_elsewhere(tiny):
    """No CUDA needed where bitsandbytes' CPU backend runs (a probe layer checks it); a device
    it does not run on is refused with what to do (tests/test_quantized.py has the rest)."""
    lm = models.load("tiny-llama", quant="4bit")
    assert lm.quant == "4bit" and lm.dtype == "bfloat16"
    assert any(type(m).__name__ == "Linear4bit" for m in lm.model.modules())
    with pytest.raises(models.QuantizationUnavailableError, match="not on 'meta'.*load with quant=None"):
        models.quantization_probe("4bit", "meta")


def test_4bit_tiny_model_close_to_float32():  # on CUDA, or on the CPU with bitsandbytes' CPU backend
    from helpers.engine import CausalScorer

    texts = ["The cat sees a dog.", "Every teacher admires the students."]
    a = [
        s.total
        for s in CausalScorer(models.load("tiny-llama", quant=None, dtype=torch.float32), Settings(progress=False)).score_texts(
            texts
        )
    ]
    b = [s.total for s in CausalScorer(models.load("tiny-llama", quant="4bit"), Settings(progress=False)).score_texts(texts)]
    assert all(abs(x - y) < 1.0 for x, y in zip(a, b))


def test_weights_fingerprint_follows_the_weight_bytes(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"\x00" * 64)
    first = models.fingerprint.weights_fingerprint(tmp_path)
    (tmp_path / "config.json").write_text('{"changed": 1}')  # not weights
    assert models.fingerprint.weights_fingerprint(tmp_path) == first
    (tmp_path / "model.safetensors").write_bytes(b"\x00" * 63 + b"\x01")
    assert models.fingerprint.weights_fingerprint(tmp_path) not in (first, None)
    assert models.fingerprint.weights_fingerprint("org/model", "abc123") == "abc123"


def test_loaded_model_carries_its_provenance(tiny, tiny_dir):
    lm = tiny("tiny-gpt2")
    assert lm.weights == models.fingerprint.weights_fingerprint(tiny_dir / "tiny-gpt2") and len(lm.weights) == 16
    assert lm.provenance() == {"model_name": "tiny-gpt2", "model_id": "tiny-gpt2", "revision": None,
                               "weights": lm.weights, "quant": None, "dtype": "float32"}
    wrapped = models.LoadedModel.wrap(lm.model, lm.tokenizer, name="mine")
    assert wrapped.name == "mine" and wrapped.weights is None and wrapped.start == "bos-else-eos"
