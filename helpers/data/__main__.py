"""Check the data mirror against data/sources.yaml, or rewrite the manifest.

    python -m helpers.data          # check every file of the mirror against the manifest
    python -m helpers.data --write  # (maintainers) rewrite the manifest from the mirror
"""
from __future__ import annotations

import argparse

import yaml

from ..files import write_text
from .sources import MANIFEST, DataSource, build, read_manifest

HEADER = ("# Data sources: origin, commit, license and sha256 of every file the readers use.\n"
          "# Written by `python -m helpers.data --write`; checked on every read.\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="rewrite data/sources.yaml from the mirror")
    args = ap.parse_args(argv)
    source = DataSource.default()
    if args.write:
        write_text(MANIFEST, HEADER + yaml.safe_dump(build(source.root()), sort_keys=True, allow_unicode=True,
                                                     width=120))
        read_manifest.cache_clear()
        print(f"wrote {MANIFEST}")
        return 0
    print(f"{source.check_all()} files match their checksums in {source.root()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
