"""Whitespace at the context/target boundary: which requests it touches, and what scoring a
context's trailing spaces with the target changes (issue 29).

    python scripts/boundary_whitespace.py [--model demo-en] [--limit 20] [--out counts.csv]

Before the rule, the encoder scored only the tokens ending past the context, so where a
context's trailing space tokenized alone (a bare "Ġ" before "icing") its log-prob was
dropped; now a context's trailing spaces and tabs are scored with the target
(:func:`helpers.engine.encoding.target_start`; line breaks stay in the context, and
``separate`` requests keep their prompt's space token). Every request of each dataset and
method family below is scored once under the rule, and the old result is derived from it:
the target without its leading tokens that lie in the context's trailing spaces (those the
old rule left in the context; the context's log-probs gain them).

Per dataset and family (summed over templates): ``requests``; ``ends_in_space`` (context ends
in a space or tab, joint requests), ``ends_in_break`` (ends in a line break: untouched),
``separate`` (exempt); ``bare_before``: requests whose trailing spaces form a token of their
own that the old rule left unscored, and ``items_before``, the items with one;
``bare_after`` / ``items_after``: the same read off the current encoding (tokens of the
trailing spaces left in the context), 0 by the rule. Per method: ``scores_changed`` (items
with a score changed by more than 1e-9) and ``decisions_changed`` (pairs whose decision
flips; the target-only variant in brackets for in-template methods).

Hu & Levy's stimuli are run whole (every prompt type); Ide et al.'s methods on BLiMP with
``--limit`` pairs per paradigm (the demo's selection), zero-shot and with 4 examples.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers.settings import Settings  # noqa: E402

from helpers import methods as registry  # noqa: E402
from helpers.data.selection import select  # noqa: E402
from helpers.engine.encoding import LINE_BREAKS, target_start  # noqa: E402
from helpers.engine.interface import Scored  # noqa: E402
from helpers.engine.kinds import scorer_for  # noqa: E402
from helpers.methods.base import PassContext  # noqa: E402
from helpers.methods.fewshot import FewShot  # noqa: E402
from helpers.settings import Settings  # noqa: E402
from helpers.data.run_plan import INFO_COLUMNS, sides_of  # noqa: E402

HL_JUDGED = ["hl_sentence_judgment", "hl_sentence_comparison"]
IDE = ["yesno", "yesno_released", "ab_logit", "intemplate_lp", "intemplate_meanlp", "intemplate_penlp",
       "comparative_lp"]
FEWSHOT = ["intemplate_lp", "intemplate_meanlp", "intemplate_penlp", "yesno", "yesno_released"]


def runs(limit: int) -> list[tuple[str, str, int | None, list[str], dict]]:
    """(label, dataset, limit, methods, options) of every counted run."""
    return [("Hu & Levy", "hl_dtfit", None, ["hl_word_comparison"], {}),
            ("Hu & Levy", "hl_p18", None, ["hl_word_prediction"], {}),
            ("Hu & Levy", "hl_news", None, ["hl_word_prediction"], {}),
            ("Hu & Levy", "hl_blimp", None, HL_JUDGED, {}),
            ("Hu & Levy", "hl_syntaxgym", None, HL_JUDGED, {}),
            ("zero-shot", "blimp", limit, IDE, {}),
            ("4-shot", "blimp", limit, FEWSHOT, {"fewshot": FewShot(4, "other", 0)})]


def moved_tokens(request, scored: Scored) -> int:
    """How many leading target tokens lie in the context's trailing spaces (the old rule left
    them in the context)."""
    return sum(1 for _, end in scored.offsets if end <= len(request.context))


def as_old(scored: Scored, k: int) -> Scored:
    """The old rule's result: the first ``k`` target tokens moved back to the context."""
    if not k:
        return scored
    ctx = None if scored.context_logprobs is None else np.concatenate([scored.context_logprobs, scored.logprobs[:k]])
    ctx_offsets = None if scored.context_offsets is None else scored.context_offsets + scored.offsets[:k]
    return replace(scored, token_ids=scored.token_ids[k:], tokens=scored.tokens[k:], logprobs=scored.logprobs[k:],
                   logits=scored.logits[k:], offsets=scored.offsets[k:], context_logprobs=ctx,
                   context_offsets=ctx_offsets)


def left_in_context(encoded, request) -> int:
    """Tokens of the context's trailing spaces that the current encoding leaves unscored."""
    cut = target_start(request)
    return sum(1 for start, end in encoded.offsets[:encoded.first] if end > start and start >= cut)


def changed(old: pd.DataFrame, new: pd.DataFrame) -> tuple[int, int, int | None]:
    """(rows with a score changed, pairs whose decision flips, flips of the target-only variant)."""
    cols = [c for c in ("score_good", "score_bad", "score", "score_good_target", "score_bad_target", "score_target")
            if c in new]
    a, b = old[cols].to_numpy(float), new[cols].to_numpy(float)
    scores = int((np.abs(a - b) > 1e-9 * np.maximum(1.0, np.abs(a))).any(axis=1).sum())
    flips = int((old["correct"] != new["correct"]).sum()) if "correct" in new else 0
    target = int((old["correct_target"] != new["correct_target"]).sum()) if "correct_target" in new else None
    return scores, flips, target


