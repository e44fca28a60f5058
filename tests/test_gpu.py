"""What only a CUDA GPU can show (marked ``gpu``; skipped elsewhere, with the reason;
scripts/gpu_check.py runs them on the GPU): the compiled FlexAttention path, bfloat16 kernels,
NF4 weights on CUDA and a model split between the GPU and the CPU by a device map."""
from __future__ import annotations

import os

import numpy as np
import pytest
import torch
from torch._dynamo.utils import counters

from helpers.engine import CausalScorer
from helpers.models import load
from helpers.models import tiny_architectures as ta
from helpers.settings import Settings
from test_conformance import REQUESTS, TOLERANCE, reference

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module", autouse=True)
def compiling():
    """The suite turns the compiler off (``TORCHDYNAMO_DISABLE``, for outlines on the CPU), which
    would leave FlexAttention unfused here; this module checks the compiled path, so it is on."""
    from helpers.engine import flex_rows

    before = os.environ.pop("TORCHDYNAMO_DISABLE", None)
    flex_rows._compiled.cache_clear()
    yield
    flex_rows._compiled.cache_clear()
    if before is not None:
        os.environ["TORCHDYNAMO_DISABLE"] = before


def logprobs(scorer) -> list[np.ndarray]:
    return [s.logprobs for s in scorer.score(REQUESTS)]


def worst(got, expected) -> float:
    return max(float(np.max(np.abs(g - e))) for g, e in zip(got, expected))


@pytest.fixture(scope="module")
def on_gpu(tmp_path_factory):
    """name, dtype -> the tiny model of that architecture on the GPU."""
    root, cache = tmp_path_factory.mktemp("gpu-architectures"), {}

    def get(name: str, dtype=torch.float32, **options):
        key = (name, dtype, repr(sorted(options.items())))
        if key not in cache:
            folder = root / name
            if not folder.exists():
                ta.build(name, folder)
            cache[key] = load(folder, dtype=dtype, **({"device_map": {"": "cuda"}} | options))
        return cache[key]

    return get


@pytest.mark.parametrize("name", ["mistral", "gemma2"])  # a window on every layer; soft-capping, sliding and full
def test_compiled_flex_attention_equals_the_dense_mask_and_float64(on_gpu, name):
    torch._dynamo.reset()  # each architecture compiles afresh, within the compiler's recompile limit
    loaded = on_gpu(name)
    expected = reference(loaded, CausalScorer(loaded, Settings(progress=False, share="none")), REQUESTS)
    counters.clear()
    with torch._dynamo.config.patch(fail_on_recompile_limit_hit=True):  # never the unfused fallback
        default = CausalScorer(loaded, Settings(progress=False, share="tree"))  # its probe runs flex too
        flex = logprobs(default)
    assert default.executor.row_attention == "flex"  # CUDA's default where its probe passes
    dense = CausalScorer(loaded, Settings(progress=False, share="tree"), attention="dense")
    assert counters["stats"]["unique_graphs"] > 0  # compiled
    plain = logprobs(dense)
    assert worst(flex, expected) < TOLERANCE and worst(plain, expected) < TOLERANCE
    assert worst(flex, plain) < 1e-5


def test_bfloat16_on_cuda_is_as_close_to_float64_as_a_plain_bfloat16_forward(on_gpu):
    loaded = on_gpu("gemma2", torch.bfloat16)
    none = CausalScorer(loaded, Settings(progress=False, share="none"))
    expected = reference(loaded, none, REQUESTS)
    with torch.no_grad():
        plain = []
        for enc in none.encode_many(REQUESTS):
            logits = loaded.model(input_ids=torch.tensor([list(enc.ids)], device="cuda")).logits[0].float()
            lp = torch.log_softmax(logits, -1).double().cpu()
            plain.append(np.array([lp[i - 1, enc.ids[i]].item() for i in range(enc.first, len(enc.ids))]))
    bound = max(0.05, 1.5 * worst(plain, expected))
    for share in ("none", "prefix", "tree", "auto"):
        got = logprobs(CausalScorer(loaded, Settings(progress=False, share=share)))
        assert worst(got, expected) <= bound, share


