"""Property-based checks of the engine (hypothesis): any text, any context, any batching.

For random unicode targets and contexts (empty, ending in spaces, whitespace runs, very
short and long), the engine's log-probs equal a float64 reference computed here (the
whole sequence through a float64 copy of the model, full log-softmax), and agree across
share modes, packing and batch sizes.
"""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.engine import Request, CausalScorer
from helpers.settings import Settings, scorer_arguments

WORDS = st.sampled_from(["the", "cat", "sees", "a", "dog", "Who", "should", "我", "喜欢", "ü", "—", "’s", "123", "\t"])
TEXT = st.one_of(
    st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=30),
    st.lists(WORDS, min_size=1, max_size=40).map(" ".join),  # word-like text, up to long targets
)
CONTEXT = st.one_of(st.just(""), TEXT, TEXT.map(lambda t: t + " "), TEXT.map(lambda t: t + "\n\n"))
REQUESTS = st.lists(st.tuples(CONTEXT, TEXT), min_size=1, max_size=6)

_float64 = {}


def float64_logprobs(model, ids: tuple[int, ...]) -> np.ndarray:
    """log p(ids[i] | ids[:i]) for i >= 1 from a float64 copy of ``model`` (eager attention)."""
    if id(model) not in _float64:
        m64 = copy.deepcopy(model).double()
        m64.set_attn_implementation("eager")
        _float64[id(model)] = m64
    with torch.no_grad():
        logits = _float64[id(model)](torch.tensor([ids])).logits[0].double()
    lp = torch.log_softmax(logits, dim=-1)
    return np.array([np.nan] + [lp[i - 1, ids[i]].item() for i in range(1, len(ids))])


def _usable(scorer: CausalScorer, pairs) -> list[Request]:
    """The requests, minus those whose target is only whitespace the tokenizer drops."""
    requests = [Request(c, t) for c, t in pairs]
    keep = []
    for r in requests:
        try:
            scorer.encode(r)
        except ValueError:
            continue
        keep.append(r)
    return keep


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
@settings(max_examples=15, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(pairs=REQUESTS)
def test_random_text_matches_float64_reference_across_modes(tiny, arch, pairs):
    lm = tiny(f"tiny-{arch}")
    base = CausalScorer(lm, Settings(progress=False, share="none"))
    requests = _usable(base, pairs)
    if not requests:
        return
    encoded = base.encode_many(requests)
    expected = base.score(requests, with_context=True)
    for e, s in zip(encoded, expected):
        ref = float64_logprobs(lm.model, e.ids)
        np.testing.assert_allclose(s.logprobs, ref[e.first:], atol=1e-4)
        np.testing.assert_allclose(s.context_logprobs, ref[1:e.first], atol=1e-4)
    for options in (dict(share="context"), dict(share="prefix"), dict(share="tree"), dict(share="tree", pack_min_stem=0),
                    dict(share="tree", attention="dense"), dict(share="tree", batch_size=3),
                    dict(share="prefix", pack_min_stem=0), dict(share="prefix", pack=False),
                    dict(share="prefix", batch_size=1), dict(share="prefix", batch_size=3),
                    dict(share="none", batch_size=16), dict(share="prefix", token_budget=32)):
        got = CausalScorer(lm, **scorer_arguments(options, Settings(progress=False))).score(requests, with_context=True)
        for a, b in zip(expected, got):
            np.testing.assert_allclose(b.logprobs, a.logprobs, atol=1e-5, err_msg=str(options))
            np.testing.assert_allclose(b.context_logprobs, a.context_logprobs, atol=1e-5, err_msg=str(options))
