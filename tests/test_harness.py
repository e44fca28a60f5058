"""The engine as an lm-evaluation-harness model (helpers.harness): through lm-eval's own
evaluator on the offline tasks it gives lm-eval's hf model's accuracies and per-request
log-likelihoods on SmolLM2-135M-Instruct, is_greedy included; rolling windows, left truncation
and generation as hf does them; lm-eval's command line runs it; bad input is a clear error."""
from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import lm_eval  # the dev extra
from lm_eval.api.instance import Instance
from lm_eval.models.huggingface import HFLM
from lm_eval.tasks import TaskManager

import helpers.harness as harness
from helpers.models import tiny
from helpers.harness.command import lm_eval_argv, with_offline_tasks
from helpers.harness.model import EngineLM

ROOT = Path(__file__).resolve().parents[1]
TASKS = ["blimp_offline", "blimp_yes_no_offline", "zhoblimp_offline"]


def hf_model(loaded, **kwargs) -> HFLM:
    """lm-eval's hf model on the same weights (its own copy of the tokenizer, which it gives a pad
    token), its log-softmax and sums in float64: what is left is the forward's float32 rounding."""
    return HFLM(pretrained=loaded.model, tokenizer=copy.deepcopy(loaded.tokenizer), batch_size=16,
                softmax_dtype="float64", **kwargs)


def answers(samples) -> tuple[np.ndarray, list[bool]]:
    """Every (log-likelihood, is_greedy) of a task's logged samples, in document order."""
    pairs = [response[0] for sample in sorted(samples, key=lambda s: s["doc_id"]) for response in sample["resps"]]
    return np.array([float(p[0]) for p in pairs]), [bool(p[1]) for p in pairs]


def test_the_engine_gives_hfs_scores_on_smollm2_through_lm_evals_evaluator(smollm2):
    tasks = TaskManager(include_path=str(harness.TASKS_DIR))
    runs = {name: lm_eval.simple_evaluate(model=lm, tasks=TASKS, limit=16, task_manager=tasks, log_samples=True,
                                          verbosity="ERROR")
            for name, lm in (("hf", hf_model(smollm2)), ("engine", EngineLM(smollm2, progress=False)))}
    greedy_seen = 0
    for task in TASKS:
        assert runs["engine"]["results"][task]["acc,none"] == runs["hf"]["results"][task]["acc,none"], task
        ours, our_greedy = answers(runs["engine"]["samples"][task])
        theirs, their_greedy = answers(runs["hf"]["samples"][task])
        assert len(ours) == 32  # 16 documents x 2 choices
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-4, err_msg=task)
        assert our_greedy == their_greedy, task
        greedy_seen += sum(our_greedy)
    assert greedy_seen > 5  # "Yes"/"No" after the prompt are often the greedy token: is_greedy is tested both ways
    info = runs["engine"]["config"]
    assert info["model_name"] == "smollm2-135m-instruct" and info["weights"] == smollm2.weights
    assert info["engine_share"] == "auto" and info["engine_share_used"] != "auto"


def requests(kind: str, *arguments) -> list[Instance]:
    return [Instance(request_type=kind, doc={}, arguments=a, idx=0) for a in arguments]


def test_windows_truncation_and_generation_as_hf_does_them(tiny):
    """On a tiny Llama (whose tokenizer adds BOS itself) with a window of 12 tokens: contexts
    longer than the window cut from the left, texts over several rolling windows, an empty
    context (the prefix token), and greedy generation up to a stop sequence. hf's logits cache is
    off: where two windows hold the same ids split at different points (a text's repeated tail),
    it gathers the shorter continuation's log-probs at the first positions of the longer one's
    (lm-eval 0.4.13, HFLM._loglikelihood_tokens), 1.06 nats off a plain forward here."""
    loaded = tiny("tiny-llama")
    ours, theirs = EngineLM(loaded, max_length=12, progress=False), hf_model(loaded, max_length=12, logits_cache=False)
    long = "the cat sees the dog and the dog sees the cat and the bird sings"
    pairs = requests("loglikelihood", ("", "the cat sees a dog ."), ("the cat ", "sees a dog"),
                     (long, " and the end"), ("le chat", " voit"))
    got, want = ours.loglikelihood(pairs, disable_tqdm=True), theirs.loglikelihood(pairs, disable_tqdm=True)
    np.testing.assert_allclose([g[0] for g in got], [w[0] for w in want], rtol=0, atol=1e-4)
    assert [g[1] for g in got] == [w[1] for w in want]
    assert len(ours.tok_encode(long)) > 12  # truncated, not refused
    texts = requests("loglikelihood_rolling", (long,), (long + " " + long,), ("the cat",))
    rolled, their_rolled = ours.loglikelihood_rolling(texts, disable_tqdm=True), \
        theirs.loglikelihood_rolling(texts, disable_tqdm=True)
    np.testing.assert_allclose(rolled, their_rolled, rtol=0, atol=1e-4)
    assert len(ours.tok_encode(long + " " + long)) > 3 * 12  # four windows, summed
    prompts = requests("generate_until", ("the cat", {"until": ["."], "max_gen_toks": 6}),
                       ("the dog sees", {"until": "bird", "max_gen_toks": 5, "do_sample": False}))
    assert ours.generate_until(prompts, disable_tqdm=True) == theirs.generate_until(prompts, disable_tqdm=True)


