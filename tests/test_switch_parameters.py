"""Every setting (start, order_average, syntaxgym_pass, share, quant, dtype, token_budget, revision,
batch_size) under one name: a parameter of every scoring notebook, an option of the sweep and of `python -m helpers
score`, "auto" the registry's default (the papers' setups), recorded in every score file;
a value that does not exist, a quantization this machine cannot run and a revision that is not
here are one-line errors before anything is loaded or computed."""
from __future__ import annotations

import dataclasses
import json
import sys

import numpy as np
import papermill as pm
import pytest

from helpers import paths, sweep
from helpers.cli import main
from helpers.data import load
from helpers.data.selection import DatasetSelection, first_per_paradigm
from helpers.engine import CausalScorer, Request
from helpers.models import REGISTRY, LoadedModel, ModelNotFoundError, QuantizationUnavailableError, quantization_probe
from helpers.models import tiny as tiny_models
from helpers.runner import run_methods
from helpers.store import ScoreStore, read_metadata
from helpers.engine.kinds import check_models, scorer_for
from helpers.settings import METHOD_SETTINGS, NAMES, TABLE, Settings, method_setting

SCORING = ("00", "02", "03", "06", "07")


def blimp_pairs(paradigms: int = 2, per: int = 1) -> DatasetSelection:
    df = load("blimp")
    keep = df.paradigm.drop_duplicates().iloc[:paradigms]
    return DatasetSelection("blimp", first_per_paradigm(df[df.paradigm.isin(keep)], per), limit=per)


@pytest.mark.parametrize("name,value,names", [
    ("start", "bos", "'auto', 'bos-else-eos', 'none', 'minicons'"),
    ("order_average", "orders", "'auto', 'accuracy', 'logprob'"),
    ("syntaxgym_pass", "lenient", "'auto', 'directional', 'strict'"),
    ("share", "all", "'auto', 'none', 'context', 'prefix', 'tree'"),
    ("quant", "2bit", "'auto', 'none', '4bit', '8bit'"),
    ("dtype", "fp16", "'auto', 'float32', 'bfloat16', 'float16'"),
])
def test_a_switch_value_that_does_not_exist_is_a_one_line_error_naming_the_values(name, value, names):
    with pytest.raises(ValueError) as err:
        Settings(**{name: value})
    assert str(err.value).startswith(f"{name}={value!r} does not exist: use one of {names} ('auto': ")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("name,value", [("token_budget", 0), ("token_budget", "many"), ("token_budget", True),
                                        ("revision", ""), ("revision", " v1"), ("revision", 3)])
def test_free_valued_switches_refuse_what_is_no_value(name, value):
    with pytest.raises(ValueError, match=rf"^{name}={value!r} is not a") as err:
        Settings(**{name: value})
    assert "\n" not in str(err.value)


def test_one_settings_object_gives_loading_the_engine_and_the_methods_their_part():
    auto = Settings()
    assert auto.given_values() == {name: "auto" for name in TABLE}  # every setting recorded, defaults included
    assert auto.described() == "settings: all 'auto' (each model's own)"
    assert auto.loading() == {} and auto.load_arguments() == {
        "quant": "auto", "dtype": None, "revision": None, "device_map": "auto", "max_memory": None,
        "offload_folder": None}
    assert {name: method_setting(name, getattr(auto, name)) for name in METHOD_SETTINGS} == {
        "order_average": "accuracy", "syntaxgym_pass": "directional", "instruct": None, "templates": None, "ab_seed": 42, "ab_orders": "seeded",
        "use_outlines": "auto", "fewshot": 0, "penlp_alpha": 0.8, "unigram_corpus": None}  # each written once
    given = Settings(start="none", order_average="logprob", syntaxgym_pass="strict", share="none", quant=None,
                     dtype="bfloat16", token_budget="512", revision="v1", batch_size="8", instruct="false")
    assert {k: v for k, v in given.given_values().items() if v != "auto"} == {
        "start": "none", "order_average": "logprob", "syntaxgym_pass": "strict", "share": "none", "quant": "none",
        "dtype": "bfloat16", "token_budget": 512, "revision": "v1", "batch_size": 8, "instruct": False}
    assert given.described().startswith("settings: start='none', order_average='logprob', ")
    assert given.loading() == {"quant": "none", "dtype": "bfloat16", "revision": "v1"}
    assert (given.given("token_budget"), given.given("batch_size"), auto.given("token_budget")) == (512, 8, None)
    assert [method_setting(name, getattr(given, name)) for name in ("order_average", "syntaxgym_pass", "instruct")] \
        == ["logprob", "strict", False]
    assert method_setting("instruct", Settings(instruct="true").instruct) is True and Settings(instruct=None).instruct == "auto"
    assert Settings(quant="4bit").load_arguments()["quant"] == "4bit"
    # "auto" is the registry's start for the model; a literal start token is named as one
    assert (auto.start_for("none"), given.start_for("minicons"), Settings(start="token:<s>").start_for("none")) == (
        "none", "none", "<s>")


