"""The generic runner: any registered method over any dataset selection, into the store.

Methods of one family share one engine pass per template; finished score files of the same
configuration are found and skipped without touching the model. A priming ``context`` (one
text, or one per item) goes before every method's whole input. The runner knows no method
by name: what to score and how to reduce it is the family's and the method's business.
"""
from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from . import methods as registry
from .data.selection import DatasetSelection
from .fewshot import FewShot, as_fewshot
from .measures import UnigramTable, unigram_table
from .methods.base import METHODS_VERSION, Family, Method, Runtime
from .results import ScoreStore
from .scoring import Scorer
from .unigram_corpus import resolve_unigram_corpus

INFO_COLUMNS = ["dataset", "paradigm", "phenomenon", "field", "pair_id", "item_id", "word_shuffle",
                "lexically_identical", "attractor", "human_agreement", "identical", "rating_good", "rating_bad",
                "rating_diff", "prefix", "continuation", "good_continuation", "bad_continuation", "category",
                "good_human_score", "bad_human_score", "label", "suite", "item", "circuit"]


def contexts_for(context: str | Sequence[str], n: int) -> tuple[list[str], object]:
    """One context per item, and how the configuration records it (the text, or a hash of
    the per-item texts, which the score rows keep in their ``context`` column)."""
    if isinstance(context, str):
        return [context] * n, context
    contexts = [str(c) for c in context]
    if len(contexts) != n:
        raise ValueError(f"{len(contexts)} contexts for {n} items: give one context, or one per item")
    digest = hashlib.sha256("\x00".join(contexts).encode()).hexdigest()[:16]
    return contexts, {"per_item": True, "sha256": digest}


def sides_of(frame: pd.DataFrame) -> tuple[str, ...]:
    """The sentences an item holds: a pair (good, bad), or one sentence."""
    if {"good", "bad"} <= set(frame.columns):
        return ("good", "bad")
    if "sentence" in frame.columns:
        return ("sentence",)
    return ("item",)


def method_frame(info: pd.DataFrame, table: pd.DataFrame, method: Method, sides: tuple[str, ...],
                 runtime: Runtime | None = None) -> pd.DataFrame:
    """The score file of one method: item info, scores (and decision for pairs: good > bad, or
    the method's own ``decision`` credit), basis columns."""
    scored = method.family.score_sides(sides)
    if scored == ("good", "bad"):
        good = method.score(table, "good").to_numpy(float)
        bad = method.score(table, "bad").to_numpy(float)
        credit = method.decision(table, runtime) if method.decision is not None and runtime is not None else None
        correct = good > bad if credit is None else np.asarray(credit, dtype=float)
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


def unigram_for(tokenizer, language: str, corpus: str | Path | None = None) -> tuple[UnigramTable, str]:
    """The unigram table of ``tokenizer`` over ``corpus`` (None: the mirror's corpora of
    ``language``; a text file; a Hugging Face dataset name, streamed), and the source the score
    files record: "<kind>:<name>:<file>:<bytes>"."""
    found = resolve_unigram_corpus(corpus, language)
    return unigram_table(tokenizer, [found.path]), found.source


def planned_items(selection: DatasetSelection, context, items: list[dict], contexts: list[str]
                  ) -> tuple[list[dict], list[str], np.ndarray | None]:
    """The items a run's requests are planned over, their contexts, and where ``items`` are
    among them: a shard's whole run (when the context is one text for all), so that its
    batches, and so its scores bit for bit, are those of the unsharded run; else ``items``."""
    if selection.shard is None or selection.whole is None or not isinstance(context, str):
        return items, contexts, None
    whole = selection.whole.to_dict("records")
    return whole, [context] * len(whole), selection.shard.positions()


def _score_items(scorer: Scorer, per_item: list[list], positions: np.ndarray | None, family: Family,
                 label: str) -> list[list]:
    """Each item's scored requests: every item's, or only those of the items at ``positions``
    (scored as part of the whole plan)."""
    flat = [r for reqs in per_item for r in reqs]
    starts = np.cumsum([0] + [len(reqs) for reqs in per_item])
    chosen = range(len(per_item)) if positions is None else positions
    only = None if positions is None else [i for p in positions for i in range(starts[p], starts[p + 1])]
    results = scorer.score(flat, with_context=family.with_context, desc=label, only=only)
    scored, at = [], 0
    for p in chosen:
        n = len(per_item[p])
        scored.append(results[at:at + n])
        at += n
    return scored


def _groups(chosen: list[Method]) -> dict[Family, list[Method]]:
    groups: dict[Family, list[Method]] = {}
    for m in chosen:
        groups.setdefault(m.family, []).append(m)
    return groups


