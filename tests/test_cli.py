"""The command line prints the engine's numbers."""
from __future__ import annotations

import json

from helpers.cli import main
from helpers.engine import CausalScorer


def test_score_json_matches_engine(tiny, capsys):
    lm = tiny("tiny-gpt2")
    assert main(["score", "--model", "tiny-gpt2", "--json", "The cat sees a dog.", "A bird."]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.strip().splitlines()]
    expected = CausalScorer(lm, progress=False).score_texts(["The cat sees a dog.", "A bird."])
    for line, e in zip(lines, expected):
        assert set(line) == {"text", "tokens", "logprobs", "sum", "n_tokens", "start_token"}
        assert abs(line["sum"] - e.total) < 1e-6 and line["n_tokens"] == e.n_tokens
        assert line["tokens"] == e.tokens and line["start_token"] == "bos:<|endoftext|>"


def test_score_with_context_and_text_output(tiny, capsys):
    assert main(["score", "--model", "tiny-llama", "--context", "Answer:", " Yes"]) == 0
    out = capsys.readouterr().out
    assert "ĠYes" in out and "sum" in out and "(1 tokens)" in out


def test_models_and_unknown_model(capsys):
    assert main(["models"]) == 0
    assert "llama3-chinese-8b" in capsys.readouterr().out
    assert main(["score", "--model", "no-such-model", "x"]) == 2
    assert "Registered models" in capsys.readouterr().err
