"""Model cards for the demo models: data and licenses, the recipe of every training stage,
the loss curve, wall time, LP accuracy read from the score store, and what lower precisions
(bfloat16, 4-bit NF4, 8-bit) cost each method (``python -m helpers precision ... --card``,
:mod:`helpers.zoo.precision_card`).

    papermill notebooks/02_readout.ipynb outputs/notebooks/02_readout__demo-en__blimp_lp.ipynb \\
        -p model demo-en -p dataset blimp -p methods lp
    python -m helpers model-card --model demo-en --dataset blimp
"""
from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path

import pandas as pd

from .. import data
from .. import paths
from .. import store as results
from ..data.selection import first_per_paradigm
from ..files import write_text
from ..models import resolve
from ..engine.interface import Scorer
from ..runner import decide
from ..engine.kinds import scorer_for
from .demo_training import Recipe
from .precision_card import precision_text
from .priming_card import priming_text, record_priming
from ..settings import Settings

# The fixed sample a test pins the card to: the first 50 pairs of every agreement paradigm.
AGREEMENT = {"blimp": ["anaphor_agreement", "determiner_noun_agreement", "subject_verb_agreement"],
             "climp": ["anaphor_agreement", "classifier"]}
SAMPLE_PER_PARADIGM = 50


@dataclass(frozen=True)
class LPAccuracy:
    """LP accuracy over stored scores (ties are errors), overall and per phenomenon."""

    dataset: str
    accuracy: float
    pairs: int
    ties: int
    phenomena: pd.DataFrame  # phenomenon, accuracy (percent, one decimal), pairs
    score_files: list[str]


def lp_accuracy(scores: pd.DataFrame) -> LPAccuracy:
    """The LP rows of a score-store frame (``results.load_scores``) summarised."""
    rows = scores[scores["method"] == "lp"]
    if rows.empty:
        raise ValueError("no LP scores: run notebooks/02_readout.ipynb with methods lp first")
    if rows["dataset"].nunique() != 1:
        raise ValueError(f"LP scores of several datasets: {sorted(rows['dataset'].unique())}")
    phenomena = (rows.groupby("phenomenon", sort=False)
                 .agg(accuracy=("correct", "mean"), pairs=("correct", "size")).reset_index())
    phenomena["accuracy"] = (100 * phenomena["accuracy"]).round(1)
    return LPAccuracy(str(rows["dataset"].iloc[0]), float(rows["correct"].mean()), len(rows),
                      int(rows["tie"].sum()), phenomena, list(scores.attrs.get("score_files", [])))


def agreement_sample(dataset: str, per_paradigm: int = SAMPLE_PER_PARADIGM) -> pd.DataFrame:
    """The first ``per_paradigm`` pairs of every agreement paradigm of ``dataset``."""
    pairs = data.load(dataset)
    return first_per_paradigm(pairs[pairs.phenomenon.isin(AGREEMENT[dataset])], per_paradigm)


def sample_decisions(scorer: Scorer, dataset: str, per_paradigm: int = SAMPLE_PER_PARADIGM) -> pd.DataFrame:
    """The agreement sample with the LP of each side and the decision (a tie is an error)."""
    pairs = agreement_sample(dataset, per_paradigm)
    rows, _ = decide(scorer, pairs[["good", "bad"]].to_dict("records"), ["lp"],
                     language=data.DATASETS[dataset].language)  # LP's own decision, through the runner's door
    return pairs.assign(lp_good=rows.score_good.to_numpy(), lp_bad=rows.score_bad.to_numpy(),
                        correct=rows.correct.to_numpy(), tie=rows.tie.to_numpy())


def sample_accuracy(scorer: Scorer, dataset: str, per_paradigm: int = SAMPLE_PER_PARADIGM) -> float:
    """LP accuracy (ties are errors) on the fixed agreement sample."""
    return float(sample_decisions(scorer, dataset, per_paradigm)["correct"].mean())


