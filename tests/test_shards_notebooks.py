"""Shards of 03, 06 and 07 (issue 33 item 3): the union of the shards' score files is the
unsharded run's bit for bit, a run read from its shards names any shard not scored yet, and a
sweep gives these notebooks shard jobs and one job reading them, after all of them."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from helpers import data, sweep
from helpers.analysis import priming_effects, separability as sep
from helpers.data import priming
from helpers.data.selection import DatasetSelection, first_per_paradigm, select
from helpers.data.shards import MissingShardsError
from helpers.reporting.outputs import sidecar_score_files
from helpers.data.unigram_corpus import resolve_unigram_corpus
from helpers.engine import CausalScorer
from helpers.engine.kinds import scorer_for
from helpers.runner import RunSetup, run_methods
from helpers.runs.hu_levy import hu_levy_jobs
from helpers.runs.primed import primed_input
from helpers.runs.run import Run, model_major
from helpers.settings import Settings
from helpers.store import ScoreStore, load_files
from helpers.sweep.dependencies import waits_on

from notebook_run import run_notebook

SCORE_COLUMNS = ["score_good", "score_bad", "correct", "tie"]
# the default: share="auto" chooses from the model's shape and the device class (nothing timed),
# so a shard, the unsharded run and a notebook's kernel choose alike
SHARE = "auto"


def assert_same_run(sharded: pd.DataFrame, whole: pd.DataFrame, columns=SCORE_COLUMNS) -> None:
    """The same rows in the same order, every score column equal bit for bit, every other column equal."""
    assert len(sharded) == len(whole) > 0
    keys = [c for c in ("method", "template", "paradigm", "pair_id", "item_id", "prefix") if c in whole]
    assert sharded[keys].equals(whole[keys])
    for c in columns:
        assert np.array_equal(sharded[c].to_numpy(), whole[c].to_numpy()), c
    pd.testing.assert_frame_equal(sharded, whole, check_exact=True)


def packed(tiny):
    """tiny-llama in packed rows, blocks of 8 requests and a small token budget: a shard's
    requests lie in a few of many batches, so the shard runs only part of the plan."""
    scorer = CausalScorer(tiny("tiny-llama"), Settings(progress=False, share=SHARE, token_budget=96), pack_min_stem=0)
    scorer.executor.block = 8
    return scorer


def pairs(n_paradigms: int, limit: int) -> DatasetSelection:
    blimp = data.load_processed("blimp")
    chosen = blimp[blimp.paradigm.isin(blimp.paradigm.drop_duplicates().iloc[:n_paradigms])]
    return DatasetSelection("blimp", first_per_paradigm(chosen, limit), limit=limit)


# --- 06: primed runs, one context per item --------------------------------------------------

@pytest.fixture(scope="module")
def primed_setup(tiny):
    scorer = packed(tiny)
    selection = pairs(3, 2)  # 6 target pairs
    count = priming.token_counter(scorer.tokenizer)
    pool = data.load_processed("blimp")
    prefixes = priming.build_prefixes(selection.frame, count, pool=pool, prefix_types=["in_acceptable", "wikitext"],
                                      lengths=[0, 12, 30], seed=5, max_positions=scorer.max_positions)
    return scorer, selection, prefixes, count, pool


def test_06_primed_shards_are_the_unsharded_run_bit_for_bit(primed_setup, tmp_path):
    scorer, selection, prefixes, *_ = primed_setup
    methods = ["lp", "intemplate_lp"]
    run = Run.of(scorer)
    whole = load_files(run.files(methods, *primed_input(selection, prefixes), store=ScoreStore(tmp_path / "a"),
                                 templates=[1]), token_columns=True)
    assert len(whole) == 2 * 6 * (1 + 2 * 2)  # methods x pairs x (no prefix + 2 types x 2 lengths)
    calls = scorer.forward_calls
    store = ScoreStore(tmp_path / "b")
    parts = [load_files(run.files(methods, *primed_input(selection.for_shards(i, 3), prefixes), store=store,
                                  templates=[1]), token_columns=True) for i in (1, 2, 3)]
    assert scorer.forward_calls - calls < 3 * calls  # each shard runs only the batches its rows need
    for part, i in zip(parts, (1, 2, 3)):  # each shard: its own pairs, under the whole run's prefixes
        mine = set(zip(selection.for_shards(i, 3).frame.paradigm, selection.for_shards(i, 3).frame.pair_id))
        assert set(zip(part.paradigm, part.pair_id)) == mine
    gathered = run.files(methods, *primed_input(selection.for_shards(None, 3), prefixes), store=store, templates=[1])
    assert [p.name for p in gathered] == [f"{m}__primed_grid__shard{i}of3.parquet"
                                          for m in ("lp", "intemplate_lp__t1") for i in (1, 2, 3)]
    assert_same_run(load_files(gathered, token_columns=True), whole)
    # the run's configuration (the hash of the whole run's prefixes) is the unsharded run's
    assert set(load_files(gathered).config_hash) == set(whole.config_hash)


def test_06_a_shard_draws_the_unsharded_runs_prefixes(primed_setup):
    """Each (pair, type, length, draw)'s prefix is seeded by the pair: drawing for a shard's pairs
    alone gives exactly the rows the whole selection's draw gives them."""
    scorer, selection, prefixes, count, pool = primed_setup
    for i in (1, 2):
        part = selection.for_shards(i, 2)
        alone = priming.build_prefixes(part.frame, count, pool=pool, prefix_types=["in_acceptable", "wikitext"],
                                       lengths=[0, 12, 30], seed=5, max_positions=scorer.max_positions)
        keys = pd.MultiIndex.from_frame(part.frame[["paradigm", "pair_id"]])
        mine = prefixes[pd.MultiIndex.from_frame(prefixes[["paradigm", "pair_id"]]).isin(keys)]
        pd.testing.assert_frame_equal(alone.reset_index(drop=True), mine.reset_index(drop=True), check_exact=True)


