"""The generic runner: any registered method over any dataset selection, into the store.

Methods of one family share one engine pass per template (:func:`score_pass`, which the
quickstart's ``judge`` uses too); finished score files of the same configuration are found
and skipped without touching the model. A :class:`RunSetup` adds what a kind of run puts
around the methods: a priming ``context`` (one text, or one per item) before every method's
whole input, configuration entries, kept columns and a file tag. The runner knows no method
by name and carries no method's settings: they go to the families that read them
(:mod:`helpers.methods.options`), which read them from the run's settings; what to score and
how to reduce it is the family's and the method's business.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from . import methods as registry
from .data.selection import DatasetSelection
from .data.shards import MissingShardsError, missing_message, planned_items
from .engine.interface import Scorer
from .engine.suitability import warn_unsuited
from .methods.base import Family, Method, Runtime
from .methods.options import refuse_unread
from .settings import Settings
from .records import contexts_for, engine_record, info_frame, run_configuration, unscored_shards
from .store import ScoreStore


def sides_of(frame: pd.DataFrame) -> tuple[str, ...]:
    """The sentences an item holds: a pair (good, bad), or one sentence."""
    if {"good", "bad"} <= set(frame.columns):
        return ("good", "bad")
    if "sentence" in frame.columns:
        return ("sentence",)
    return ("item",)


def decisions(method: Method, table: pd.DataFrame, runtime: Runtime | None = None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A pair method's (score_good, score_bad, correct): correct is good > bad, or the method's
    own ``decision`` credit (e.g. averaged over answer orders) where it has one."""
    good = method.score(table, "good").to_numpy(float)
    bad = method.score(table, "bad").to_numpy(float)
    credit = method.decision(table, runtime) if method.decision is not None and runtime is not None else None
    return good, bad, good > bad if credit is None else np.asarray(credit, dtype=float)


def method_frame(info: pd.DataFrame, table: pd.DataFrame, method: Method, sides: tuple[str, ...],
                 runtime: Runtime | None = None) -> pd.DataFrame:
    """The score file of one method: item info, scores (and decision for pairs: good > bad, or
    the method's own ``decision`` credit), basis columns."""
    scored = method.family.score_sides(sides)
    if scored == ("good", "bad"):
        good, bad, correct = decisions(method, table, runtime)
        frame = info.assign(score_good=good, score_bad=bad, correct=correct, tie=good == bad)
        if method.target_score is not None:
            tg = method.target_score(table, "good").to_numpy(float)
            tb = method.target_score(table, "bad").to_numpy(float)
            frame = frame.assign(score_good_target=tg, score_bad_target=tb, correct_target=tg > tb,
                                 tie_target=tg == tb)
    else:
        (side,) = scored
        frame = info.assign(score=method.score(table, side).to_numpy(float))
        if method.target_score is not None:
            frame = frame.assign(score_target=method.target_score(table, side).to_numpy(float))
    keep = [c for c in table.columns if not c.startswith("uni_sum") or method.needs_unigram]
    return pd.concat([frame, table[keep]], axis=1)


def score_pass(scorer: Scorer, family: Family, items: list, template, contexts: list[str], runtime: Runtime,
               positions: np.ndarray | None = None) -> tuple[pd.DataFrame, list[list]]:
    """One engine pass of ``family`` over ``items`` with ``template``: the family's table (one
    row per item) and each item's scored requests. With ``positions``, ``items`` are the whole
    run's, and only the items at those positions are scored (as part of the whole plan) and
    returned."""
    states, per_item = family.pass_requests(items, template, contexts, runtime)
    flat = [r for reqs in per_item for r in reqs]
    starts = np.cumsum([0] + [len(reqs) for reqs in per_item])
    chosen = range(len(per_item)) if positions is None else positions
    only = None if positions is None else [i for p in positions for i in range(starts[p], starts[p + 1])]
    label = family.name if template is None else f"{family.name} {template.id}"
    results = scorer.score(flat, with_context=family.with_context, desc=label, only=only)
    scored, at = [], 0
    for p in chosen:
        scored.append(results[at:at + len(per_item[p])])
        at += len(per_item[p])
    if positions is not None:
        items, contexts, states = ([seq[p] for p in positions] for seq in (items, contexts, states))
    return family.table(items, template, contexts, scored, runtime, states), scored


def by_family(chosen: list[Method]) -> dict[Family, list[Method]]:
    """The chosen methods by family (each family's pass serves all of its methods)."""
    groups: dict[Family, list[Method]] = {}
    for m in chosen:
        groups.setdefault(m.family, []).append(m)
    return groups


@dataclass(frozen=True)
class RunSetup:
    """What a kind of run puts around the methods (06's primed runs use all of it)."""

    context: str | Sequence[str] = ""  # text before every method's whole input: one, or one per item
    context_column: str = "context"  # the score rows' column of per-item contexts
    configuration: dict = field(default_factory=dict)  # entries added to every score file's configuration
    extra_columns: Sequence[str] = ()  # more columns of the selection's frame kept in the score rows
    tag: str | None = None  # names the files of a kind of run apart: lp__primed.parquet
    whole_context: Sequence[str] | None = None  # a shard's whole run's per-item contexts (planned over, recorded)