def test_the_registry_carries_each_papers_precision_and_start_convention():
    ide = ["llama3", "llama3-instruct", "mixtral", "mixtral-instruct", "qwen2", "qwen2-instruct"]
    for name in ide:  # "we perform 4-bit quantization using bitsandbytes"; Qwen2 without a start token
        spec = REGISTRY[name]
        assert "ide2024" in spec.papers and spec.default_quant == "4bit", name
        assert spec.start == ("none" if name.startswith("qwen2") else "bos-else-eos"), name
    for name in ("opt-125m", "opt-350m", "opt-1.3b", "opt-2.7b", "opt-6.7b"):  # Sinha et al., through minicons
        assert REGISTRY[name].papers == ("sinha2023",) and REGISTRY[name].start == "minicons"
        assert REGISTRY[name].default_quant is None
    hu2025 = {"gpt2": "bos-else-eos", "llama3": "bos-else-eos", "gpt2-chinese": "[CLS]",
              "llama3-chinese-8b": "bos-else-eos"}
    for name, start in hu2025.items():
        assert "hu2025" in REGISTRY[name].papers and REGISTRY[name].start == start, name
    for size in ("small", "large", "xl"):
        spec = REGISTRY[f"flan-t5-{size}"]
        assert (spec.papers, spec.architecture, spec.default_quant, spec.start) == (
            ("hulevy2023",), "seq2seq", None, "bos-else-eos")
    assert [n for n, s in REGISTRY.items() if s.default_quant] == ide  # no other model loads quantized by default


def test_auto_start_is_the_registry_default_and_a_given_start_overrides_it(tiny):
    lm = tiny("tiny-qwen2")
    as_ide = LoadedModel.wrap(lm.model, lm.tokenizer, dataclasses.replace(lm.spec, start="none"))
    text = "The cat sees a dog."
    auto = scorer_for(as_ide, Settings(progress=False))
    assert (auto.start, auto.start_token) == ("none", "none")
    words = lm.tokenizer(text, add_special_tokens=False)["input_ids"]
    assert auto.score_texts([text])[0].token_ids == words[1:]  # the first token is unscored
    given = scorer_for(as_ide, Settings(start="bos-else-eos", progress=False))
    assert given.start == "bos-else-eos" and given.score_texts([text])[0].token_ids == words
    assert scorer_for(lm, Settings(progress=False)).start == "bos-else-eos"  # the tiny model's own default
    with pytest.raises(ValueError, match="quant apply to loading, but tiny-qwen2 is loaded already"):
        scorer_for(lm, Settings(quant="none"))


def test_bad_models_revisions_quantizations_and_starts_fail_before_loading(tiny, monkeypatch):
    with pytest.raises(ModelNotFoundError, match=r"^revision 'v1' names a commit.*'tiny-gpt2' is a local model "
                                                 "without revisions: leave the revision out$"):
        check_models("tiny-gpt2", Settings(revision="v1"))
    with pytest.raises(ModelNotFoundError, match=r"^'gpt2' \(openai-community/gpt2\) at revision 'no-such-tag' is "
                                                 r"not in the local Hugging Face cache and HF_HUB_OFFLINE is set\. .*"
                                                 r"huggingface-cli download openai-community/gpt2 --revision no-such"):
        check_models("gpt2", Settings(revision="no-such-tag"))
    with pytest.raises(ValueError, match=r"^start='none' is a causal-model convention .* tiny-t5 is an "
                                         r"encoder-decoder.*use start='auto'$"):
        check_models(["tiny-gpt2", "tiny-t5"], Settings(start="none"))  # every model of a list is checked
    monkeypatch.setitem(sys.modules, "bitsandbytes", None)  # as on a machine without the package
    quantization_probe.cache_clear()
    try:
        with pytest.raises(QuantizationUnavailableError, match=r"^4bit quantization needs bitsandbytes"):
            scorer_for("tiny-gpt2", Settings(quant="4bit"))
        check_models("tiny-gpt2", Settings(quant="none"))  # full precision needs no backend
    finally:
        quantization_probe.cache_clear()


