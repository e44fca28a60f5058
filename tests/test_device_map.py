"""A model split by accelerate's device map with a memory cap per device: the demo model
spread over the CPU and the disk (offloaded weights) scores exactly as when unsplit, on the
plain, cached and packed paths, and the engine takes its devices from the input embedding
and the output head, not from the first weight (which sits on the disk, as "meta")."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from helpers.cli import main
from helpers.models import check_placement, execution_device, load
from helpers.engine import Request, CausalScorer
from helpers.settings import Settings, parse_max_memory, scorer_arguments

SENTENCES = ["The cat sees a dog.", "The cats sees a dog.", "Every teacher admires the students.",
             "Who did the children think that the man saw?", "The keys to the cabinet is on the table."]
# one context shared by several targets: its keys/values are cached and reused (or packed)
REQUESTS = [Request("", s) for s in SENTENCES] + [Request("The teacher said that", t) for t in
                                                   (" the cat sees a dog.", " the cats sees a dog.", " it rains.")]
SPLIT = {"cpu": "16MB", "disk": "1GB"}  # the 8.4 MB embedding, the positions and block 0 fit the CPU
ALL_ON_DISK = {"cpu": "1MB", "disk": "1GB"}


@pytest.fixture(scope="module")
def unsplit():
    return load("demo-en")


def scores(lm, **kw) -> tuple[np.ndarray, int]:
    scorer = CausalScorer(lm, **scorer_arguments(kw, Settings(progress=False)))
    return np.array([s.total for s in scorer.score(REQUESTS)]), scorer.forward_calls


@pytest.mark.parametrize("mode", [dict(), dict(pack=False), dict(share="none")], ids=["packed", "cached", "plain"])
def test_split_over_cpu_and_disk_scores_exactly_as_unsplit(unsplit, tmp_path, mode):
    """Bit-identical: the same float32 kernels run on the CPU, the disk only holds weights."""
    lm = load("demo-en", max_memory=SPLIT, offload_folder=tmp_path)
    placed = lm.model.hf_device_map
    assert set(placed.values()) == {"cpu", "disk"}
    assert placed["transformer.wte"] == placed["lm_head"] == "cpu" and placed["transformer.h.0"] == "cpu"
    offloaded = lm.model.transformer.h[3].mlp.c_fc
    assert placed["transformer.h.3"] == "disk" and offloaded.weight.device.type == "meta"
    assert offloaded._hf_hook.offload  # its weights are read from the disk at each forward
    got, calls = scores(lm, **mode)
    want, want_calls = scores(unsplit, **mode)
    assert np.array_equal(got, want) and calls == want_calls
    assert np.all(np.isfinite(got)) and got.min() < -10


def test_all_weights_on_disk_the_engine_reads_devices_from_the_model(unsplit, tmp_path):
    """Every weight offloaded: the first parameter is on "meta" (a scorer that put its inputs
    there could not run); the input embedding's and the head's execution device is the CPU."""
    lm = load("demo-en", max_memory=ALL_ON_DISK, offload_folder=tmp_path)
    assert lm.model.hf_device_map == {"": "disk"}
    assert next(lm.model.parameters()).device.type == "meta"
    assert lm.input_device == lm.output_device == torch.device("cpu")
    scorer = CausalScorer(lm, Settings(progress=False))
    assert scorer.device == scorer.output_device == torch.device("cpu")
    got = np.array([s.total for s in scorer.score(REQUESTS)])
    assert np.array_equal(got, scores(unsplit)[0])


def test_execution_device_of_plain_modules_is_their_weights_device(unsplit):
    assert execution_device(unsplit.model.get_input_embeddings()) == torch.device("cpu")
    assert execution_device(torch.nn.Identity()) == torch.device("cpu")
    assert unsplit.input_device == unsplit.output_device == torch.device("cpu")
    assert not hasattr(unsplit.model, "hf_device_map")  # "auto" without CUDA and caps: loaded plainly


def test_max_memory_is_checked_with_what_to_do():
    assert check_placement("auto", {"0": "20GiB", "cpu": "1.5GB", "disk": 10}, "/tmp") == \
        {0: 20 * 2**30, "cpu": 1_500_000_000, "disk": 10}
    assert check_placement("auto", None, None) is None
    with pytest.raises(ValueError, match="max_memory key 'gpu' is not a device"):
        check_placement("auto", {"gpu": "1GiB"}, None)
    with pytest.raises(ValueError, match=r"max_memory\['cpu'\] = 'lots' is not a size"):
        check_placement("auto", {"cpu": "lots"}, None)
    with pytest.raises(ValueError, match="pass offload_folder"):
        check_placement("auto", {"cpu": "1GiB", "disk": "1GiB"}, None)
    with pytest.raises(ValueError, match="pass device_map='auto'"):
        check_placement(None, {"cpu": "1GiB"}, None)
    with pytest.raises(TypeError, match="dict of device -> size"):
        check_placement("auto", ["cpu=1GiB"], None)
    with pytest.raises(ValueError, match="pass offload_folder"):
        load("demo-en", max_memory={"cpu": "1MB", "disk": "1GB"})


def test_text_forms_of_the_loading_options():
    assert parse_max_memory("0=20GiB, 1=20GiB,cpu=60GiB") == {0: "20GiB", 1: "20GiB", "cpu": "60GiB"}
    assert parse_max_memory(["0=20GiB", "cpu=60GiB"]) == {0: "20GiB", "cpu": "60GiB"}
    assert parse_max_memory(None) is None and parse_max_memory({"cpu": 5}) == {"cpu": 5}
    with pytest.raises(ValueError, match="'cpu' is not DEVICE=SIZE"):
        parse_max_memory("cpu")
    # the settings read them once, as the command line and a notebook give them
    given = Settings(quant="none", dtype="bfloat16", device_map="none", max_memory="cpu=1GB", offload_folder="/x")
    assert given.load_arguments() == {"quant": None, "dtype": "bfloat16", "revision": None, "device_map": None,
                                      "max_memory": {"cpu": "1GB"}, "offload_folder": "/x"}
    assert Settings().load_arguments()["quant"] == "auto" and Settings(dtype="auto").load_arguments()["dtype"] is None
    with pytest.raises(ValueError, match="quant='3bit' does not exist"):
        Settings(quant="3bit")
    with pytest.raises(ValueError, match="dtype='fp8' does not exist"):
        Settings(dtype="fp8")


def test_command_line_splits_the_model_and_prints_the_same_scores(unsplit, tmp_path, capsys):
    rc = main(["score", "--model", "demo-en", "--json", "--max-memory", "cpu=16MB,disk=1GB",
               "--offload-folder", str(tmp_path), *SENTENCES[:2]])
    assert rc == 0
    got = [json.loads(line)["sum"] for line in capsys.readouterr().out.splitlines()]
    assert got == [s.total for s in CausalScorer(unsplit, Settings(progress=False)).score_texts(SENTENCES[:2])]
    # the caps reach the loader: a bad one is the loader's error, exit status 2
    assert main(["score", "--model", "demo-en", "--max-memory", "cpu=1MB,disk=1GB", "A cat."]) == 2
    assert "pass offload_folder" in capsys.readouterr().err
    assert main(["score", "--model", "demo-en", "--quant", "4bit", "--max-memory", "cpu=lots", "A cat."]) == 2
    assert "max_memory['cpu'] = 'lots' is not a size" in capsys.readouterr().err
