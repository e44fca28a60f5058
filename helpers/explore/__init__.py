"""The results explorer: one static page over the score store (``python -m helpers explore``,
``make explore``), comparing models x methods x datasets x paradigms in sortable tables and
figures, with an item view that shows a pair's sentences, every method's decision and the
per-token surprisal (the quickstart's bars) from the stored token log-probs: no model needed.

Why a static export, not panel or Voila: the page needs no running kernel, no server beyond
``python -m http.server`` (or none: it opens from the disk, e.g. inside ``make report``), no CDN
(it works offline: a small script of its own sorts and filters the tables, figures are
matplotlib SVGs), and nothing to install beyond what the project has. A store of 67,000 pairs
stays fast: the page holds the tables only; each (dataset, model, paradigm)'s items are one
script file loaded when the paradigm is opened (a ``<script>`` tag, which works from
``file://`` where ``fetch`` does not; about 1.7 MB for a BLiMP paradigm of 1,000 pairs with
demo-en's tokens: benchmarks/bench_explore.py).

Modules: ``tables`` (accuracy tables from the store), ``tokens`` (token texts and words from a
model's tokenizer), ``items`` (the per-paradigm item files), ``figures``, ``page`` (the HTML),
``build`` (all of it into one folder), ``serve`` (the folder over HTTP), ``snapshot`` (a
screenshot in headless Chromium, for ``make report``), ``command`` (the CLI subcommand).
"""
from .build import ExploreError, Explorer, build

__all__ = ["ExploreError", "Explorer", "build"]
