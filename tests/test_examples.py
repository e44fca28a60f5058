"""make report: the plan covers 00-07 with parameters each notebook declares, pages render
their outputs, and the index links every page and names a failure."""
from __future__ import annotations

import os

import nbformat
import pytest

from helpers.sweep import examples


def test_the_plan_runs_00_to_07_on_one_model(tmp_path):
    pages = examples.plan("demo-en", out=tmp_path)
    assert [p.notebook.name[:2] for p in pages] == ["00", "01", "02", "03", "04", "05", "06", "06", "07", "08"]
    assert [p.parameters.get("model") for p in pages] == [
        "demo-en", None, "demo-en", ["demo-en", "tiny-gpt2", "tiny-llama"], "demo-en", "demo-en",
        ["demo-en", "tiny-gpt2"], "demo-en-icl", ["demo-en", "tiny-gpt2"], "demo-en"]  # 08: its revisions
    assert examples.plan("tiny-gpt2", ["03"], tmp_path)[0].parameters["model"] == ["tiny-gpt2", "tiny-llama"]
    assert [p.parameters["model"] for p in examples.plan("tiny-gpt2", ["06"], tmp_path)] == [["tiny-gpt2"],
                                                                                             "demo-en-icl"]
    teaching = pages[7]  # 06 on its teaching model, a page of its own beside the report model's
    assert teaching.page == tmp_path / "html" / "06_context_priming__demo-en-icl.html"
    assert teaching.executed == tmp_path / "notebooks" / "06_context_priming__demo-en-icl.ipynb"
    assert pages[6].page == tmp_path / "html" / "06_context_priming.html"
    assert pages[2].parameters == {"limit": 2, "model": "demo-en"}
    assert pages[0].page == tmp_path / "html" / "00_quickstart.html"
    assert [p.notebook.name[:2] for p in examples.plan("m", ["02", "00"], tmp_path)] == ["00", "02"]
    with pytest.raises(ValueError, match="--only 09: choose among 00, 01"):
        examples.plan("m", ["09"], tmp_path)


def test_a_parameter_the_notebook_lacks_is_refused(monkeypatch, tmp_path):
    monkeypatch.setattr(examples, "SMALL", [("02", {"pairs_per_paradigm": 3})])
    with pytest.raises(ValueError, match="02_readout.ipynb has no parameter pairs_per_paradigm"):
        examples.plan("demo-en", out=tmp_path)


def test_pages_render_outputs_and_the_index_links_them(tmp_path):
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# A title"),
            nbformat.v4.new_code_cell(
                "print(6 * 7)",
                execution_count=1,
                outputs=[nbformat.v4.new_output("stream", name="stdout", text="42 pairs right\n")],
            ),
        ]
    )
    executed = tmp_path / "nb.ipynb"
    nbformat.write(nb, executed)
    page = examples.render(executed, tmp_path / "html" / "nb.html")
    body = page.read_text()
    assert "A title" in body and "42 pairs right" in body and "print" in body
    pages = examples.plan("demo-en", ["00", "02"], tmp_path)
    pages[0].page.write_text("done")
    pages[0].seconds, pages[1].error = 12.3, "KeyError: 'lp'"
    index = examples.index_html(pages, "demo-en", 99)
    assert '<a href="html/00_quickstart.html">00_quickstart</a>' in index
    assert "02_readout</td>" in index and "failed: KeyError: &#x27;lp&#x27;" in index  # no page: no link
    assert "<td>12 s</td>" in index and "limit=2" in index and "99 s in all" in index


def test_environment_changes_are_restored_also_on_an_error(monkeypatch):
    from helpers import paths

    monkeypatch.setenv("HELPERS_OUTPUTS_DIR", "/before")
    monkeypatch.setenv("JPY_SESSION_NAME", "lab")
    with pytest.raises(RuntimeError):
        with paths.environment(HELPERS_OUTPUTS_DIR="/inside", JPY_SESSION_NAME=None):
            assert os.environ["HELPERS_OUTPUTS_DIR"] == "/inside" and "JPY_SESSION_NAME" not in os.environ
            raise RuntimeError("a failing notebook")
    assert os.environ["HELPERS_OUTPUTS_DIR"] == "/before" and os.environ["JPY_SESSION_NAME"] == "lab"
