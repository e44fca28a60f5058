"""The vocabulary head: by vocabulary slices (a large vocabulary) and by chunks of positions give
the float64 log-softmax within float32 rounding, with logit transforms, a half-precision head and a
token class's mass, whatever the slice width."""
from __future__ import annotations

import contextlib
import math

import numpy as np
import pytest
import torch

from helpers.engine import head
from helpers.engine.logit_transform import LogitTransform
from helpers.engine.projection import Projection


def reference(weight, hidden, transform, which, targets, mass):
    """float64: log-softmax at each entry's position and target, its raw logit and the class's log-mass."""
    logits = transform(hidden.double() @ weight.double().T)
    lp = torch.log_softmax(logits, -1)
    share = torch.logsumexp(logits.masked_fill(~mass, -np.inf), -1) - torch.logsumexp(logits, -1)
    return (lp[which, targets].numpy(), logits[which, targets].numpy(), share[which].numpy())


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("transform", [LogitTransform(), LogitTransform(0.5, 8.0)])
def test_slices_and_position_chunks_agree_with_float64(dtype, transform, monkeypatch):
    torch.manual_seed(0)
    vocab, width, positions = 5000, 32, 40
    linear = torch.nn.Linear(width, vocab, bias=False).to(dtype).requires_grad_(False)
    with torch.no_grad():
        linear.weight.mul_(30)  # peaked logits, where float32 and slices matter
    hidden = torch.randn(positions, width).to(dtype)
    rng = np.random.default_rng(0)
    which = rng.integers(0, positions, 90)
    targets = rng.integers(0, vocab, 90)
    targets[:3] = [0, vocab - 1, 1023]  # the first and last entries, and one at a slice's edge
    mass = torch.zeros(vocab, dtype=torch.bool)
    mass[rng.integers(0, vocab, 300)] = True
    project = Projection(linear, transform)
    want = reference(linear.weight.float(), hidden.float(), transform, which, targets, mass)
    monkeypatch.setattr(head, "FUSED_ELEMENTS", {"cpu": 0})  # every call by slices
    monkeypatch.setattr(head, "SLICE_ELEMENTS", {"cpu": 40 * 1024})  # slices of 1,024 tokens
    sliced = head._by_vocabulary(project, vocab, hidden, which, targets, mass)
    by_rows = head._by_positions(project, vocab, hidden, which, targets, mass)
    assert head.logprobs_at(project, vocab, hidden, which, targets, mass)[0].tobytes() == sliced[0].tobytes()
    size = max(1.0, *(float(np.abs(w).max()) for w in want))  # float32 rounding of the largest term
    for got in (sliced, by_rows):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=0, atol=4e-7 * size)
    # the same positions alone or among others, and any slice width: the same values within rounding
    monkeypatch.setattr(head, "SLICE_ELEMENTS", {"cpu": 40 * 4096})
    wider = head._by_vocabulary(project, vocab, hidden, which, targets, mass, True)
    np.testing.assert_allclose(wider[0], sliced[0], atol=1e-5)
    np.testing.assert_allclose(wider[2], sliced[2], atol=1e-5)  # the mass where asked, the greedy id after it
    assert np.array_equal(wider[1], sliced[1])  # a raw logit is one product whatever the slice
    # the greedy token at each entry's position, read from the same logits (lm-eval's is_greedy):
    # float64's argmax, by slices of any width and by rows, after the other arrays
    greedy = transform(hidden.float().double() @ linear.weight.float().double().T).argmax(-1)[which].numpy()
    assert len(np.unique(greedy)) > 5  # not one token everywhere
    by_rows = head._by_positions(project, vocab, hidden, which, targets, None, True)
    assert len(wider) == 4 and len(by_rows) == 3
    for got in (head._by_vocabulary(project, vocab, hidden, which, targets, mass, True), by_rows, wider):
        np.testing.assert_array_equal(got[-1], greedy)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("transform", [LogitTransform(), LogitTransform(0.5, 8.0)])