def run_settings(scorer, settings: Settings | Mapping | None) -> Settings:
    """A run's settings: ``settings`` as given, or the scorer's with the changes of a mapping
    (``{"templates": [1]}``; an unknown name is an error listing the settings)."""
    if isinstance(settings, Settings):
        return settings
    if settings is not None and not isinstance(settings, Mapping):
        raise TypeError(f"settings must be a helpers.settings.Settings or a dict of setting name -> value, e.g. "
                        f"{{'templates': [1]}}, got {settings!r}")
    base = getattr(scorer, "settings", None) or Settings()
    return base.but(**settings) if settings else base


def run_methods(scorer: Scorer, selection: DatasetSelection, methods: Sequence[str] | str,
                settings: Settings | Mapping | None = None, *, setup: RunSetup | None = None,
                store: ScoreStore | None = None) -> list[Path]:
    """Score ``selection`` with every method and template; the score files of this
    configuration (found or written), in order.

    ``settings`` (a :class:`helpers.settings.Settings`, or changes to the scorer's own) carry the
    method settings to the families that read them (``helpers.methods.option_table()`` lists
    them): ``templates`` (Ide et al. template ids and Hu & Levy prompt types), ``instruct``
    (chat templates; default: the model's registry entry), ``seed`` (A/B slots),
    ``use_outlines`` (constrained decoding for A/B), ``fewshot`` (a
    :class:`helpers.methods.fewshot.FewShot`, or k: solved examples before each item; files
    tagged "<k>shot"), ``order_average`` (Hu & Levy's comparisons over the two answer orders:
    "accuracy", the paper's, or "logprob") and ``unigram_corpus`` (SLOR and BF-unigram).
    Every score file records the scorer's start-token convention, the few-shot k, source and
    seed, ``order_average`` (None where there are no orders) and ``unigram_source`` (None for
    methods without a unigram table) in its configuration, and the engine's ``share`` mode and
    ``token_budget`` beside it (a file of another share mode or budget is reused: they agree within
    float32 rounding). A method that needs a scorer feature this scorer lacks is an error before
    anything runs (:func:`helpers.methods.applicable` splits a list).
    """
    store, setup = store or ScoreStore(), setup or RunSetup()
    chosen = [registry.get(m) for m in registry.method_names(methods)]
    settings = run_settings(scorer, settings)
    refuse_unread(settings, chosen, registry.families())
    registry.refuse_not_applicable(chosen, scorer)  # a method needing what this scorer lacks: before any work
    unknown = warn_unsuited(scorer, selection)  # a language it was not trained on, words it cannot spell
    language, sides = selection.language, sides_of(selection.frame)
    runtime = Runtime(scorer, language, settings.but(progress=scorer.settings.progress), sides=sides)
    store_tag = runtime.fewshot.file_tag(setup.tag)
    items = selection.items()
    contexts, context_config = contexts_for(setup.context, len(items))
    plan_items, plan_contexts, positions = planned_items(selection, setup.context, items, contexts,
                                                         setup.whole_context)
    if positions is not None and not isinstance(setup.context, str):  # the whole run's contexts: its config hash
        context_config = contexts_for(plan_contexts, len(plan_contexts))[1]
    runtime.fewshot.check_planned(selection.shard, positions is None)
    reading = selection.shard is not None and not selection.shard.scored  # read from the shards' files
    info = info_frame(selection, setup.extra_columns, None if isinstance(setup.context, str) else contexts,
                      setup.context_column)
    loaded = scorer.loaded
    base = run_configuration(scorer, selection, runtime, context_config, setup.configuration)
    engine = engine_record(scorer, unknown)
    written: list[Path] = []
    unscored: dict[str, list[int]] = {}  # a run read from its shards: the shards of each file not scored yet
    for family, group in by_family(chosen).items():
        run = family.runtime_for(group, runtime)
        for template in family.templates(language, "chat" if run.instruct else "base", list(run.templates)):
            tconfig = family.template_config(template, run)
            configs = {m.name: {**base, "method": m.name, **tconfig, **m.config(run)} for m in group}
            found = {m.name: store.find_run(selection.name, loaded.name, m.name, tconfig["template_id"],
                                            configs[m.name], store_tag, selection.shard) for m in group}
            written.extend(p for paths in found.values() for p in paths)  # a file, or a run's shard files
            todo = [m for m in group if not found[m.name]]
            if reading:  # never scored
                unscored.update(unscored_shards(store, selection, loaded.name, todo, tconfig["template_id"],
                                                configs, store_tag))
                continue
            if not todo:
                continue
            this = run.for_methods(todo)
            table, _ = score_pass(scorer, family, plan_items, template, plan_contexts, this, positions)
            for m in todo:
                frame = method_frame(info, table, m, sides, this)
                written.append(store.write(frame, selection.name, loaded.name, m.name, tconfig["template_id"],
                                           configs[m.name], {**engine, "share_used": scorer.record()["share_used"]},
                                           tag=store_tag, shard=selection.shard))
    if unscored:
        raise MissingShardsError(missing_message(selection.name, loaded.name, selection.shard.count, unscored))
    return written
