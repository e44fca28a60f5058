"""The settings as command-line options: one option per setting of the table, named as the notebooks'
parameter (``--token-budget`` or ``--token_budget``), with its values; ``score`` and the sweep take
every setting, the precision check all but the ones its precisions set."""
from __future__ import annotations

from . import AUTO, TABLE

PRECISION = [name for name in TABLE if name not in ("quant", "dtype", "templates")]  # its precisions set those


def setting_options(parser, names, default) -> None:
    """One option per setting of ``names``, with its values and what "auto" is from the table."""
    for name in names:
        values, auto, recorded = TABLE[name]
        flags = [f"--{name.replace('_', '-')}"] + ([f"--{name}"] if "_" in name else [])
        choices = None if isinstance(values, str) else [AUTO, *values]
        parser.add_argument(*flags, dest=name, default=default, choices=choices,
                            help=(f"'auto' or {values}; " if isinstance(values, str) else "")
                            + f"'auto': {auto}; recorded as {recorded}")
