"""What a reader of stored scores checks of their settings: each score file's values of the
settings that tell files apart (:data:`helpers.settings.STORED_AS` across a model's methods,
:data:`helpers.settings.SETTING_KEYS` within one method and template), and the errors that name
them when a store holds several without a choice (:func:`helpers.store.load_scores`)."""
from __future__ import annotations

from . import RECORDED_AS, SETTING_KEYS, STORED_AS


def stored_setting(meta: dict) -> tuple:
    """A score file's values of :data:`STORED_AS`."""
    return tuple(meta.get(key) for key in STORED_AS.values())


def mixed_settings(model: str, dataset: str, found: dict[tuple, set]) -> str:
    """The error of a store holding scores of ``model`` under several settings (``found``: the
    values of :data:`STORED_AS` -> the methods scored so) without a choice among them."""
    listed = "; ".join(", ".join(f"{k}={v}" for k, v in zip(STORED_AS, values)) + f" ({', '.join(sorted(methods))})"
                       for values, methods in sorted(found.items(), key=str))
    return (f"{model} on {dataset} has scores under {len(found)} settings ({listed}), and a table never mixes them: "
            "choose one with the notebook's quant, dtype, start and revision settings by their names (-p quant none), "
            "or load_scores(where=Settings(...).score_filter())")


def method_setting_values(meta: dict) -> dict:
    """A score file's values of the method-setting keys (:data:`SETTING_KEYS` but :data:`STORED_AS`,
    which :func:`mixed_settings` checks across a model's methods)."""
    return {key: meta.get(key) for key in SETTING_KEYS if key not in STORED_AS.values()}


def mixed_method_settings(model: str, dataset: str, method: str, templates, found: list[dict]) -> str:
    """The error of a store holding files of one (model, method) under several values of a setting
    in each of ``templates`` (``found``: each file's :func:`method_setting_values`), naming the
    settings that differ, their values, and how to choose one."""
    differ = [key for key in found[0] if len({repr(f[key]) for f in found}) > 1]
    listed = "; ".join(f"{SETTING_KEYS[key]} (recorded as {key}: "
                       f"{', '.join(sorted({repr(f[key]) for f in found}))})" for key in differ)
    names = [SETTING_KEYS[key] for key in differ if SETTING_KEYS[key] in RECORDED_AS]
    values = {key: sorted({repr(f[key]) for f in found})[0] for key in differ}
    example = (f"-p {names[0]} {values[RECORDED_AS[names[0]]]}" if names else "the setting by its name")
    where = ", ".join(f"{key!r}: {value}" for key, value in values.items())
    named = [str(t) for t in templates if t not in (None, "None")]
    where_templates = f" (template{'s' if len(named) > 1 else ''} {', '.join(named)})" if named else ""
    return (f"{model} on {dataset}: {method}{where_templates} has "
            f"score files under {len(found)} configurations that differ in {listed}, and a table never mixes "
            f"them: choose one with the reading notebook's setting of that name ({example}; 04, 05 and 08 take "
            "every setting by its name), or load_scores(where={" + where + "}), or move the files you do not "
            "want out of the store")


# the settings that change how scores are computed, never their values: stored scores are not told
# apart by them (a rerun under another value reuses the files), so a reader chooses nothing by them
UNSTORED = ("share", "token_budget", "batch_size")


class StoreConflictError(ValueError):
    """A store that cannot be read as asked: every conflict found (``problems``, one sentence each
    with one way to fix it), and the (model, method) pairs it holds files of (``present``), so a
    reader can also name what is missing in the same message. Shown without traceback frames."""

    def __init__(self, problems: list[str], present: set | None = None):
        self.problems, self.present = list(problems), set(present or ())
        super().__init__("\n".join(f"- {p}" for p in self.problems))

    def _render_traceback_(self) -> list[str]:  # IPython and papermill show the message alone
        return [f"{type(self).__name__}: the store cannot be read as asked:", str(self)]