def run_methods(scorer: Scorer, selection: DatasetSelection, methods: Sequence[str] | str,
                templates: Sequence = (1, 2, 3, 4, 5), *, context: str | Sequence[str] = "",
                context_column: str = "context", configuration: dict | None = None,
                extra_columns: Sequence[str] = (), store_tag: str | None = None,
                store: ScoreStore | None = None, unigram_corpus: str | Path | None = None,
                instruct: bool | None = None, seed: int = 42, use_outlines: bool = True,
                fewshot: FewShot | int | None = None, order_average: str = "accuracy") -> list[Path]:
    """Score ``selection`` with every method and template; the score files of this
    configuration (found or written), in order.

    ``templates`` selects Ide et al. template ids (ints) and Hu & Levy prompt types (names;
    all when none is named). Prompt methods use chat templates for instruct models
    (``instruct`` defaults to the model's registry spec); A/B prompting draws the slot of the
    acceptable sentence with ``seed``; ``use_outlines`` runs constrained decoding for A/B.
    Per-item contexts are kept in the score rows (column ``context_column``);
    ``configuration`` adds entries to every score file's configuration (e.g. a prefix type),
    ``extra_columns`` keeps more columns of the selection's frame in the score rows, and
    ``store_tag`` names the files of a kind of run apart (``lp__primed.parquet``).
    ``fewshot`` (a :class:`helpers.fewshot.FewShot`, or k) puts k solved examples before each
    item of the methods that take them (in-template readouts, Yes/No; their files are tagged
    "<k>shot"); ``order_average`` decides Hu & Levy's comparisons over the two answer orders
    ("accuracy", the paper's, or "logprob").
    Every score file records the scorer's start-token convention, the few-shot k, source and
    seed, ``order_average`` (None where there are no orders) and ``unigram_source`` (None for
    methods without a unigram table).
    """
    store = store or ScoreStore()
    chosen = [registry.get(m) for m in registry.method_names(methods)]
    shots = as_fewshot(fewshot)
    if shots.k and any(not m.family.takes_fewshot for m in chosen):
        refused = sorted(m.name for m in chosen if not m.family.takes_fewshot)
        raise ValueError(f"few-shot examples (k={shots.k}) go before in-template readouts and Yes/No prompts only; "
                         f"run {', '.join(refused)} with fewshot=0 (or leave them out)")
    if shots.k:  # few-shot files are named apart: yesno__t1__4shot.parquet
        store_tag = f"{store_tag}-{shots.k}shot" if store_tag else f"{shots.k}shot"
    if order_average not in ("accuracy", "logprob"):
        raise ValueError(f"order_average must be 'accuracy' (average the two orders' accuracies, as Hu & Levy "
                         f"report) or 'logprob' (compare log-probs averaged over the orders), got {order_average!r}")
    loaded = scorer.loaded
    instruct = loaded.is_instruct if instruct is None else bool(instruct)
    language = selection.language
    items = selection.items()
    contexts, context_config = contexts_for(context, len(items))
    plan_items, plan_contexts, positions = planned_items(selection, context, items, contexts)
    if shots.k and selection.shard is not None and positions is None:
        raise ValueError(f"few-shot examples are drawn from the whole run's pairs, but shard {selection.shard.tag} "
                         "with one context per item is planned alone; run few-shot methods unsharded here")
    missing = [c for c in extra_columns if c not in selection.frame.columns]
    if missing:
        raise KeyError(f"extra columns {missing} are not in the {selection.name} selection's frame")
    keep = [c for c in INFO_COLUMNS if c in selection.frame.columns] + [c for c in extra_columns if c not in INFO_COLUMNS]
    info = selection.frame[keep].reset_index(drop=True)
    if not isinstance(context, str):
        info = info.assign(**{context_column: contexts})
    base = {**loaded.provenance(), "start_token": scorer.start_policy, "start_convention": scorer.start_convention,
            **selection.config(), "methods_version": METHODS_VERSION, "context": context_config,
            **shots.config(), "order_average": None, **(configuration or {})}
    sides = sides_of(selection.frame)
    runtime = Runtime(scorer, language, instruct, seed, None, use_outlines, scorer.progress, sides=sides,
                      fewshot=shots, order_average=order_average)
    unigram, unigram_source = None, None
    written: list[Path] = []
    for family, group in _groups(chosen).items():
        if any(m.needs_unigram for m in group) and unigram is None:
            unigram, unigram_source = unigram_for(scorer.tokenizer, language, unigram_corpus)
        for template in family.templates(language, "chat" if instruct else "base", list(templates)):
            tconfig = family.template_config(template, runtime)
            configs = {m.name: {**base, "method": m.name, **tconfig, **m.options,
                                "unigram_source": unigram_source if m.needs_unigram else None} for m in group}
            found = {m.name: store.find_run(selection.name, loaded.name, m.name, tconfig["template_id"],
                                            configs[m.name], store_tag, selection.shard) for m in group}
            written.extend(p for paths in found.values() for p in paths)  # a file, or a run's shard files
            todo = [m for m in group if not found[m.name]]
            if not todo:
                continue
            run = replace(runtime, unigram=unigram if any(m.needs_unigram for m in todo) else None)
            states, per_item = family.pass_requests(plan_items, template, plan_contexts, run)
            label = family.name if template is None else f"{family.name} {template.id}"
            scored = _score_items(scorer, per_item, positions, family, label)
            if positions is not None:
                states = [states[p] for p in positions]
            table = family.table(items, template, contexts, scored, run, states)
            for m in todo:
                frame = method_frame(info, table, m, sides, run)
                written.append(store.write(frame, selection.name, loaded.name, m.name, tconfig["template_id"],
                                           configs[m.name], tag=store_tag, shard=selection.shard))
    return written

