"""share="auto": the cost model's arithmetic and choice, its shipped coefficients (the same
choice on every machine of a device class), the fit of timings, and auto's values against the
mode it chose (bit for bit) and against no reuse (within the engine's tolerance)."""
import math
from dataclasses import astuple

import numpy as np
import pytest

from helpers.engine import CausalScorer, Request, cost_model, share_plan
from helpers.engine.cost_model import Coefficients, Workload
from helpers.engine.plan import build_tree
from helpers.settings import Settings, scorer_arguments

PREFIX = ("The committee met on a grey morning in the old hall. Everyone had read the report, and "
          "nobody wanted to speak first. After a long silence the chair opened the window. ")
PAIRS = [("The cats near the door are asleep.", "The cats near the door is asleep."),
         ("Every student has finished the test.", "Every student have finished the test."),
         ("Who did the doctor say that left?", "Who did the doctor say left?")]


def primed_requests() -> list[Request]:
    return [Request(PREFIX + f"({k}) ", s) for k in range(2) for pair in PAIRS for s in pair]


def plain_requests() -> list[Request]:
    return [Request("", s) for pair in PAIRS for s in pair]


def test_cost_is_the_dot_product_and_ties_go_to_the_first_name():
    c = Coefficients(call=1.0, token=2.0, pair=3.0, gathered=4.0, block=5.0, key=6.0)
    assert c.cost(Workload(calls=1, tokens=10, pairs=100, gathered=1000, blocks=2, keys=7)) == \
        1 + 20 + 300 + 4000 + 10 + 42
    assert Workload(1, 2, 3, 4, 5, 6) + Workload(10, 20, 30, 40, 50, 60) == Workload(11, 22, 33, 44, 55, 66)
    assert cost_model.cheapest({"none": 2.0, "prefix, packed": 1.5, "tree": 1.75}) == "prefix, packed"
    assert cost_model.cheapest({"none": 1.0, "tree": 1.0}) == "none"
    with pytest.raises(ValueError, match="positive and finite"):
        Coefficients(call=0.0, token=1.0, pair=1.0, gathered=1.0, block=1.0, key=1.0)
    with pytest.raises(ValueError, match="positive and finite"):
        Coefficients(call=1.0, token=math.inf, pair=1.0, gathered=1.0, block=1.0, key=1.0)


def test_fit_recovers_the_coefficients_of_exact_timings():
    truth = Coefficients(call=2e-3, token=5e-5, pair=1e-8, gathered=3e-7, block=4e-4, key=1e-7)
    works = [Workload(1, 16, 256, 0, 0, 0), Workload(1, 512, 262144, 0, 0, 0), Workload(1, 480, 7200, 0, 0, 0),
             Workload(2, 312, 80264, 2048, 0, 0), Workload(1, 353, 13036, 0, 12, 700),
             Workload(1, 511, 73696, 0, 16, 4000), Workload(1, 264, 30000, 0, 4, 1600)]
    fitted = cost_model.fit(works, [truth.cost(w) for w in works])
    np.testing.assert_allclose(astuple(fitted), astuple(truth), rtol=1e-6)
    with pytest.raises(ValueError, match="positive timings"):
        cost_model.fit(works[:3], [1.0, 2.0, 3.0])


def test_device_costs_pool_the_models_that_separated_a_feature_and_keep_the_fallback_for_none():
    """Per feature: the geometric mean of coefficient / scale over the fits not at the floor;
    a feature every fit left at the floor (a CPU fit of demo-en alone can) keeps the fallback."""
    floor = cost_model.MIN_COEFFICIENT
    a = cost_model.ModelShape(layers=2, width=4, macs=100.0, kv_bytes=8.0)
    b = cost_model.ModelShape(layers=8, width=16, macs=1600.0, kv_bytes=32.0)
    fits = [(Coefficients(call=2.0, token=100.0, pair=floor, gathered=floor, block=4.0, key=floor), a),
            (Coefficients(call=32.0, token=6400.0, pair=128.0, gathered=floor, block=8.0, key=floor), b)]
    fallback = cost_model.DeviceCosts(layer=9.0, mac=9.0, pair=9.0, byte=3.0, block=9.0, key_byte=5.0)
    costs, kept = cost_model.DeviceCosts.pooled(fits, fallback)
    # layer: 2/2=1 and 32/8=4 -> 2; mac: 1 and 4 -> 2; pair: only b's, 128/(8*16) = 1;
    # block: 4/2=2 and 8/8=1 -> sqrt(2); byte and key_byte: no fit separated them -> fallback
    assert astuple(costs) == pytest.approx((2.0, 2.0, 1.0, 3.0, math.sqrt(2.0), 5.0), rel=1e-12)
    assert kept == ["byte", "key_byte"]
    assert cost_model.DeviceCosts.pooled(fits[1:], fallback)[1] == ["byte", "key_byte"]


