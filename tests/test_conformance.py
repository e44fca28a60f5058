"""The architecture conformance matrix: tiny random models of every family the registry names
plus the open families researchers load (helpers.models.tiny_architectures), each with its
quirks made to bite (sliding windows shorter than the texts, soft-capping, logit scales,
peaked logits). The engine scores them in every share mode, with packing, within 1e-4 nats
of the model's own float64 forward; a model whose forward changes its logits in a way its
configuration does not name is refused at start-up, and only then."""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from transformers import LlamaForCausalLM

from helpers.engine import CausalScorer, Request, scorer_for
from helpers.engine.logit_transform import LogitTransform
from helpers.models import LoadedModel, load
from helpers.models import tiny_architectures as ta
from helpers.settings import SHARE_MODES, Settings

TOLERANCE = 1e-4  # nats, against the model's own float64 forward
CONTEXT = "Is the following sentence grammatically acceptable? "
TEXTS = ["The old cat sees the young dog near the river and the small bird watches the famous teacher.",
         "The old cat sees the young dog near the river and the small birds watches the famous teacher.",
         "Every careful student helps a quiet doctor in the green garden.",
         "Every careful student help a quiet doctor in the green garden."]
REQUESTS = [Request("", t) for t in TEXTS] + [Request(CONTEXT, t) for t in TEXTS]


def float64_model(model):
    m64 = copy.deepcopy(model).double().eval()
    m64.set_attn_implementation("eager")
    if getattr(m64, "_can_set_experts_implementation", lambda: False)():
        m64.set_experts_implementation("eager")
    return m64


@torch.no_grad()
def reference(loaded: LoadedModel, scorer, requests) -> list[np.ndarray]:
    """Each request's target log-probs from a float64 copy run on the whole sequence alone."""
    m64 = float64_model(loaded.model)
    out = []
    for enc in scorer.encode_many(requests):
        if loaded.kind == "seq2seq":
            dec = [scorer.start_id, *enc.decoder_ids[:-1]]
            logits = m64(input_ids=torch.tensor([enc.source_ids]), decoder_input_ids=torch.tensor([dec])).logits[0]
            lp = torch.log_softmax(logits, -1)
            out.append(np.array([lp[j, enc.decoder_ids[j]].item() for j in range(enc.first, enc.end)]))
        else:
            lp = torch.log_softmax(m64(input_ids=torch.tensor([list(enc.ids)])).logits[0], -1)
            out.append(np.array([lp[i - 1, enc.ids[i]].item() for i in range(enc.first, len(enc.ids))]))
    return out


@pytest.mark.parametrize("name", list(ta.ARCHITECTURES))
def test_every_share_mode_matches_the_float64_forward(built, name):
    loaded = built(name)
    arch = ta.ARCHITECTURES[name]
    assert loaded.kind == arch.kind
    expected = None
    tokens = {}
    for share in SHARE_MODES:
        scorer = scorer_for(loaded, Settings(progress=False, share=share))
        if expected is None:
            expected = reference(loaded, scorer, REQUESTS)
            if arch.kind == "causal":  # texts longer than any window; logits peaked
                assert min(len(e) for e in expected) > ta.WINDOW
        got = [s.logprobs for s in scorer.score(REQUESTS)]
        worst = max(float(np.max(np.abs(g - e))) for g, e in zip(got, expected))
        assert worst < TOLERANCE, f"{name}, share={share!r}: {worst:.3g} nats from the float64 forward"
        tokens[share] = scorer.tokens_run
        if arch.kind == "causal":
            assert scorer.can_share_cache and scorer.pack in ("bool", "additive"), (name, scorer.pack)
    assert max(float(np.max(np.abs(e))) for e in expected) > 3.0  # peaked: some tokens far from uniform
    if arch.kind == "causal":  # the shared modes did share (the context and the pairs' prefixes ran once)
        assert tokens["context"] < tokens["none"] and tokens["prefix"] < tokens["context"], tokens