def test_an_encoder_decoder_is_scored_as_hfs_seq2seq_model_scores_it(tiny):
    """The context to the encoder, the continuation to the decoder after its start token."""
    loaded = tiny("tiny-t5")
    ours = EngineLM(loaded, progress=False)
    theirs = HFLM(pretrained=loaded.model, tokenizer=copy.deepcopy(loaded.tokenizer), backend="seq2seq",
                  batch_size=16, softmax_dtype="float64")
    pairs = requests("loglikelihood", ("", "the cat sees a dog ."), ("the cat ", "sees a dog"), ("Answer:", " yes"))
    got, want = ours.loglikelihood(pairs, disable_tqdm=True), theirs.loglikelihood(pairs, disable_tqdm=True)
    np.testing.assert_allclose([g[0] for g in got], [w[0] for w in want], rtol=0, atol=1e-4)
    assert [g[1] for g in got] == [w[1] for w in want] and ours.backend == "seq2seq"
    text = requests("loglikelihood_rolling", ("the cat sees the dog and the dog sees",))
    np.testing.assert_allclose(ours.loglikelihood_rolling(text, disable_tqdm=True),
                               theirs.loglikelihood_rolling(text, disable_tqdm=True), rtol=0, atol=1e-4)


def test_bad_input_is_a_clear_error(tiny, tmp_path):
    from helpers.models import load
    from helpers.models.tiny_masked import build

    lm = EngineLM(tiny("tiny-gpt2"), max_length=8, progress=False)
    with pytest.raises(ValueError, match="empty continuation"):
        lm.loglikelihood(requests("loglikelihood", ("The cat", " sees"), ("The cat", "")))
    with pytest.raises(ValueError, match="more than the model's max_length of 8"):
        lm.loglikelihood(requests("loglikelihood", ("The", " cat sees the dog and the dog sees the cat")))
    with pytest.raises(ValueError, match="no model argument 'temperature'"):
        EngineLM(tiny("tiny-gpt2"), temperature=0)
    with pytest.raises(ValueError, match="is a masked model: the lm-eval backend scores causal LMs and encoder-decoders"):
        EngineLM(load(build("bert", tmp_path / "bert")))


