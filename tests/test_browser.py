"""00_quickstart and 02_readout as a person sees them: JupyterLab on localhost (a token, a
temporary settings folder) driven by headless Chromium through selenium (Debian's chromium and
chromium-driver: `make system-deps`). All cells run from Lab's Run menu; a new pair is typed
into the quickstart's boxes (and an empty sentence and a wrong model name first: a message
appears, the boxes keep working); 02 runs on the tiny model with the parameters papermill would
inject. Screenshots go to outputs/browser/ (the failing page too, when a step times out); the
server is stopped whatever happens. The quickstart's figure is checked as seen: once the image is
decoded, in the same box two frames in a row and on top at its centre, the element's own screenshot
must show the decoded PNG, and the PNG must have drawing in each of its three panels (a figure drawn
half, as two redraws at once once left it, fails)."""
from __future__ import annotations

import base64
import io
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import numpy as np
import pytest
from PIL import Image
from papermill.iorw import load_notebook_node
from papermill.parameterize import parameterize_notebook

from helpers import paths

pytestmark = pytest.mark.browser

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
SHOTS = paths.outputs() / "browser"
CURRENT = ".jp-NotebookPanel:not(.lm-mod-hidden)"  # the notebook in the active tab
# Lab settings: every cell in the page (no virtual scrolling), no news or update pop-ups
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                         "checkForUpdates": False},
}
# Resolves with the image element, its box measured twice (one animation frame apart, after it is
# decoded and two frames painted), whether the two boxes are equal, whether the image is what the page
# shows at its box's centre, and any ancestor's CSS that could keep it from being painted. With
# ``repaint``, the image is first given a compositing layer of its own (or has it taken away), which
# makes the browser raster it anew: headless Chromium under load has left a replaced image's tiles
# white for 30 s while the DOM showed it decoded, on top and in view.
PAINTED = """
const [css, scroll, repaint, done] = arguments;
const img = document.querySelector(css);
if (!img) { done(null); return; }
if (scroll) img.scrollIntoView({block: "center"});
if (repaint) img.style.willChange = img.style.willChange ? "" : "transform";
const frame = () => new Promise(resolve => requestAnimationFrame(resolve));
const box = () => { const r = img.getBoundingClientRect(); return {x: r.x, y: r.y, width: r.width, height: r.height}; };
img.decode().then(frame).then(frame).then(() => {
  const first = box();
  return frame().then(() => {
    const r = box();
    const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
    const hidden = [];
    for (let e = img; e; e = e.parentElement) {
      const style = getComputedStyle(e);
      if (["auto", "hidden"].includes(style.contentVisibility) || style.visibility === "hidden"
          || style.display === "none") hidden.push(`${e.className}: ${style.contentVisibility}/${style.visibility}`);
    }
    done({element: img, ...r, stable: JSON.stringify(first) === JSON.stringify(r), centre: hit === img,
          hidden: hidden, dpr: window.devicePixelRatio, view: window.innerHeight, complete: img.complete,
          natural: img.naturalWidth, src: img.src});
  });
}).catch(err => done({error: String(err)}));
"""
PARAMS_02 = dict(model="tiny-gpt2", dataset="blimp", methods="lp,meanlp,intemplate_lp", templates=[1], limit=1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _shut_down_kernels(base: str, token: str) -> None:
    """Ask the server to shut down every kernel it runs (the server itself is ended after)."""
    try:
        with urllib.request.urlopen(f"{base}/api/kernels?token={token}", timeout=5) as r:
            kernels = json.loads(r.read())
        for kernel in kernels:
            request = urllib.request.Request(f"{base}/api/kernels/{kernel['id']}?token={token}", method="DELETE")
            urllib.request.urlopen(request, timeout=10).close()
    except OSError:
        pass  # the server is gone already: its kernels exit with it (they poll their parent)


@pytest.fixture
def lab(tmp_path):
    """A JupyterLab server on localhost serving copies of 00 and of 02 with the tiny model's
    parameters; yields (base url, token). At the end, whatever happened, its kernels are shut down
    and its process group is ended."""
    for tool in (CHROMIUM, CHROMEDRIVER):
        assert tool.is_file(), f"{tool} is missing: the browser test needs Debian's chromium and " \
                               "chromium-driver (run `make system-deps` or scripts/system_deps.sh)"
    root, settings = tmp_path / "root", tmp_path / "settings"
    root.mkdir()
    shutil.copy(paths.NOTEBOOKS / "00_quickstart.ipynb", root)
    nb02 = parameterize_notebook(load_notebook_node(str(paths.NOTEBOOKS / "02_readout.ipynb")), PARAMS_02)
    nbformat.write(nb02, root / "02_readout.ipynb")
    for name, values in LAB_SETTINGS.items():
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / name).write_text(json.dumps(values))
    token, port = secrets.token_hex(16), _free_port()
    env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(settings), JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "ws"),
               JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"), JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
               HELPERS_OUTPUTS_DIR=str(tmp_path / "outputs"), HELPERS_PROCESSED_DIR=str(tmp_path / "processed"))
    SHOTS.mkdir(parents=True, exist_ok=True)
    log = open(SHOTS / "jupyterlab.log", "w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", f"--port={port}",
         "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}"],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None, f"JupyterLab exited ({server.returncode}); see {SHOTS / 'jupyterlab.log'}"
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, "JupyterLab did not answer within 120 s"
            time.sleep(0.5)
        yield base, token
    finally:
        _shut_down_kernels(base, token)  # kernels run in sessions of their own: ask the server first
        try:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        except ProcessLookupError:
            pass
        log.close()