def test_a_slice_in_the_reused_buffer_and_its_logsumexp_in_place_are_torchs_values_bit_for_bit(dtype, transform):
    """The sliced head writes every slice's logits into one buffer and takes their logsumexp there, in
    place: the same operations as a new tensor per slice and ``torch.logsumexp``, so the same bits."""
    torch.manual_seed(0)
    linear = torch.nn.Linear(48, 3000, bias=True).to(dtype).requires_grad_(False)
    project = Projection(linear, transform)
    hidden = project.prepared(torch.randn(37, 48).to(dtype) * 4)
    scratch = torch.full((37 * 1024,), float("nan"))
    for start, stop in ((0, 1024), (1024, 2048), (2048, 3000)):  # the last slice narrower: a shorter view
        new = project.columns(hidden, start, stop)
        into = project.columns(hidden, start, stop, out=scratch)
        assert into.data_ptr() == scratch.data_ptr() and into.shape == new.shape == (37, stop - start)
        assert into.numpy().tobytes() == new.numpy().tobytes()
        want = torch.logsumexp(new, dim=-1)
        assert head._logsumexp_(into, new.amax(dim=-1)).numpy().tobytes() == want.numpy().tobytes()
    # rows whose maximum is infinite, as torch takes them (the maximum counted as 0)
    odd = torch.tensor([[-math.inf, -math.inf, -math.inf], [1.0, math.inf, 2.0], [0.5, -1.0, 3.0]])
    got = head._logsumexp_(odd.clone(), odd.amax(dim=-1))
    assert got.numpy().tobytes() == torch.logsumexp(odd, dim=-1).numpy().tobytes()
    assert got[0] == -math.inf and got[1] == math.inf


def test_a_plain_linear_head_runs_by_slices_beyond_the_cpus_caches_and_elsewhere_for_a_large_vocabulary(monkeypatch):
    calls = []
    monkeypatch.setattr(head, "_by_vocabulary", lambda *a: calls.append("slices") or (np.zeros(1), np.zeros(1)))
    monkeypatch.setattr(head, "_by_positions", lambda *a: calls.append("rows") or (np.zeros(1), np.zeros(1)))
    big, small = torch.nn.Linear(4, 262144, bias=False), torch.nn.Linear(4, 8000, bias=False)
    one = np.zeros(1, dtype=np.int64)

    def paths(positions: int) -> list[str]:
        calls.clear()
        hidden = torch.zeros(positions, 4)
        head.logprobs_at(Projection(big, LogitTransform()), 262144, hidden, one, one)
        head.logprobs_at(Projection(small, LogitTransform()), 8000, hidden, one, one)
        head.logprobs_at(lambda h: h, 262144, hidden, one, one)  # logits already computed: no slices to take
        return list(calls)

    # the CPU: 2^22 logits fused at most (16 and 524 positions of these vocabularies), slices beyond
    assert paths(16) == ["rows", "rows", "rows"] and paths(17) == ["slices", "rows", "rows"]
    assert paths(524) == ["slices", "rows", "rows"] and paths(525) == ["slices", "slices", "rows"]
    monkeypatch.setattr(head, "FUSED_ELEMENTS", {})  # as on a device without that rule (CUDA)
    assert paths(2) == paths(600) == ["slices", "rows", "rows"]