def count_run(scorer, label, dataset, limit, names, options) -> tuple[list[dict], list[dict], dict]:
    selection = select(dataset, limit)
    items, sides = selection.items(), sides_of(selection.frame)
    chosen = [registry.get(n) for n in names]
    settings = Settings(progress=False, **{"templates": (1, 2, 3, 4, 5, "direct", "metaQuestionSimple", "metaInstruct",
                                                         "metaQuestionComplex"), **options})
    runtime = PassContext(scorer, selection.language, settings, sides=sides)
    info = selection.frame[[c for c in INFO_COLUMNS if c in selection.frame.columns]].reset_index(drop=True)
    contexts = [""] * len(items)
    family_rows, method_rows, detail = [], [], {}
    groups: dict = {}
    for m in chosen:
        groups.setdefault(m.family, []).append(m)
    for family, group in groups.items():
        run = family.runtime_for(group, runtime)
        for template in family.templates(selection.language, "base", list(run.templates)):
            states, per_item = family.pass_requests(items, template, contexts, run)
            flat = [r for reqs in per_item for r in reqs]
            scored = scorer.score(flat, with_context=family.with_context, desc=f"{family.name} {template.id}")
            moved = [moved_tokens(r, s) for r, s in zip(flat, scored)]
            after = [left_in_context(e, r) for e, r in zip(scorer.encode_many(flat), flat)]
            bounds = np.cumsum([0] + [len(reqs) for reqs in per_item])
            new_nested = [scored[bounds[i]:bounds[i + 1]] for i in range(len(items))]
            old_nested = [[as_old(s, k) for s, k in zip(new_nested[i], moved[bounds[i]:bounds[i + 1]])]
                          for i in range(len(items))]
            per_item_moved = [any(moved[bounds[i]:bounds[i + 1]]) for i in range(len(items))]
            per_item_after = [any(after[bounds[i]:bounds[i + 1]]) for i in range(len(items))]
            family_rows.append({
                "run": label, "dataset": dataset, "family": family.name, "template": template.id,
                "requests": len(flat),
                "ends_in_space": sum(not r.separate and target_start(r) < len(r.context) for r in flat),
                "ends_in_break": sum(not r.separate and r.context[-1:] in LINE_BREAKS for r in flat),
                "separate": sum(r.separate for r in flat),
                "bare_before": sum(k > 0 for k in moved), "items_before": sum(per_item_moved),
                "bare_after": sum(n > 0 for n in after), "items_after": sum(per_item_after)})
            new_table = family.table(items, template, contexts, new_nested, run, states)
            old_table = family.table(items, template, contexts, old_nested, run, states)
            for m in group:
                scores, flips, target = changed(m.frame(info, old_table, sides, run), m.frame(info, new_table, sides, run))
                method_rows.append({"run": label, "dataset": dataset, "method": m.name, "template": template.id,
                                    "items": len(items), "scores_changed": scores, "decisions_changed": flips,
                                    "target_decisions_changed": target})
            if dataset == "hl_dtfit":
                at = next((i for i, it in enumerate(items) if int(it["item_id"]) == 91), None)
                if at is not None:
                    detail[template.id] = [(r.target, round(o.total, 3), round(n.total, 3))
                                           for r, o, n in zip(per_item[at], old_nested[at], new_nested[at])]
    return family_rows, method_rows, detail


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="demo-en")
    parser.add_argument("--limit", type=int, default=20, help="BLiMP pairs per paradigm (the demo's 20)")
    parser.add_argument("--out", type=Path, help="write the per-template counts here (CSV; a second file *_methods)")
    args = parser.parse_args(argv)
    scorer = scorer_for(args.model, Settings(progress=False))
    families, methods, detail = [], [], {}
    for spec in runs(args.limit):
        f, m, d = count_run(scorer, *spec)
        families += f
        methods += m
        detail.update(d)
    families, methods = pd.DataFrame(families), pd.DataFrame(methods)
    keys = ["run", "dataset", "family"]
    by_family = families.groupby(keys, sort=False).sum(numeric_only=True).reset_index()
    by_method = methods.groupby(["run", "dataset", "method"], sort=False).agg(
        templates=("template", "size"), items=("items", "sum"), scores_changed=("scores_changed", "sum"),
        decisions_changed=("decisions_changed", "sum"),
        target_decisions_changed=("target_decisions_changed", lambda s: s.sum() if s.notna().any() else None),
    ).reset_index()
    pd.set_option("display.width", 200)
    print(f"model {args.model}; requests per dataset and family, summed over templates\n")
    print(by_family.to_string(index=False))
    print("\nitems x templates whose score / decision changes, per method\n")
    print(by_method.to_string(index=False))
    if detail:
        print("\nDTFit item 91 (old rule -> current rule), per prompt type: (target, old LP, new LP)")
        for template, rows in detail.items():
            print(f"  {template}: {rows}")
    if args.out:
        families.to_csv(args.out, index=False)
        methods.to_csv(args.out.with_name(args.out.stem + "_methods.csv"), index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