def test_workload_counts_calls_tokens_pairs_and_gathers_exactly(tiny):
    scorer = CausalScorer(tiny("tiny-llama"), Settings(progress=False, share="prefix"), pack=False)

    class Seq:
        def __init__(self, ids, first):
            self.ids, self.first = ids, first

    # 3 sentences of 9 tokens alone: one call of 3 rows x 8 fed tokens, dense causal pairs 8 x 8 a row
    alone = [Seq([1] + list(range(10 * k + 2, 10 * k + 10)), 1) for k in range(3)]
    assert cost_model.workload(scorer.executor, build_tree(alone, [1] * 3, share="none")) == \
        Workload(calls=1, tokens=24, pairs=3 * 8 * 8, gathered=0, blocks=0, keys=0)
    # a 20-token context (run once, cached) under 4 continuations of 5 tokens (4 fed, after 20 cached)
    context = list(range(100, 120))
    under = [Seq(context + [200 + k, 7, 8, 9, 10], 20) for k in range(4)]
    assert cost_model.workload(scorer.executor, build_tree(under, [20] * 4, share="prefix")) == \
        Workload(calls=2, tokens=20 + 4 * 4, pairs=20 * 20 + 4 * 4 * (20 + 4), gathered=4 * 20, blocks=0, keys=0)


def test_the_mode_the_coefficients_favour_is_chosen(tiny, monkeypatch):
    lm = tiny("tiny-llama")
    scorer = CausalScorer(lm, Settings(progress=False))
    names = [m.name for m in scorer._auto.modes]
    assert names == ["none", "prefix, cached levels", "prefix, packed", "prefix, packed, dense mask", "tree",
                     "tree, dense mask"]

    def costs_of(*values):
        monkeypatch.setattr(cost_model, "shipped", lambda model, device: Coefficients(*values))

    # only tokens cost: primed pairs run their shared prefix once, so a reuse mode wins; the tree
    # runs the fewest tokens (the start token too) and segment attention counts no masked pair
    costs_of(1e-12, 1.0, 1e-12, 1e-12, 1e-12, 1e-12)
    scorer.score(primed_requests())
    costs = scorer._auto.last_costs
    assert scorer.share_used == min(costs, key=costs.get) != "none"
    assert costs["none"] > 1.5 * costs[scorer.share_used]
    # one sentence: every mode runs the same call, and ties go to no reuse
    costs_of(1.0, 1e-12, 1e-12, 1e-12, 1e-12, 1e-12)
    scorer.score(plain_requests()[:1])
    assert len(set(scorer._auto.last_costs.values())) == 1 and scorer.share_used == "none"
    # calls dearest and gathers dear: the cached levels (two calls, a gather) lose to packing
    costs_of(1.0, 1e-9, 1e-12, 1.0, 1e-12, 1e-12)
    scorer.score(primed_requests())
    assert scorer._auto.last_costs["prefix, cached levels"] > scorer._auto.last_costs["prefix, packed"]
    assert sum(scorer._auto.used.values()) == 3 and scorer._auto.used["none"] >= 1  # calls per mode


def test_shipped_coefficients_are_the_models_shape_times_its_device_class(tiny):
    """Nothing is timed: the coefficients are the model's shape (counted here from its
    configuration, as GPT-2's 12 d^2 multiply-adds per layer and token) times the shipped
    per-unit costs of the device class, whatever the thread count."""
    lm = tiny("tiny-gpt2")
    cfg = lm.model.config
    d, layers = cfg.n_embd, cfg.n_layer
    shape = cost_model.ModelShape.of(lm.model)
    assert shape == cost_model.ModelShape(layers, d, 12.0 * d * d * layers, 2.0 * layers * d * 4)
    units = cost_model.DEVICE_COSTS["cpu"]
    want = Coefficients(units.layer * layers, units.mac * shape.macs, units.pair * layers * d,
                        units.byte * shape.kv_bytes, units.block * layers, units.key_byte * shape.kv_bytes)
    threads = __import__("torch").get_num_threads()
    try:
        scorer = CausalScorer(lm, Settings(progress=False))
        __import__("torch").set_num_threads(1)
        other = CausalScorer(lm, Settings(progress=False))
        assert scorer._auto.coefficients == other._auto.coefficients == want
        assert all(math.isfinite(v) and v > 0 for v in astuple(want))
        assert (scorer.forward_calls, scorer.tokens_run) == (0, 0)  # nothing ran to choose
        a, b = scorer.score(primed_requests()), other.score(primed_requests())
        assert scorer.share_used == other.share_used
        assert all(np.array_equal(x.logprobs, y.logprobs) for x, y in zip(a, b))
    finally:
        __import__("torch").set_num_threads(threads)
    assert cost_model.device_class("cuda:1") == "cuda" and cost_model.device_class("cpu") == "cpu"


