"""Shards of a dataset run: deterministic split, shard files read back as one run, and
notebook 02 sharded three ways against the unsharded run."""
from __future__ import annotations

import json
import re
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from helpers import sweep
from helpers.analysis import accuracy
from helpers.data.selection import select
from helpers.methods.fewshot import FewShot
from helpers.store import ScoreStore, load_files, load_scores
from helpers.runner import RunSetup, run_methods
from helpers.engine import CausalScorer
from helpers.data.shards import Shard, split
from helpers.settings import Settings, scorer_arguments

def test_split_is_by_paradigm_then_position():
    frame = pd.DataFrame({"paradigm": ["a", "b", "a", "c", "b", "a", "c"]})
    # order: a (0, 2, 5), b (1, 4), c (3, 6); cut 3 / 2 / 2
    assert [p.tolist() for p in split(frame, 3)] == [[0, 2, 5], [1, 4], [3, 6]]
    assert [p.tolist() for p in split(frame, 2)] == [[0, 1, 2, 5], [3, 4, 6]]
    assert [p.tolist() for p in split(pd.DataFrame({"x": range(5)}), 2)] == [[0, 1, 2], [3, 4]]


def test_a_shard_of_a_selection(tiny_dir):
    full = select("hl_blimp", 2)  # paradigms interleave in this table
    parts = [full.for_shards(i, 3) for i in (1, 2, 3)]
    assert [len(p) for p in parts] == [len(full) // 3 + (i < len(full) % 3) for i in range(3)]
    assert all(p.config() == full.config() for p in parts)  # the run's configuration: same config hash
    positions = np.sort(np.concatenate([p.shard.positions() for p in parts]))
    assert np.array_equal(positions, np.arange(len(full)))
    first = parts[0]
    assert first.shard.tag == "shard1of3"
    assert first.frame.equals(full.frame.iloc[first.shard.positions()].reset_index(drop=True))
    assert Shard.from_meta(json.loads(json.dumps(first.shard.meta()))) == first.shard
    assert full.for_shards(None, 1) is full
    read = full.for_shards(None, 3)  # the whole run, read from its 3 shards' files
    assert read.frame is full.frame and not read.shard.scored and read.shard.tag is None
    assert [s.tag for s in read.shard.each()] == ["shard1of3", "shard2of3", "shard3of3"]
    assert read.config() == full.config()
    with pytest.raises(ValueError, match=r"the selection is already shard 1 of 3: shard the whole run"):
        first.for_shards(1, 2)


@pytest.mark.parametrize("shard, shards, message", [
    (0, 3, r"shard must be a number from 1 to 3"), (4, 3, r"shard must be a number from 1 to 3 \(which of the 3 shards to run\), or None \(read "
              r"all 3 shards' files as one run\), got 4"),
    (2, 1, r"shard 2 of 1"), (None, 0, r"shards must be a whole number >= 1, got 0"),
    (1, 500, r"500 shards of 134 items: ask for at most 134 shards"),
])
def test_bad_shards_are_clear_errors(shard, shards, message):
    with pytest.raises(ValueError, match=message):
        select("blimp", 2).for_shards(shard, shards)


@pytest.mark.parametrize("model, options, block", [
    ("tiny-gpt2", {"share": "tree"}, None),  # the run's trie packed: one block, one batch that every shard needs
    ("tiny-llama", {"share": "tree", "pack_min_stem": 0, "token_budget": 96}, 8),  # packed rows, blocks of 8 requests
])
def test_shard_files_are_read_as_one_run_bit_for_bit(tiny, tmp_path, model, options, block):
    """A sharded run gives the unsharded scores bit for bit: each shard plans the whole run and
    runs the batches its pairs need, and the split and the merge lose, add and reorder nothing."""
    scorer = CausalScorer(tiny(model), **scorer_arguments(options, Settings(progress=False)))
    if block:
        scorer.executor.block = block
    first = select("hl_blimp", 2)
    selection = replace(first, frame=first.frame.head(30))  # 17 paradigms that interleave: shards are not ranges
    assert [len(selection.for_shards(i, 3).shard.ranges) for i in (1, 2, 3)] == [2, 4, 3]
    methods = ["lp", "meanlp"]
    whole = run_methods(scorer, selection, methods, store=ScoreStore(tmp_path / "a"))
    whole_calls = scorer.forward_calls
    store = ScoreStore(tmp_path / "b")
    for i in (1, 2):
        run_methods(scorer, selection.for_shards(i, 3), methods, store=store)
    with pytest.warns(UserWarning, match=r"left out lp in .*: shards \[1, 2\] of 3 are there"):
        assert load_scores(root=tmp_path / "b").empty
    run_methods(scorer, selection.for_shards(3, 3), methods, store=store)
    sharded_calls = scorer.forward_calls - whole_calls
    # each shard runs the batches its pairs need: all of a one-block run, its own blocks' otherwise
    assert (sharded_calls == 3 * whole_calls) if block is None else (whole_calls < sharded_calls < 2 * whole_calls), \
        (whole_calls, sharded_calls)
    calls = scorer.forward_calls
    found = run_methods(scorer, selection, methods, store=store)
    assert scorer.forward_calls == calls  # the complete shards are the finished run
    assert [p.name for p in found] == [f"{m}__shard{i}of3.parquet" for m in methods for i in (1, 2, 3)]
    assert load_files(found).equals(load_files(whole))
    assert load_scores(root=tmp_path / "b", token_columns=True).equals(load_scores(root=tmp_path / "a",
                                                                                  token_columns=True))


@pytest.mark.slow
def test_notebook_02_sharded_three_ways_gives_the_unsharded_scores(tiny_dir, tmp_path, monkeypatch):
    """02 on tiny-gpt2 in three shard jobs and in one job: the same score table bit for bit and
    the same Table 3; the unsharded notebook then finds the shards and computes nothing."""
    params = {"limit": 2, "methods": "lp,meanlp,intemplate_lp", "templates": 1}
    monkeypatch.setenv("HELPERS_OUTPUTS_DIR", str(tmp_path / "whole"))
    sweep.run(sweep.plan(["02"], ["tiny-gpt2"], ["blimp"], params))
    whole = load_scores(root=tmp_path / "whole" / "scores")
    monkeypatch.setenv("HELPERS_OUTPUTS_DIR", str(tmp_path / "sharded"))
    jobs = sweep.plan(["02"], ["tiny-gpt2"], ["blimp"], params, shards=3)
    assert [j.output.name for j in jobs] == [
        f"02_readout__tiny-gpt2__blimp__limit-2__methods-lp_meanlp_intemplate_lp__templates-1__shard{i}of3.ipynb"
        for i in (1, 2, 3)]
    sweep.run(jobs)
    files = sorted(p.name for p in (tmp_path / "sharded" / "scores" / "blimp" / "tiny-gpt2").iterdir())
    assert files == sorted(f"{m}__shard{i}of3.parquet" for m in ("lp", "meanlp", "intemplate_lp__t1")
                           for i in (1, 2, 3))
    sharded = load_scores(root=tmp_path / "sharded" / "scores")

    assert list(sharded.columns) == list(whole.columns) and len(sharded) == len(whole) == 3 * 134
    assert {"score_good", "score_bad", "tgt_sum_good", "pair_id", "correct", "config_hash"} <= set(whole.columns)
    pd.testing.assert_frame_equal(sharded, whole, check_exact=True)
    assert accuracy.table3(sharded).equals(accuracy.table3(whole))

    gather = sweep.run(sweep.plan(["02"], ["tiny-gpt2"], ["blimp"], params))  # unsharded, in the sharded store
    text = json.dumps(json.loads(gather[0].read_text()))
    assert re.search(r"9 score files; forward passes this run: 0", text)
    table = "02_readout__tiny-gpt2__blimp__limit-2.csv"
    assert (pd.read_csv(tmp_path / "sharded" / "tables" / table)
            .equals(pd.read_csv(tmp_path / "whole" / "tables" / table)))
    assert (tmp_path / "sharded" / "tables" / "02_readout__tiny-gpt2__blimp__limit-2__shard2of3.csv").is_file()


def test_few_shot_shards_draw_the_whole_runs_examples(tiny, tmp_path):
    """A shard plans the whole run, so its few-shot examples (drawn from the run's pairs) and
    scores are the unsharded run's bit for bit; a shard with one context per item is planned
    alone, and few-shot refuses it."""
    scorer = CausalScorer(tiny("tiny-gpt2"), Settings(progress=False))
    first = select("hl_blimp", 2)
    selection = replace(first, frame=first.frame.head(30))
    options = dict(templates=[1], fewshot=FewShot(2, "other", 3))
    whole = load_files(run_methods(scorer, selection, ["intemplate_lp", "yesno"], options,
                                   store=ScoreStore(tmp_path / "a")))
    store = ScoreStore(tmp_path / "b")
    for i in (1, 2, 3):
        run_methods(scorer, selection.for_shards(i, 3), ["intemplate_lp", "yesno"], options, store=store)
    calls = scorer.forward_calls
    found = run_methods(scorer, selection, ["intemplate_lp", "yesno"], options, store=store)  # the shards, as one run
    assert scorer.forward_calls == calls and all("shard" in p.name for p in found)
    pd.testing.assert_frame_equal(load_files(found), whole, check_exact=True)
    part = selection.for_shards(2, 3)
    with pytest.raises(ValueError, match=r"shard shard2of3 with one context per item is planned alone"):
        run_methods(scorer, part, ["yesno"], options, setup=RunSetup(context=["A context. "] * len(part)), store=store)
