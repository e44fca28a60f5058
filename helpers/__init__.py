"""Minimal-pair judgments with language models: the helper package the notebooks import.

The package is built in floors, named here once (``FLOORS``, ground floor first; each floor is
a list of the package's top-level modules and folders). A module imports from its own floor and
the floors below, never above; no two modules import each other, round any circle; and an
analysis never reaches the engine, the runner or the runs, directly or through another module,
except the engine's interface (``ENGINE_CONTRACT``: the requests methods build and the results
they read, which imports nothing of the engine). ``tests/test_architecture.py`` checks all of
it, transitively; ``docs/architecture.md`` says what each floor holds.

Nothing is imported here: ``import helpers`` loads no model library.
"""

FLOORS = (
    ("ground", ("paths", "files", "parquet_io", "progress", "provenance", "settings", "parameters")),
    ("data", ("data",)),
    ("models", ("models",)),
    ("engine", ("engine",)),
    ("methods", ("methods",)),
    ("store", ("store", "score_files", "store_format")),
    ("runner", ("runner",)),
    ("analysis", ("analysis",)),
    ("runs", ("runs",)),
    ("harness", ("harness",)),
    ("views", ("zoo", "plots", "explain", "reporting", "explore")),
    ("sweep", ("sweep",)),
    ("entry points", ("cli", "demo", "__main__", "__init__")),
)
NEVER = {"analysis": ("engine", "runner", "runs")}  # what a floor never reaches, even through others
ENGINE_CONTRACT = "helpers.engine.interface"  # the one engine module an analysis may reach (through methods)
