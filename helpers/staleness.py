"""When a score file is stale: computed under another numerics key (engine numerics version,
torch's and transformers' major.minor) than this process's, or from items of its dataset that
have changed since (:func:`changed_data`; :mod:`helpers.data.table_version`). A stale file of the asked
configuration is recomputed unless reuse is asked (``HELPERS_REUSE_STALE=1``); an analysis reads
it with a warning naming the reason."""
from __future__ import annotations

import os

from .data import DATASETS, processed_path
from .data.table_version import recorded
from .provenance import REUSE_STALE_ENV, describe_numerics, numerics


def changed_data(meta: dict) -> str | None:
    """Why a score file's items are not its dataset's processed table's any more (its
    ``data_sha256`` differs from the table's rows hash), naming the dataset; None when they are,
    or either is unknown."""
    scored, dataset = meta.get("data_sha256"), meta.get("dataset")
    if not scored or dataset not in DATASETS or not (path := processed_path(dataset)).is_file():
        return None
    now = recorded(path).get("rows_sha256")
    if now is None or now == scored:
        return None
    return (f"the items of {dataset} changed since they were scored ({path} rows sha256 {now[:12]}, the file's "
            f"{scored[:12]}): rerun notebook 01's preparation and the scoring notebooks")


def is_stale(meta: dict) -> bool:
    """Whether a score file was written under another numerics key than this process's, or its
    dataset's items changed since (:func:`changed_data`)."""
    return meta.get("numerics") != numerics() or changed_data(meta) is not None


def stale_reason(meta: dict) -> str:
    return changed_data(meta) or \
        f"computed under {describe_numerics(meta.get('numerics'))}; now {describe_numerics(numerics())}"


def reuse_stale_default() -> bool:
    return os.environ.get(REUSE_STALE_ENV, "").strip().lower() in ("1", "true", "yes")
