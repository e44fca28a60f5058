"""Plain LP over 2,000 BLiMP sentences with each share mode of the engine against the plain
forward + log-softmax loop (bench_scoring's floor and model): requests/s, tokens run, time
against the floor's. The fastest of 2 runs each. Nothing is compared with lm-eval here
(bench_scoring does that); this asks which sharing pays on short sentences.

    python benchmarks/bench_lp_modes.py
"""
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from helpers.settings import Settings, scorer_arguments  # noqa: E402
import torch  # noqa: E402

from bench_scoring import blimp_sentences, build_model, plain_loop, timed  # noqa: E402
from helpers.models import LoadedModel  # noqa: E402
from helpers.engine import Request, CausalScorer  # noqa: E402

MODES = {"none": dict(share="none"), "prefix (packed from 16)": dict(share="prefix"),
         "prefix, packed from 0": dict(share="prefix", pack_min_stem=0),
         "tree, cached": dict(share="tree", pack=True, pack_min_stem=10**6),
         "tree, packed from 16": dict(share="tree", pack_min_stem=16), "tree, packed from 0": dict(share="tree"),
         "default (auto)": dict()}


def main() -> None:
    torch.set_num_threads(2)
    texts = blimp_sentences(2000)
    model, tok = build_model()
    lm = LoadedModel.wrap(model, tok, name="bench-gpt2")
    requests = [Request("", t) for t in texts]
    plain_loop(model, tok, texts[:64])  # warm-up
    _, floor = timed(lambda: plain_loop(model, tok, texts), 2)
    print(f"floor {len(texts) / floor:.1f} req/s")
    for name, options in MODES.items():
        scorer = CausalScorer(lm, **scorer_arguments(options, Settings(progress=False)))
        scorer.score(requests[:64])  # warm-up
        before = scorer.tokens_run
        _, seconds = timed(lambda: scorer.score(requests), 2)
        ran = f"  (ran: {scorer.share_used})" if "share" not in options else ""
        print(f"{name:24s} {len(texts) / seconds:7.1f} req/s  tokens {(scorer.tokens_run - before) // 2:,}  "
              f"{seconds / floor:.2f}x the floor's time{ran}")


if __name__ == "__main__":
    main()
