"""Model cards: every training stage rendered (with commands that rebuild it), and the stated
accuracies equal to the test's own recomputation on a small sample."""
from __future__ import annotations

import copy
import json
import shutil
from dataclasses import asdict, fields

import numpy as np
import pandas as pd
import pytest
from reference_lp import sentence_lps

from helpers import data, paths
from helpers.cli import parser
from helpers.data.selection import DatasetSelection, first_per_paradigm
from helpers.models import load
from helpers.store import ScoreStore
from helpers.runner import run_methods
from helpers.engine import CausalScorer
from helpers.zoo.demo_training import Recipe
from helpers.zoo.model_card import AGREEMENT, agreement_sample, card_text, lp_accuracy, write_card
from helpers.settings import Settings

CARD_KEYS = ("previous_stages", "sample_accuracy", "lp_accuracy", "card_notes")


def three_stage_record() -> dict:
    """demo-en's two-stage record with a made-up third stage continuing it."""
    record = json.loads((paths.MODELS / "demo-en" / "training.json").read_text())
    second = {k: v for k, v in record.items() if k not in CARD_KEYS}
    third = copy.deepcopy(second)
    third["recipe"].update(init_from="data/cache/demo-en-stage2", epochs=0.5, peak_lr=0.0005, autocast_bf16=False)
    third.update(steps=300, wall_minutes=7.5, heldout_loss=4.41,
                 loss_curve=[{"step": s, "tokens": s * 4096, "loss": 4.3 - s / 1e4, "minutes": s / 40}
                             for s in (100, 200, 300)])
    return {**third, "previous_stages": record["previous_stages"] + [second],
            "sample_accuracy": record["sample_accuracy"]}


def markdown_rows(text: str, after: str) -> pd.DataFrame:
    """The first markdown table after the line starting with ``after``."""
    lines = text[text.index(after):].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    table = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        table.append([cell.strip() for cell in line.strip("|").split("|")])
    return pd.DataFrame(table[2:], columns=table[0])


def test_card_renders_every_stage_with_commands_that_rebuild_it():
    record = three_stage_record()
    stages = record["previous_stages"] + [record]
    scores = pd.DataFrame({"method": "lp", "dataset": "blimp", "phenomenon": ["a", "a", "b"],
                           "correct": [True, False, True], "tie": [False, True, False]})
    text = card_text("demo-en", "data/models/demo-en", record, lp_accuracy(scores))

    for k, st in enumerate(stages, 1):
        line = next(line for line in text.splitlines() if line.startswith(f"- Stage {k}: "))
        assert f"{st['recipe']['epochs']} epoch(s), {st['steps']} steps of" in line
        assert f"{st['wall_minutes']} min on {st['machine']}; held-out loss after it {st['heldout_loss']}." in line
    assert "- Stage 4:" not in text and "3 stages, each continuing the one before" in text
    assert f"Total wall time {sum(st['wall_minutes'] for st in stages):.1f} min." in text

    commands = [line for line in text.splitlines() if line.startswith("python -m helpers train-demo ")]
    assert len(commands) == 3
    outs = []
    for command, st in zip(commands, stages):
        args = parser().parse_args(command.split()[3:])
        rebuilt = Recipe(**{f.name: getattr(args, f.name) for f in fields(Recipe)
                            if getattr(args, f.name, None) is not None})
        assert {**asdict(rebuilt), "corpora": []} == {**Recipe(**st["recipe"]).__dict__, "corpora": []}
        outs.append(args.out)
    assert outs == ["data/cache/demo-en-stage1", "data/cache/demo-en-stage2", "data/models/demo-en"]
    assert [st["recipe"].get("init_from", "") for st in stages] == [""] + outs[:2]  # each continues the one before

    losses = markdown_rows(text, "Training loss").astype({"stage": int, "step": int})
    assert sorted(losses.stage.unique()) == [1, 2, 3]
    for k, st in enumerate(stages, 1):  # the last point of every stage is shown
        assert ((losses.stage == k) & (losses.step == st["loss_curve"][-1]["step"])).any(), k
    assert list(zip(losses.stage, losses.step)) == sorted(zip(losses.stage, losses.step))
    for row in losses.itertuples():  # every row is a point of its stage's curve, written in full
        point = next(p for p in stages[row.stage - 1]["loss_curve"] if p["step"] == row.step)
        assert (int(row.tokens), float(row.loss), float(row.minutes)) == (point["tokens"], point["loss"],
                                                                         round(point["minutes"], 1))

    accuracy = markdown_rows(text, "LP accuracy on BLIMP")
    assert accuracy.to_dict("list") == {"phenomenon": ["a", "b"], "accuracy": ["50.0", "100.0"], "pairs": ["2", "1"]}
    assert "(3 pairs, ties are errors): **66.7%**\n(1 ties)" in text


