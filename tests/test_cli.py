"""The command line prints the engine's numbers."""
from __future__ import annotations

import json

import pytest

from helpers.cli import main
from helpers.engine import CausalScorer, Request
from helpers.explain.word_surprisal import word_table
from helpers.settings import Settings


def test_score_json_matches_engine(tiny, capsys):
    lm = tiny("tiny-gpt2")
    assert main(["score", "--model", "tiny-gpt2", "--json", "The cat sees a dog.", "A bird."]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.strip().splitlines()]
    expected = CausalScorer(lm, Settings(progress=False)).score_texts(["The cat sees a dog.", "A bird."])
    for line, e in zip(lines, expected):
        assert set(line) == {"text", "tokens", "logprobs", "sum", "n_tokens", "start_token"}
        assert abs(line["sum"] - e.total) < 1e-6 and line["n_tokens"] == e.n_tokens
        assert line["tokens"] == e.tokens and line["start_token"] == "bos:<|endoftext|>"


def test_score_with_context_and_text_output(tiny, capsys):
    assert main(["score", "--model", "tiny-llama", "--context", "Answer:", " Yes"]) == 0
    out = capsys.readouterr().out
    assert "ĠYes" in out and "sum" in out and "(1 tokens)" in out


def test_score_words_prints_corrected_word_surprisal(tiny, capsys):
    texts = ["The cat sees a dog.", "The cats annoy Tim."]
    assert main(["score", "--model", "tiny-gpt2", "--words", "--json", *texts]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.strip().splitlines()]
    scored = CausalScorer(tiny("tiny-gpt2"), Settings(progress=False)).score([Request("", t, word_boundary=True) for t in texts])
    for line, text, s in zip(lines, texts, scored):
        table = word_table(text, s)
        assert [w["word"] for w in line["words"]] == table.text.tolist()
        assert [w["corrected_surprisal"] for w in line["words"]] == table.corrected_surprisal.tolist()
        assert [w["surprisal"] for w in line["words"]] == table.surprisal.tolist()
        assert line["boundary_logmass"] == s.boundary_logmass.tolist() and len(line["word_initial"]) == s.n_tokens
        total = sum(w["corrected_logprob"] for w in line["words"])
        assert total == pytest.approx(line["word_lp"], abs=1e-12)
        assert line["word_lp"] == pytest.approx(line["sum"] + line["log_b_end"] - line["log_b_start"], abs=1e-9)
        assert line["log_b_start"] == 0.0 and line["log_b_end"] == s.boundary_logmass[-1] < 0
    assert [w["word"] for w in lines[0]["words"]] == ["The", "cat", "sees", "a", "dog", "."]
    assert main(["score", "--model", "tiny-gpt2", "--words", texts[1]]) == 0
    out = capsys.readouterr().out
    assert "corrected" in out and "'annoy'" in out and "+ log B(end)" in out
    assert main(["score", "--model", "tiny-t5", "--words", texts[0]]) == 2
    assert "word_boundary requests need" in capsys.readouterr().err


def test_models_and_unknown_model(capsys):
    assert main(["models"]) == 0
    assert "llama3-chinese-8b" in capsys.readouterr().out
    assert main(["score", "--model", "no-such-model", "x"]) == 2
    assert "Registered models" in capsys.readouterr().err


def test_embed_fills_the_store_of_whole_datasets_once(scratch, capsys):
    import pandas as pd

    from helpers import data
    from helpers.analysis import embedding_store

    data.save_processed("syntaxgym", pd.DataFrame({"dataset": "syntaxgym", "language": "en", "paradigm": "s",
                                                   "pair_id": [0, 1], "good": ["The cat sees.", "A dog runs."],
                                                   "bad": ["The cat see.", "A dog runs."]}))
    assert main(["embed", "--datasets", "syntaxgym", "--threads", "1"]) == 0
    paper = "sentence-transformers/all-mpnet-base-v2"  # offline, from make models' copy: the paper's, not a stand-in
    meta = embedding_store.provenance(paper, "syntaxgym")
    assert (meta["texts"], meta["dataset_sentences"], meta["complete"], meta["computed"]) == (3, 3, True, 3)
    assert f"syntaxgym: 3 sentences with {paper}" in capsys.readouterr().out
    assert main(["embed", "--datasets", "syntaxgym"]) == 0  # nothing left to compute
    assert embedding_store.provenance(paper, "syntaxgym")["computed"] == 3
    capsys.readouterr()
    assert main(["embed", "--datasets", "climp"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: dataset 'climp'") and "is not prepared" in err and err.count("\n") == 1