def test_the_runner_records_share_and_token_budget_and_reuses_files_across_them(tiny, tmp_path):
    lm, store = tiny("tiny-gpt2"), ScoreStore(tmp_path)
    plain = run_methods(CausalScorer(lm, Settings(progress=False, share="none", token_budget=300)), blimp_pairs(), ["lp"],
                        store=store)
    meta = read_metadata(plain[0])
    assert (meta["share"], meta["token_budget"]) == ("none", 300)
    again = run_methods(CausalScorer(lm, Settings(progress=False, share="tree")), blimp_pairs(), ["lp"], store=store)
    assert again == plain and store.writes == 1  # the same configuration: found, not scored again


def test_score_takes_every_setting_and_refuses_a_method_setting_with_the_reason(capsys):
    assert main(["score", "--model", "tiny-gpt2", "--penlp-alpha", "1.0", "The cat sleeps."]) == 2
    assert ("error: penlp_alpha is a method setting: score prints token log-probs and runs no method"
            in capsys.readouterr().err)


def test_every_setting_is_taken_or_refused_with_its_reason_by_the_lm_eval_backend():
    from helpers.harness.model import REFUSED, SETTING_ARGUMENTS

    assert set(TABLE) <= set(SETTING_ARGUMENTS) | set(REFUSED)


def test_no_parameters_cell_gates_a_setting_and_the_sweep_gives_every_setting_to_every_notebook_but_01():
    for path in sorted(paths.NOTEBOOKS.glob("*.ipynb")):
        cell = set(pm.inspect_notebook(str(path)))
        shown = cell & set(TABLE)  # a cell may show a setting (06: its one template), never gate one
        assert shown <= ({"templates"} if path.name.startswith("06") else set()), (path.name, shown)
        takes = sweep.declared_parameters(path)
        assert (set(NAMES) <= takes) == (not path.name.startswith("01")), path.name


def test_the_sweep_gives_switches_to_the_notebooks_that_score_and_checks_them(capsys, monkeypatch):
    jobs = sweep.plan(["02", "04"], ["tiny-gpt2"], ["blimp"], settings={"share": "none", "token_budget": 512})
    scoring, reading = (job.papermill_parameters() for job in jobs)
    assert scoring == {"share": "none", "token_budget": 512, "model": "tiny-gpt2", "dataset": "blimp"}
    # 04 reads the store: it takes every setting too (these two choose nothing there, and it says so)
    assert reading == {"share": "none", "token_budget": 512, "model": "tiny-gpt2", "dataset": "blimp"}
    assert jobs[0].output.name == "02_readout__tiny-gpt2__blimp__share-none__token_budget-512.ipynb"
    with pytest.raises(ValueError, match=r"^share='all' does not exist: use one of"):
        sweep.plan(["02"], ["tiny-gpt2"], ["blimp"], settings={"share": "all"})
    with pytest.raises(ValueError, match=r"^start='bos' does not exist"):
        sweep.plan(["02"], ["tiny-gpt2"], ["blimp"], {"02:start": "bos"})  # given as a parameter too
    masked = sweep.plan(["02"], ["tiny-gpt2"], ["blimp"], settings={"masked_variant": "within_word_l2r"})
    assert masked[0].papermill_parameters()["masked_variant"] == "within_word_l2r"  # no line in 02's cell needed
    assert main(["sweep", "--notebooks", "02", "--models", "tiny-gpt2", "--masked-variant", "within_word_l2r",
                 "--status"]) == 0
    with pytest.raises(ValueError, match="no notebook of this sweep \\(01\\) takes the setting start"):
        sweep.plan(["01"], ["none"], ["blimp"], settings={"start": "none"})
    with pytest.raises(SystemExit):  # argparse names the choices
        main(["sweep", "--notebooks", "02", "--models", "tiny-gpt2", "--quant", "2bit", "--status"])
    assert "invalid choice: '2bit' (choose from 'auto', 'none', '4bit', '8bit')" in capsys.readouterr().err
    assert main(["sweep", "--notebooks", "02", "--models", "tiny-gpt2", "--token-budget", "0", "--status"]) == 2
    assert "error: token_budget=0 is not a number of tokens" in capsys.readouterr().err
    ran = []
    monkeypatch.setattr(sweep, "run", lambda jobs, **kw: ran.extend(jobs))
    assert main(["sweep", "--notebooks", "03", "04", "--models", "tiny-gpt2", "--order-average", "logprob",
                 "--revision", "v1"]) == 0
    assert [job.papermill_parameters() for job in ran] == [
        {"order_average": "logprob", "revision": "v1", "model": "tiny-gpt2", "dataset": "blimp"},
        {"order_average": "logprob", "revision": "v1", "model": "tiny-gpt2", "dataset": "blimp"}]  # 04 reads those