def test_written_card_states_the_accuracies_of_an_independent_recomputation(tmp_path):
    """LP scores of the first 2 pairs of every BLiMP paradigm go through the runner into a
    store; the card written from it (and its pinned sample, 3 pairs per paradigm) states the
    accuracies the test's own LP computation gives."""
    folder = tmp_path / "demo-en"
    shutil.copytree(paths.MODELS / "demo-en", folder)
    with pytest.raises(ValueError, match="02_readout"):
        write_card(str(folder), "blimp", scores_root=tmp_path / "scores")
    pairs = first_per_paradigm(data.load("blimp"), 2)
    lm = load(str(folder))
    run_methods(CausalScorer(lm, Settings(progress=False)), DatasetSelection("blimp", pairs, {}, 2), ["lp"],
                store=ScoreStore(tmp_path / "scores"))
    text = write_card(str(folder), "blimp", scores_root=tmp_path / "scores", per_paradigm=3).read_text()

    sample = agreement_sample("blimp", 3)
    lps = sentence_lps(folder, list(pairs.good) + list(pairs.bad) + list(sample.good) + list(sample.bad))
    n, m = len(pairs), len(sample)
    margin, sample_margin = lps[:n] - lps[n:2 * n], lps[2 * n:2 * n + m] - lps[2 * n + m:]
    assert np.abs(np.r_[margin, sample_margin]).min() > 2e-4  # no decision that float32 rounding could flip
    expected = (pairs.assign(correct=margin > 0).groupby("phenomenon", sort=False)
                .agg(accuracy=("correct", "mean"), pairs=("correct", "size")).reset_index())
    stated = markdown_rows(text, "LP accuracy on BLIMP")
    assert list(stated.phenomenon) == list(expected.phenomenon)
    assert list(stated.accuracy) == [f"{100 * a:.1f}" for a in expected.accuracy]
    assert list(stated.pairs.astype(int)) == list(expected.pairs) and expected.pairs.sum() == n == 134
    accuracy, sample_accuracy = float(np.mean(margin > 0)), float(np.mean(sample_margin > 0))
    assert f"({n} pairs, ties are errors): **{100 * accuracy:.1f}%**\n(0 ties)" in text
    assert (f"first 3 pairs of every paradigm of\n{', '.join(AGREEMENT['blimp'])}): "
            f"LP accuracy {100 * sample_accuracy:.1f}%." in text)
    assert text.count("- Stage ") == 2

    record = json.loads((folder / "training.json").read_text())
    assert record["lp_accuracy"] == {"dataset": "blimp", "pairs": n, "accuracy": round(accuracy, 4),
                                     "score_files": ["lp.parquet"]}
    assert record["sample_accuracy"]["lp_accuracy"] == round(sample_accuracy, 4) and m == 48


def test_demo_en_icl_card_renders_its_template_lists_and_priming_from_its_record():
    """demo-en-icl's card, rendered from its training.json: the third stage's command rebuilds
    its recipe (template lists, the starting weights mixed back in), the lists' table is the
    record's, and the priming table is 06's Figure 2 rows at the longest prefix."""
    record = json.loads((paths.MODELS / "demo-en-icl" / "training.json").read_text())
    scores = pd.DataFrame({"method": "lp", "dataset": "blimp", "phenomenon": ["a"], "correct": [True], "tie": [False]})
    text = card_text("demo-en-icl", "data/models/demo-en-icl", record, lp_accuracy(scores))
    command = [line for line in text.splitlines() if line.startswith("python -m helpers train-demo ")][-1]
    args = parser().parse_args(command.split()[3:])
    assert (args.out, args.init_from, args.init_share, args.template_lists) == (
        "data/models/demo-en-icl", "data/models/demo-en", 0.25, record["recipe"]["template_lists"])
    lists = markdown_rows(text, "## Stage 3: long documents and template lists")
    assert dict(zip(lists.list, lists.lists.astype(int))) == record["template_list_deviations"]
    assert f"list gets no loss ({record['list_tokens_without_loss']:,} tokens)" in text
    primed = markdown_rows(text, "## In-context priming").set_index("prefix_type")
    rows = pd.DataFrame(record["priming"]["rows"])
    longest = rows[rows.target_length == rows.target_length.max()].set_index("prefix_type")
    for prefix_type, row in longest.iterrows():
        assert float(primed.loc[prefix_type, "change (points)"]) == round(100 * row.delta, 1)
    assert "![accuracy change by prefix type and length](priming.png)" in text
    assert (paths.MODELS / "demo-en-icl" / "priming.png").stat().st_size > 10_000