def test_measured_coefficients_are_positive_finite_and_count_in_no_statistic(tiny):
    lm = tiny("tiny-gpt2")
    scorer = CausalScorer(lm, Settings(progress=False))
    c = scorer._auto.measured()
    values = astuple(c)
    assert all(math.isfinite(v) and v > 0 for v in values), values
    assert (scorer.forward_calls, scorer.tokens_run) == (0, 0)
    assert scorer.seconds["rows"] == scorer.seconds["head"] == 0.0


@pytest.mark.parametrize("name", ["none", "prefix, cached levels", "prefix, packed", "prefix, packed, dense mask",
                                  "tree", "tree, dense mask"])
def test_auto_equals_the_chosen_mode_bit_for_bit_and_no_reuse_within_tolerance(tiny, monkeypatch, name):
    lm = tiny("tiny-llama")
    monkeypatch.setattr(share_plan.cost_model, "cheapest", lambda costs: name)
    auto = CausalScorer(lm, Settings(progress=False))
    mode = next(m for m in auto._auto.modes if m.name == name)
    by_hand = CausalScorer(lm, **scorer_arguments(mode.by_hand(), Settings(progress=False)))
    plain = CausalScorer(lm, Settings(progress=False, share="none"))
    for requests in (primed_requests(), plain_requests()):
        got, want, ref = (s.score(requests, with_context=True) for s in (auto, by_hand, plain))
        assert auto.share_used == name
        for a, b, r in zip(got, want, ref):
            assert np.array_equal(a.logprobs, b.logprobs) and np.array_equal(a.logits, b.logits)
            assert np.array_equal(a.context_logprobs, b.context_logprobs)
            np.testing.assert_allclose(a.logprobs, r.logprobs, atol=1e-5)
            np.testing.assert_allclose(a.context_logprobs, r.context_logprobs, atol=1e-5)
    assert (auto.forward_calls, auto.tokens_run) == (by_hand.forward_calls, by_hand.tokens_run)


def test_auto_decides_as_no_reuse(tiny):
    lm = tiny("tiny-qwen2")
    auto, plain = CausalScorer(lm, Settings(progress=False)), CausalScorer(lm, Settings(progress=False, share="none"))
    requests = primed_requests()
    a, p = auto.score(requests), plain.score(requests)
    assert auto.share_used in [m.name for m in auto._auto.modes]
    for i in range(0, len(requests), 2):
        good_a, bad_a = a[i].logprobs.sum(), a[i + 1].logprobs.sum()
        good_p, bad_p = p[i].logprobs.sum(), p[i + 1].logprobs.sum()
        assert good_a == pytest.approx(good_p, abs=1e-4) and bad_a == pytest.approx(bad_p, abs=1e-4)
        assert (good_a > bad_a) == (good_p > bad_p)


def test_a_plan_takes_a_concrete_share_mode():
    with pytest.raises(ValueError, match="'auto' is chosen per call by the causal scorer"):
        build_tree([], [], share="auto")


def _rebuilt(blocks, cached: int, width: int) -> np.ndarray:
    """The [queries, cached + keys] mask the blocks compute, each query written once."""
    out, written = np.zeros((width, cached + width), dtype=bool), np.zeros(width, dtype=bool)
    for b in blocks:
        own, lead = b.queries, len(b.keys) - len(b.queries)  # a causal block's slots of the keys before its own
        mask = b.mask if not b.causal else np.tril(np.ones((len(b.keys), len(b.keys)), dtype=bool))[lead:]
        assert not written[own].any()
        written[own] = True
        out[np.ix_(own, b.keys)] = mask
    assert written.all()
    return out