def test_06_missing_shards_and_partial_prefix_tables_are_clear_errors(primed_setup, tmp_path):
    scorer, selection, prefixes, *_ = primed_setup
    store, run = ScoreStore(tmp_path), Run.of(scorer)
    run.files(["lp"], *primed_input(selection.for_shards(2, 3), prefixes), store=store)
    with pytest.raises(MissingShardsError, match=r"blimp x tiny-llama is read from its 3 shards' score files, but "
                                                 r"shard\(s\) 1, 3 of 3 are not scored yet \(lp__primed_grid: "
                                                 r"shards 1, 3\): run the notebook with shard=1"):
        run.files(["lp"], *primed_input(selection.for_shards(None, 3), prefixes), store=store)
    part = selection.for_shards(1, 3)
    keys = pd.MultiIndex.from_frame(part.frame[["paradigm", "pair_id"]])
    own = prefixes[pd.MultiIndex.from_frame(prefixes[["paradigm", "pair_id"]]).isin(keys)]
    with pytest.raises(ValueError, match=r"the prefix table covers 2 of the 6 items of the whole run"):
        run.files(["lp"], *primed_input(part, own), store=store)
    whole_context = ["x"] * (len(part.shard.whole) - 1)
    with pytest.raises(ValueError, match=r"whole_context holds 5 contexts for the 6 items of the whole run"):
        run_methods(scorer, part, ["lp"], setup=RunSetup(context=["x"] * len(part), whole_context=whole_context),
                    store=store)


# --- 03: Yes/No, A/B (outlines too) and Hu & Levy's prompts -----------------------------------

def test_03_prompting_shards_are_the_unsharded_run_bit_for_bit(tiny, tmp_path):
    scorer = packed(tiny)
    selection = pairs(4, 2)  # 8 pairs
    methods = ["yesno", "yesno_released", "ab", "ab_logit"]
    options = {"templates": [1, 2], "ab_seed": 7, "use_outlines": True}
    whole = load_files(run_methods(scorer, selection, methods, options, store=ScoreStore(tmp_path / "a")),
                       token_columns=True)
    assert set(whole.method) == set(methods) and len(whole) == 4 * 2 * 8
    store = ScoreStore(tmp_path / "b")
    for i in (1, 2):
        run_methods(scorer, selection.for_shards(i, 2), methods, options, store=store)
    gathered = run_methods(scorer, selection.for_shards(None, 2), methods, options, store=store)
    assert len(gathered) == 2 * 4 * 2 and all("shard" in p.name for p in gathered)
    sharded = load_files(gathered, token_columns=True)
    assert_same_run(sharded, whole)
    for column in ("good_slot", "answer_outlines", "lp_a", "lp_b"):  # the A/B slots drawn over the whole run
        assert sharded[column].equals(whole[column]), column


