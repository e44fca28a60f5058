"""Check the data mirror against data/sources.yaml, rewrite the manifest, or get a Hub dataset.

    python -m helpers.data          # check every file of the mirror and the papers folder against the manifest
    python -m helpers.data --write  # (maintainers) rewrite the manifest from the mirror and the papers folder
    python -m helpers.data --download multiblimp --languages rus,pol  # a Hub dataset, into data/raw/hub/
    python -m helpers.data --hub-lock multiblimp  # commit its lock: data/hub_locks/multiblimp.yaml
"""
from __future__ import annotations

import argparse
import sys

import yaml

from .. import paths
from ..files import write_text
from . import hub, papers
from .hub_catalog import HUB
from .multiblimp_languages import language_codes
from .sources import MANIFEST, ChecksumError, DataNotFoundError, DataSource, build, read_manifest

HEADER = ("# Data sources: origin, commit, license and sha256 of every file the readers use (files: the mirror;\n"
          "# papers: the papers folder). Written by `python -m helpers.data --write`; checked on every read,\n"
          "# and a file not listed here is an error.\n")


def _hub(args) -> int:
    if args.languages and args.download != "multiblimp":
        print("error: --languages selects MultiBLiMP's languages: use it with --download multiblimp", file=sys.stderr)
        return 2
    try:
        if args.hub_lock:
            print(f"wrote {hub.commit_lock(args.hub_lock)}")
            return 0
        configs = language_codes(args.languages) if args.languages else None
        folder = hub.download(args.download, configs)
    except ValueError as err:  # an unknown language code
        print(f"error: {err}", file=sys.stderr)
        return 2
    except (DataNotFoundError, ChecksumError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(f"{args.download}: downloaded and locked in {folder}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="rewrite data/sources.yaml from the mirror and papers folder")
    ap.add_argument("--download", choices=list(HUB), help="download a Hub dataset into data/raw/hub/ (needs the Hub)")
    ap.add_argument("--languages", help="with --download multiblimp: ISO 639-3 codes (rus,pol) or all (default)")
    ap.add_argument("--hub-lock", choices=list(HUB), help="copy a downloaded Hub dataset's lock to data/hub_locks/")
    args = ap.parse_args(argv)
    if args.download or args.hub_lock or args.languages:
        return _hub(args)
    source, folder = DataSource.default(), paths.papers()
    if folder is None:
        print(f"error: no papers folder at {paths.DEFAULT_PAPERS}: set {paths.PAPERS_ENV} to the folder of the "
              "papers' published numbers", file=sys.stderr)
        return 1
    try:
        if args.write:
            manifest = build(source.root()) | {"papers": papers.build(folder)}
            write_text(MANIFEST, HEADER + yaml.safe_dump(manifest, sort_keys=True, allow_unicode=True, width=120))
            read_manifest.cache_clear()
            print(f"wrote {MANIFEST}")
            return 0
        print(f"{source.check_all()} files match their checksums in {source.root()}")
        print(f"{papers.check_all(folder)} files match their checksums in {folder}")
    except (DataNotFoundError, ChecksumError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
