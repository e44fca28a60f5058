"""The project's own demo models: offline loading, the pinned accuracy, trained positions, clean data."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch

from helpers import paths
from helpers.models import load
from helpers.scoring import Scorer

CARDS = {"demo-en": ("blimp", paths.MODELS / "demo-en"), "demo-zh": ("climp", paths.MODELS / "demo-zh")}


@pytest.fixture(scope="module", params=list(CARDS))
def demo(request):
    model, tok = load(request.param)
    return request.param, model, tok


def test_loads_offline_in_float32(demo):
    name, model, tok = demo
    assert model.dtype == torch.float32 and not model.training
    assert tok.bos_token == "<|endoftext|>"
    assert model.config.n_positions >= 1024
    weights = CARDS[name][1] / "model.safetensors"
    assert weights.stat().st_size < 21 * 2**20  # float16 on disk, at most ~20 MB


def test_accuracy_on_the_pinned_sample_matches_the_card(demo):
    from helpers.model_card import sample_accuracy

    name, model, tok = demo
    dataset, folder = CARDS[name]
    record = json.loads((folder / "training.json").read_text())
    pinned = record["sample_accuracy"]["lp_accuracy"]
    got = sample_accuracy(Scorer(model, tok, progress=False), dataset)
    assert abs(got - pinned) <= 0.01, (got, pinned)
    card = (folder / "README.md").read_text()
    assert f"{100 * pinned:.1f}%" in card


def test_late_positions_are_trained():
    """The same passage scored at positions ~800-1,000 (after an unrelated 800-token prefix) is
    predicted about as well as at positions 1-200: positions up to 1,024 are trained."""
    from helpers.data import english
    from helpers.scoring import Request

    model, tok = load("demo-en")
    sentences = english.wikitext_sentences().sentence
    passage = " ".join(sentences.iloc[:12])
    prefix = " ".join(sentences.iloc[3000:3400])
    prefix_ids = tok(prefix, add_special_tokens=False)["input_ids"][:800]
    passage = tok.decode(tok(passage, add_special_tokens=False)["input_ids"][:200])
    early, late = Scorer(model, tok, progress=False).score([Request("", passage),
                                                            Request(tok.decode(prefix_ids), " " + passage)])
    assert late.n_tokens >= 190
    assert np.mean(late.logprobs) > np.mean(early.logprobs) - 0.3, (np.mean(early.logprobs), np.mean(late.logprobs))


@pytest.mark.parametrize("language,dataset", [("en", "blimp"), ("zh", "climp")])
def test_no_benchmark_sentence_in_the_training_text(language, dataset):
    """The training documents, split into sentences by a splitter of the test's own, hold no
    sentence of the benchmark (looked up in a hash set); the WikiText test split is never read."""
    from helpers import data
    from helpers.demo_lm import benchmark_sentences, training_documents

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
