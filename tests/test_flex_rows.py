"""FlexAttention for packed rows (helpers.engine.flex_rows), eager on the CPU: its mask_mod is
the tree mask with the cached positions and any sliding window, and scores through it equal the
dense tree mask, no reuse and the float64 forward, in every packed share mode, on models with and
without sliding windows and soft-capping. The compiled CUDA path: tests/test_gpu.py (marked gpu)."""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from torch.nn.attention.flex_attention import create_block_mask, create_mask

from helpers.engine import CausalScorer, flex_rows, row_attention
from helpers.models import LoadedModel
from helpers.settings import Settings
from test_conformance import REQUESTS, TOLERANCE, reference

# plain; a window on every layer; soft-capping with sliding and full layers
ARCHS = ("llama", "mistral", "gemma2")
# float32 rounding between two ways of computing the same attention (log-probs of -10 to -20 nats;
# the dense mask and no reuse differ by up to 3e-5 on these models): a leaked or lost key moves
# a log-prob by more than 1e-3
ROUNDING = 5e-5


def dense_tree_mask(cached: int, past: int, segments, window: int | None, width: int | None = None) -> np.ndarray:
    """[width, past + width] of one row (``width``: its tokens and two padding columns unless
    given), from first principles: a token sees the cached positions, its ancestors' tokens and
    its own segment up to itself (within ``window`` positions); padding sees itself."""
    cols = [(i, first + c) for i, (first, n, _) in enumerate(segments) for c in range(n)]
    ancestors = {}
    for i, (_, _, parent) in enumerate(segments):
        ancestors[i] = {i} | (ancestors[parent] if parent is not None else set())
    width = width or len(cols) + 2
    out = np.zeros((width, past + width), dtype=bool)
    for q, (i, qp) in enumerate(cols):
        for k in range(cached):
            out[q, k] = window is None or qp - k < window
        for k, (j, kp) in enumerate(cols):
            out[q, past + k] = j in ancestors[i] and kp <= qp and (window is None or qp - kp < window)
    for q in range(len(cols), width):
        out[q, past + q] = True
    return out


