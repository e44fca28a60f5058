"""The generic runner: any registered method over any dataset selection, into the store.

The runner only loops: for each family of the chosen methods and each of its templates, it finds
the finished score files of the configuration (skipped without touching the model), or scores
the family's one engine pass (:meth:`helpers.methods.base.Family.score_pass`, which the
quickstart's ``judge`` uses too) and writes each method's file
(:meth:`helpers.methods.base.Method.frame`). What it scores comes worked out from the selection
(:func:`helpers.data.run_plan.plan_run`: the items, a shard's whole run to plan over, the
columns kept); a run that reads its shards' files scores nothing and names the shards not
scored yet. A :class:`RunSetup` adds what a kind of run puts around the methods: a priming
``context`` (one text, or one per item) before every method's whole input, configuration
entries, kept columns and a file tag. The runner knows no method by name and carries no
method's settings: the families read theirs from the run's settings.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from . import methods as registry
from .data.run_plan import plan_run
from .data.selection import DatasetSelection
from .data.shards import MissingShardsError, missing_message
from .engine.interface import Scorer
from .engine.suitability import warn_unsuited
from .methods.base import METHODS_VERSION, Family, Method, PassContext
from .methods.fewshot import as_fewshot
from .methods.setting_readers import refuse_unread
from .settings import Settings, method_setting
from .store import ScoreStore


def by_family(chosen: list[Method]) -> dict[Family, list[Method]]:
    """The chosen methods by family (each family's pass serves all of its methods)."""
    groups: dict[Family, list[Method]] = {}
    for m in chosen:
        groups.setdefault(m.family, []).append(m)
    return groups


def passes(chosen: list[Method], pass_context: PassContext, language: str) -> list[tuple]:
    """Every engine pass the chosen methods need, in order: (family, its methods, the pass context
    it runs with, template), one per template the family runs for ``language`` under the settings."""
    out = []
    for family, group in by_family(chosen).items():
        family_context = family.pass_context_for(group, pass_context)
        style = "chat" if family_context.instruct else "base"
        for template in family.templates(language, style, list(family_context.templates)):
            out.append((family, group, family_context, template))
    return out


def decide(scorer: Scorer, items: Sequence[Mapping], methods: Sequence[str], settings: Settings | Mapping | None = None,
           *, language: str, contexts: Sequence[str] | None = None, sides: tuple[str, ...] = ("good", "bad")
           ) -> tuple[pd.DataFrame, dict]:
    """Every method's decision on ``items`` (dicts with "good" and "bad", or ``sides``), each pass
    run as :func:`run_methods` runs it and each method's rows as its score file holds them, without
    writing a file (the quickstart's judge, the primed pair, the teaching panel, the model cards):
    rows (item, method, template, score_good, score_bad, correct, tie; or score for one side) and
    each pass's scored requests by (family name, template id). ``contexts``: a text before each
    item's whole input (a priming prefix)."""
    chosen = [registry.get(m) for m in registry.method_names(list(methods))]
    settings = run_settings(scorer, settings)
    registry.refuse_not_applicable(chosen, scorer)
    pass_context = PassContext(scorer, language, settings.but(progress=scorer.settings.progress), sides=tuple(sides))
    contexts = list(contexts) if contexts is not None else [""] * len(items)
    info = pd.DataFrame({"item": range(len(items))})
    frames, scored_by_pass = [], {}
    for family, group, family_context, template in passes(chosen, pass_context, language):
        table, scored = family.score_pass(scorer, list(items), template, contexts, family_context)
        scored_by_pass[(family.name, getattr(template, "id", None))] = scored
        for m in group:
            frame = m.frame(info, table, pass_context.sides, family_context)
            frames.append(frame.assign(method=m.name, template=getattr(template, "id", None)))
    return pd.concat(frames, ignore_index=True), scored_by_pass


@dataclass(frozen=True)
class RunSetup:
    """What a kind of run puts around the methods (06's primed runs use all of it)."""

    context: str | Sequence[str] = ""  # text before every method's whole input: one, or one per item
    context_column: str = "context"  # the score rows' column of per-item contexts
    configuration: dict = field(default_factory=dict)  # entries added to every score file's configuration
    extra_columns: Sequence[str] = ()  # more columns of the selection's frame kept in the score rows
    tag: str | None = None  # names the files of a kind of run apart: lp__primed.parquet
    whole_context: Sequence[str] | None = None  # a shard's whole run's per-item contexts (planned over, recorded)
    serves: Sequence[str] | None = None  # the method families it can serve (None: every one); others are refused
    serves_why: str = ""  # why the others cannot be served (the refusal says it)


def served(setup: RunSetup, methods: Sequence[str]) -> list[str]:
    """The methods of ``methods`` that ``setup`` can serve (every one where it serves all)."""
    return [m for m in methods if setup.serves is None or registry.get(m).family.name in setup.serves]


def refuse_unserved(setup: RunSetup, methods: Sequence[str]) -> None:
    """An error naming the methods of ``methods`` that ``setup`` cannot serve, and those it can."""
    names = registry.method_names(methods)
    refused = [m for m in names if m not in served(setup, names)]
    if refused:
        served_ones = served(setup, list(registry.METHODS))
        raise ValueError(f"{', '.join(refused)} cannot run on {setup.tag} ({setup.serves_why}): choose among "
                         f"{', '.join(served_ones)} (methods=\"{','.join(served_ones[:2])}\")")


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
    method settings to the families that read them (``helpers.methods.settings_table()`` lists
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
    refuse_unserved(setup, methods)
    settings = run_settings(scorer, settings)
    refuse_unread(settings, chosen, registry.METHODS.values())
    registry.refuse_not_applicable(chosen, scorer)  # a method needing what this scorer lacks: before any work
    unknown = warn_unsuited(scorer, selection)  # a language it was not trained on, words it cannot spell
    fewshot = as_fewshot(method_setting("fewshot", settings.fewshot))
    plan = plan_run(selection, setup.context, setup.context_column, setup.extra_columns, setup.whole_context,
                    "few-shot examples" if fewshot.k else None)
    pass_context = PassContext(scorer, plan.language, settings.but(progress=scorer.settings.progress), sides=plan.sides)
    record, model, tag = scorer.record(), scorer.name, fewshot.file_tag(setup.tag)
    # what every file of the run records (each adds its method and template); how the engine ran beside it
    base = {**scorer.provenance(), "start_token": record["start_token"],
            "start_convention": record["start_convention"], **scorer.settings.engine_configuration(),
            **plan.config, "methods_version": METHODS_VERSION,
            **fewshot.config(), "order_average": None, **setup.configuration}
    engine = {"share": record["share"], "token_budget": record["token_budget"], "head_path": record["head_path"],
              "unknown_tokens": unknown.meta() if unknown else None}
    written: list[list[Path]] = []  # per family and template, in order: the files found, then those written
    missing: dict[str, list[int]] = {}  # a run read from its shards: the shards of each file not scored yet
    work = []  # what is left to score: (family, template, its pass_context, each method's configuration, methods, files)
    for family, group, family_context, template in passes(chosen, pass_context, plan.language):
        tconfig = family.template_config(template, family_context)
        configs = {m.name: {**base, "method": m.name, **tconfig, **m.config(family_context, template)} for m in group}
        files, todo = [], []
        for m in group:  # a file, or a run's shard files; a run read from its shards' files: those missing
            stem, found, missing[stem] = store.finished(plan.name, model, m.name, tconfig["template_id"],
                                                        configs[m.name], tag, plan.shard)
            files.extend(found)
            todo += [] if found else [m]
        written.append(files)
        work += [(family, template, family_context.for_methods(todo), configs, todo, files)] if todo and plan.scores else []
    if missing := {stem: shards for stem, shards in missing.items() if shards}:
        raise MissingShardsError(missing_message(plan.name, model, plan.shard.count, missing))
    for family, template, family_context, configs, todo, files in work:  # a run read from its shards' files scores nothing
        table, _ = family.score_pass(scorer, plan.planned_items, template, plan.planned_contexts, family_context, plan.positions)
        share_used = scorer.record()["share_used"]
        files.extend(store.write(m.frame(plan.info, table, plan.sides, family_context), plan.name, model, m.name,
                                 configs[m.name]["template_id"], configs[m.name], {**engine, "share_used": share_used},
                                 tag=tag, shard=plan.shard) for m in todo)
    return [path for files in written for path in files]
