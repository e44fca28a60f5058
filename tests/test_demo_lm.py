"""Making the project's own models: the demo-model trainer at toy scale (reproducible from the
seed, stages that continue), the one BPE trainer, and reproducible tiny models."""
from __future__ import annotations

import json
import random

import pytest
import torch
from safetensors.torch import load_file

from helpers.zoo import demo_training
from helpers.models import tiny
from helpers.zoo.demo_training import START, Recipe, train, train_tokenizer

WORDS = "the a cat dog sees likes runs old small red bird tree house near under".split()
TEXTS = ["The old cat sees a bird.", "猫喜欢吃饭。", "Answer: Yes"]


@pytest.fixture
def toy_corpus(monkeypatch):
    rng = random.Random(7)
    docs = [" ".join(" ".join(rng.choices(WORDS, k=6)).capitalize() + "." for _ in range(8)) for _ in range(120)]
    manifest = {"corpora": [{"name": "toy", "path": "toy", "license": "none", "documents": len(docs),
                             "characters": sum(map(len, docs))}], "removed_benchmark_sentences": 0}
    monkeypatch.setattr(demo_training, "benchmark_sentences", lambda language: set())
    monkeypatch.setattr(demo_training, "training_documents", lambda language, banned: (list(docs), manifest))
    return docs


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
    assert not [p.name for p in (tmp_path / "s2").iterdir() if p.name.startswith(".")]  # no temporary file left


def test_continuing_with_another_seed_or_shape_is_refused(toy_corpus, tmp_path):
    train(tmp_path / "a", toy_recipe(), log=lambda *_: None)
    with pytest.raises(ValueError, match="same ones"):
        train(tmp_path / "b", toy_recipe(init_from=str(tmp_path / "a"), seed=3), log=lambda *_: None)
    with pytest.raises(ValueError, match="saved model's sizes"):
        train(tmp_path / "b", toy_recipe(init_from=str(tmp_path / "a"), width=64), log=lambda *_: None)


def test_one_bpe_trainer_gives_each_model_its_start_token(toy_corpus):
    """Demo and tiny tokenizers come from the same trainer: byte-level (any text round-trips),
    with the special tokens and the BOS behaviour of the model family they imitate."""
    demo = train_tokenizer(toy_corpus, 300)
    assert len(demo) == 300 and demo.all_special_tokens == [START]
    assert demo.bos_token == demo.eos_token == demo.pad_token == START
    for text in TEXTS:
        assert demo.decode(demo(text)["input_ids"]) == text  # no start token added: the engine adds it
    bos_first = {"llama": "<|begin_of_text|>", "mixtral": "<|begin_of_text|>", "qwen2": None, "gpt2": None}
    for arch, bos in bos_first.items():
        tok = tiny.tokenizer(arch)
        assert len(tok) == tiny.VOCAB_SIZE
        assert set(tiny.CHAT_TOKENS) <= set(tok.get_vocab())
        for text in TEXTS:
            plain = tok(text, add_special_tokens=False)["input_ids"]
            assert tok.decode(plain) == text
            added = tok(text)["input_ids"]
            assert added == ([tok.convert_tokens_to_ids(bos)] if bos else []) + plain, arch
    assert tiny.tokenizer("qwen2").bos_token is None and tiny.tokenizer("gpt2").bos_token == "<|endoftext|>"


def test_tiny_models_rebuild_byte_identical_and_atomically(tmp_path, monkeypatch):
    monkeypatch.setenv(tiny.TINY_DIR_ENV, str(tmp_path / "tiny"))
    built = tiny.ensure("tiny-gpt2-instruct")
    again = tiny.build("gpt2", tmp_path / "again", instruct=True)
    for name in ("model.safetensors", "tokenizer.json", "tokenizer_config.json", "config.json", "BUILD"):
        assert (built / name).read_bytes() == (again / name).read_bytes(), name
    stamp = (built / "BUILD").stat().st_mtime_ns
    assert tiny.ensure("tiny-gpt2-instruct") == built and (built / "BUILD").stat().st_mtime_ns == stamp
    # its lock beside it (helpers.files.built_once); no temporary folder left
    assert sorted(p.name for p in (tmp_path / "tiny").iterdir()) == [".tiny-gpt2-instruct.lock", "tiny-gpt2-instruct"]
    with pytest.raises(ValueError, match="tiny-llama-instruct"):
        tiny.ensure("tiny-bert")
