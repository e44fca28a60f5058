"""The main job on the offline default: data preparation and the readout notebook on the
project's own demo model over a BLiMP sample, executed notebooks and scores in outputs/."""
from __future__ import annotations

import time

from . import paths
from . import sweep
from .data import linking
from .reporting import headline
from .store import load_scores

DEMO_MODEL = "demo-en"
DEMO_DATASET = "blimp"
DEMO_LIMIT = 20  # pairs per paradigm: 1,340 BLiMP pairs, a few minutes on 2 CPU cores


def main() -> int:
    start = time.time()
    jobs = [sweep.Job(sweep.find_notebook("01"), sweep.NO_MODEL, sweep.NO_MODEL, {"datasets": "blimp,climp"}),
            sweep.Job(sweep.find_notebook("02"), DEMO_MODEL, DEMO_DATASET, {"limit": DEMO_LIMIT})]
    sweep.run(jobs)
    scores = load_scores(DEMO_DATASET, DEMO_MODEL, where={"limit": DEMO_LIMIT})
    head = headline.of(scores, "02_readout", DEMO_DATASET)
    print(f"\nAccuracy on BLiMP ({DEMO_LIMIT} pairs per paradigm) with {DEMO_MODEL} (02's headline):\n"
          f"{head.text()}\n{linking.describe(DEMO_DATASET)}")
    print(f"\nexecuted notebooks: {paths.outputs() / 'notebooks'}\nscores: {paths.scores()}\n"
          f"tables: {paths.outputs() / 'tables'}\nwall time {time.time() - start:.0f} s")
    return 0