@pytest.mark.parametrize("cached", [0, 3, 12])
def test_long_segments_run_as_one_causal_block_or_in_chunks_and_the_blocks_still_hold_the_tree_mask(cached):
    from helpers.engine import segment_blocks as sb

    # the start token, a 10-token prefix (long at long=4), then two 3-token branches of it
    segments = [(cached, 1, None), (cached + 1, 10, 0), (cached + 11, 3, 1), (cached + 11, 3, 1)]
    path = {0: [0], 1: [0, 1], 2: [0, 1, 2], 3: [0, 1, 3]}
    cols = [(i, c) for i, (_, n, _) in enumerate(segments) for c in range(n)]
    dense = np.array([[True] * cached + [j in path[i] and segments[j][0] + ck <= segments[i][0] + cq
                                         for (j, ck) in cols] for (i, cq) in cols])
    blocks = sb.row_blocks(0, cached, cached, segments, chunk=2, long=4)
    if cached == 12:  # more keys before the prefix than its own tokens: chunks of `long` of its own queries
        assert [(b.queries[0], b.queries[-1] + 1) for b in blocks] == [(0, 1), (1, 5), (5, 9), (9, 11), (11, 13),
                                                                        (13, 14), (14, 16), (16, 17)]
        assert list(blocks[2].keys) == list(range(12 + 9))  # the second chunk: the cache, the start token, itself so far
    else:  # one causal block: the cache, the start token and the prefix as keys, the prefix as queries
        causal = [b for b in blocks if b.causal]
        assert len(causal) == 1 and (causal[0].queries[0], len(causal[0].queries), len(causal[0].keys)) == \
            (1, 10, cached + 11)
    assert np.array_equal(_rebuilt(blocks, cached, 17), dense)
    assert sb.block_sizes(cached, segments, chunk=2, long=4) == [(len(b.keys), b.pairs()) for b in blocks]
    # under a sliding window the causal block whose keys span it is counted as it runs, every query x key
    from helpers.engine.attention_layout import AttentionLayout
    for window in (3, 100):
        windowed = [b.windowed(AttentionLayout(window)) for b in blocks]
        assert sb.block_sizes(cached, segments, chunk=2, long=4, window=window) == \
            [(len(b.keys), b.pairs()) for b in windowed]
    assert any(b.causal for b in blocks) == (cached < 12) and not any(b.causal for b in
                                                                      [b.windowed(AttentionLayout(3)) for b in blocks])


def test_score_files_record_auto_and_the_mode_that_ran_and_keep_the_configuration(tiny, tmp_path):
    from helpers import data
    from helpers.data.selection import DatasetSelection, first_per_paradigm
    from helpers.runner import run_methods
    from helpers.store import ScoreStore, read_metadata

    lm, store = tiny("tiny-gpt2"), ScoreStore(tmp_path)
    blimp = data.load("blimp")
    selection = DatasetSelection("blimp", first_per_paradigm(blimp[blimp.paradigm.isin(blimp.paradigm.unique()[:2])], 1),
                                 limit=1)
    auto = CausalScorer(lm, Settings(progress=False))
    files = run_methods(auto, selection, ["lp"], store=store)
    meta = read_metadata(files[0])
    assert meta["share"] == "auto" and meta["share_used"] == auto.share_used != "auto"
    again = run_methods(CausalScorer(lm, Settings(progress=False, share="none")), selection, ["lp"], store=store)
    assert again == files and store.writes == 1  # the same configuration: found, not scored again


@pytest.mark.parametrize("window", [3, 6, 100])
def test_segment_attention_applies_a_sliding_window_by_position_as_a_dense_mask_does(window):
    """Segment attention on a sliding layer equals SDPA under the dense tree mask cut by the
    window (``AttentionLayout.near``), for chunked blocks and for a long causal block whose keys
    span the window (made an explicit mask); a full layer keeps the tree mask."""
    from types import SimpleNamespace

    import torch
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    from helpers.engine import segment_attention as sa
    from helpers.engine.attention_layout import AttentionLayout
    from helpers.engine.segment_blocks import row_blocks

    segments = [(0, 1, None), (1, 10, 0), (11, 3, 1), (11, 3, 1)]
    path = {0: [0], 1: [0, 1], 2: [0, 1, 2], 3: [0, 1, 3]}
    cols = [(i, segments[i][0] + c) for i, (_, n, _) in enumerate(segments) for c in range(n)]
    tree = torch.tensor([[j in path[i] and pk <= pq for (j, pk) in cols] for (i, pq) in cols])
    pos = torch.tensor([p for _, p in cols])
    layout = AttentionLayout(window=window)
    blocks = row_blocks(0, 0, 0, segments, chunk=2, long=4)
    assert any(b.causal for b in blocks)  # the 10-token prefix: one causal block
    module = SimpleNamespace(is_causal=True, num_key_value_groups=1, training=False)
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 2, 17, 8) for _ in range(3))
    for sliding, mask in ((window, tree & layout.near(pos, pos)), (None, tree)):
        got, _ = sa.segment_sdpa(module, q, k, v, None, segments=sa.Segments(blocks, 1, 17, 0, layout),
                                 sliding_window=sliding, scaling=0.35)
        want, _ = sdpa_attention_forward(module, q, k, v, mask[None, None], scaling=0.35, is_causal=False)
        assert torch.allclose(got, want, atol=1e-6), (window, sliding)
