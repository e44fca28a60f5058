"""Method settings: one table (helpers.settings.Settings) declares, defaults and checks them; each
family names those it reads; run_methods takes them in one Settings (or a dict of changes to the
scorer's: a typo is an error that lists them all) and carries none of its own."""
from __future__ import annotations

import inspect

import pytest

from helpers import methods as registry
from helpers.methods.base import PassContext
from helpers.methods.fewshot import FewShot
from helpers.runner import run_methods
from helpers.settings import METHOD_SETTINGS, Settings


def test_every_setting_belongs_to_the_families_that_read_it():
    owners = {name: sorted(f.name for f in registry.families() if name in f.takes)
              for f in registry.families() for name in f.takes}
    assert owners["ab_seed"] == owners["use_outlines"] == ["ab"]
    assert owners["fewshot"] == ["single", "yesno"]
    assert owners["unigram_corpus"] == ["sentence"]
    assert owners["order_average"] == sorted(m.family.name for m in map(registry.get, registry.HU_LEVY_METHODS))
    assert owners["syntaxgym_pass"] == ["syntaxgym", "syntaxgym_word"]
    # PenLP's alpha is read by two methods' scores, not by a family's pass
    assert {name: sorted(m.name for m in registry.METHODS.values() if name in m.takes)
            for m in registry.METHODS.values() for name in m.takes} == {"penlp_alpha": ["intemplate_penlp", "penlp"]}
    assert set(owners) | {"templates", "instruct", "penlp_alpha"} == set(METHOD_SETTINGS)  # each read by one
    table = registry.settings_table()
    assert "penlp_alpha='auto' (0.8" in table and "a number > 0 (penlp, intemplate_penlp)\n" in table
    for name in ("templates", "instruct", "ab_seed", "use_outlines", "fewshot", "order_average", "unigram_corpus",
                 "syntaxgym_pass", "penlp_alpha"):
        assert table.count(f"\n{name}=") + table.startswith(f"{name}=") == 1, name


def test_values_are_checked_and_defaults_filled():
    pass_context = PassContext(None, "en", Settings(ab_seed=7, templates=2))
    assert pass_context.ab_seed == 7 and pass_context.templates == (2,) and pass_context.use_outlines == "auto"
    assert pass_context.fewshot == FewShot(0) and pass_context.order_average == "accuracy" and pass_context.instruct is False
    assert PassContext(None, "en").templates == (1, 2, 3, 4, 5) and PassContext(None, "en").ab_seed == 42
    assert PassContext(None, "en", Settings(templates="1,direct")).templates == (1, "direct")
    assert PassContext(None, "en", Settings(fewshot=FewShot(2, "same", 3))).fewshot == FewShot(2, "same", 3)
    # a PassContext holds no setting of its own: a change is a change of its settings
    assert PassContext(None, "en").but(ab_seed=3).settings == Settings(ab_seed=3)


@pytest.mark.parametrize("options,said", [
    ({"sede": 7}, r"unknown setting 'sede'; the settings are: .*seed"),
    ({"order_average": "mean"}, r"order_average='mean' does not exist: use one of 'auto', 'accuracy', 'logprob' \('auto': accuracy"),
    ({"syntaxgym_pass": "all"}, r"syntaxgym_pass='all' does not exist: use one of 'auto', 'directional', 'strict'"),
    ({"ab_seed": "7"}, "ab_seed must be a whole number"),
    ({"use_outlines": "yes"}, "use_outlines must be 'auto', True or False"),
    ({"fewshot": -1}, "whole number >= 0"),
    ({"templates": []}, "templates must be template ids"),
    ({"unigram_corpus": 3}, "unigram_corpus must be None"),
    ({"fewshot": 2}, r"fewshot=2 .* applies to the methods of single, yesno only; run lp, meanlp with fewshot=0"),
    ([1, 2], r"settings must be a helpers.settings.Settings or a dict of setting name -> value"),
])
def test_wrong_options_say_what_to_give_before_anything_runs(options, said):
    with pytest.raises((ValueError, TypeError), match=said):
        run_methods(None, None, ["lp", "meanlp", "yesno"], options)  # refused before the scorer is touched


def test_the_runner_takes_six_parameters():
    assert len(inspect.signature(run_methods).parameters) <= 6
