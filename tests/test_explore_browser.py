"""The results explorer as a person uses it, in headless Chromium (tests/test_browser.py's driver):
served over HTTP, the overview sorted by a column, the paradigm table, a pair opened from it with
its tokens' surprisal bars; then opened from the disk (file://), and make report's snapshot.
Screenshots go to outputs/browser/explorer-*.png."""
from __future__ import annotations

import math
from urllib.parse import quote

import pandas as pd
import pytest

from explore_store import write_tiny_store
from test_browser import SHOTS, Page, browser  # noqa: F401 - the driver fixture
from test_explore import item_file
from helpers.explore import build
from helpers.explore.page import read_data
from helpers.explore.serve import in_background
from helpers.explore.snapshot import snapshot

pytestmark = pytest.mark.browser
LN2 = math.log(2)


def column_values(page: Page, table: str, key: str) -> list[float]:
    headers = [h.get_attribute("data-key") for h in page.all(f"#{table} thead th")]
    at = headers.index(key) + 1
    return [float(td.get_attribute("data-value")) for td in page.all(f"#{table} tbody td:nth-child({at})")]


def sort_by(page: Page, table: str, key: str, direction: str) -> list[float]:
    page.all(f'#{table} th[data-key="{key}"]')[0].click()
    page.wait(f"{table} sorted {direction}", lambda: page.all(f'#{table} th[data-key="{key}"][aria-sort="{direction}"]'))
    return column_values(page, table, key)


def test_the_explorer_in_headless_chromium(scratch, tiny, tmp_path, browser):
    root = tmp_path / "scores"
    write_tiny_store(root, tiny)
    explorer = build(root, tmp_path / "explore")
    data = read_data(explorer.index)
    lp = {(r.dataset, r.model, r.paradigm, r.pair_id): r for r in pd.concat(
        [pd.read_parquet(p).assign(model=p.parent.name) for p in sorted(root.glob("*/*/lp.parquet"))]).itertuples()}
    page = Page(browser)
    srv, url = in_background(explorer.index.parent)
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        browser.get(url)
        rows = page.wait("the overview table", lambda: page.all("#overview-table tbody tr"))
        assert len(rows) == len(data["overview"]) == 2 * 4 + 1  # blimp: 2 models x 4 methods; climp: lp
        shown = sorted(column_values(page, "overview-table", "accuracy_mean"))
        assert shown == sorted(r["accuracy_mean"] for r in data["overview"])  # every value, to the last bit
        down = sort_by(page, "overview-table", "accuracy_mean", "descending")
        assert down == sorted(down, reverse=True) and len(set(down)) > 1
        up = sort_by(page, "overview-table", "accuracy_mean", "ascending")
        assert up == sorted(up) == down[::-1]
        cell = page.all("#overview-table tbody tr:first-child td.num")[1].text  # "mean (%)", one decimal
        assert float(cell) == pytest.approx(100 * up[0], abs=0.05)
        page.wait("the accuracy figure", lambda: page.all(".figures img")[0].get_attribute("naturalWidth") not in
                  (None, "0"))  # the SVG loaded
        browser.save_screenshot(str(SHOTS / "explorer-overview.png"))

        page.all("#tab-paradigms")[0].click()
        rows = page.wait("the paradigm table", lambda: page.all("#paradigm-table tbody tr"))
        blimp = [r for r in data["paradigms"] if r["dataset"] == "blimp"]
        assert len(rows) == len({(r["model"], r["paradigm"]) for r in blimp}) == 2 * 3
        for method in ("lp", "yesno"):
            assert sorted(column_values(page, "paradigm-table", f"m:{method}")) == \
                sorted(r["accuracy_best"] for r in blimp if r["method"] == method)
        browser.save_screenshot(str(SHOTS / "explorer-paradigms.png"))
        row = page.all("#paradigm-table tbody tr")[0]
        paradigm, model = row.find_elements(page.by.CSS_SELECTOR, "td")[0].text, \
            row.find_elements(page.by.CSS_SELECTOR, "td")[2].text
        row.click()

        pairs = page.wait("the pairs of the paradigm", lambda: page.all("#pairs-table tbody tr"))
        assert len(pairs) == 2 and page.all("#item-paradigm")[0].get_attribute("value") == paradigm
        i = int(pairs[1].get_attribute("data-row"))
        pairs[1].click()
        page.wait("the item view's bars", lambda: page.all("#item-view svg.bars-tok-good rect.tok-good"))
        pair = item_file(explorer.index.parent, data["items"]["blimp"][model][paradigm])["pairs"][i]
        stored = lp[("blimp", model, paradigm, pair["id"])]
        good = page.text("#item-good")
        assert good == pair["good"] and page.text("#item-bad") == pair["bad"]
        labels = [e.text for e in page.all("#item-view text.tok-good-label")]
        assert "".join(labels).replace("␣", " ").replace(" ", "") == good.replace(" ", "")
        bits = [float(e.get_attribute("data-surprisal")) for e in page.all("#item-view rect.tok-good")]
        assert bits == [-x / LN2 for x in stored.token_lp_good]  # the bars are the stored log-probs in bits
        assert len(page.all("#decision-table tbody tr")) == 1 + 1 + 2 + 2  # lp, meanlp, intemplate_lp t1-2, yesno t1-2
        assert page.all("#pairs-table tbody tr.selected")[0].get_attribute("data-row") == str(i)
        assert page.all("#item-view svg.bars-word text.word-label")  # the words lined up, as in the quickstart
        page.all("#item-view")[0].screenshot(str(SHOTS / "explorer-item.png"))

        # from the disk, no server: the item files load by <script> tags
        climp = data["items"]["climp"]["tiny-gpt2"]
        name = next(iter(climp))
        browser.get(explorer.index.resolve().as_uri() + f"#items/climp/tiny-gpt2/{quote(name, safe='')}/0")
        page.wait("a CLiMP pair from file://", lambda: page.all("#item-view svg.bars-tok-bad rect.tok-bad"))
        labels = [e.text for e in page.all("#item-view text.tok-bad-label")]
        assert any(label.endswith(" 1/3") for label in labels)  # one character, three byte tokens
        browser.save_screenshot(str(SHOTS / "explorer-item-file.png"))
    finally:
        srv.shutdown()
        srv.server_close()
    shots = snapshot(explorer.index, tmp_path / "report", stem="snapshot")  # make report's screenshots
    for shot in [*shots, *(SHOTS / f"explorer-{n}.png" for n in ("overview", "paradigms", "item", "item-file"))]:
        assert shot.stat().st_size > 10_000, shot

