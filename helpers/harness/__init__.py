"""The engine inside lm-evaluation-harness: an lm-eval model named ``engine``
(:mod:`.model`), lm-eval's command line with it registered (:mod:`.command`), and offline
lm-eval tasks over the mirrored data (``tasks/``, :data:`TASKS_DIR`).

    python -m helpers lm-eval --model engine --model_args pretrained=smollm2-135m-instruct \\
        --tasks blimp_offline --limit 100 --output_path out --log_samples

From Python, ``import helpers.harness`` registers the model; then
``lm_eval.simple_evaluate(model="engine", model_args="pretrained=...", tasks=[...],
task_manager=lm_eval.tasks.TaskManager(include_path=str(helpers.harness.TASKS_DIR)))``.
lm-eval is an optional dependency (``pip install -e .[dev]`` or ``.[bench]``).
"""
from __future__ import annotations

from pathlib import Path

NAME = "engine"  # the model's name on lm-eval's command line (--model engine)
TASKS_DIR = Path(__file__).parent / "tasks"  # lm-eval task YAMLs over the mirrored datasets
MODEL_TARGET = "helpers.harness.model:EngineLM"


def register() -> None:
    """Register the ``engine`` model with lm-eval's model registry (once; lazily: lm-eval imports
    :mod:`.model` when a run asks for it), after lm-eval's own models: lm-eval fills an empty
    registry with them on first use, so registering into an empty one would hide them (``--model hf``)."""
    try:
        import lm_eval.models  # noqa: F401 (registers lm-eval's own models, lazily)
        from lm_eval.api.registry import model_registry
    except ImportError as err:
        raise ImportError("lm-eval is not installed: pip install -e '.[dev]' (or 'lm-eval>=0.4.13')") from err
    if NAME not in model_registry:
        model_registry.register(NAME, target=MODEL_TARGET)


register()
