"""The project's own demo models: offline loading, the pinned accuracy, trained positions, clean data."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch
from reference_lp import sentence_lps

from helpers import data, paths
from helpers.models import load
from helpers.engine import Request, CausalScorer
from helpers.zoo.demo_training import benchmark_sentences, training_documents
from helpers.zoo.model_card import sample_decisions
from helpers.settings import Settings

CARDS = {"demo-en": ("blimp", paths.MODELS / "demo-en"), "demo-zh": ("climp", paths.MODELS / "demo-zh"),
         "demo-en-icl": ("blimp", paths.MODELS / "demo-en-icl")}


@pytest.fixture(scope="module", params=list(CARDS))
def demo(request):
    return load(request.param)


def test_loads_offline_in_float32(demo):
    assert demo.model.dtype == torch.float32 and not demo.model.training
    assert demo.tokenizer.bos_token == "<|endoftext|>"
    assert demo.model.config.n_positions >= 1024
    weights = CARDS[demo.name][1] / "model.safetensors"
    assert weights.stat().st_size < 21 * 2**20  # float16 on disk, at most ~20 MB


def test_pinned_sample_accuracy_matches_an_independent_computation(demo):
    """The card's pinned sample, scored by the engine (the card's own path) and by the test's
    reference computation: the same LP per sentence, the same decision per pair, and the
    accuracy that training.json and the card state."""
    dataset, folder = CARDS[demo.name]
    record = json.loads((folder / "training.json").read_text())
    pinned = record["sample_accuracy"]
    engine = sample_decisions(CausalScorer(demo, Settings(progress=False)), dataset, pinned["pairs_per_paradigm"])
    assert sorted(engine.phenomenon.unique()) == sorted(pinned["phenomena"])
    assert (engine.groupby("paradigm").size() == pinned["pairs_per_paradigm"]).all()
    n = len(engine)
    lps = sentence_lps(folder, list(engine.good) + list(engine.bad))
    good, bad = lps[:n], lps[n:]
    np.testing.assert_allclose(engine.lp_good, good, rtol=0, atol=1e-4)  # float32 forwards differ by ~1e-5
    np.testing.assert_allclose(engine.lp_bad, bad, rtol=0, atol=1e-4)
    decided = np.abs(good - bad) > 2e-4  # pairs whose decision that rounding cannot flip
    assert decided.all(), engine[~decided]  # (the closest pair of either sample is 4.5e-4 apart)
    assert ((good > bad) == engine.correct.to_numpy()).all()
    accuracy = float(np.mean(good > bad))
    assert round(accuracy, 4) == pinned["lp_accuracy"], (accuracy, pinned)
    assert f"LP accuracy {100 * pinned['lp_accuracy']:.1f}%." in (folder / "README.md").read_text()


def test_late_positions_are_trained():
    """The same passage scored at positions ~800-1,000 (after an unrelated 800-token prefix) is
    predicted about as well as at positions 1-200: positions up to 1,024 are trained."""
    from helpers.data import english

    lm = load("demo-en")
    tok = lm.tokenizer
    sentences = english.wikitext_sentences().sentence
    passage = " ".join(sentences.iloc[:12])
    prefix = " ".join(sentences.iloc[3000:3400])
    prefix_ids = tok(prefix, add_special_tokens=False)["input_ids"][:800]
    passage = tok.decode(tok(passage, add_special_tokens=False)["input_ids"][:200])
    requests = [Request("", passage), Request(tok.decode(prefix_ids), " " + passage)]
    early, late = CausalScorer(lm, Settings(progress=False)).score(requests)
    assert late.n_tokens >= 190
    assert np.mean(late.logprobs) > np.mean(early.logprobs) - 0.3, (np.mean(early.logprobs), np.mean(late.logprobs))


@pytest.mark.parametrize("language,dataset", [("en", "blimp"), ("zh", "climp")])
def test_no_benchmark_sentence_in_the_training_text(language, dataset):
    """The training documents, split into sentences by a splitter of the test's own, hold no
    sentence of the benchmark (looked up in a hash set); the WikiText test split is never read."""
    docs, manifest = training_documents(language, benchmark_sentences(language))
    pairs = data.load(dataset, **({"add_period": False} if dataset == "climp" else {}))
    sentences = set(pairs.good) | set(pairs.bad)
    sentences |= {s + "。" for s in sentences} if dataset == "climp" else set()
    leaked = 0
    for doc in docs:
        for piece in re.findall(r"[^.!?。！？]+[.!?。！？]+", doc):
            leaked += " ".join(piece.split()) in sentences
    assert leaked == 0
    record = json.loads((CARDS[f"demo-{language}"][1] / "training.json").read_text())
    assert record["removed_benchmark_sentences"] == manifest["removed_benchmark_sentences"]
    assert [c["name"] for c in record["corpora"]] == [c["name"] for c in manifest["corpora"]]
    assert not any("wikitext" in c["path"] for c in record["corpora"])


def test_demo_en_icl_follows_its_context(tmp_path):
    """06's teaching grid in small (its 10 default paradigms x 5 pairs, prefixes of 800 tokens drawn
    as 06 draws them): in-domain unacceptable prefixes pull demo-en-icl's LP decisions from 33 of
    50 right to 26, acceptable ones lift them to 38. Every pair's margin is far from a tie, so
    the counts hold across CPUs."""
    from helpers.data import priming
    from helpers.data.selection import select
    from helpers.runs.primed import primed_input
    from helpers.runs.run import Run
    from helpers.store import ScoreStore, load_files

    scorer = CausalScorer(load("demo-en-icl"), Settings(progress=False))
    selection = select("blimp", 5).pick_paradigms(priming.paradigm_choice("blimp", "auto"), 0)
    prefixes = priming.build_prefixes(selection.frame, priming.token_counter(scorer.tokenizer),
                                      pool=data.load_processed("blimp"), prefix_types=["in_acceptable", "in_unacceptable"],
                                      lengths=[0, 800], max_positions=scorer.max_positions)
    scores = load_files(Run.of(scorer).files(["lp"], *primed_input(selection, prefixes), store=ScoreStore(tmp_path), templates=[1]))
    assert len(scores) == 150 and (scores.score_good - scores.score_bad).abs().min() > 1e-3
    assert scores.groupby("prefix_type").correct.sum().to_dict() == {"none": 33, "in_unacceptable": 26,
                                                                     "in_acceptable": 38}
