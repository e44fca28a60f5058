"""The explorer's page: ``index.html`` with the tables' data inline (a JSON script block that
``explorer.js`` renders), the stylesheet and script beside it. Nothing is fetched from the
network."""
from __future__ import annotations

import html
import json
import shutil
from pathlib import Path

ASSETS = ("explorer.css", "explorer.js")
HERE = Path(__file__).resolve().parent


def data_json(data: dict) -> str:
    """``data`` as JSON safe inside a ``<script>`` block (no ``</`` closes it early)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")


def read_data(index: str | Path) -> dict:
    """The data a built page holds (what its tables show), read back from its index.html."""
    text = Path(index).read_text(encoding="utf-8")
    start = text.index('<script id="explorer-data" type="application/json">')
    body = text[text.index(">", start) + 1:text.index("</script>", start)]
    return json.loads(body.replace("<\\/", "</"))


def page_html(data: dict) -> str:
    counts = data["counts"]
    summary = (f"{counts['files']:,} score files, {counts['pairs']:,} pairs scored ({counts['rows']:,} rows), "
               f"{len(data['datasets'])} dataset(s), {counts['models']} model(s), {counts['methods']} method(s)")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Results explorer: {html.escape(data['store'])}</title>
<link rel="stylesheet" href="explorer.css">
</head><body>
<header><h1>Results explorer</h1>
<p id="summary">{html.escape(summary)}</p>
<p>Store <code>{html.escape(data['store'])}</code>; built {html.escape(data['built'])} at commit
<code>{html.escape(str(data['commit']))}</code>. Accuracy: the share of pairs whose acceptable sentence
scores higher (a tie is an error; beside it the accuracy with a tie counted half, the expected accuracy,
and with every tie right). Surprisal in bits (&minus;log-prob / ln 2), as in 00_quickstart.</p>
</header>
<nav class="tabs" id="tabs"></nav>
<section class="tab" id="overview"></section>
<section class="tab" id="paradigms"></section>
<section class="tab" id="items"></section>
<h2>Notes</h2><ul class="notes" id="notes"></ul>
<noscript>The explorer's tables are drawn by its script: allow JavaScript for this page.</noscript>
<script id="explorer-data" type="application/json">{data_json(data)}</script>
<script src="explorer.js" charset="utf-8"></script>
</body></html>
"""


def write_page(out: Path, data: dict) -> Path:
    """index.html and its assets in ``out``."""
    for name in ASSETS:
        shutil.copyfile(HERE / name, out / name)
    index = out / "index.html"
    index.write_text(page_html(data), encoding="utf-8")
    return index
