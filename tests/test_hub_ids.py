"""A model named by its Hugging Face id gets its registry entry's defaults (issue: nothing
silently different on a cluster), and an unregistered model too large for the GPUs is refused
before loading, with the sizes and the quantization that fits."""
from __future__ import annotations

import pytest
import torch
from huggingface_hub import constants as hf_constants

from helpers.models import placement, resolve
from helpers.models import tiny as tiny_models
from helpers.store import read_metadata

COMMIT = "c" * 40
GIB = 2**30


def hub_cache(root, monkeypatch, models: dict[str, str]):
    """A Hugging Face cache holding a tiny model of the given architecture under each Hub id."""
    for hub_id, arch in models.items():
        repo = root / ("models--" + hub_id.replace("/", "--"))
        tiny_models.build(arch, repo / "snapshots" / COMMIT)
        (repo / "refs").mkdir(parents=True, exist_ok=True)
        (repo / "refs" / "main").write_text(COMMIT)
    monkeypatch.setenv("HF_HUB_CACHE", str(root))
    monkeypatch.setattr(hf_constants, "HF_HUB_CACHE", str(root))  # read at import in this process


def test_a_hub_id_gets_its_registry_entry_and_an_unknown_id_the_defaults():
    assert resolve("Qwen/Qwen2-57B-A14B") is resolve("qwen2")  # no start token, 4-bit: as Ide et al.
    assert resolve("meta-llama/meta-llama-3-70b").name == "llama3"  # the Hub ignores case
    at = resolve("Qwen/Qwen2-57B-A14B@abc")
    assert (at.name, at.revision, at.start, at.default_quant) == ("qwen2@abc", "abc", "none", "4bit")
    other = resolve("lab/unknown-model")
    assert (other.name, other.start, other.default_quant) == ("lab/unknown-model", "bos-else-eos", None)


def test_a_sweep_over_hub_ids_records_the_registry_defaults_in_every_score_file(tmp_path, monkeypatch):
    """`helpers sweep --notebooks 02 --models Qwen/Qwen2-57B-A14B,facebook/opt-125m` (papermill,
    a job per model): the registered id gets qwen2's entry (no start token, 4-bit, as Ide et al.),
    the unregistered one the defaults, in every score file."""
    from helpers import sweep

    hub_cache(tmp_path / "hub", monkeypatch, {"Qwen/Qwen2-57B-A14B": "qwen2", "facebook/opt-125m": "gpt2"})
    monkeypatch.setenv("HELPERS_OUTPUTS_DIR", str(tmp_path / "outputs"))
    jobs = sweep.plan(["02"], ["Qwen/Qwen2-57B-A14B", "facebook/opt-125m"], ["syntaxgym"],
                      {"methods": "lp,meanlp", "limit": 1, "templates": [1]})
    done = sweep.run(jobs)
    assert len(done) == 2 and all(sweep.finished(d) for d in done)
    files = sorted((tmp_path / "outputs" / "scores" / "syntaxgym").rglob("*.parquet"))
    recorded = [(read_metadata(f)["model_name"], read_metadata(f)["start_convention"], read_metadata(f)["quant"])
                for f in files]
    assert recorded == [("opt-125m", "minicons", None)] * 2 + [("qwen2", "none", "4bit")] * 2, files


def test_weight_bytes_count_the_model_in_its_dtype_and_quantization(tiny):
    lm = tiny("tiny-llama")
    n = sum(p.numel() for p in lm.model.parameters())
    config = lm.model.config
    assert placement.weight_count(config, "causal") == n
    assert placement.weight_bytes(n, torch.bfloat16, None) == 2 * n
    assert placement.weight_bytes(n, torch.float32, None) == 4 * n
    assert placement.weight_bytes(n, torch.bfloat16, "4bit") == n // 2


@pytest.mark.parametrize("gpus, advice", [(160, None), (80, "load it with quant='8bit'"),
                                          (40, "load it with quant='4bit'"), (20, "no quantization fits either: use more GPUs")])
def test_a_model_too_large_for_the_gpus_is_refused_with_the_quantization_that_fits(gpus, advice):
    sizes = {"bfloat16": 140 * GIB, "8bit": 70 * GIB, "4bit": 35 * GIB}
    refusal = placement.too_large("lab/big", sizes, "bfloat16", gpus * GIB)
    if advice is None:
        assert refusal is None
        return
    assert refusal.startswith(f"lab/big's weights take 140.0 GiB in bfloat16, more than the GPUs here hold "
                              f"({gpus:.1f} GiB, of which 90% for weights; bfloat16 140.0 GiB, 8bit 70.0 GiB, "
                              f"4bit 35.0 GiB): {advice}, or ask for offloading")
