"""When a score file is stale: computed under another numerics key (engine numerics version,
torch's and transformers' major.minor) than this process's, or from items of its dataset that
have changed since (:func:`helpers.data.table_version.changed_data`). A stale file of the asked
configuration is recomputed unless reuse is asked (``HELPERS_REUSE_STALE=1``); an analysis reads
it with a warning naming the reason."""
from __future__ import annotations

import os

from .data.table_version import changed_data
from .provenance import REUSE_STALE_ENV, describe_numerics, numerics


def is_stale(meta: dict) -> bool:
    """Whether a score file was written under another numerics key than this process's, or its
    dataset's items changed since (:func:`helpers.data.table_version.changed_data`)."""
    return meta.get("numerics") != numerics() or changed_data(meta) is not None


def stale_reason(meta: dict) -> str:
    return changed_data(meta) or \
        f"computed under {describe_numerics(meta.get('numerics'))}; now {describe_numerics(numerics())}"


def reuse_stale_default() -> bool:
    return os.environ.get(REUSE_STALE_ENV, "").strip().lower() in ("1", "true", "yes")
