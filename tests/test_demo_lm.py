"""The demo-model trainer at toy scale: reproducible from the seed, and stages that continue."""
from __future__ import annotations

import json
import random

import pytest
import torch
from safetensors.torch import load_file

from helpers import demo_lm
from helpers.demo_lm import Recipe, train

WORDS = "the a cat dog sees likes runs old small red bird tree house near under".split()


@pytest.fixture
def toy_corpus(monkeypatch):
    rng = random.Random(7)
    docs = [" ".join(" ".join(rng.choices(WORDS, k=6)).capitalize() + "." for _ in range(8)) for _ in range(120)]
    manifest = {"corpora": [{"name": "toy", "path": "toy", "license": "none", "documents": len(docs),
                             "characters": sum(map(len, docs))}], "removed_benchmark_sentences": 0}
    monkeypatch.setattr(demo_lm, "benchmark_sentences", lambda language: set())
    monkeypatch.setattr(demo_lm, "training_documents", lambda language, banned: (list(docs), manifest))


def toy_recipe(**changes) -> Recipe:
    base = dict(vocab_size=300, layers=1, width=32, heads=2, positions=64, short_len=16, short_batch=4,
                long_len=64, long_batch=1, long_every=3, warmup_steps=5, heldout_share=0.1, threads=1)
    return Recipe(**{**base, **changes})


def weights(folder) -> dict[str, torch.Tensor]:
    return load_file(str(folder / "model.safetensors"))


def test_same_seed_same_model_and_stage_two_continues(toy_corpus, tmp_path):
    quiet = lambda *_: None  # noqa: E731
    first = train(tmp_path / "a", toy_recipe(), log=quiet)
    again = train(tmp_path / "b", toy_recipe(), log=quiet)
    wa, wb = weights(tmp_path / "a"), weights(tmp_path / "b")
    assert all(torch.equal(wa[k], wb[k]) for k in wa)
    assert first["loss_curve"] == again["loss_curve"]
    assert first["loss_curve"][-1]["loss"] < first["loss_curve"][0]["loss"]
    assert train(tmp_path / "c", toy_recipe(seed=1), log=quiet)["loss_curve"] != first["loss_curve"]

    second = train(tmp_path / "s2", toy_recipe(init_from=str(tmp_path / "a"), peak_lr=1e-3), log=quiet)
    assert second["heldout_loss"] < first["heldout_loss"]
    assert second["heldout_tokens"] == first["heldout_tokens"]  # the same held-out documents
    assert [s["recipe"]["init_from"] for s in second["previous_stages"]] == [""]
    assert second["previous_stages"][0]["loss_curve"] == first["loss_curve"]
    saved = json.loads((tmp_path / "s2" / "training.json").read_text())
    assert saved["recipe"]["init_from"] == str(tmp_path / "a") and len(saved["previous_stages"]) == 1
    for name in ("tokenizer.json", "tokenizer_config.json"):  # the same tokenizer files, no loader flags
        assert (tmp_path / "s2" / name).read_text() == (tmp_path / "a" / name).read_text(), name


def test_continuing_with_another_seed_or_shape_is_refused(toy_corpus, tmp_path):
    train(tmp_path / "a", toy_recipe(), log=lambda *_: None)
    with pytest.raises(ValueError, match="same ones"):
        train(tmp_path / "b", toy_recipe(init_from=str(tmp_path / "a"), seed=3), log=lambda *_: None)
    with pytest.raises(ValueError, match="saved model's sizes"):
        train(tmp_path / "b", toy_recipe(init_from=str(tmp_path / "a"), width=64), log=lambda *_: None)