def test_nf4_on_cuda_scores_as_the_models_own_forward_in_every_mode(on_gpu):
    """The engine's log-probs on the NF4 model against the same model's own forward of the tokens
    the engine feeds (all but the last, only predicted), its bfloat16 hidden states through the
    output embedding in float32 and a float64 log-softmax, as the CPU test does
    (tests/test_quantized.py): one request per batch within float32 rounding, every share mode
    within bfloat16 rounding of the compute (cached or packed rows add up in another order)."""
    loaded = on_gpu("llama", torch.bfloat16, quant="4bit")  # as users load it (load() knows no "nf4")
    assert any("4bit" in type(m).__name__ for m in loaded.model.modules())
    none = CausalScorer(loaded, Settings(progress=False, share="none"))
    head = loaded.model.get_output_embeddings().weight.float()
    plain = []
    with torch.no_grad():
        for enc in none.encode_many(REQUESTS):
            ids = torch.tensor([list(enc.ids)], device="cuda")
            hidden = loaded.model.base_model(input_ids=ids[:, :-1]).last_hidden_state[0].float()
            lp = torch.log_softmax((hidden @ head.T).double(), -1).cpu()
            plain.append(np.array([lp[i - 1, enc.ids[i]].item() for i in range(enc.first, len(enc.ids))]))
    alone = logprobs(CausalScorer(loaded, Settings(progress=False, share="none", batch_size=1)))
    assert worst(alone, plain) < 1e-3
    for share in ("none", "prefix", "tree", "auto"):
        assert worst(logprobs(CausalScorer(loaded, Settings(progress=False, share=share))), plain) < 0.05, share


def test_the_half_precision_head_gives_float32_logits_at_llama_3s_vocabulary_within_float32_rounding():
    """Llama 3's head (128,256 x 4,096, bfloat16) on CUDA: the engine's path multiplies the bf16
    operands with float32 output, no float32 copy; its logits and those of the float32-copy head
    are each within float32 rounding of the exact (float64) products, gamma_K x (|h| @ |W|^T)."""
    from helpers.engine.logit_transform import LogitTransform
    from helpers.engine.projection import Projection

    torch.manual_seed(0)
    width, vocab = 4096, 128256
    linear = torch.nn.Linear(width, vocab, bias=False, device="cuda", dtype=torch.bfloat16).requires_grad_(False)
    hidden = (3 * torch.randn(64, width, device="cuda")).to(torch.bfloat16)
    project = Projection(linear, LogitTransform())
    assert project.path() == "float32-output" and project._copy is None
    torch.cuda.reset_peak_memory_stats()
    allocated = torch.cuda.memory_allocated()
    ours = project(hidden)
    assert ours.dtype == torch.float32 and project._copy is None  # no float32 weight made or kept
    assert torch.cuda.max_memory_allocated() - allocated < 2 * 64 * vocab * 4 + 2**26  # logits, not a copy
    tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False  # the float32 reference in float32, restored below
    try:
        copied = torch.nn.functional.linear(hidden.float(), linear.weight.float())  # the float32-copy head
    finally:
        torch.backends.cuda.matmul.allow_tf32 = tf32
    exact = hidden.double() @ linear.weight.double().T
    u = 2.0**-24
    gamma = width * u / (1 - width * u)
    bound = gamma * (hidden.double().abs() @ linear.weight.double().abs().T)
    for got in (ours, copied):
        assert bool(((got.double() - exact).abs() <= bound).all())
    assert float((ours - copied).abs().max()) <= 2 * float(bound.max())
    assert torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction  # the setting restored


def test_a_device_map_split_between_gpu_and_cpu_scores_as_on_one_device(on_gpu):
    whole = on_gpu("llama")
    layers = whole.model.config.num_hidden_layers
    split_map = {"model.embed_tokens": "cuda", "model.rotary_emb": "cuda", "model.norm": "cpu", "lm_head": "cpu",
                 **{f"model.layers.{i}": "cuda" if i < layers // 2 else "cpu" for i in range(layers)}}
    split = on_gpu("llama", device_map=split_map)
    assert {p.device.type for p in split.model.parameters()} == {"cuda", "cpu"}
    for share in ("none", "tree"):
        a = logprobs(CausalScorer(whole, Settings(progress=False, share=share)))
        b = logprobs(CausalScorer(split, Settings(progress=False, share=share)))
        assert worst(a, b) < 1e-5, share
