"""Shared fixtures: offline settings and the tiny models, built once per test session."""
from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TORCHDYNAMO_DISABLE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pytest  # noqa: E402

ARCHS = ("llama", "qwen2", "mixtral", "gpt2")


@pytest.fixture(scope="session", autouse=True)
def tiny_dir(tmp_path_factory):
    """Tiny models are built into a fresh folder for this session."""
    path = tmp_path_factory.mktemp("tiny-models")
    os.environ["HELPERS_TINY_DIR"] = str(path)
    return path


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """Processed data, outputs and stored sentence embeddings go to a scratch folder (a notebook's
    kernel inherits the env)."""
    monkeypatch.setenv("HELPERS_PROCESSED_DIR", str(tmp_path / "processed"))
    monkeypatch.setenv("HELPERS_OUTPUTS_DIR", str(tmp_path / "outputs"))
    monkeypatch.setenv("HELPERS_EMBEDDINGS_DIR", str(tmp_path / "embeddings"))
    return tmp_path


@pytest.fixture(scope="session")
def tiny(tiny_dir):
    """name -> LoadedModel, loaded through helpers.models.load (built once per session)."""
    from helpers.models import load

    cache: dict = {}

    def get(name: str):
        if name not in cache:
            cache[name] = load(name)
        return cache[name]

    return get


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """name -> LoadedModel of a tiny random model of that architecture
    (helpers.models.tiny_architectures: each family's quirks made to bite), built once per session."""
    from helpers.models import load
    from helpers.models import tiny_architectures as ta

    root = tmp_path_factory.mktemp("architectures")
    cache: dict = {}

    def get(name: str):
        if name not in cache:
            cache[name] = load(ta.build(name, root / name))
        return cache[name]

    return get


@pytest.fixture(scope="session")
def smollm2():
    """SmolLM2-135M-Instruct, the real pretrained model (the registry's pinned GGUF, fetched once
    from the package index by `make models` or on first use), loaded once per session."""
    from helpers.models import load

    return load("smollm2-135m-instruct")


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU (skipped without one, with the reason)")
    config.addinivalue_line("markers", "slow: runs a notebook or a long job")


# Tests that hold a machine-wide resource run on one xdist worker, one after another (`make test` runs
# `pytest -n 2 --dist loadgroup`): the two test Slurm clusters (their daemons, sudo, tmpfs mounts and
# time limits) and accelerate's two-process launch (torch.distributed's default port 29500).
ONE_WORKER = ("slurm", "faults")
ONE_WORKER_TESTS = ("test_accelerate_launch_gives_each_process_its_share_and_gathers_one_processs_answers",)


def pytest_collection_modifyitems(config, items):
    import torch

    for item in items:
        if any(mark in item.keywords for mark in ONE_WORKER) or item.originalname in ONE_WORKER_TESTS:
            item.add_marker(pytest.mark.xdist_group("machine-wide"))
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU; none is visible on this machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