def test_03_hu_levy_sets_shard_the_same_way(tiny, tmp_path, monkeypatch):
    monkeypatch.setenv("HELPERS_OUTPUTS_DIR", str(tmp_path / "whole"))
    scorer = CausalScorer(tiny("tiny-gpt2"), Settings(progress=False, share=SHARE))
    args = (["hl_syntaxgym"], ["direct", "metaQuestionSimple"], 1)
    run = Run.of(scorer)

    def score(shard=None, shards=1):
        return model_major(run.files_each(hu_levy_jobs(*args, shard=shard, shards=shards)))

    whole = load_files(score(), token_columns=True)
    assert len(whole) == 2 * 2 * 23  # two tasks x two prompts x 23 suites
    monkeypatch.setenv("HELPERS_OUTPUTS_DIR", str(tmp_path / "sharded"))
    for i in (1, 2, 3):
        score(i, 3)
    gathered = score(None, 3)
    assert_same_run(load_files(gathered, token_columns=True), whole)
    (tmp_path / "sharded" / "scores" / "hl_syntaxgym" / "tiny-gpt2" /
     "hl_sentence_judgment__tmetaQuestionSimple__shard3of3.parquet").unlink()
    with pytest.raises(MissingShardsError, match=r"hl_syntaxgym x tiny-gpt2 .* shard\(s\) 3 of 3 are not scored yet "
                                                 r"\(hl_sentence_judgment__tmetaQuestionSimple: shards 3\)"):
        score(None, 3)


# --- 07: the five metrics and the extra methods; the analyses on the gathered run ------------