@pytest.mark.parametrize("window", [None, 4])
def test_the_mask_mod_is_the_tree_mask_with_cache_and_window(window):
    # row 0: 3 cached positions (of 5 cached columns), a stem, two branches, the first branching again;
    # row 1: nothing cached, a start token and two branches
    rows = [(3, [(3, 4, None), (7, 3, 0), (10, 2, 1), (10, 1, 1), (7, 2, 0)]),
            (0, [(0, 1, None), (1, 5, 0), (1, 3, 0)])]
    seg = max(sum(n for _, n, _ in s) for _, s in rows) + 2
    tree = flex_rows.TreeRows.of(rows, past=5, seg=seg)
    got = create_mask(tree.mask_mod(window), len(rows), 1, seg, 5 + seg, device="cpu")[:, 0].numpy()
    for r, (cached, segments) in enumerate(rows):
        want = dense_tree_mask(cached, 5, segments, window)
        n = want.shape[0]
        assert np.array_equal(got[r, :n - 2, :5 + n - 2], want[:n - 2, :5 + n - 2]), r
        assert not got[r, :n - 2, 5 + n - 2:].any()  # nothing real sees a padding column
        assert all(got[r, q, 5 + q] for q in range(n - 2, seg))  # padding sees itself
        if window is None:  # what the cost model counts for a compiled flex row: the tiles with a seen pair
            full = dense_tree_mask(cached, 5, segments, None, width=seg)
            for tile in (2, 4):
                padded = np.zeros((-(-seg // tile) * tile, -(-(5 + seg) // tile) * tile), dtype=bool)
                padded[:seg, :5 + seg] = full
                tiles = padded.reshape(padded.shape[0] // tile, tile, -1, tile).any(axis=(1, 3)).sum()
                flex = create_block_mask(tree.mask_mod(None), len(rows), None, seg, 5 + seg, device="cpu",
                                         BLOCK_SIZE=tile)  # what FlexAttention itself computes
                computed = int((flex.kv_num_blocks + flex.full_kv_num_blocks)[r].sum())
                assert flex_rows.computed_pairs(cached, segments, 5, seg, tile) == tiles * tile**2 == \
                    computed * tile**2, (r, tile)


@pytest.mark.parametrize("name", ARCHS)
def test_flex_rows_equal_the_dense_mask_no_reuse_and_float64(built, name):
    loaded = built(name)
    runs = {}
    for share in ("prefix", "tree"):
        for how in ("flex", "dense"):
            scorer = CausalScorer(loaded, Settings(progress=False, share=share), attention=how, pack_min_stem=0)
            assert scorer.executor.row_attention == how
            made = []
            original = flex_rows.TreeRows.of.__func__

            def spy(cls, *args, **kwargs):
                made.append(original(cls, *args, **kwargs))
                return made[-1]

            flex_rows.TreeRows.of = classmethod(spy)
            try:
                runs[share, how] = [s.logprobs for s in scorer.score(REQUESTS)]
            finally:
                flex_rows.TreeRows.of = classmethod(original)
            assert bool(made) == (how == "flex"), (share, how)  # packed rows ran through FlexAttention
    none = CausalScorer(loaded, Settings(progress=False, share="none"))
    expected = reference(loaded, none, REQUESTS)
    plain = [s.logprobs for s in none.score(REQUESTS)]
    for (share, how), got in runs.items():
        worst = max(float(np.max(np.abs(g - e))) for g, e in zip(got, expected))
        assert worst < TOLERANCE, f"{name}, {share}, {how}: {worst:.3g} nats from the float64 forward"
        assert max(float(np.max(np.abs(g - p))) for g, p in zip(got, plain)) < ROUNDING
    for share in ("prefix", "tree"):
        worst = max(float(np.max(np.abs(f - d))) for f, d in zip(runs[share, "flex"], runs[share, "dense"]))
        assert worst < ROUNDING, f"{name}, {share}: flex and the dense mask differ by {worst:.3g}"


def test_every_way_that_works_is_a_candidate_on_cuda_compiled_flex_preferred(monkeypatch):
    cuda = torch.device("cuda")
    monkeypatch.delenv("TORCHDYNAMO_DISABLE", raising=False)  # the suite's setting
    assert row_attention.defaults(cuda) == ("flex", "segments", "dense")
    monkeypatch.setenv("TORCHDYNAMO_DISABLE", "1")  # flex would run eagerly: segments first
    assert row_attention.defaults(cuda) == ("segments", "flex", "dense")
    assert row_attention.defaults(torch.device("cpu")) == ("segments", "dense")


def test_flex_is_asked_for_on_the_cpu_and_auto_names_it(built):
    loaded = built("llama")
    assert row_attention.usable(loaded.model.base_model, "bool", 0, torch.device("cpu"), None) == \
        ["segments", "dense"]  # the CPU's default: FlexAttention runs eagerly there
    auto = CausalScorer(loaded, Settings(progress=False), attention="flex")
    assert [m.name for m in auto._auto.modes] == ["none", "prefix, cached levels", "prefix, packed, flex attention",
                                                  "tree, flex attention"]
    assert {m.attention for m in auto._auto.modes if m.pack} == {"flex"}
    with pytest.raises(ValueError, match="attention must be one of"):
        CausalScorer(loaded, Settings(progress=False), attention="sparse")
    eager = copy.deepcopy(loaded.model)
    eager.set_attn_implementation("eager")
    with pytest.raises(ValueError, match="segments need SDPA"):
        CausalScorer(LoadedModel.wrap(eager, loaded.tokenizer, name="eager-llama"), Settings(progress=False),
                     attention="segments")


def test_the_compiled_path_compiles_no_new_graph_for_new_sizes_or_windows(monkeypatch):
    # what CUDA compiles, traced here by the compiler's front end with a backend that only counts
    # graphs: once warm, calls of other rows, cached widths, segment widths and windows (Gemma 2
    # alternates them every call) compile nothing new, so the recompile limit, past which
    # FlexAttention runs unfused, is never reached
    from functools import cache

    graphs = []

    def counting(gm, inputs):
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    monkeypatch.delenv("TORCHDYNAMO_DISABLE", raising=False)  # the tests' setting (for outlines) turns compiling off
    monkeypatch.setattr(torch._dynamo.config, "disable", False)
    monkeypatch.setattr(flex_rows, "compiles", lambda device: True)
    monkeypatch.setattr(flex_rows, "_compiled", cache(lambda function: torch.compile(function, backend=counting)))

    def call(rows: int, past: int, seg: int, window: int | None) -> torch.Tensor:
        tree = flex_rows.TreeRows.of([(past, [(past, seg - 2, None), (past + seg - 2, 1, 0), (past + seg - 2, 1, 0)])]
                                     * rows, past, seg)
        generator = torch.Generator().manual_seed(rows * 100 + past)
        query = torch.randn(rows, 4, seg, 16, generator=generator)
        key = torch.randn(rows, 2, past + seg, 16, generator=generator)
        out, _ = flex_rows.tree_flex_attention(None, query, key, key, None, tree_rows=tree, scaling=0.25,
                                               softcap=3.0, sliding_window=window)
        return out

    try:
        with torch.inference_mode():
            for rows, past, seg in ((3, 5, 9), (1, 0, 10), (2, 1, 11)):  # warm-up: sizes become symbolic
                for window in (None, 8):
                    call(rows, past, seg, window)
            warm = len(graphs)
            for rows, past, seg in ((4, 7, 12), (6, 3, 20), (1, 30, 13), (9, 2, 14)):
                for window in (8, None, 5):
                    call(rows, past, seg, window)
        assert warm > 0 and len(graphs) == warm, f"{warm} graphs in the warm-up, {len(graphs) - warm} after it"
    finally:
        torch._dynamo.reset()