def test_lm_evals_command_line_runs_the_engine(tmp_path):
    assert lm_eval_argv(["--model", "engine"]) == ["run", "--model", "engine"]
    assert lm_eval_argv(["ls", "tasks", "--include_path", "x"]) == ["ls", "tasks", "--include_path", "x"]
    assert with_offline_tasks("x") == [harness.TASKS_DIR, "x"] and with_offline_tasks(None) == [harness.TASKS_DIR]
    out = tmp_path / "results"
    done = subprocess.run(
        [sys.executable, "-m", "helpers", "lm-eval", "--model", "engine", "--model_args",
         "pretrained=tiny-gpt2,share=tree", "--tasks", "blimp_offline", "--limit", "3", "--output_path", str(out),
         "--log_samples", "--device", "cpu"], cwd=ROOT, capture_output=True, text=True, env=os.environ | {"PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    (results,) = out.rglob("results_*.json")
    recorded = json.loads(results.read_text())
    assert recorded["config"]["model"] == "engine"
    assert recorded["config"]["model_args"] == {"pretrained": "tiny-gpt2", "share": "tree"}
    assert recorded["config"]["engine_share_used"] == "tree" and recorded["config"]["model_name"] == "tiny-gpt2"
    assert recorded["n-samples"]["blimp_offline"]["effective"] == 3
    (samples,) = out.rglob("samples_blimp_offline_*.jsonl")
    logged = [json.loads(line) for line in samples.read_text().splitlines()]
    assert [s["doc"]["sentence_good"] for s in logged][:1] == ["Who should Derek hug after shocking Richard?"]
    assert all(len(s["resps"]) == 2 and float(s["resps"][0][0][0]) < 0 for s in logged)  # logged as text
    # lm-eval's own models stay available beside the engine, through the project's command
    from helpers.models import load

    folder = load("tiny-gpt2").model.config._name_or_path  # the built folder
    mine = tmp_path / "my_tasks"  # a user's own task folder: the offline tasks stay found beside it
    mine.mkdir()
    (mine / "pairs.jsonl").write_text('{"good": "The cats sleep.", "bad": "The cats sleeps."}\n'
                                      '{"good": "A dog barks.", "bad": "A dog bark."}\n')
    (mine / "my_pairs.yaml").write_text(f"task: my_pairs\ndataset_path: json\ndataset_kwargs:\n  data_files:\n"
                                        f"    test: {mine / 'pairs.jsonl'}\noutput_type: multiple_choice\n"
                                        "test_split: test\ndoc_to_text: ''\ntarget_delimiter: ''\ndoc_to_target: 0\n"
                                        "doc_to_choice: '{{[good, bad]}}'\nmetric_list:\n  - metric: acc\n")
    hf = subprocess.run(
        [sys.executable, "-m", "helpers", "lm-eval", "--model", "hf", "--model_args", f"pretrained={folder}",
         "--tasks", "blimp_offline,my_pairs", "--include_path", str(mine), "--limit", "3", "--output_path",
         str(tmp_path / "hf"), "--device", "cpu"],
        cwd=ROOT, capture_output=True, text=True, env=os.environ | {"PYTHONPATH": str(ROOT)})
    assert hf.returncode == 0, hf.stderr[-3000:]
    (theirs,) = (tmp_path / "hf").rglob("results_*.json")
    theirs = json.loads(theirs.read_text())
    assert theirs["results"]["blimp_offline"]["acc,none"] == recorded["results"]["blimp_offline"]["acc,none"]
    assert theirs["n-samples"]["my_pairs"]["effective"] == 2  # the user's task, read from their include path


def test_accelerate_launch_gives_each_process_its_share_and_gathers_one_processs_answers(tmp_path):
    """``accelerate launch --num_processes 2`` as lm-eval users spread a task, here on the CPU: each
    process scores its rank's documents on its own device (rank 0: half the requests), and the
    results gathered on rank 0 equal one process's, request by request. (accelerate 1.15 runs
    ``--cpu --num_processes 2`` as one process, its simple launcher; ``--multi_gpu`` with
    ``ACCELERATE_USE_CPU=1`` starts two CPU processes under torch.distributed, gloo.)"""
    def launch(out, limit, *launcher):
        return subprocess.run(
            [*launcher, "-m", "helpers", "lm-eval", "--model", "engine", "--model_args", "pretrained=tiny-gpt2",
             "--tasks", "blimp_offline", "--limit", str(limit), "--output_path", str(out), "--log_samples",
             "--device", "cpu"], cwd=ROOT, capture_output=True, text=True,
            env=os.environ | {"PYTHONPATH": str(ROOT), "ACCELERATE_USE_CPU": "1", "OMP_NUM_THREADS": "1",
                              "HELPERS_TINY_DIR": str(tmp_path / "tiny")})

    def run(out, *launcher):
        done = launch(out, 3, *launcher)  # 3 documents: 2 on rank 0, 1 on rank 1
        assert done.returncode == 0, done.stderr[-3000:]
        (results,) = out.rglob("results_*.json")
        (samples,) = out.rglob("samples_blimp_offline_*.jsonl")
        logged = sorted((json.loads(line) for line in samples.read_text().splitlines()), key=lambda s: s["doc_id"])
        return json.loads(results.read_text()), [[float(r[0][0]) for r in s["resps"]] for s in logged]

    accelerate = Path(sys.executable).parent / "accelerate"
    # the two ranks meet tiny-gpt2's first use (an empty folder): one builds it, whole, the other waits
    two_processes = (str(accelerate), "launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
                     "--mixed_precision", "no", "--dynamo_backend", "no")
    two, two_answers = run(tmp_path / "two", *two_processes)
    assert tiny.broken(tmp_path / "tiny" / "tiny-gpt2") is None
    one, one_answers = run(tmp_path / "one", sys.executable)
    assert (one["config"]["engine_processes"], two["config"]["engine_processes"]) == (1, 2)
    assert (one["config"]["engine_requests_scored"], two["config"]["engine_requests_scored"]) == (6, 4)  # uneven
    assert len(two_answers) == 3  # every document, each answer one process's (another batch: float32 rounding)
    np.testing.assert_allclose(two_answers, one_answers, rtol=0, atol=1e-5)
    assert two["results"]["blimp_offline"]["acc,none"] == one["results"]["blimp_offline"]["acc,none"]
    # one document over two processes: rank 1 would get none, which lm-eval stops; refused before loading, named
    idle = launch(tmp_path / "idle", 1, *two_processes)
    assert idle.returncode != 0 and "--limit 1 over 2 processes leaves 1 of them without a document" in idle.stderr
    assert not (tmp_path / "idle").exists()
