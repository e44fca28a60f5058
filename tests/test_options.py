"""Method options: each family declares and checks its own; run_methods takes them in one
dictionary (a typo is an error that lists them all) and carries none of its own."""
from __future__ import annotations

import inspect

import pytest

from helpers import methods as registry
from helpers.methods.fewshot import FewShot
from helpers.methods.options import checked_options
from helpers.runner import run_methods


def test_every_option_belongs_to_the_families_that_declare_it():
    owners = {o.name: sorted(f.name for f in registry.families() if o in f.options)
              for f in registry.families() for o in f.options}
    assert owners["seed"] == owners["use_outlines"] == ["ab"]
    assert owners["fewshot"] == ["single", "yesno"]
    assert owners["unigram_corpus"] == ["sentence"]
    assert owners["order_average"] == sorted(m.family.name for m in map(registry.get, registry.HU_LEVY_METHODS))
    assert owners["syntaxgym_pass"] == ["syntaxgym", "syntaxgym_word"]
    table = registry.option_table()
    for name in ("templates", "instruct", "seed", "use_outlines", "fewshot", "order_average", "unigram_corpus",
                 "syntaxgym_pass"):
        assert table.count(f"\n{name}=") + table.startswith(f"{name}=") == 1, name


def test_values_are_checked_and_defaults_filled():
    chosen = [registry.get("lp"), registry.get("ab")]
    values = checked_options({"seed": 7, "templates": 2}, chosen, registry.families())
    assert values["seed"] == 7 and values["templates"] == (2,) and values["use_outlines"] == "auto"
    assert values["fewshot"] == FewShot(0) and values["order_average"] == "accuracy" and values["instruct"] is None
    # options of families that are not run are checked, then unused: a notebook passes all its settings
    assert checked_options({"order_average": "logprob"}, chosen, registry.families())["order_average"] == "logprob"


@pytest.mark.parametrize("options,said", [
    ({"sede": 7}, r"unknown option 'sede'; the options \(and the methods that take them\) are: .*seed \(ab\)"),
    ({"order_average": "mean"}, r"order_average='mean' does not exist: use one of 'auto', 'accuracy', 'logprob' \('auto': accuracy"),
    ({"syntaxgym_pass": "all"}, r"syntaxgym_pass='all' does not exist: use one of 'auto', 'directional', 'strict'"),
    ({"seed": "7"}, "seed must be a whole number"),
    ({"use_outlines": "yes"}, "use_outlines must be 'auto', True or False"),
    ({"fewshot": -1}, "whole number >= 0"),
    ({"templates": []}, "templates must be template ids"),
    ({"unigram_corpus": 3}, "unigram_corpus must be None"),
    ({"fewshot": 2}, r"fewshot=2 .* applies to the methods of single, yesno only; run lp, meanlp with fewshot=0"),
    ([1, 2], r"options must be a dict of option name -> value"),
])
def test_wrong_options_say_what_to_give_before_anything_runs(options, said):
    with pytest.raises((ValueError, TypeError), match=said):
        run_methods(None, None, ["lp", "meanlp", "yesno"], options)  # refused before the scorer is touched


def test_the_runner_takes_six_parameters():
    assert len(inspect.signature(run_methods).parameters) <= 6
