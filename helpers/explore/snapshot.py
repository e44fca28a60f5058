"""Screenshots of a built explorer in headless Chromium (selenium driving Debian's chromium and
chromium-driver, as tests/test_browser.py does), opened from the disk: the overview, and one
pair's item view. ``make report`` puts them in its index."""
from __future__ import annotations

import time
from pathlib import Path
from urllib.parse import quote

from .page import read_data

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")


class SnapshotUnavailable(RuntimeError):
    """No headless browser here (what is missing and how to get it)."""


def chromium(width: int = 1400, height: int = 1500):
    """A headless Chromium driver (quit it after use)."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        raise SnapshotUnavailable("selenium is not installed: pip install -e '.[dev]'") from None
    for tool in (CHROMIUM, CHROMEDRIVER):
        if not tool.is_file():
            raise SnapshotUnavailable(f"{tool} is missing: install Debian's chromium and chromium-driver "
                                      "(make system-deps)")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                f"--window-size={width},{height}"):
        options.add_argument(arg)
    from selenium.common.exceptions import WebDriverException

    try:
        return webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    except WebDriverException as err:
        raise SnapshotUnavailable(f"headless Chromium did not start ({str(err.msg or err).splitlines()[0]})") from None


def wait_for(driver, css: str, timeout: float = 60.0, poll: float = 0.2):
    """The elements matching ``css`` once there are some (looked for every ``poll`` seconds); a
    TimeoutError after ``timeout`` seconds."""
    from selenium.webdriver.common.by import By

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = driver.find_elements(By.CSS_SELECTOR, css)
        if found:
            return found
        time.sleep(poll)
    raise TimeoutError(f"the explorer showed no {css} within {timeout:.0f} s")


def first_item(index: Path) -> str:
    """The address (hash) of the first pair of the page's first dataset, model and paradigm."""
    items = read_data(index)["items"]
    dataset = next(iter(items))
    model = next(iter(items[dataset]))
    paradigm = next(iter(items[dataset][model]))
    return "items/" + "/".join(quote(part, safe="") for part in (dataset, model, paradigm)) + "/0"


def snapshot(index: str | Path, folder: str | Path, stem: str = "explorer") -> list[Path]:
    """``<stem>-overview.png`` and ``<stem>-item.png`` of the explorer at ``index`` in ``folder``."""
    index, folder = Path(index).resolve(), Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    driver = chromium()  # SnapshotUnavailable without selenium or Chromium
    from selenium.common.exceptions import WebDriverException

    try:
        driver.get(index.as_uri() + "#overview")
        wait_for(driver, "#overview-table tbody tr")
        shots = [folder / f"{stem}-overview.png", folder / f"{stem}-item.png"]
        driver.save_screenshot(str(shots[0]))
        driver.get(index.as_uri() + "#" + first_item(index))
        wait_for(driver, "#item-view .bars svg, #decision-table")
        driver.execute_script("document.getElementById('item-view').scrollIntoView()")
        driver.save_screenshot(str(shots[1]))
        return shots
    except WebDriverException as err:
        raise SnapshotUnavailable(f"the browser failed ({str(err.msg or err).splitlines()[0]})") from None
    finally:
        driver.quit()
