"""Run judgment methods over a pairs table and store their scores.

Methods that share a basis (the same engine requests) are scored once: LP, MeanLP, PenLP,
SLOR and the Bayes factors all come from one pass over the sentences; the three in-template
measures from one pass per template; Yes/No and its released-code variant from one pass per
prompt template. Finished files of the same configuration are skipped.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from . import methods as registry
from . import prompting
from .methods.base import METHODS_VERSION, Basis, Method
from .results import ScoreStore
from .scoring import Request, Scorer
from .templates import Template, ide_templates

PAIR_INFO = ["dataset", "paradigm", "phenomenon", "field", "pair_id"]
PAIR_EXTRAS = ["word_shuffle", "lexically_identical", "attractor", "human_agreement", "identical",
               "rating_good", "rating_bad", "rating_diff"]


def select_pairs(pairs: pd.DataFrame, limit: int | None) -> pd.DataFrame:
    """The first ``limit`` pairs of every paradigm (all pairs when limit is None)."""
    if limit is None:
        return pairs.reset_index(drop=True)
    if int(limit) < 1:
        raise ValueError(f"limit must be a positive number of pairs per paradigm or None, got {limit!r}")
    return pairs.groupby("paradigm", sort=False, group_keys=False).head(int(limit)).reset_index(drop=True)


def basis_requests(basis: Basis, template: Template | None, good: str, bad: str) -> tuple[Request, Request]:
    """The engine requests of one pair (good side, bad side) for a basis."""
    if basis.kind == "sentence":
        return Request("", good), Request("", bad)
    if basis.kind == "single":
        before, after = template.split("sentence")
        return Request(before, good + after), Request(before, bad + after)
    if basis.kind == "compar":
        before, after = template.split("sentence")
        if after.count("{other_sentence}") != 1:
            raise ValueError(f"comparative template {template.key} needs {{other_sentence}} after {{sentence}}")
        return (Request(before, good + after.replace("{other_sentence}", bad)),
                Request(before, bad + after.replace("{other_sentence}", good)))
    raise ValueError(f"unknown basis kind {basis.kind!r}")


def score_basis(scorer: Scorer, basis: Basis, pairs: pd.DataFrame, template: Template | None = None,
                unigram=None, instruct: bool = False, seed: int = 42, outlines_model=None) -> pd.DataFrame:
    """The basis table of ``pairs``: per pair and side, what the basis's methods reduce.

    Readouts: target and context log-prob sums and counts, token log-probs and ids.
    Prompts: see :func:`helpers.prompting.yesno_table` and :func:`helpers.prompting.ab_table`.
    """
    if basis.kind == "yesno":
        return prompting.yesno_table(scorer, pairs, template, instruct)
    if basis.kind == "ab":
        return prompting.ab_table(scorer, pairs, template, instruct, seed, outlines_model)
    reqs = [basis_requests(basis, template, g, b) for g, b in zip(pairs["good"], pairs["bad"])]
    requests = [r[0] for r in reqs] + [r[1] for r in reqs]
    label = basis.kind if template is None else f"{basis.kind} {template.id}"
    results = scorer.score(requests, with_context=basis.kind != "sentence", desc=label)
    n = len(pairs)
    table = {}
    for side, chunk, side_reqs in (("good", results[:n], requests[:n]), ("bad", results[n:], requests[n:])):
        table[f"tgt_sum_{side}"] = [s.total for s in chunk]
        table[f"n_tokens_{side}"] = [s.n_tokens for s in chunk]
        table[f"token_lp_{side}"] = [s.logprobs.astype(np.float64) for s in chunk]
        table[f"token_ids_{side}"] = [np.asarray(s.token_ids, dtype=np.int64) for s in chunk]
        if basis.kind != "sentence":
            table[f"ctx_sum_{side}"] = [float(np.sum(s.context_logprobs, dtype=np.float64)) for s in chunk]
            table[f"ctx_n_{side}"] = [len(s.context_logprobs) for s in chunk]
            table[f"input_{side}"] = [r.context + r.target for r in side_reqs]
        if unigram is not None:
            table[f"uni_sum_{side}"] = [float(unigram(s.token_ids).sum()) for s in chunk]
    out = pd.DataFrame(table)
    out["log_vocab"] = math.log(len(scorer.tokenizer))
    return out


def method_frame(pairs: pd.DataFrame, table: pd.DataFrame, method: Method) -> pd.DataFrame:
    """The score file of one method: pair info, scores, decision, tie, and the basis columns."""
    info = pairs[[c for c in PAIR_INFO + PAIR_EXTRAS if c in pairs.columns]].reset_index(drop=True)
    good, bad = method.score(table, "good").to_numpy(float), method.score(table, "bad").to_numpy(float)
    frame = info.assign(score_good=good, score_bad=bad, correct=good > bad, tie=good == bad)
    if "answer_outlines" in table:
        frame["correct_outlines"] = (table["answer_outlines"] == table["good_slot"]).to_numpy()
    if method.target_score is not None:
        tg, tb = method.target_score(table, "good").to_numpy(float), method.target_score(table, "bad").to_numpy(float)
        frame = frame.assign(score_good_target=tg, score_bad_target=tb, correct_target=tg > tb, tie_target=tg == tb)
    keep = [c for c in table.columns if not c.startswith("uni_sum") or method.needs_unigram]
    return pd.concat([frame, table[keep]], axis=1)


def model_config(scorer: Scorer, model_name: str) -> dict:
    model = scorer.model
    spec = getattr(model, "helpers_spec", None)
    return {"model_name": model_name, "model_id": spec.hf_id if spec else model.config._name_or_path,
            "revision": spec.revision if spec else None, "weights": getattr(model, "helpers_weights", None),
            "quant": getattr(model, "helpers_quant", None),
            "dtype": str(model.dtype).removeprefix("torch."), "start_token": scorer.start_policy}


def run_methods(scorer: Scorer, pairs: pd.DataFrame, methods: Sequence[str], templates: Sequence[int] = (1, 2, 3, 4, 5),
                *, model_name: str, dataset: str, dataset_options: dict | None = None, limit: int | None = None,
                store: ScoreStore | None = None, unigram=None, unigram_source: str = "", instruct: bool | None = None,
                seed: int = 42, use_outlines: bool = True) -> list[Path]:
    """Score ``pairs`` (already limited) with every method and template; returns the score
    files of this configuration (found or written).

    Finished files of the same configuration are skipped without touching the model.
    Prompt methods use the chat templates for instruct models (``instruct`` defaults to
    the model's registry spec) and the base templates otherwise; A/B prompting draws the
    slot of the acceptable sentence with ``seed`` and, with ``use_outlines``, stores the
    outlines constrained answer beside the logit decision.
    """
    store = store or ScoreStore()
    chosen = [registry.get(m) for m in methods]
    language = str(pairs["language"].iloc[0])
    if instruct is None:
        spec = getattr(scorer.model, "helpers_spec", None)
        instruct = bool(spec and spec.is_instruct)
    style = "chat" if instruct else "base"
    outlines_model = None
    base_config = {**model_config(scorer, model_name), "dataset": dataset, "dataset_options": dataset_options or {},
                   "limit": limit, "methods_version": METHODS_VERSION, "n_pairs": len(pairs)}
    written: list[Path] = []
    by_basis: dict[Basis, list[Method]] = {}
    for m in chosen:
        by_basis.setdefault(m.basis, []).append(m)
    for basis, group in by_basis.items():
        prompt = basis.kind in ("yesno", "ab")
        tmpl_list = (ide_templates(basis.template_method, language, style if prompt else "base")
                     if basis.template_method else [None])
        for template in tmpl_list:
            if template is not None and template.id not in templates:
                continue
            configs = {}
            for m in group:
                cfg = {**base_config, "method": m.name,
                       "template_id": template.id if template else None,
                       "template_text": template.text if template else None,
                       "unigram_source": unigram_source if m.needs_unigram else None}
                if prompt:
                    cfg.update(prompt_style=style, system=template.system, seed=seed if basis.kind == "ab" else None,
                               outlines=use_outlines if basis.kind == "ab" else None)
                configs[m.name] = cfg
            found = {m.name: store.find(dataset, model_name, m.name, configs[m.name]["template_id"], configs[m.name])
                     for m in group}
            written.extend(p for p in found.values() if p is not None)
            todo = [m for m in group if found[m.name] is None]
            if not todo:
                continue
            needs_uni = any(m.needs_unigram for m in todo)
            if basis.kind == "ab" and use_outlines and outlines_model is None:
                outlines_model = prompting.OutlinesAB(scorer.model, scorer.tokenizer)
            table = score_basis(scorer, basis, pairs, template, unigram if needs_uni else None, instruct, seed,
                                outlines_model if basis.kind == "ab" and use_outlines else None)
            for m in todo:
                frame = method_frame(pairs, table, m)
                written.append(store.write(frame, dataset, model_name, m.name, configs[m.name]["template_id"],
                                           configs[m.name]))
    return written


def unigram_for(tokenizer, language: str, corpus: str | Path | None = None):
    """The unigram table of ``tokenizer`` over the mirror's corpus of ``language`` (or a text
    file), and a description of its source for the score files' configuration."""
    from .data.corpora import corpus_text_file
    from .measures import unigram_table

    path = Path(corpus) if corpus else corpus_text_file(language)
    return unigram_table(tokenizer, [path]), f"{path.name}:{path.stat().st_size}"
