"""Model cards for the demo models: data and licenses, recipe, loss curve, wall time, and
accuracies measured by the project's own 02_readout notebook.

    papermill notebooks/02_readout.ipynb outputs/notebooks/02_readout__demo-en__blimp_lp.ipynb \\
        -p model demo-en -p dataset blimp -p methods lp
    python -m helpers model-card --model demo-en --dataset blimp
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from . import paths

# The fixed sample a test pins the card to: the first 50 pairs of every agreement paradigm.
AGREEMENT = {"blimp": ["anaphor_agreement", "determiner_noun_agreement", "subject_verb_agreement"],
             "climp": ["anaphor_agreement", "classifier"]}
SAMPLE_PER_PARADIGM = 50


def agreement_sample(dataset: str) -> pd.DataFrame:
    from . import data
    from .readout import select_pairs

    pairs = data.load(dataset)
    return select_pairs(pairs[pairs.phenomenon.isin(AGREEMENT[dataset])], SAMPLE_PER_PARADIGM)


def sample_accuracy(scorer, dataset: str) -> float:
    """LP accuracy (ties are errors) on the fixed agreement sample."""
    pairs = agreement_sample(dataset)
    scores = scorer.score_texts(list(pairs.good) + list(pairs.bad), desc="agreement sample")
    n = len(pairs)
    correct = [scores[i].total > scores[n + i].total for i in range(n)]
    return sum(correct) / n


def _table(df: pd.DataFrame) -> str:
    head = "| " + " | ".join(df.columns) + " |\n|" + "---|" * len(df.columns) + "\n"
    return head + "".join("| " + " | ".join(str(v) for v in row) + " |\n" for row in df.itertuples(index=False))


def stage_commands(stages: list[dict], out: str) -> list[str]:
    """The train-demo command of each stage: options that differ from the Recipe defaults."""
    from dataclasses import fields

    from .demo_lm import Recipe

    defaults = Recipe()
    lines = []
    for k, st in enumerate(stages, 1):
        r = st["recipe"]
        folder = out if k == len(stages) else f"data/cache/{Path(out).name}-stage{k}"
        opts = [f"--language {r['language']}", f"--out {folder}"]
        for f in fields(Recipe):
            value = r.get(f.name, getattr(defaults, f.name))
            if f.name in ("language", "corpora") or value == getattr(defaults, f.name):
                continue
            opts.append(f"--{f.name.replace('_', '-')}" + ("" if value is True else f" {value}"))
        lines.append("python -m helpers train-demo " + " ".join(opts))
    return lines


def _stage_text(k: int, st: dict) -> str:
    r = st["recipe"]
    start = f"continues from {r['init_from']}; " if r.get("init_from") else "from random initial weights; "
    return (f"- Stage {k}: {start}{r['epochs']} epoch(s), {st['steps']} steps of {r['short_batch']} x "
            f"{r['short_len']} tokens, every {r['long_every']}th step {r['long_batch']} x {r['long_len']} tokens "
            f"(so all {r['positions']} positions are trained); AdamW (betas 0.9, 0.95, weight decay "
            f"{r['weight_decay']}), peak learning rate {r['peak_lr']}, {r['warmup_steps']} warm-up steps, cosine "
            f"decay to {r['min_lr_ratio']} of the peak; gradient clipping 1.0; dropout {r['dropout']}; "
            f"{'bfloat16 autocast (float32 weights)' if r.get('autocast_bf16') else 'float32'}. "
            f"{st['wall_minutes']} min on {st['machine']}; held-out loss after it {st['heldout_loss']}.\n")


def write_card(model: str, dataset: str, tables_dir: Path | None = None) -> Path:
    """Write data/models/<model>/README.md from training.json and the notebook's tables."""
    from .models import resolve
    from .scoring import scorer_for

    spec = resolve(model)
    folder = paths.ROOT / spec.hf_id
    record = json.loads((folder / "training.json").read_text())
    tables_dir = tables_dir or paths.OUTPUTS / "tables"
    t3 = pd.read_csv(tables_dir / f"02_readout__{model}__{dataset}.csv")
    phen = pd.read_csv(tables_dir / f"02_readout_phenomena__{model}__{dataset}.csv")
    lp = t3[t3.method == "lp"].iloc[0]
    lp_phen = phen[phen.method == "lp"][["phenomenon", "accuracy", "pairs"]].copy()
    lp_phen["accuracy"] = (100 * lp_phen["accuracy"]).round(1)
    scorer = scorer_for(model, progress=False)
    sample = sample_accuracy(scorer, dataset)
    record["sample_accuracy"] = {"dataset": dataset, "phenomena": AGREEMENT[dataset],
                                 "pairs_per_paradigm": SAMPLE_PER_PARADIGM, "lp_accuracy": round(sample, 4)}
    record["lp_accuracy"] = {"dataset": dataset, "pairs": int(lp.pairs), "accuracy": round(float(lp.accuracy_mean), 4)}
    (folder / "training.json").write_text(json.dumps(record, indent=1, ensure_ascii=False))
    r = record["recipe"]
    stages = record.get("previous_stages", []) + [record]
    corpora = pd.DataFrame(record["corpora"])[["name", "license", "documents", "characters"]]
    curve = pd.concat([pd.DataFrame(st["loss_curve"]).assign(stage=k) for k, st in enumerate(stages, 1)])
    curve = pd.concat([curve.iloc[::max(1, len(curve) // 16)], curve.iloc[[-1]]]).drop_duplicates()
    text = f"""# {model}: a small {'English' if r['language'] == 'en' else 'Chinese'} language model trained by this project

A GPT-2-style causal LM ({record['parameters'] / 1e6:.2f}M parameters: {r['layers']} layers, width {r['width']},
{r['heads']} heads, {r['positions']} trained positions, byte-level BPE of {r['vocab_size']} tokens with the
document-start token `<|endoftext|>`), trained from scratch offline on the text corpora of the data mirror.
It is the offline default of the notebooks, the model of the teaching demos, and the model the tests use
to assert scientifically meaningful numbers. Weights are float16 safetensors; load it in float32 with
`helpers.models.load("{model}")`. **For research and teaching only**: some training corpora are licensed
for non-commercial or research use (below).

## Training data

{len(corpora)} corpora, {record['training_tokens']:,} training tokens ({record['heldout_tokens']:,} held out).
Benchmark sentences removed from the text before training: {record['removed_benchmark_sentences']}
(every {'BLiMP' if r['language'] == 'en' else 'CLiMP'} sentence was checked; the WikiText-103 test split is never read).

{_table(corpora)}
## Recipe (reproducible from seed {r['seed']}{f'; {len(stages)} stages, each continuing the one before' if len(stages) > 1 else ''})

```
{chr(10).join(stage_commands(stages, spec.hf_id))}
```

{chr(10).join(_stage_text(k, st) for k, st in enumerate(stages, 1))}
Total wall time {sum(st['wall_minutes'] for st in stages):.1f} min. Held-out loss {record['heldout_loss']}.

Training loss (mean over the last 100 steps of each stage):

{_table(curve[['stage', 'step', 'tokens', 'loss', 'minutes']])}
## Accuracy, measured by `notebooks/02_readout.ipynb`

LP accuracy on {dataset.upper() if dataset == 'blimp' else dataset} ({int(lp.pairs):,} pairs, ties are errors): **{100 * lp.accuracy_mean:.1f}%**
({int(lp.ties)} ties). Per phenomenon:

{_table(lp_phen)}
Fixed sample pinned by `tests/test_demo_models.py` (first {SAMPLE_PER_PARADIGM} pairs of every paradigm of
{', '.join(AGREEMENT[dataset])}): LP accuracy {100 * sample:.1f}%.
""" + (f"\n## Status\n\n{record['card_notes']}\n" if record.get("card_notes") else "")
    card = folder / "README.md"
    card.write_text(text)
    return card
