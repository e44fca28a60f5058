"""Compare the score store of a run before a redesign with one after it.

    python scripts/compare_stores.py OLD_OUTPUTS NEW_OUTPUTS
    python scripts/compare_stores.py OLD_OUTPUTS NEW_OUTPUTS --rename ab=ab_logit

Every score file of OLD_OUTPUTS/scores is matched with the file of the same dataset, model,
method, template and file name (its tags: few-shot k, primed kind, shard) in
NEW_OUTPUTS/scores, rows by (paradigm, pair_id). ``--rename OLD=NEW`` matches an old method with
a new name (the first redesign's ``ab=ab_logit``, which also compares the old
``correct_outlines`` with the new ``ab``). Scores
must agree within 1e-6 and decisions must be equal, except where the two sides differ by
less than 1e-5 (listed). Hu & Levy item tables (OLD_OUTPUTS/tables/03_hu_levy_items__*.csv)
are compared with the new Hu & Levy score files the same way. "Within 1e-6" is relative to
the score's size (|a - b| <= 1e-6 * max(1, |a|); for a Hu & Levy differential, the size of
the larger of the two sums it subtracts): sums of float32 log-probs computed along another
batching path differ at that level. The notebooks' tables (OLD_OUTPUTS/tables) must be the same
files: every CSV and markdown table byte for byte, every sidecar's configuration equal. Score
files whose configuration changed (so a store of the old code would recompute them) are listed
with the keys that differ. Exit status 1 on any failure.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from helpers.store import read_metadata  # noqa: E402

TOLERANCE, NEAR_TIE = 1e-6, 1e-5
# what identifies a row: the item, and for primed runs its prefix (type, length, draw or group)
KEY_COLUMNS = ["paradigm", "pair_id", "item_id", "suite", "item", "prefix_type", "target_length", "draw",
               "target_phenomenon", "source_phenomenon", "acceptability", "n_sentences"]
HL_TASKS = {"word_prediction": "hl_word_prediction", "word_comparison": "hl_word_comparison",
            "sentence_judgment": "hl_sentence_judgment", "sentence_comparison": "hl_sentence_comparison"}


def index(root: Path) -> dict[tuple, Path]:
    """(dataset, model, method, template, file name's tags) -> score file."""
    out = {}
    for path in sorted((root / "scores").glob("*/*/*.parquet")):
        meta = read_metadata(path)
        tags = path.stem.split("__")[1:]  # "t3", "4shot", "primed_grid", "shard1of4" ...
        key = (meta["dataset"], meta["model_name"], meta["method"], str(meta.get("template_id")), tuple(tags))
        if key in out:
            raise ValueError(f"two score files for {key}: {out[key]} and {path}")
        out[key] = path
    return out


# what a score file's metadata holds beside its configuration (when and how it ran)
NOT_CONFIGURATION = {"config_hash", "n_pairs", "accuracy", "library_versions", "numerics", "git_commit", "time",
                     "time_ns", "share", "share_used", "token_budget", "unknown_tokens", "shard", "head_path"}


def configuration_change(old: Path, new: Path) -> str:
    """"" where the two files' configurations (and so their hashes) are equal, else the keys
    that differ, with both values."""
    a, b = read_metadata(old), read_metadata(new)
    if a["config_hash"] == b["config_hash"]:
        return ""
    keys = sorted((set(a) | set(b)) - NOT_CONFIGURATION)
    return "; ".join(f"{k}: {a.get(k, '(none)')!r} -> {b.get(k, '(none)')!r}" for k in keys if a.get(k, '(none)') != b.get(k, '(none)'))


def compare_pairs(label: str, old: pd.DataFrame, new: pd.DataFrame, old_correct: str = "correct",
                  scores: bool = True) -> dict:
    key = [c for c in KEY_COLUMNS if c in old.columns and c in new.columns]
    merged = old.merge(new, on=key, suffixes=("_old", "_new"), validate="one_to_one")
    if len(merged) != len(old) or len(merged) != len(new):
        return {"file": label, "rows": len(merged), "ok": False, "note": f"rows {len(old)} old vs {len(new)} new"}
    worst = relative = 0.0
    sides = [s for s in ("score_good", "score_bad", "score") if s in old.columns and s in new.columns]
    if scores:
        for side in sides:
            a, b = merged[f"{side}_old"].to_numpy(float), merged[f"{side}_new"].to_numpy(float)
            worst, relative = max(worst, _abs(a, b)), max(relative, _rel(a, b))
    if "correct_new" not in merged:  # single items (a score each): no decision
        return {"file": label, "rows": len(merged), "max_abs_diff": worst, "max_rel_diff": relative,
                "decisions_changed": 0, "ok": relative <= TOLERANCE, "note": ""}
    oc = merged[old_correct if old_correct != "correct" else "correct_old"]
    # a decision, or a credit (the share of answer orders decided right): compared as numbers
    changed = merged[oc.astype(float).to_numpy() != merged["correct_new"].astype(float).to_numpy()]
    gap = (changed["score_good_new"] - changed["score_bad_new"]).abs()
    near = changed[gap < NEAR_TIE] if scores else changed.iloc[0:0]
    ok = relative <= TOLERANCE and len(changed) == len(near)
    note = "; ".join(f"{r.paradigm}#{r.pair_id} (near tie)" for r in near.itertuples())
    return {"file": label, "rows": len(merged), "max_abs_diff": worst, "max_rel_diff": relative,
            "decisions_changed": len(changed), "ok": ok, "note": note}


def _abs(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.nanmax(np.abs(a - b)))


def _rel(a: np.ndarray, b: np.ndarray, scale: np.ndarray | None = None) -> float:
    """Largest |a - b| / max(1, |scale|) (scale defaults to a)."""
    return float(np.nanmax(np.abs(a - b) / np.maximum(1.0, np.abs(a if scale is None else scale))))


def compare_hu_levy(old_root: Path, new_files: dict[tuple, Path], matched: set) -> list[dict]:
    """Old Hu & Levy item tables against the new score files (those compared are added to ``matched``)."""
    rows = []
    for csv in sorted((old_root / "tables").glob("03_hu_levy_items__*.csv")):
        _, model, stimuli, task = csv.stem.split("__")
        old = pd.read_csv(csv)
        method = HL_TASKS[task]
        key = "item_id" if "item_id" in old else "pair_id"
        for key, path in new_files.items():
            ds, m, meth, template, _ = key
            if (ds, m, meth) != (stimuli, model, method):
                continue
            matched.add(key)
            new = pd.read_parquet(path).set_index(key)
            o = old.set_index(key).reindex(new.index)
            if task == "sentence_judgment":
                if template == "direct":
                    pairs = [(o["direct_good"], new["score_good"]), (o["direct_bad"], new["score_bad"])]
                else:
                    pairs = [(o[f"{template}_yes_good"], new["lp_yes_good"]), (o[f"{template}_no_good"], new["lp_no_good"]),
                             (o[f"{template}_yes_bad"], new["lp_yes_bad"]), (o[f"{template}_no_bad"], new["lp_no_bad"])]
            else:
                diff = new["score"] if "score" in new else new["score_good"] - new["score_bad"]
                pairs = [(o[template], diff)]
            # a differential's rounding is that of the sums it subtracts: scale by the larger side
            scale = (np.maximum(new["score_good"].abs(), new["score_bad"].abs()).to_numpy(float)
                     if "score_good" in new else None)
            worst = max(_abs(a.to_numpy(float), b.to_numpy(float)) for a, b in pairs)
            relative = max(_rel(a.to_numpy(float), b.to_numpy(float), scale) for a, b in pairs)
            changed = 0
            if task != "word_prediction":  # the decision: the differential's sign
                old_diff = pairs[0][0] if task != "sentence_judgment" else None
                if old_diff is not None:
                    changed = int(((old_diff.to_numpy(float) > 0) != (pairs[0][1].to_numpy(float) > 0)).sum())
            rows.append({"file": f"{stimuli}/{model}/{method}__t{template}", "rows": len(new), "max_abs_diff": worst,
                         "max_rel_diff": relative, "decisions_changed": changed,
                         "ok": relative <= TOLERANCE and len(old) == len(new) and changed == 0, "note": ""})
    return rows


def compare_tables(old_root: Path, new_root: Path) -> tuple[int, list[str]]:
    """The notebooks' tables of both runs: how many were compared, and each difference (a table or
    markdown file not byte-identical, a sidecar whose configuration differs, a table on one side only)."""
    old = {p.relative_to(old_root): p for p in sorted((old_root / "tables").rglob("*")) if p.is_file()}
    new = {p.relative_to(new_root): p for p in sorted((new_root / "tables").rglob("*")) if p.is_file()}
    differences = [f"{name}: only in {'old' if name in old else 'new'}" for name in sorted(set(old) ^ set(new))]
    for name in sorted(set(old) & set(new)):
        if name.suffix == ".json":  # the sidecar: its configuration (its paths name the run's folders)
            same = json.loads(old[name].read_text())["config"] == json.loads(new[name].read_text())["config"]
        else:
            same = old[name].read_bytes() == new[name].read_bytes()
        if not same:
            differences.append(f"{name}: differs")
    return len(set(old) & set(new)), differences


def main(old_root: str, new_root: str, renames: dict[str, str] | None = None) -> int:
    old_files, new_files = index(Path(old_root)), index(Path(new_root))
    renames = renames or {}
    rows, matched = [], set()
    for (dataset, model, method, template, tags), path in old_files.items():
        old = pd.read_parquet(path)
        new_method = renames.get(method, method)
        new_tags = tuple(tag.replace(method, new_method) for tag in tags)
        target = (dataset, model, new_method, template, new_tags)
        label = f"{dataset}/{model}/{path.name}"
        matched.add(target)
        if target not in new_files:
            rows.append({"file": label, "ok": False, "note": f"no new file {target}"})
            continue
        rows.append(compare_pairs(label, old, pd.read_parquet(new_files[target])))
        rows[-1]["configuration"] = configuration_change(path, new_files[target])
        if method == "ab" and renames.get("ab") == "ab_logit" and "correct_outlines" in old:
            outlines = (dataset, model, "ab", template, tags)
            matched.add(outlines)
            if outlines not in new_files:
                rows.append({"file": label + " (outlines)", "ok": False, "note": "no new 'ab' file"})
                continue
            rows.append(compare_pairs(label + " outlines -> ab", old, pd.read_parquet(new_files[outlines]),
                                      old_correct="correct_outlines", scores=False))
    rows += compare_hu_levy(Path(old_root), new_files, matched)
    table = pd.DataFrame(rows)
    with pd.option_context("display.max_rows", None, "display.width", 200):
        print(table.to_string(index=False))
    failed = table[~table["ok"].astype(bool)]
    unmatched = set(new_files) - matched
    print(f"\n{len(table)} comparisons, {len(failed)} failed; largest score difference "
          f"{table['max_abs_diff'].max():.3g} (relative {table['max_rel_diff'].max():.3g}); "
          f"decisions changed: {int(table['decisions_changed'].fillna(0).sum())}; "
          f"new files without an old one: {len(unmatched)}")
    changed = table[table.get("configuration", pd.Series(dtype=str)).fillna("") != ""] \
        if "configuration" in table else table.iloc[0:0]
    print(f"score files whose configuration (and hash) changed: {len(changed)}")
    for row in changed.itertuples():
        print(f"  {row.file}: {row.configuration}")
    compared, differences = compare_tables(Path(old_root), Path(new_root))
    for line in differences:
        print(f"table {line}")
    print(f"{compared} table files compared (csv and md byte for byte, sidecars' configuration): "
          f"{len(differences)} differences")
    return 1 if len(failed) or unmatched or differences else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--rename", action="append", default=[], metavar="OLD=NEW",
                        help="an old method's new name (repeatable)")
    args = parser.parse_args()
    sys.exit(main(args.old, args.new, dict(r.split("=", 1) for r in args.rename)))
