"""Caches built on first use by several processes at once (a Slurm array's tasks start together):
each is built once, never read half-built, and a folder left broken is rebuilt with one line."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd

from helpers import paths
from helpers.models import tiny

FIRST_USE = r'''
import json, sys
from helpers.data import load_processed
from helpers.methods.readouts import unigram_for
from helpers.models import load
model = load("tiny-gpt2")  # the tiny model's folder, built on first use
frame = load_processed("climp")  # the processed table, prepared on first use
table, source = unigram_for(model.tokenizer, "en", sys.argv[1])  # the unigram table, counted on first use
print(json.dumps({"pairs": len(frame), "vocab": int(table.counts.size), "total": int(table.counts.sum()),
                  "config": model.model.config.model_type}))
'''


def test_processes_that_start_together_each_get_the_whole_caches(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("The cat sees a dog.\nA dog sees the cats.\n" * 50)
    env = {**os.environ, "HELPERS_TINY_DIR": str(tmp_path / "tiny"), "HELPERS_PROCESSED_DIR": str(tmp_path / "processed"),
           "HF_HUB_OFFLINE": "1"}
    cache = paths.CACHE / "unigram"
    before = set(cache.glob("*.npy")) if cache.is_dir() else set()
    started = [subprocess.Popen([sys.executable, "-c", FIRST_USE, str(corpus)], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=paths.ROOT) for _ in range(4)]
    results = [(p.wait(timeout=600), *p.communicate()) for p in started]
    assert [code for code, _, _ in results] == [0] * 4, [err[-2000:] for _, _, err in results]
    answers = [json.loads(out.strip().splitlines()[-1]) for _, out, _ in results]
    assert all(a == answers[0] for a in answers) and answers[0]["config"] == "gpt2"
    assert tiny.broken(tmp_path / "tiny" / "tiny-gpt2") is None  # whole afterwards
    assert len(pd.read_parquet(tmp_path / "processed" / "climp.parquet")) == answers[0]["pairs"]
    for path in set(cache.glob("*.npy")) - before:
        assert int(np.load(path).sum()) == answers[0]["total"]
        path.unlink()
    assert not list((tmp_path / "tiny").glob(".tiny-gpt2-*"))  # no temporary folder left


def test_a_tiny_model_folder_left_broken_is_built_again(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HELPERS_TINY_DIR", str(tmp_path))
    folder = tiny.ensure("tiny-gpt2")
    weights = (folder / "model.safetensors").read_bytes()
    (folder / "model.safetensors").unlink()  # the marker says built, the weights are gone
    (folder / "config.json").unlink()
    assert tiny.broken(folder) == "its marker says built, but config.json, model.safetensors is missing"
    assert tiny.ensure("tiny-gpt2") == folder
    assert f"the tiny model folder {folder} is broken (its marker says built, but config.json, model.safetensors " \
           "is missing): building it again" in capsys.readouterr().err
    assert tiny.broken(folder) is None and (folder / "model.safetensors").read_bytes() == weights  # built the same
    (folder / "config.json").write_text("{")
    assert tiny.broken(folder) == "its config.json is unreadable or names no model_type"
    tiny.ensure("tiny-gpt2")
    assert tiny.broken(folder) is None and capsys.readouterr().err.count("building it again") == 1