def test_07_scoring_shards_and_the_analyses_of_the_gathered_run(tiny, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("The cat sees a dog.\nThe dogs see a cat.\nEvery teacher admires the students.\n")
    unigram = resolve_unigram_corpus(corpus, "en")
    scorer = CausalScorer(tiny("tiny-gpt2"), Settings(progress=False, share=SHARE))
    cola = DatasetSelection("cola", data.load("cola").iloc[[0, 1, 17, 18, 19, 40]].reset_index(drop=True))
    selections = {"blimp": pairs(3, 3), "cola": cola}
    methods = ["lp", "meanlp", "slor", "bf_uniform", "bf_unigram", "penlp", "intemplate_lp", "yesno"]
    options = {"templates": [1], "unigram_corpus": unigram.path}

    def score(store, shard, shards):
        return [p for s in selections.values()
                for p in run_methods(scorer, s.for_shards(shard, shards), methods, options, store=store)]

    whole = load_files(score(ScoreStore(tmp_path / "a"), None, 1), token_columns=True)
    store = ScoreStore(tmp_path / "b")
    for i in (1, 2):
        score(store, i, 2)
    sharded = load_files(score(store, None, 2), token_columns=True)
    pairs_only = sharded.dataset == "blimp"
    assert_same_run(sharded[pairs_only].reset_index(drop=True), whole[whole.dataset == "blimp"].reset_index(drop=True))
    assert_same_run(sharded[~pairs_only].reset_index(drop=True), whole[whole.dataset == "cola"].reset_index(drop=True),
                    columns=["score"])
    # the analyses read the gathered run: the same AUC table as the unsharded run's, to the last bit
    auc = [sep.auc_table(sep.metrics_long(sep.metrics_table(s[s.method.isin(sep.METRICS)], list(sep.METRICS))), seed=0)
           for s in (sharded, whole)]
    pd.testing.assert_frame_equal(auc[0], auc[1], check_exact=True)
    (tmp_path / "b" / "cola" / "tiny-gpt2" / "yesno__t1__shard1of2.parquet").unlink()
    with pytest.raises(MissingShardsError, match=r"cola x tiny-gpt2 is read from its 2 shards' score files, but "
                                                 r"shard\(s\) 1 of 2 are not scored yet \(yesno__t1: shards 1\)"):
        score(store, None, 2)


# --- the sweep ----------------------------------------------------------------------------

def test_sweep_shards_03_06_07_and_reads_them_after_all_shards():
    params = {f"{nb}:limit": 1 for nb in ("03", "06", "07")}
    jobs = sweep.plan(["03", "06", "07", "04"], ["tiny-gpt2"], ["blimp"], params, shards=2)
    names = [j.output.name for j in jobs]
    runs = {"03_prompting": "blimp", "06_context_priming": "blimp", "07_separability": "blimp_hu2025"}  # 07's variant
    assert names == [f"{nb}__tiny-gpt2__{d}__limit-1__shard{i}of2.ipynb" for nb, d in runs.items() for i in (1, 2)] + \
        ["04_ensembles__tiny-gpt2__blimp.ipynb"] + \
        [f"{nb}__tiny-gpt2__{d}__limit-1__shards-2.ipynb" for nb, d in runs.items()]
    waits = {j.output.name: [d.output.name for d in ds] for j, ds in zip(jobs, waits_on(jobs).values())}
    for nb, d in runs.items():
        assert waits[f"{nb}__tiny-gpt2__{d}__limit-1__shards-2.ipynb"] == [
            f"{nb}__tiny-gpt2__{d}__limit-1__shard{i}of2.ipynb" for i in (1, 2)]
    assert waits["04_ensembles__tiny-gpt2__blimp.ipynb"] == [  # 03's scoring shards, not its reading job
        f"03_prompting__tiny-gpt2__blimp__limit-1__shard{i}of2.ipynb" for i in (1, 2)]
    gather = jobs[-1]
    assert gather.papermill_parameters() == {"limit": 1, "model": "tiny-gpt2", "datasets": ["blimp_hu2025"],
                                             "shards": 2}
    assert gather.label == "07_separability model=tiny-gpt2 dataset=blimp_hu2025 (its 2 shards read as one run)"


@pytest.mark.slow
def test_notebook_06_sharded_then_read_as_one_run(scratch):
    """06's shard parameters through papermill: shard 2 of 2 scores its pairs' rows only, shard 1
    is scored here as the notebook scores it, and the job reading the run (``shard=None,
    shards=2``) reads both as one run: the unsharded run's scores bit for bit, its Figure 2."""
    params = dict(model="tiny-gpt2", dataset="blimp", limit=1, paradigms=None, lengths=[0, 12], phenomenon_sentences=0,
                  parser="none", share=SHARE)
    run_notebook("06_context_priming.ipynb", scratch / "s2.ipynb", shard=2, shards=2, **params)
    folder = scratch / "outputs" / "scores" / "blimp" / "tiny-gpt2"
    assert sorted(p.name for p in folder.iterdir()) == ["lp__primed_grid__shard2of2.parquet"]
    assert len(pd.read_parquet(folder / "lp__primed_grid__shard2of2.parquet")) == 33 * 6  # 33 of 67 pairs x 6 rows
    settings = Settings(share=SHARE)  # the notebook's settings
    scorer = scorer_for("tiny-gpt2", settings.but(progress=False))
    selection = select("blimp", 1)
    prefixes = priming.build_prefixes(selection.frame, priming.token_counter(scorer.tokenizer),
                                      pool=data.load_processed("blimp"), lengths=[0, 12], draws=1, seed=0,
                                      max_positions=scorer.max_positions, short_pool="error")
    options = settings.but(templates=[1])
    with pytest.raises(MissingShardsError, match=r"shard\(s\) 1 of 2 are not scored yet"):
        Run.of(scorer, options).files(["lp"], *primed_input(selection.for_shards(None, 2), prefixes))
    Run.of(scorer, options).files(["lp"], *primed_input(selection.for_shards(1, 2), prefixes))  # the notebook's store
    whole = Run.of(scorer, options).files(["lp"], *primed_input(selection, prefixes), store=ScoreStore(scratch / "whole"))
    run_notebook("06_context_priming.ipynb", scratch / "all.ipynb", shards=2, **params)
    tables = scratch / "outputs" / "tables"
    assert (tables / "06_figure2__tiny-gpt2__blimp__limit-1__shard2of2.csv").is_file()  # a shard's tables: its pairs
    sources = sidecar_score_files(tables / "06_figure2__tiny-gpt2__blimp__limit-1.csv.json")
    assert [p.name for p in sources] == [f"lp__primed_grid__shard{i}of2.parquet" for i in (1, 2)]
    assert_same_run(load_files(sources, token_columns=True), load_files(whole, token_columns=True))
    figure2 = pd.read_csv(tables / "06_figure2__tiny-gpt2__blimp__limit-1.csv")  # the whole run's, from the two shards
    expected = priming_effects.figure2(load_files(whole)).reset_index(drop=True)
    pd.testing.assert_frame_equal(figure2, expected, check_dtype=False, rtol=1e-12)
    assert (figure2["items"] == 67).all()
