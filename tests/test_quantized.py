"""4-bit NF4, 8-bit and bfloat16 on the CPU: bitsandbytes' backend probed, the demo model
really quantized (Linear4bit / Linear8bitLt layers holding packed integer weights), its LP
scores through the runner close to float32's with the same decisions on BLiMP pairs, and
the precision recorded in the score files (the precision check itself: tests/test_precision.py)."""
from __future__ import annotations

import sys

import bitsandbytes as bnb
import numpy as np
import pandas as pd
import pytest
import torch

from helpers.data.selection import select
from helpers.models import QuantizationUnavailableError, load, quantization_probe
from helpers.store import ScoreStore, read_metadata
from helpers.runner import run_methods
from helpers.engine import CausalScorer
from helpers.engine.interface import Request
from helpers.runs.precision import PRECISIONS
from helpers.settings import Settings

PER_PARADIGM = 3  # 67 BLiMP paradigms x 3 = 201 pairs, 402 sentences
QUANTIZED = {"transformer.h.{}.attn.c_attn": (256, 768), "transformer.h.{}.attn.c_proj": (256, 256),
             "transformer.h.{}.mlp.c_fc": (256, 1024), "transformer.h.{}.mlp.c_proj": (1024, 256)}  # (in, out)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """precision -> (LoadedModel, score frame, score file) for float32, bfloat16 and NF4 on the
    first 3 pairs of every BLiMP paradigm, scored by the runner into a store per precision."""
    root = tmp_path_factory.mktemp("precision")
    selection = select("blimp", PER_PARADIGM)
    out = {}
    for name in ("float32", "bfloat16", "nf4"):
        lm = PRECISIONS[name].load("demo-en")
        (path,) = run_methods(CausalScorer(lm, Settings(progress=False)), selection, ["lp"], store=ScoreStore(root / name))
        out[name] = (lm, pd.read_parquet(path), path)
    return out


def decisions(scores: pd.DataFrame) -> np.ndarray:
    """+1 where the good sentence has the higher LP, -1 where the bad one has, 0 on a tie."""
    return np.sign(scores["score_good"].to_numpy(float) - scores["score_bad"].to_numpy(float)).astype(int)


def sentence_lps(frame: pd.DataFrame) -> np.ndarray:
    return np.r_[frame.score_good.to_numpy(float), frame.score_bad.to_numpy(float)]


def test_bitsandbytes_runs_4bit_and_8bit_on_this_cpu():
    """The probe layer's output against float32: NF4 loses about a tenth, int8 under a hundredth
    (fixed seed; a broken kernel gives errors near 1 or fails)."""
    assert "cpu" in bnb.supported_torch_devices
    four, eight = quantization_probe("4bit", "cpu"), quantization_probe("8bit", "cpu")
    assert 0.05 < four < 0.15 and 1e-3 < eight < 0.02


def test_a_device_bitsandbytes_does_not_run_on_is_a_clear_error():
    with pytest.raises(QuantizationUnavailableError, match=r"runs on \[.*'cpu'.*\], not on 'meta'.*quant=None"):
        quantization_probe("4bit", "meta")
    with pytest.raises(ValueError, match="'4bit' or '8bit'"):
        quantization_probe("2bit", "cpu")


def test_without_bitsandbytes_loading_4bit_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "bitsandbytes", None)  # as on a machine without the package
    quantization_probe.cache_clear()
    try:
        with pytest.raises(QuantizationUnavailableError, match=r"needs bitsandbytes.*pip install"):
            load("demo-en", quant="4bit")
    finally:
        quantization_probe.cache_clear()


def test_nf4_weights_are_really_quantized(runs):
    """Every projection of the 4 blocks is a Linear4bit holding NF4 codes, two per byte; the
    tied embedding / output head stays in bfloat16; the memory footprint shrinks accordingly."""
    f32, bf16, nf4 = (runs[p][0].model for p in ("float32", "bfloat16", "nf4"))
    four = {name: m for name, m in nf4.named_modules() if isinstance(m, bnb.nn.Linear4bit)}
    expected = {k.format(i): shape for i in range(4) for k, shape in QUANTIZED.items()}
    assert set(four) == set(expected)
    for name, module in four.items():
        n_in, n_out = expected[name]
        assert module.weight.dtype == torch.uint8 and module.weight.numel() == n_in * n_out // 2, name
        assert module.weight.quant_state.quant_type == "nf4" and module.compute_dtype == torch.bfloat16
        assert tuple(module.weight.quant_state.shape) == (n_out, n_in)
    head = nf4.get_output_embeddings()
    assert type(head) is torch.nn.Linear and head.weight.dtype == torch.bfloat16
    assert head.weight.data_ptr() == nf4.get_input_embeddings().weight.data_ptr()  # still tied
    assert f32.get_memory_footprint() == 2 * bf16.get_memory_footprint()
    packed = sum(m.weight.numel() for m in four.values())  # bytes of NF4 codes
    floats = sum(n_in * n_out for n_in, n_out in expected.values())
    assert packed == floats // 2
    # bfloat16 footprint less the quantized weights' 2 bytes each, plus their codes and absmax scales
    saved = bf16.get_memory_footprint() - nf4.get_memory_footprint()
    assert 2 * floats - packed - floats // 64 * 4 <= saved <= 2 * floats - packed


def test_the_score_files_record_the_precision(runs):
    for name, quant, dtype in (("float32", None, "float32"), ("bfloat16", None, "bfloat16"), ("nf4", "4bit", "bfloat16")):
        lm, frame, path = runs[name]
        meta = read_metadata(path)
        assert (meta["quant"], meta["dtype"]) == (quant, dtype) == (lm.quant, lm.dtype), name
        assert len(frame) == 67 * PER_PARADIGM
    hashes = {read_metadata(runs[n][2])["config_hash"] for n in runs}
    assert len(hashes) == 3  # a store never mistakes one precision's scores for another's


def test_bfloat16_scores_are_within_tolerance_of_float32(runs):
    """Sentence LPs in bfloat16 (8 mantissa bits) move by a few hundredths of a nat on average
    and under one nat at most; 97% of the decisions or more are float32's."""
    ref, half = runs["float32"][1], runs["bfloat16"][1]
    delta = np.abs(sentence_lps(half) - sentence_lps(ref))
    assert 0.005 < delta.mean() < 0.1 and delta.max() < 1.0
    assert np.mean(decisions(half) == decisions(ref)) >= 0.97
    assert abs(half.correct.mean() - ref.correct.mean()) <= 0.02


