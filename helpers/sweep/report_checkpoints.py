"""``make report``'s learning curves (08) offline: the report's model, trained by this project
(:mod:`helpers.zoo.demo_training`), as two Hub revisions in a Hugging Face cache under the report's
folder, ``step0`` (a fresh initialisation of its configuration with its recipe's seed) and
``step<N>`` (its trained weights, ``N`` its optimizer steps over every training stage), scored by
the sweep over revisions (``--revisions``, notebook 02) as the README's command does with Pythia.
"""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import torch
from transformers import AutoConfig, AutoModelForCausalLM

from .. import paths
from ..models.registry import resolve
from ..store import safe_name

ORG = "report"  # the cache's organisation: report/<model>
SCORED = {"methods": "lp,meanlp,penlp", "limit": 2}  # 02's parameters for each revision


def training_steps(folder: Path) -> tuple[int, int]:
    """The optimizer steps of every training stage of a demo model and its recipe's seed."""
    record = folder / "training.json"
    if not record.is_file():
        raise ValueError(f"{folder} has no training.json: the report's learning curves need a model trained by "
                         "this project (python -m helpers train-demo)")
    training = json.loads(record.read_text())
    steps = training["steps"] + sum(stage["steps"] for stage in training.get("previous_stages", []))
    return int(steps), int(training.get("recipe", {}).get("seed", 0))


def checkpoint_cache(model: str, hub: Path) -> tuple[str, list[str]]:
    """Write ``model`` at step 0 and at its last step into the Hugging Face cache ``hub``, as the
    Hub's snapshots and refs; returns the repository id and the two revisions."""
    spec = resolve(model)
    folder = Path(spec.hf_id) if Path(spec.hf_id).is_absolute() else paths.ROOT / spec.hf_id
    steps, seed = training_steps(folder)
    repo_id = f"{ORG}/{safe_name(spec.name)}"
    repo = hub / f"models--{ORG}--{safe_name(spec.name)}"
    revisions = [f"step{0}", f"step{steps}"]
    for revision in revisions:
        commit = hashlib.sha1(f"{repo_id}@{revision}".encode()).hexdigest()
        snapshot = repo / "snapshots" / commit
        if not (snapshot / "config.json").is_file():
            shutil.copytree(folder, snapshot, dirs_exist_ok=True)
            if revision == "step0":
                config = AutoConfig.from_pretrained(folder)
                dtype = getattr(config, "torch_dtype", None) or torch.float32  # as the trained weights are saved
                torch.manual_seed(seed)
                fresh = AutoModelForCausalLM.from_config(config)
                fresh.to(getattr(torch, dtype) if isinstance(dtype, str) else dtype).save_pretrained(snapshot)
        (repo / "refs").mkdir(parents=True, exist_ok=True)
        (repo / "refs" / revision).write_text(commit)
    return repo_id, revisions


def prepare(model: str, out: Path) -> dict:
    """Score the report's model at its two revisions with 02 (a sweep over revisions, into the
    report's results) and return 08's parameters: the repository id and the revisions. The
    kernels find the revisions through ``HF_HUB_CACHE`` (set by the caller to ``out / "hub"``)."""
    from . import launch
    from .jobs import plan

    repo_id, revisions = checkpoint_cache(model, out / "hub")
    launch.run(plan(["02"], [repo_id], ["blimp"], dict(SCORED), revisions=revisions))
    return {"model": repo_id, "revisions": revisions}