def test_an_offloaded_head_computes_in_float32_by_slices_as_on_one_device(tmp_path, monkeypatch):
    """A bfloat16 model with half its layers and its head offloaded to the disk (accelerate's hooks,
    the weights on "meta" between calls) scores exactly as the same model on one device, with
    the float32 head, at the positions read and by vocabulary slices; the head rounded to
    bfloat16 (how transformers computes it) is visibly further off."""
    from helpers.engine import CausalScorer
    from helpers.engine.projection import rounded_head
    from helpers.models import load
    from helpers.models import tiny_architectures as ta
    from helpers.settings import Settings
    from test_conformance import REQUESTS

    folder = ta.build("llama", tmp_path / "llama")
    whole = load(folder, quant=None, dtype=torch.bfloat16, device_map=None)
    layers = whole.model.config.num_hidden_layers
    placement = {"model.embed_tokens": "cpu", "model.rotary_emb": "cpu", "model.norm": "cpu", "lm_head": "disk",
                 **{f"model.layers.{i}": "cpu" if i < layers // 2 else "disk" for i in range(layers)}}
    split = load(folder, quant=None, dtype=torch.bfloat16, device_map=placement, offload_folder=tmp_path / "offload")
    lm_head = split.model.get_output_embeddings()
    assert hasattr(lm_head, "_hf_hook") and lm_head.weight.device.type == "meta"

    def logprobs(loaded, share):
        scorer = CausalScorer(loaded, Settings(progress=False, share=share))
        slices.clear()  # (its start-up probe's)
        return scorer.executor.project.path(), np.concatenate([s.logprobs for s in scorer.score(REQUESTS)])

    vocab = whole.model.config.vocab_size
    monkeypatch.setattr(head, "MIN_SLICE", 1)
    monkeypatch.setattr(head, "FUSED_ELEMENTS", {"cpu": 0})  # every call by slices
    slices = []
    monkeypatch.setattr(Projection, "columns", lambda self, h, start, stop, out=None, columns=Projection.columns:
                        slices.append(stop - start) or columns(self, h, start, stop, out))
    for share in ("none", "tree"):
        for elements in (head.LOGIT_ELEMENTS["cpu"], vocab):  # whole rows; slices of vocab / positions read
            monkeypatch.setitem(head.SLICE_ELEMENTS, "cpu", elements)
            (one_path, one), (split_path, offloaded) = logprobs(whole, share), logprobs(split, share)
            assert (one_path, split_path) == ("float32-copy", "float32-cast")
            assert np.array_equal(one, offloaded), (share, elements, np.abs(one - offloaded).max())
            assert max(slices) == vocab if elements > vocab else max(slices) < vocab / 2
            assert lm_head.weight.device.type == "meta"  # offloaded again after each read
    with rounded_head():
        rounded = logprobs(split, "none")[1]
    assert np.abs(rounded - logprobs(whole, "none")[1]).max() > 1e-3


def test_the_fallback_for_a_torch_without_out_dtype_gives_every_slice_in_float32(monkeypatch):
    """A half-precision head on CUDA multiplies with float32 output (``torch.mm(out_dtype=)``); a torch
    before 2.8 lacks it. Forced here on the CPU (the head's device said to be CUDA, ``torch.mm``
    refusing ``out_dtype`` as old torch does): the first slice falls back to the float32 copy, and
    every later slice, whose bf16 hidden states were prepared for the first path, is cast alike."""
    from helpers.engine import projection

    torch.manual_seed(0)
    vocab, width = 3000, 16
    linear = torch.nn.Linear(width, vocab, bias=True).to(torch.bfloat16).requires_grad_(False)
    hidden = torch.randn(5, width).to(torch.bfloat16)
    mm = torch.mm

    def old_mm(*args, **kwargs):
        if "out_dtype" in kwargs:
            raise TypeError("mm() got an unexpected keyword argument 'out_dtype'")
        return mm(*args, **kwargs)

    monkeypatch.setattr(Projection, "on_cuda", lambda self: True)
    monkeypatch.setattr(projection, "float32_reduction", contextlib.nullcontext)  # cuBLAS flags: CUDA builds only
    monkeypatch.setattr(torch, "mm", old_mm)
    project = Projection(linear, LogitTransform())
    assert project.path() == "float32-output"
    prepared = project.prepared(hidden)
    assert prepared.dtype == torch.bfloat16  # as the first path multiplies them
    got = torch.cat([project.columns(prepared, a, b) for a, b in ((0, 1000), (1000, 2000), (2000, vocab))], -1)
    assert project.path() == "float32-copy" and got.dtype == torch.float32
    want = torch.nn.functional.linear(hidden.float(), linear.weight.float(), linear.bias.float())
    assert torch.equal(got, want)


def _quantized(kind: str, linear: torch.nn.Linear) -> torch.nn.Module:
    """``linear`` as a bitsandbytes layer on the CPU: NF4 (its quant_state) or LLM.int8 (CB, SCB)."""
    import bitsandbytes as bnb

    vocab, width = linear.out_features, linear.in_features
    if kind == "nf4":
        layer = bnb.nn.Linear4bit(width, vocab, bias=False, compute_dtype=torch.bfloat16, quant_type="nf4")
        layer.weight = bnb.nn.Params4bit(linear.weight.data.clone(), requires_grad=False, quant_type="nf4")
    else:
        layer = bnb.nn.Linear8bitLt(width, vocab, bias=False, has_fp16_weights=False)
        layer.weight = bnb.nn.Int8Params(linear.weight.data.clone(), requires_grad=False, has_fp16_weights=False)
    return layer.to("cpu")


@pytest.mark.parametrize("kind", ["nf4", "int8"])
def test_a_quantized_head_is_read_by_slices_in_float32_or_said_to_be_bf16(kind, monkeypatch):
    """A head the model quantized: its vocabulary from out_features (not the packed weight), its
    weight dequantized to float32 once and read by slices, equal to float64 over that weight; where
    the float32 copy would not fit, the module's own logits, a warning, and the path recorded."""
    import bitsandbytes.functional as bnbf

    from helpers.engine import quantized_head

    torch.manual_seed(0)
    vocab, width, positions = 3000, 64, 12
    layer = _quantized(kind, torch.nn.Linear(width, vocab, bias=False))
    weight = layer.weight
    exact = (bnbf.dequantize_4bit(weight.data, weight.quant_state) if kind == "nf4"
             else bnbf.int8_vectorwise_dequant(weight.CB, weight.SCB)).float()
    assert exact.shape == (vocab, width) and (kind == "int8" or tuple(weight.shape) == (vocab * width // 2, 1))  # NF4: packed
    project = Projection(layer, LogitTransform())
    assert project.vocab == vocab and project.path() == "float32-dequantized" and project.sliceable
    hidden = torch.randn(positions, width).to(torch.bfloat16)
    which, targets = np.arange(positions), np.arange(positions) * 97 % vocab
    monkeypatch.setattr(head, "FUSED_ELEMENTS", {"cpu": 0})  # every call by slices
    monkeypatch.setattr(head, "SLICE_ELEMENTS", {"cpu": positions * 512})  # slices of 512 tokens
    got = head.logprobs_at(project, vocab, hidden, which, targets)
    want = torch.log_softmax(hidden.double() @ exact.double().T, -1)[which, targets].numpy()
    np.testing.assert_allclose(got[0], want, rtol=0, atol=1e-5)
    monkeypatch.setattr(quantized_head, "SHARE_OF_FREE", 0.0)  # as if the copy did not fit
    tight = Projection(_quantized(kind, torch.nn.Linear(width, vocab, bias=False)), LogitTransform())
    with pytest.warns(UserWarning, match="its logits are the module's compute dtype"):
        assert tight.path() == "quantized-module" and not tight.sliceable
    logits = tight(hidden)
    assert logits.dtype == torch.float32 and logits.shape == (positions, vocab)


def test_a_model_with_a_quantized_head_scores_through_its_dequantized_weight_and_records_it(tiny):
    """tiny-llama with its output layer swapped for an NF4 one: the engine's LPs equal those of the
    same model whose head is a plain float32 layer holding the dequantized weight, and the record
    says which head path ran."""
    import copy

    import bitsandbytes.functional as bnbf

    from helpers.engine.causal import CausalScorer
    from helpers.models import LoadedModel
    from helpers.settings import Settings

    lm = tiny("tiny-llama")
    model = copy.deepcopy(lm.model)
    layer = _quantized("nf4", model.lm_head)
    model.lm_head = layer
    plain = copy.deepcopy(lm.model)
    with torch.no_grad():
        plain.lm_head.weight = torch.nn.Parameter(
            bnbf.dequantize_4bit(layer.weight.data, layer.weight.quant_state).float(), requires_grad=False)
    texts = ["The cat sees a dog.", "The cats sees a dog.", "Who did you see?"]
    scored = {}
    for name, body in (("nf4", model), ("plain", plain)):
        scorer = CausalScorer(LoadedModel.wrap(body, lm.tokenizer, lm.spec), Settings(progress=False))
        scored[name] = np.array([s.total for s in scorer.score_texts(texts)])
        scored[name + "_path"] = scorer.record()["head_path"]
    assert (scored["nf4_path"], scored["plain_path"]) == ("float32-dequantized", "module")
    np.testing.assert_allclose(scored["nf4"], scored["plain"], rtol=0, atol=1e-4)
