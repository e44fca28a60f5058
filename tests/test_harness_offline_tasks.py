"""The offline lm-eval tasks of the 2024-26 benchmarks (helpers/harness/tasks: turblimp_offline,
blimp_nl_offline, bhs_offline, multiblimp_offline, qfrblimp_offline): every pair of the mirrored
release a document, under lm-eval's own tasks' columns and prompts; the engine gives lm-eval's hf
model's log-likelihoods and accuracies on them through lm-eval's evaluator; the entry points that
lm-eval's plugin discovery reads are declared; every task says how its acc counts a tie."""
from __future__ import annotations

import importlib.metadata as md
import importlib.util
from pathlib import Path

import lm_eval  # the dev extra
import numpy as np
from lm_eval.tasks import TaskManager

from helpers import harness
from helpers.harness.model import EngineLM
from tests.test_harness import answers, hf_model

NEW = {"turblimp_offline": 16_000, "blimp_nl_offline": 8_400, "bhs_offline": 22_000, "multiblimp_offline": 5_939,
       "qfrblimp_offline": 1_761}


def test_each_task_holds_every_pair_of_its_release_as_lm_evals_own_task_reads_them():
    tasks = TaskManager(include_path=str(harness.TASKS_DIR)).load_task_or_group(list(NEW))
    for name, count in NEW.items():
        task = tasks[name]
        docs = list(task.test_docs())
        assert len(docs) == count, name
        first = docs[0]
        if name == "bhs_offline":  # the context is the prompt, the endings the choices after one space
            assert task.doc_to_text(first) == first["context"] and task.config.target_delimiter == " "
            assert task.doc_to_choice(first) == [first["ending_good"], first["ending_bad"]]
        else:  # no delimiter before the sentence, as lm-eval's turblimp, blimp_nl and multiblimp tasks
            assert task.doc_to_text(first) == "" and task.config.target_delimiter == ""
            assert len(task.doc_to_choice(first)) == 2 and task.doc_to_target(first) == 0
    assert tasks["multiblimp_offline"].test_docs()[0]["UID"] == "ell/SV-P"  # languages sorted, each file's order


def test_the_engine_gives_hfs_answers_on_the_new_tasks(tiny):
    lm = tiny("tiny-gpt2")
    names = list(NEW)
    manager = TaskManager(include_path=str(harness.TASKS_DIR))
    runs = {who: lm_eval.simple_evaluate(model=model, tasks=names, limit=6, task_manager=manager, log_samples=True,
                                         verbosity="ERROR")
            for who, model in (("hf", hf_model(lm)), ("engine", EngineLM(lm, progress=False)))}
    for task in names:
        ours, _ = answers(runs["engine"]["samples"][task])
        theirs, _ = answers(runs["hf"]["samples"][task])
        assert len(ours) == 12  # 6 documents x 2 choices
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-4, err_msg=task)
        assert runs["engine"]["results"][task]["acc,none"] == runs["hf"]["results"][task]["acc,none"], task


def test_the_plugin_entry_points_and_the_tie_rule_of_every_task():
    models = {e.name: e for e in md.entry_points(group="lm_eval.models")}
    assert models["engine"].load() is EngineLM
    (tasks,) = [e for e in md.entry_points(group="lm_eval.tasks") if e.name == "minimal_pairs_offline"]
    origin = Path(importlib.util.find_spec(tasks.value).origin)  # lm-eval scans the module's folder
    assert origin.parent == harness.TASKS_DIR.resolve() and (origin.parent / "bhs_offline.yaml").is_file()
    for path in sorted(harness.TASKS_DIR.glob("*.yaml")):
        assert "# Ties: lm-eval's acc takes np.argmax" in path.read_text(), path.name


REMOTE_CODE = '''from transformers import GPT2Config, GPT2LMHeadModel


class RemoteGPT2Config(GPT2Config):
    model_type = "remote_gpt2"


class RemoteGPT2LMHeadModel(GPT2LMHeadModel):
    config_class = RemoteGPT2Config
'''


def test_trust_remote_code_is_passed_through_where_the_user_asks(tiny, tmp_path):
    """A model folder whose modelling code is its own (config auto_map): refused by transformers
    without trust_remote_code, loaded with it from lm-eval's model_args, and scored as the same
    weights under transformers' own class."""
    import json

    import pytest
    from lm_eval.api.instance import Instance

    lm = tiny("tiny-gpt2")
    folder = tmp_path / "remote-gpt2"
    lm.model.save_pretrained(folder)
    lm.tokenizer.save_pretrained(folder)
    (folder / "remote_gpt2.py").write_text(REMOTE_CODE)
    config = json.loads((folder / "config.json").read_text())
    config.update(model_type="remote_gpt2", architectures=["RemoteGPT2LMHeadModel"],
                  auto_map={"AutoConfig": "remote_gpt2.RemoteGPT2Config",
                            "AutoModelForCausalLM": "remote_gpt2.RemoteGPT2LMHeadModel"})
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="contains custom code"):
        EngineLM(str(folder), progress=False)
    remote = EngineLM.create_from_arg_string(f"pretrained={folder},trust_remote_code=True", {"batch_size": 1})
    assert type(remote.scorer.loaded.model).__name__ == "RemoteGPT2LMHeadModel"
    asked = [Instance(request_type="loglikelihood", doc={}, arguments=("The cat", " sees a dog."), idx=0)]
    assert remote.loglikelihood(asked) == EngineLM(lm, progress=False).loglikelihood(asked)


def test_blimp_offline_takes_one_paradigm_from_its_metadata_as_lm_evals_blimp_subtask_holds_it():
    import pytest

    from helpers import data
    from helpers.harness.tasks import utils

    pairs = data.load_processed("blimp")
    island = pairs[pairs["paradigm"] == "adjunct_island"]
    one = utils.blimp(paradigm="adjunct_island", version=1.0)["test"]
    assert len(one) == 1_000 and set(one["UID"]) == {"adjunct_island"}
    assert one["sentence_good"] == island["good"].tolist() and one["sentence_bad"] == island["bad"].tolist()
    assert len(utils.blimp(version=1.0)["test"]) == 67_000  # no paradigm: all of BLiMP, as before
    with pytest.raises(ValueError, match="no BLiMP paradigm 'adjunct_islands'; BLiMP's 67 are adjunct_island, "):
        utils.blimp(paradigm="adjunct_islands")
    # through lm-eval's evaluator's own config route, as --metadata '{"paradigm": ...}' passes it
    task = TaskManager(include_path=str(harness.TASKS_DIR), metadata={"paradigm": "adjunct_island"}) \
        .load_task_or_group(["blimp_offline"])["blimp_offline"]
    assert len(task.test_docs()) == 1_000