def stage_commands(stages: list[dict], out: str) -> list[str]:
    """The train-demo command of each stage: options that differ from the Recipe defaults."""
    defaults = Recipe()
    lines = []
    for k, st in enumerate(stages, 1):
        r = st["recipe"]
        following = stages[k]["recipe"].get("init_from") if k < len(stages) else None  # where the next stage reads it
        folder = out if k == len(stages) else following or f"data/cache/{Path(out).name}-stage{k}"
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


def loss_table(stages: list[dict], rows: int = 16) -> pd.DataFrame:
    """About ``rows`` points of the loss curves of all stages, and the last point of each stage."""
    curve = pd.concat([pd.DataFrame(st["loss_curve"]).assign(stage=k) for k, st in enumerate(stages, 1)],
                      ignore_index=True)
    picked = pd.concat([curve.iloc[::max(1, len(curve) // rows)], curve.groupby("stage").tail(1)])
    picked = picked[~picked.index.duplicated()].sort_index()
    return picked[["stage", "step", "tokens", "loss", "minutes"]]


# What each demo model is for (the card's opening); others get demo-en's and demo-zh's text.
ROLES = {"demo-en-icl": "demo-en trained on further on long documents and on lists of sentences built on one "
                        "template each (below), so that it follows the structure of its context. It is the teaching "
                        "default of `notebooks/06_context_priming.ipynb`: it shows the in-context effect of Sinha et "
                        "al. (2023), which demo-en, trained on short unrelated documents, barely does."}
_DEFAULT_ROLE = ("It is the offline default of the notebooks, the model of the teaching demos, and the model the tests "
                 "use\nto assert scientifically meaningful numbers.")


def template_list_text(stages: list[dict]) -> str:
    """The card's account of the template lists of the stages that had them."""
    out = []
    for k, st in enumerate(stages, 1):
        counts = st.get("template_list_deviations") or {}
        if not counts:
            continue
        r = st["recipe"]
        table = pd.DataFrame({"list": list(counts), "lists": list(counts.values())})
        out.append(f"""
## Stage {k}: long documents and template lists

Consecutive corpus documents were joined into documents of about {r.get('document_chars')} characters (held-out
documents left out as before), and {r.get('template_lists'):,} documents of **template lists** were added
(`helpers/zoo/template_lists.py`): one or two lists of sentences, each list built on one plain sentence of the Brown
corpus (its function words kept, its nouns, verbs, adjectives, adverbs, names and numbers drawn anew from Brown words
of the same part-of-speech tag). Half of the lists keep one deviation in every sentence: a tag swapped for its
agreement or form partner (singular/plural noun, `is`/`are`, `this`/`these`, `himself`/`themselves`, 3rd-person
`-s`, past tense/participle, pronoun case), a word dropped, or two neighbours swapped. The first sentence of every
list gets no loss ({st.get('list_tokens_without_loss', 0):,} tokens), so the model learns to follow the structure
its context shows, never to expect a deviation from nothing. {st.get('training_documents', 0):,} documents in all.

{table.to_markdown(index=False)}
""")
    return "".join(out)


def card_text(model: str, folder: str, record: dict, accuracy: LPAccuracy) -> str:
    """The card of demo model ``model`` saved in ``folder`` (relative to the repository), from its
    training record (with the pinned sample's accuracy) and the LP accuracy of the score store."""
    r, sample, dataset = record["recipe"], record["sample_accuracy"], accuracy.dataset
    stages = record.get("previous_stages", []) + [record]
    corpora = pd.DataFrame(record["corpora"])[["name", "license", "documents", "characters"]]
    benchmark = "BLiMP" if r["language"] == "en" else "CLiMP"
    status = f"\n## Status\n\n{record['card_notes']}\n" if record.get("card_notes") else ""
    precision = f"\n{precision_text(record)}" if record.get("precision") else ""
    priming = f"\n{priming_text(record)}" if record.get("priming") else ""
    origin = ("trained by this project offline on the text corpora of the data mirror, the first stages from scratch"
              if any(st["recipe"].get("init_from") for st in stages) and model in ROLES
              else "trained from scratch offline on the text corpora of the data mirror")
    return f"""# {model}: a small {'English' if r['language'] == 'en' else 'Chinese'} language model trained by this project

A GPT-2-style causal LM ({record['parameters'] / 1e6:.2f}M parameters: {r['layers']} layers, width {r['width']},
{r['heads']} heads, {r['positions']} trained positions, byte-level BPE of {r['vocab_size']} tokens with the
document-start token `<|endoftext|>`), {origin}.
{ROLES.get(model, _DEFAULT_ROLE)} Weights are float16 safetensors; load it in float32 with
`helpers.models.load("{model}")`. **For research and teaching only**: some training corpora are licensed
for non-commercial or research use (below).

## Training data

{len(corpora)} corpora, {record['training_tokens']:,} training tokens ({record['heldout_tokens']:,} held out).
Benchmark sentences removed from the text before training: {record['removed_benchmark_sentences']}
(every {benchmark} sentence was checked; the WikiText-103 test split is never read).

{corpora.to_markdown(index=False)}

## Recipe (reproducible from seed {r['seed']}{f'; {len(stages)} stages, each continuing the one before' if len(stages) > 1 else ''})

```
{chr(10).join(stage_commands(stages, folder))}
```

{chr(10).join(_stage_text(k, st) for k, st in enumerate(stages, 1))}
Total wall time {sum(st['wall_minutes'] for st in stages):.1f} min. Held-out loss {record['heldout_loss']}.
{template_list_text(stages)}
Training loss (mean over the last 100 steps of each stage):

{loss_table(stages).to_markdown(index=False, floatfmt=(".0f", ".0f", ".0f", "g", ".1f"))}

## Accuracy, measured by `notebooks/02_readout.ipynb`

LP accuracy on {dataset.upper() if dataset == 'blimp' else dataset} ({accuracy.pairs:,} pairs, ties are errors): **{100 * accuracy.accuracy:.1f}%**
({accuracy.ties} ties). Per phenomenon:

{accuracy.phenomena.to_markdown(index=False, floatfmt=".1f")}

Fixed sample pinned by `tests/test_demo_models.py` (first {sample['pairs_per_paradigm']} pairs of every paradigm of
{', '.join(sample['phenomena'])}): LP accuracy {100 * sample['lp_accuracy']:.1f}%.
{priming}{precision}{status}"""


def write_card(model: str, dataset: str, scores_root: str | Path | None = None,
               per_paradigm: int = SAMPLE_PER_PARADIGM, priming: bool = False, outputs: str | Path | None = None) -> Path:
    """Write the model folder's README.md from its training.json and the LP scores in the store
    (and record both accuracies in training.json); the pinned sample takes the first
    ``per_paradigm`` pairs of every agreement paradigm. ``priming`` records 06's Figure 2 of the
    model (from ``outputs``) and its figure (:mod:`helpers.zoo.priming_card`)."""
    spec = resolve(model)
    folder = paths.ROOT / spec.hf_id
    record = json.loads((folder / "training.json").read_text())
    if priming:
        record["priming"] = record_priming(folder, spec.name, dataset, outputs)
    accuracy = lp_accuracy(results.load_scores(dataset, spec.name, ["lp"], root=scores_root))
    sample = sample_accuracy(scorer_for(model, Settings(progress=False)), dataset, per_paradigm)
    record["sample_accuracy"] = {"dataset": dataset, "phenomena": AGREEMENT[dataset],
                                 "pairs_per_paradigm": per_paradigm, "lp_accuracy": round(sample, 4)}
    record["lp_accuracy"] = {"dataset": dataset, "pairs": accuracy.pairs, "accuracy": round(accuracy.accuracy, 4),
                             "score_files": [Path(f).name for f in accuracy.score_files]}
    write_text(folder / "training.json", json.dumps(record, indent=1, ensure_ascii=False))
    return write_text(folder / "README.md", card_text(spec.name, spec.hf_id, record, accuracy))