@pytest.fixture
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1400,1700"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()


class Page:
    """Waiting for things in the Lab page; a timeout saves the page as a screenshot."""

    def __init__(self, driver):
        from selenium.webdriver.common.by import By

        self.driver, self.by = driver, By

    def all(self, css: str):
        return self.driver.find_elements(self.by.CSS_SELECTOR, css)

    def text(self, css: str) -> str:
        return " ".join(e.text for e in self.all(css))

    def wait(self, what: str, condition, timeout: float = 120):
        from selenium.common.exceptions import StaleElementReferenceException

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                value = condition()
            except StaleElementReferenceException:
                value = None
            if value:
                return value
            time.sleep(0.25)
        shot = SHOTS / f"timeout-{what.replace(' ', '_')[:40]}.png"
        self.driver.save_screenshot(str(shot))
        raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what} (page saved as {shot})")

    def idle(self) -> bool:
        return "Idle" in self.text(".jp-StatusBar-TextItem")

    def open(self, base: str, token: str, name: str) -> None:
        """``name`` alone in a fresh workspace, its kernel started and idle."""
        self.driver.get(f"{base}/lab/workspaces/{Path(name).stem}/tree/{name}?token={token}&reset")

        def ready():
            tabs = [e.text for e in self.all(".lm-TabBar-tab.lm-mod-current .lm-TabBar-tabLabel")]
            return name in tabs and self.all(f"{CURRENT} .jp-CodeCell") and self.idle()

        self.wait(f"{name} open with an idle kernel", ready)

    def run_all(self) -> list[str]:
        """Run > Run All Cells, then wait until every code cell has run and the kernel is idle."""
        menu = self.wait("the Run menu", lambda: [e for e in self.all(".lm-MenuBar-itemLabel") if e.text == "Run"])
        menu[0].click()
        self.wait("Run All Cells", lambda: self.all(".lm-Menu-item[data-command='runmenu:run-all']"))[0].click()

        def done():
            prompts = [e.text.strip("[]: ") for e in self.all(f"{CURRENT} .jp-CodeCell .jp-InputPrompt")]
            return prompts if prompts and all(p.isdigit() for p in prompts) and self.idle() else None

        prompts = self.wait("every cell to run", done, timeout=300)
        page = self.text(CURRENT)
        assert "Traceback" not in page and "IProgress not found" not in page
        return prompts

    def type_into(self, css: str, text: str) -> None:
        from selenium.webdriver.common.keys import Keys

        box = self.wait(css, lambda: self.all(f"{css} input"))[0]
        box.click()
        box.send_keys(Keys.CONTROL, "a")
        box.send_keys(Keys.BACKSPACE)
        box.send_keys(text + Keys.ENTER)

    def figure(self) -> str | None:
        imgs = self.all(".qs-output img")
        return imgs[0].get_attribute("src") if imgs else None