def test_a_real_model_in_every_share_mode(smollm2):
    """SmolLM2-135M-Instruct's real weights (30 layers, vocabulary 49,152) on real text: in every share
    mode the engine is within 1e-4 nats of the float64 forward, or no further from it than a plain
    float32 forward of each whole sequence is."""
    scorers = {share: scorer_for(smollm2, Settings(progress=False, share=share)) for share in SHARE_MODES}
    encoded = scorers["none"].encode_many(REQUESTS)
    expected = reference(smollm2, scorers["none"], REQUESTS)
    with torch.no_grad():
        plain = []
        for enc in encoded:
            lp = torch.log_softmax(smollm2.model(input_ids=torch.tensor([list(enc.ids)])).logits[0].double(), -1)
            plain.append(np.array([lp[i - 1, enc.ids[i]].item() for i in range(enc.first, len(enc.ids))]))
    bounds = [max(TOLERANCE, float(np.max(np.abs(p - e)))) for p, e in zip(plain, expected)]
    for share, scorer in scorers.items():
        got = [s.logprobs for s in scorer.score(REQUESTS)]
        over = [float(np.max(np.abs(g - e))) / b for g, e, b in zip(got, expected, bounds)]
        assert max(over) <= 1.0, f"share={share!r}: {max(over):.3g} times the bound from the float64 forward"
    assert scorers["prefix"].tokens_run < scorers["none"].tokens_run  # the shared prefixes ran once


@pytest.mark.parametrize("name, transform", [("gemma2", LogitTransform(1.0, 4.0)), ("gemma3", LogitTransform(1.0, 4.0)),
                                             ("cohere", LogitTransform(0.25, None)),
                                             ("granite", LogitTransform(2.0, None)), ("llama", LogitTransform())])
def test_logit_transforms_are_read_from_the_configuration(built, name, transform):
    scorer = scorer_for(built(name), Settings(progress=False))
    assert scorer.logit_transform == transform


@pytest.mark.parametrize("name", ["mistral", "gemma2", "qwen3", "phi3"])
@pytest.mark.parametrize("share", ["prefix", "tree"])
def test_windows_matter_where_they_are_applied(built, name, share, monkeypatch):
    """Packed rows attend segment by segment on the CPU, sliding layers through the window
    (within 1e-4 nats of the float64 forward), and without the window's rule
    (``AttentionLayout.near``, read by the 4D masks and the segments alike) the engine is far off
    (the test above can fail)."""
    from helpers.engine import attention_layout

    loaded = built(name)
    scorer = scorer_for(loaded, Settings(progress=False, share=share))
    # Gemma 2 soft-caps its attention scores, which SDPA cannot: eager attention, a dense tree mask
    assert scorer.executor.row_attention == ("dense" if name == "gemma2" else "segments")
    expected = reference(loaded, scorer, REQUESTS)
    got = [s.logprobs for s in scorer.score(REQUESTS)]
    assert max(float(np.max(np.abs(g - e))) for g, e in zip(got, expected)) < TOLERANCE
    monkeypatch.setattr(attention_layout.AttentionLayout, "near", lambda self, q, k: q[..., :, None] >= 0)
    got = [s.logprobs for s in scorer_for(loaded, Settings(progress=False, share=share)).score(REQUESTS)]
    assert max(float(np.max(np.abs(g - e))) for g, e in zip(got, expected)) > 0.1


class _DoubledLogits(LlamaForCausalLM):
    """A forward that changes the logits in a way no configuration names."""

    def forward(self, *args, **kwargs):
        out = super().forward(*args, **kwargs)
        out.logits = out.logits * 2
        return out


class _SameLogits(LlamaForCausalLM):
    """A forward of its own that computes what the engine computes."""

    def forward(self, *args, **kwargs):
        out = super().forward(*args, **kwargs)
        out.logits = out.logits + 0.0
        return out


def test_an_unknown_logit_transform_is_refused_and_only_then(built):
    base = built("llama")
    doubled = _DoubledLogits(base.model.config).eval()
    doubled.load_state_dict(base.model.state_dict())
    with pytest.raises(NotImplementedError, match=r"differ from the engine's by .* nats on a probe input"):
        CausalScorer(LoadedModel.wrap(doubled, base.tokenizer), Settings(progress=False))
    same = _SameLogits(base.model.config).eval()
    same.load_state_dict(base.model.state_dict())
    got = CausalScorer(LoadedModel.wrap(same, base.tokenizer), Settings(progress=False)).score(REQUESTS[:2])
    want = CausalScorer(base, Settings(progress=False)).score(REQUESTS[:2])
    assert all(np.array_equal(a.logprobs, b.logprobs) for a, b in zip(got, want))


def test_a_half_precision_model_passes_its_probe(built, tmp_path):
    """bfloat16 rounds the model's own logits before its soft-cap; the probe allows for it."""
    folder = ta.build("gemma2", tmp_path / "gemma2")
    loaded = load(folder, dtype=torch.bfloat16)
    scorer = scorer_for(loaded, Settings(progress=False))
    bf16 = [s.total for s in scorer.score(REQUESTS)]
    f32 = [s.total for s in scorer_for(built("gemma2"), Settings(progress=False)).score(REQUESTS)]
    assert np.max(np.abs(np.array(bf16) - np.array(f32))) < 0.5  # bfloat16 rounding, not a missing soft-cap
