"""Where a benchmark published both as a GitHub release and as a Hub dataset is read from: the
release's files (the mirror's copy, else data/raw/; checksummed against data/sources.yaml) when
they are here, else a downloaded Hub copy (:mod:`hub`), else (``mode="download"``) the release
fetched from GitHub at its recorded commit, then the Hub. Both give the same canonical rows
(``tests/test_data_releases.py`` reads each release and a Hub copy written from it). Offline with
neither, the error names both ways of getting the files."""
from __future__ import annotations

from typing import Callable

import pandas as pd

from . import hub
from .hub_catalog import spec_of
from .sources import DataNotFoundError, DataSource, resolve


def read(name: str, folder: str, from_release: Callable[[DataSource], pd.DataFrame],
         from_hub: Callable[[DataSource], pd.DataFrame], source: DataSource | None = None) -> pd.DataFrame:
    """Hub dataset ``name`` from its release in ``folder`` (a mirror path) or from a Hub copy."""
    source = resolve(source)
    if source.has(folder):
        return from_release(source)
    if hub.present(name, None, source) is not None:
        return from_hub(source)
    if source.mode == "download":
        try:
            return from_release(source)
        except DataNotFoundError as from_github:
            try:
                return from_hub(source)
            except DataNotFoundError as from_the_hub:
                raise DataNotFoundError(f"{from_github} Nor from the Hub: {from_the_hub}") from None
    raise DataNotFoundError(f"{name}: its release files ({folder}) are in neither the mirror nor "
                            f"{source.raw_dir}, and no Hub copy is downloaded. To fix: point MINIMAL_PAIRS_DATA at a "
                            f"mirror that holds {folder} (data/sources.yaml lists its origin, "
                            f"{spec_of(name).citation.split(',')[0]}), read with DataSource.default(mode='download') "
                            f"to fetch it from GitHub, or: " + hub.not_found(spec_of(name), spec_of(name).configs, source))