def test_the_command_line_takes_the_switches_under_their_names(tiny, capsys):
    text = "The cat sees a dog."
    assert main(["score", "--model", "tiny-gpt2", "--json", "--start", "none", "--share", "none",
                 "--token-budget", "64", text]) == 0
    out = json.loads(capsys.readouterr().out)
    expected = CausalScorer(tiny("tiny-gpt2"), Settings(progress=False, start="none")).score([Request("", text)])[0]
    assert out["start_token"] == "none" and out["tokens"] == expected.tokens
    np.testing.assert_allclose(out["logprobs"], expected.logprobs, atol=1e-5)
    assert main(["score", "--model", "tiny-gpt2", "--revision", "v1", text]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: revision 'v1' names a commit") and err.count("\n") == 1
    assert main(["score", "--model", "tiny-t5", "--start", "minicons", text]) == 2
    assert "tiny-t5 is an encoder-decoder" in capsys.readouterr().err


# --------------------------------------------------------------------------- notebook parameters
COMMITS = {"main": "a" * 40, "v1": "b" * 40}


@pytest.fixture
def hub_cache(tmp_path, monkeypatch):
    """A Hugging Face cache holding "lab/tiny-llama" at two revisions (other weights), read by the
    notebook kernels (they inherit the environment)."""
    repo = tmp_path / "hub" / "models--lab--tiny-llama"
    for seed, (ref, commit) in enumerate(COMMITS.items()):
        tiny_models.build("llama", repo / "snapshots" / commit, seed=seed)
        (repo / "refs").mkdir(parents=True, exist_ok=True)
        (repo / "refs" / ref).write_text(commit)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HELPERS_PROCESSED_DIR", str(tmp_path / "processed"))
    monkeypatch.setenv("HELPERS_OUTPUTS_DIR", str(tmp_path / "outputs"))
    return tmp_path


@pytest.mark.slow
def test_every_switch_reaches_the_score_files_from_the_notebook_parameters(hub_cache):
    switches = dict(start="none", order_average="logprob", share="none", quant="4bit", dtype="float32",
                    token_budget=256, revision="v1")
    params = dict(model="lab/tiny-llama", methods="ab_logit", use_outlines=False, templates=[1], limit=1,
                  fewshot_ks=[], hu_levy_sets="hl_blimp", hu_levy_prompts="direct,metaQuestionSimple", hu_levy_limit=1)
    nb = paths.NOTEBOOKS / "03_prompting.ipynb"
    pm.execute_notebook(str(nb), str(hub_cache / "03.ipynb"), parameters={**params, **switches},
                        cwd=str(paths.NOTEBOOKS), progress_bar=False, kernel_name="python3")
    files = sorted((hub_cache / "outputs" / "scores").rglob("*.parquet"))
    assert [f"{f.parent.parent.name}/{f.name}" for f in files] == [
        "blimp/ab_logit__t1.parquet", "hl_blimp/hl_sentence_comparison__tdirect.parquet",
        "hl_blimp/hl_sentence_comparison__tmetaQuestionSimple.parquet",
        "hl_blimp/hl_sentence_judgment__tdirect.parquet", "hl_blimp/hl_sentence_judgment__tmetaQuestionSimple.parquet"]
    for f in files:
        meta = read_metadata(f)
        assert (meta["start_convention"], meta["start_token"]) == ("none", "none"), f.name
        assert (meta["share"], meta["token_budget"]) == ("none", 256), f.name
        assert (meta["quant"], meta["dtype"]) == ("4bit", "float32"), f.name
        assert (meta["revision"], meta["weights"]) == ("v1", COMMITS["v1"]), f.name  # the v1 snapshot's weights
        ordered = f.name == "hl_sentence_comparison__tmetaQuestionSimple.parquet"
        assert meta["order_average"] == ("logprob" if ordered else None), f.name
    tables = hub_cache / "outputs" / "tables"  # a Hub id's "/" is "_" in file names; a revision is <model>@<revision>
    sidecar = json.loads((tables / "03_prompting__lab_tiny-llama@v1__blimp__limit-1.csv.json").read_text())
    assert {k: sidecar["config"][k] for k in switches} == switches
    # a revision that is not here: a one-line error before anything is scored; nothing written is lost
    written = {f: f.stat().st_mtime_ns for f in files}
    with pytest.raises(pm.PapermillExecutionError) as err:
        pm.execute_notebook(str(nb), str(hub_cache / "03b.ipynb"), parameters={**params, **switches, "revision": "v2"},
                            cwd=str(paths.NOTEBOOKS), progress_bar=False, kernel_name="python3")
    assert err.value.ename == "ModelNotFoundError" and "\n" not in err.value.evalue
    assert err.value.evalue.startswith("'lab/tiny-llama' (lab/tiny-llama) at revision 'v2' is not in the local")
    assert {f: f.stat().st_mtime_ns for f in sorted((hub_cache / "outputs" / "scores").rglob("*.parquet"))} == written


def test_instruct_auto_is_the_registry_entry_else_what_marks_an_instruct_checkpoint(tmp_path):
    """A model the registry does not list (a folder here, as a Hub id or a GGUF file) is taken as an
    instruct model where its name or its generation's end token marks one, not for a chat template
    alone (base checkpoints ship one); the decision is said in one line; ``instruct`` overrides."""
    from types import SimpleNamespace

    from helpers.models.instruct import instruct_decision
    from helpers.methods.base import PassContext
    from helpers.models import load
    from helpers.models import tiny_architectures as ta

    plain = ta.build("llama", tmp_path / "plain")
    chat = ta.build("llama", tmp_path / "chat")
    config = json.loads((chat / "tokenizer_config.json").read_text())
    config["chat_template"] = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}<|assistant|>"
    (chat / "tokenizer_config.json").write_text(json.dumps(config))
    base = ta.build("llama", tmp_path / "qwen-like")  # a base checkpoint that ships a chat template, as Qwen2.5's
    (base / "tokenizer_config.json").write_text(json.dumps(config))
    plain_lm, chat_lm, base_lm = load(plain), load(chat), load(base)
    with pytest.warns(UserWarning, match=r"^chat: prompts in the chat template \(instruct='auto': its name 'chat' "
                                         r"marks an instruct checkpoint\); pass instruct=false if it is a base"):
        assert chat_lm.is_instruct is True
    with pytest.warns(UserWarning, match=r"qwen-like: prompts without the chat template .*it ships a chat template, "
                                         r"but base checkpoints do too.*pass instruct=true if it is an instruct"):
        assert base_lm.is_instruct is False
    assert (plain_lm.spec.kind, plain_lm.is_instruct, base_lm.is_instruct) == ("auto", False, False)  # said once
    tokenizer = SimpleNamespace(chat_template="{{ m }}", eos_token="<|endoftext|>",
                                convert_ids_to_tokens=lambda i: {7: "<|im_end|>", 8: "<|endoftext|>"}[i])
    ended = SimpleNamespace(generation_config=SimpleNamespace(eos_token_id=[7]))
    assert instruct_decision("org/my-model", ended, tokenizer)[0] is True  # generation stops at the turn's end
    beside = SimpleNamespace(generation_config=SimpleNamespace(eos_token_id=[8, 7]))  # as Gemma 3's base: no mark
    assert instruct_decision("org/my-model", beside, tokenizer)[0] is False
    assert "chat turn's end (<|im_end|>)" in instruct_decision("org/my-model", ended, tokenizer)[1]
    plain_ending = SimpleNamespace(generation_config=SimpleNamespace(eos_token_id=8))
    assert instruct_decision("Qwen/Qwen2.5-0.5B", plain_ending, tokenizer)[0] is False
    assert instruct_decision("Qwen/Qwen2.5-0.5B-Instruct", plain_ending, tokenizer)[0] is True
    assert instruct_decision("google/gemma-2-2b-it", plain_ending, tokenizer)[0] is True
    assert instruct_decision("org/chat-base", ended, tokenizer)[0] is True  # the instruct mark first
    # Gemma's pretrained checkpoints end in -pt; their generation configs may list the turn's end too
    assert instruct_decision("google/gemma-3-1b-pt", ended, tokenizer) == (False, (
        "google/gemma-3-1b-pt: prompts without the chat template (instruct='auto': its name 'google/gemma-3-1b-pt' "
        "marks a base checkpoint); pass instruct=true if it is an instruct checkpoint"))
    assert instruct_decision("google/gemma-3-1b-it", ended, tokenizer)[0] is True
    assert load("tiny-llama").is_instruct is False and load("tiny-llama-instruct").is_instruct is True  # registered
    for given, expected in (("auto", True), ("false", False), ("true", True)):
        pass_context = PassContext(CausalScorer(chat_lm, Settings(progress=False)), "en", Settings(instruct=given))
        assert pass_context.instruct is expected, given
