"""A run whose score files are all stored loads no model (helpers.runs.deferred): what the run
reads before it scores comes from the model's card, which equals what the built scorer answers,
for each kind of model; a card that disagrees with the built scorer stops the run before anything
is written; a kernel that keeps its models hands the built scorer to the next run."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import methods as registry
from helpers.runs import deferred
from helpers.runs.deferred import CardMismatchError, DeferredScorer, card_of
from helpers.models.tiny_masked import build as build_masked
from helpers.runs.run import Run

UNIVERSE = registry.READOUT_METHODS + registry.PROMPT_METHODS


def _run(model, methods):
    return Run.from_parameters({"model": model, "dataset": "blimp", "limit": 1, "methods": methods}, methods=UNIVERSE)


@pytest.mark.parametrize("kind", ["causal", "instruct", "seq2seq", "masked"])
def test_a_run_whose_files_are_stored_loads_no_model(scratch, kind):
    model, methods = {"causal": ("tiny-gpt2", "lp,meanlp,yesno,ab"), "instruct": ("tiny-llama-instruct", "yesno"),
                      "seq2seq": ("tiny-t5", "lp,yesno"),
                      "masked": (str(build_masked("bert", scratch / "bert")), "lp,meanlp")}[kind]
    first = _run(model, methods)
    files = first.files()
    assert isinstance(first.scorer, DeferredScorer) and first.scorer.loads == 1
    built = first.scorer.built
    card = json.loads(first.scorer.path.read_text())
    assert card["provenance"] == json.loads(json.dumps(built.provenance(), default=str))
    assert set(card["features"]) == set(built.features) and card["is_instruct"] == built.is_instruct
    assert card["is_instruct"] is (kind == "instruct")
    assert {k: v for k, v in card["record"].items() if k not in deferred.RUNNING} == \
        {k: v for k, v in json.loads(json.dumps(built.record())).items() if k not in deferred.RUNNING}

    second = _run(model, methods)
    again = second.files()
    assert list(again) == list(files) and second.scorer.loads == 0 and second.scorer.built is None
    assert second.scorer.record()["forward_calls"] == 0 and second.scorer.max_positions == built.max_positions
    assert second.scorer.tokenizer.pad_token == built.tokenizer.pad_token  # read without the weights
    assert [p.stat().st_mtime_ns for p in again] == [p.stat().st_mtime_ns for p in files]


def test_a_method_not_stored_loads_the_model_and_a_wrong_card_stops_it_before_writing(scratch):
    first = _run("tiny-gpt2", "lp")
    first.files()
    path = first.scorer.path
    card = json.loads(path.read_text())
    more = _run("tiny-gpt2", "lp,meanlp")  # meanlp's file is missing: the model loads, its answers checked
    assert len(more.files()) == 2 and more.scorer.loads == 1
    card["record"]["start_token"] = "bos:<other>"
    path.write_text(json.dumps(card))
    wrong = _run("tiny-gpt2", "lp,meanlp,slln_lp")
    with pytest.raises(CardMismatchError, match=r"record start_token: card 'bos:<other>', built 'bos:"):
        wrong.files()
    assert not list((scratch / "outputs" / "scores").rglob("slln_lp*.parquet"))  # nothing written under the wrong card


def test_a_kernel_that_keeps_its_models_hands_the_built_scorer_on(scratch):
    deferred.keep_loaded()
    try:
        first = _run("tiny-gpt2", "lp")
        first.files()
        calls = first.scorer.record()["forward_calls"]
        assert calls > 0
        second = _run("tiny-gpt2", "lp,meanlp")
        second.files()  # meanlp is scored by the kept scorer: no second load, its own passes counted
        assert second.scorer.loads == 0 and second.scorer.built is first.scorer.built
        assert 0 < second.scorer.record()["forward_calls"] == first.scorer.built.record()["forward_calls"] - calls
    finally:
        deferred.keep_loaded(False)
    assert not deferred.KEPT
    assert card_of(first.scorer.built)["name"] == "tiny-gpt2"


def test_outlines_answers_are_kept_on_the_card_and_a_stored_run_decodes_nothing(scratch):
    """03's outlines check of a stored run: the answers come from the card (no load), the same as
    outlines gave; a prompt the card lacks loads the model and is kept too."""
    prompts = ["Which is grammatical? A: The cat sleeps. B: The cat sleep. Answer:",
               "Which is grammatical? A: Dogs barks. B: Dogs bark. Answer:"]
    first = _run("tiny-gpt2", "lp")
    first.files()
    answers = first.scorer.decode(prompts, ["A", "B"])
    assert first.scorer.loads == 1 and set(answers) <= {"A", "B"} and len(answers) == 2
    assert answers == first.scorer.built.decode(prompts, ["A", "B"])  # outlines again, on the built scorer
    again = _run("tiny-gpt2", "lp")
    assert again.scorer.decode(prompts[::-1], ["A", "B"]) == answers[::-1] and again.scorer.loads == 0
    assert again.scorer.decode(prompts, ["B", "A"]) and again.scorer.loads == 1  # other choices: decoded
    card = json.loads(again.scorer.path.read_text())
    assert len(card["decoded"]) == 4 and deferred.decoded_key(prompts[0], ["A", "B"]) in card["decoded"]


def test_the_teaching_panel_is_a_stored_lp_file_read_again_without_the_model(scratch):
    from helpers.runs.teaching import score_teaching

    first = _run("tiny-gpt2", "lp")
    panel = score_teaching(first.scorer, first.settings)
    (path,) = map(Path, panel.attrs["score_files"])
    assert path.parent.parent.name == "moon_teaching" and path.name == "lp.parquet" and first.scorer.loads == 1
    again = _run("tiny-gpt2", "lp")
    read = score_teaching(again.scorer, again.settings)
    assert again.scorer.loads == 0 and read.equals(panel) and read.attrs["score_files"] == panel.attrs["score_files"]
    assert sorted(read.sentence) == sorted(panel.sentence) and read.grammatical.sum() == 3