def drawn(rgb: np.ndarray) -> np.ndarray:
    """Where an RGB image is not the white background."""
    return (rgb < 245).any(axis=2)


def check_figure_seen(driver, css: str, what: str, scroll: bool = True) -> np.ndarray:
    """The figure ``css`` as the page shows it, once decoded and painted (scrolled to the middle of
    the window, or where it is): it must be in view, on top at its centre, in the same box two
    frames in a row, and the element's own screenshot (one WebDriver call, which measures and
    captures together) must equal the decoded PNG and hold drawing in each of its three panels (top
    to bottom). Returns the screenshot. Up to 30 s of attempts, each finding the image anew: a rescore
    replaces the output, and late widgets move it."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException

    deadline, seen, decoded, attempts = time.monotonic() + 30, None, None, 0
    while True:
        attempts += 1
        box = driver.execute_async_script(PAINTED, css, scroll, seen is not None)  # a blank shot: raster it anew
        ready = (bool(box) and "error" not in box and box["complete"] and box["natural"] > 0 and box["stable"]
                 and box["centre"] and not box["hidden"])
        if ready:
            png = Image.open(io.BytesIO(base64.b64decode(box["src"].split(",", 1)[1])))
            decoded = np.asarray(Image.alpha_composite(Image.new("RGBA", png.size, "white"), png.convert("RGBA"))
                                 .convert("RGB")).astype(float)
            try:
                shot = Image.open(io.BytesIO(box["element"].screenshot_as_png)).convert("RGB")
            except (StaleElementReferenceException, WebDriverException):
                shot = None  # replaced between the measurement and the screenshot: find it again
            if shot is not None:
                seen = np.asarray(shot.resize(png.size)).astype(float)
                if drawn(seen).mean() > 0.05 and np.abs(seen - decoded).mean() < 8:
                    break
        if time.monotonic() > deadline:
            break
        time.sleep(0.25)
    with open(SHOTS / "figure_checks.log", "a") as log:  # how many attempts each check took (a repaint after 1)
        log.write(f"{time.strftime('%H:%M:%S')} {what}: {attempts} attempt(s)\n")
    assert box and "error" not in box, f"{what}: the figure image did not decode ({box and box.get('error')})"
    state = {k: v for k, v in box.items() if k not in ("element", "src")}
    assert box["complete"] and box["natural"] > 0, f"{what}: the figure image is not loaded: {state}"
    assert not box["hidden"], f"{what}: an ancestor keeps the figure from being painted: {box['hidden']}"
    assert box["stable"], f"{what}: the figure kept moving for 30 s: {state}"
    assert box["centre"], f"{what}: another element covers the figure's centre: {state}"
    assert 0 <= box["y"] and box["y"] + box["height"] <= box["view"], f"{what}: the figure is not all in view: {state}"
    assert seen is not None, f"{what}: the figure was replaced before every screenshot for 30 s"
    assert drawn(seen).mean() > 0.05, f"{what}: the figure's own screenshot is blank (waited 30 s): {state}"
    assert np.abs(seen - decoded).mean() < 8, f"{what}: the screenshot does not show the decoded figure"
    bands = [drawn(band).mean() for band in np.array_split(decoded, 3, axis=0)]
    if min(bands) <= 0.03:  # the kernel's PNG itself is drawn in part: keep it to look at
        Image.fromarray(decoded.astype(np.uint8)).save(SHOTS / f"half-{what.replace(' ', '_')[:40]}.png")
    assert min(bands) > 0.03, f"{what}: a panel of the figure is empty (share drawn per third: {bands})"
    return seen


def check_windowing(base: str, token: str) -> None:
    """JupyterLab runs with every cell in the page (windowing mode "none", from the test's settings
    folder), so no cell outside the viewport is left unpainted (content-visibility)."""
    url = f"{base}/lab/api/settings/@jupyterlab/notebook-extension:tracker?token={token}"
    with urllib.request.urlopen(url, timeout=10) as r:
        answer = json.loads(r.read())
    mode = answer["settings"].get("windowingMode")  # the user setting, which the Lab's own default yields to
    assert mode == "none" and not answer.get("warning"), \
        f"JupyterLab's notebook windowing mode is {mode!r}, not 'none' (the test's settings): {answer.get('warning')}"


def test_quickstart_and_readout_in_jupyterlab(lab, browser):
    base, token = lab
    check_windowing(base, token)
    page = Page(browser)

    page.open(base, token, "00_quickstart.ipynb")
    assert len(page.run_all()) == 7
    assert "A/B: P(its letter)" in page.text(CURRENT) and "smollm2-135m-instruct" in page.text(CURRENT)  # a real model's answers
    first = page.wait("the quickstart figure", page.figure)
    assert "demo-en-icl: the prefix flips the judgment" in page.text(".qs-note")  # the primed pair's section
    table = page.text(".qs-output table.qs-decisions")
    assert all(m in table for m in ("lp", "meanlp", "penlp", "intemplate_lp", "yesno"))
    assert "The cats annoys Tim." in page.text(".qs-output .qs-sums")
    assert page.all(".qs-paradigm-output img") and "pairs right" in page.text(".qs-paradigm-output .qs-accuracy")
    check_figure_seen(browser, ".qs-output img", "the first run's figure")
    check_figure_seen(browser, ".qs-paradigm-output img", "the paradigm browser's figure")

    # an empty sentence: a message, no figure; the boxes keep working
    page.type_into(".qs-good", "")
    page.wait("the empty-sentence message", lambda: "is empty" in page.text(".qs-output .qs-error"))
    assert page.figure() is None
    # an unknown model: a message naming the close registered names
    page.type_into(".qs-model", "demo-eng")
    page.wait("the unknown-model message", lambda: "Did you mean 'demo-en'" in page.text(".qs-output .qs-error"))
    page.type_into(".qs-model", "demo-en")
    page.type_into(".qs-good", "The dogs bark at night.")
    page.type_into(".qs-bad", "The dogs barks at night.")
    # the sums, the figure, then the decision table arrive as three outputs: wait for all three
    page.wait("the new pair's figure and table", lambda: "The dogs barks at night." in page.text(".qs-output .qs-sums")
              and page.figure() not in (None, first) and page.text(".qs-output table.qs-decisions"))
    new_table = page.text(".qs-output table.qs-decisions")
    assert new_table != table and "yesno" in new_table
    assert not page.all(".qs-output .qs-error")
    check_figure_seen(browser, ".qs-output img", "the new pair's figure")
    pair = page.all(".qs-pair")[0]
    browser.execute_script("arguments[0].scrollIntoView()", pair)
    check_figure_seen(browser, ".qs-output img", "the new pair's figure below its boxes", scroll=False)
    browser.save_screenshot(str(SHOTS / "00_quickstart.png"))
    pair.screenshot(str(SHOTS / "00_quickstart_widget.png"))

    page.open(base, token, "02_readout.ipynb")
    page.run_all()
    text = page.text(CURRENT)
    assert "accuracy (%)" in text and "tiny-gpt2" in text
    heatmap = page.wait("the phenomenon heatmap", lambda: page.all(f"{CURRENT} .jp-OutputArea-output img"))
    bars = page.all(f"{CURRENT} .jp-OutputArea-output .widget-hprogress")  # tqdm's bar: an ipywidgets FloatProgress
    assert bars, f"the model's loading bar is not a widget: {page.text(f'{CURRENT} .jp-OutputArea-output')[:800]}"
    tables = page.all(f"{CURRENT} .jp-OutputArea-output table")  # Table 3, then the heatmap below it
    browser.execute_script("arguments[0].scrollIntoView()", tables[0] if tables else heatmap[-1])
    browser.save_screenshot(str(SHOTS / "02_readout.png"))
    for name in ("00_quickstart.png", "00_quickstart_widget.png", "02_readout.png"):
        assert (SHOTS / name).stat().st_size > 10_000, name