def test_nf4_scores_move_more_and_keep_most_decisions(runs):
    """4-bit weights move a sentence's LP by tenths of a nat (ten times bfloat16's change), yet
    95% of the decisions or more stay float32's and the accuracy stays within 3 points."""
    ref, half, nf4 = runs["float32"][1], runs["bfloat16"][1], runs["nf4"][1]
    delta = np.abs(sentence_lps(nf4) - sentence_lps(ref))
    assert 0.1 < delta.mean() < 0.8 and delta.max() < 4.0
    assert delta.mean() > 3 * np.abs(sentence_lps(half) - sentence_lps(ref)).mean()
    assert np.mean(decisions(nf4) == decisions(ref)) >= 0.95
    assert abs(nf4.correct.mean() - ref.correct.mean()) <= 0.03


def test_the_engine_on_nf4_matches_a_plain_forward_of_the_same_model(runs):
    """The engine's LPs on the NF4 model against transformers' own forward of each sentence
    alone, its bfloat16 hidden states through the output embedding in float32 (the engine's
    float32 head) and a float64 log-softmax. Half-precision kernels round by shape (the CPU's
    attention by the width of its keys, on AVX2 machines), so the forward is of the tokens the
    engine feeds: all but the last, which is only predicted. On the engine's plain path equal up
    to float32 rounding on any CPU, whatever the batch (in half precision on the CPU no row is
    padded: padding moved one sentence by 0.02 nats on an AVX2 EPYC); within bfloat16 rounding of
    the compute where prefixes are shared (cached or packed rows add up in another order)."""
    lm, frame, _ = runs["nf4"]
    pairs = select("blimp", PER_PARADIGM).frame
    sentences = list(pairs.good[:12]) + list(pairs.bad[:12])
    start = lm.tokenizer.convert_tokens_to_ids("<|endoftext|>")
    plain = []
    with torch.no_grad():
        for s in sentences:
            ids = torch.tensor([[start] + lm.tokenizer(s, add_special_tokens=False)["input_ids"]])  # [1, seq]
            hidden = lm.model.base_model(input_ids=ids[:, :-1]).last_hidden_state[0]  # [seq-1, width], bfloat16
            logits = torch.nn.functional.linear(hidden.float(), lm.model.get_output_embeddings().weight.float())
            logprobs = torch.log_softmax(logits.double(), dim=-1)  # [seq-1, vocab]
            plain.append(float(logprobs.gather(-1, ids[0, 1:, None]).sum()))

    def totals(**options) -> np.ndarray:
        scorer = CausalScorer(lm, Settings(progress=False, **options.pop("settings", {})), **options)
        return np.array([s.total for s in scorer.score_texts(sentences)])

    alone, one_by_one = totals(settings=dict(share="none")), totals(settings=dict(share="none", batch_size=1))
    assert np.allclose(alone, plain, atol=1e-4, rtol=0), np.abs(alone - plain).max()
    assert np.allclose(alone, one_by_one, atol=1e-5, rtol=0), np.abs(alone - one_by_one).max()
    shared = totals(pack=False)
    assert np.allclose(shared, plain, atol=0.25, rtol=0), np.abs(shared - plain).max()
    runner = frame.score_good[:12].tolist() + frame.score_bad[:12].tolist()
    assert np.allclose(runner, plain, atol=0.25, rtol=0), np.abs(np.array(runner) - plain).max()
    # batch invariance in every share mode: contexts shared by some requests (packed or cached rows beside
    # plain ones, which in half precision on the CPU run apart), whatever the batch, to float32 rounding
    contexts = ["", "The following sentence is grammatically acceptable.\n\n", "Here is a sentence:"]
    requests = [Request(contexts[k % 3], s) for k, s in enumerate(sentences)]
    for share in ("none", "context", "prefix", "tree"):
        batched, alone = (np.array([r.total for r in CausalScorer(lm, Settings(progress=False, share=share, **size))
                                    .score(requests)]) for size in ({}, {"batch_size": 1}))
        assert np.allclose(batched, alone, atol=1e-5, rtol=0), (share, np.abs(batched - alone).max())


def test_8bit_loads_and_scores_on_the_cpu():
    """LLM.int8 on the CPU: Linear8bitLt layers with int8 weights, decisions as float32's on the
    first pair of every paradigm up to a few."""
    selection = select("blimp", 1)
    lm = load("demo-en", quant="8bit", dtype=torch.float32)
    eight = [m for m in lm.model.modules() if isinstance(m, bnb.nn.Linear8bitLt)]
    assert len(eight) == 16 and all(m.weight.dtype == torch.int8 for m in eight)
    assert lm.provenance()["quant"] == "8bit"
    texts = list(selection.frame.good) + list(selection.frame.bad)
    ref = np.array([s.total for s in CausalScorer(load("demo-en"), Settings(progress=False)).score_texts(texts)])
    got = np.array([s.total for s in CausalScorer(lm, Settings(progress=False)).score_texts(texts)])
    n = len(selection.frame)
    assert 0.005 < np.abs(got - ref).mean() < 0.2
    assert np.mean(np.sign(got[:n] - got[n:]) == np.sign(ref[:n] - ref[n:])) >= 0.95
