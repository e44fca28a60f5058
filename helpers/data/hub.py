"""Benchmarks published as Hugging Face Hub datasets (:mod:`hub_catalog` lists them).

What the project commits, and what is pinned only at first download: ``hub_catalog.HUB`` is
these datasets' manifest (repository, revision, licence, citation, split, columns, configs), as
``sources.ORIGINS`` is the GitHub files'. A project that cannot reach the Hub cannot record the
files' checksums in advance, so they are pinned at first download: ``download`` fetches the
files with ``huggingface_hub.snapshot_download`` at the pinned revision (MultiBLiMP's is known;
for the others none is, and the first download resolves the main branch to its
commit and records it) and writes ``hub-lock.yaml`` beside them (:mod:`hub_lock`: the revision
and every file's sha256 and size). Every later read checks every file against that lock, and a
lock of another revision than the pinned one is an error. Whoever downloads can commit the lock
with ``python -m helpers.data --hub-lock NAME`` (data/hub_locks/<name>.yaml): it then takes
precedence, pins the revision of later downloads, and every copy must match it.

Local copies are read from ``<mirror>/hub/<owner>__<name>/`` (read-only: it must hold its
lock), then ``data/raw/hub/<owner>__<name>/``, where downloads go. Offline (``HF_HUB_OFFLINE``,
or any network error) missing files are a DataNotFoundError that names the dataset, the folders
looked in, and the commands that fetch them on a machine that reaches the Hub.
"""
from __future__ import annotations

from pathlib import Path

from .. import paths
from . import hub_layout, hub_lock
from .hub_catalog import HubDataset, spec_of
from .sources import ChecksumError, DataNotFoundError, DataSource, resolve


def config_files(folder: Path, spec: HubDataset, configs: tuple[str, ...]) -> dict[str, list[Path]]:
    """config -> its data files in ``folder``, for the configs that have some there (a dataset
    whose configs are splits of one card config: :func:`hub_layout.named_split_globs`)."""
    declared = hub_layout.card_configs(folder / hub_layout.CARD)
    if spec.card_config:
        found = {c: hub_layout.matching_files(folder, hub_layout.named_split_globs(declared, spec.card_config, c))
                 for c in configs}
    else:
        found = {c: hub_layout.config_files(folder, declared, c, spec.split) for c in configs}
    return {c: files for c, files in found.items() if files}


def download_patterns(spec: HubDataset, declared: dict, config: str) -> list[str]:
    """What to fetch of ``config`` (a split of the card config: its globs,
    :func:`hub_layout.named_split_globs`)."""
    if spec.card_config:
        return hub_layout.named_split_globs(declared, spec.card_config, config)
    return hub_layout.download_patterns(declared, config)


def missing(name: str, configs: tuple[str, ...] | None = None, source: DataSource | None = None) -> list[str]:
    """The configs of ``configs`` (default: all) that no local copy has files for."""
    spec, source = spec_of(name), resolve(source)
    have: set[str] = set()
    for folder in spec.folders(source):
        if folder.is_dir():
            have |= set(config_files(folder, spec, configs or spec.configs))
    return [c for c in configs or spec.configs if c not in have]


def present(name: str, configs: tuple[str, ...] | None = None, source: DataSource | None = None) -> Path | None:
    """The local copy holding every config of ``configs`` (default: all), unchecked; None if none does."""
    spec, source = spec_of(name), resolve(source)
    configs = configs or spec.configs
    for folder in spec.folders(source):
        if folder.is_dir() and len(config_files(folder, spec, configs)) == len(configs):
            return folder
    return None


def find(name: str, configs: tuple[str, ...] | None = None,
         source: DataSource | None = None) -> dict[str, list[Path]]:
    """config -> its data files, from a local copy checked against its lock; in mode "download"
    a missing copy is downloaded first; else a DataNotFoundError that says how to get it."""
    spec, source = spec_of(name), resolve(source)
    configs = configs or spec.configs
    folder = present(name, configs, source)
    if folder is None and source.mode == "download":
        download(name, configs, source)
        folder = present(name, configs, source)
    if folder is None:
        raise DataNotFoundError(not_found(spec, configs, source))
    checked(spec, folder, writable=folder == spec.download_folder(source), configs=configs)
    return config_files(folder, spec, configs)


def checked(spec: HubDataset, folder: Path, writable: bool, configs: tuple[str, ...] = ()) -> dict | None:
    """The copy's lock after checking every file against it (and against a committed lock);
    files that ``hf download`` left without a lock are locked first, at the revision it recorded."""
    fix = f"Download it again: {command(spec, configs)}"
    local = hub_lock.read(folder / hub_lock.LOCK_NAME)
    committed_file = hub_lock.committed_path(spec.name)
    committed = hub_lock.read(committed_file)
    manifest = "the manifest (helpers/data/hub_catalog.py)"
    if committed is not None:
        hub_lock.check_revision(committed, committed_file, spec.revision, manifest,
                                "Delete the committed lock, or pin the manifest to its revision.")
    expected = spec.revision or (committed or {}).get("revision")
    why = manifest if spec.revision else str(committed_file)
    listed = set((local or {}).get("files", {})) | set((committed or {}).get("files", {}))
    unlisted = [f for f in hub_lock.copy_files(folder) if f not in listed]
    if unlisted:
        revision = hub_lock.recorded_revision(folder, unlisted)
        if revision is None or not writable:
            where = "and it is read-only here" if not writable else "and huggingface_hub recorded no revision for them"
            raise ChecksumError(f"{folder} holds files that no lock lists ({', '.join(unlisted[:3])}"
                                f"{', ...' if len(unlisted) > 3 else ''}) {where}. {fix}")
        hub_lock.check_revision({"revision": revision}, folder, expected, why, fix)
        local = hub_lock.write(folder, spec.repo_id, revision, previous=local)
    if local is not None:
        hub_lock.check_revision(local, folder / hub_lock.LOCK_NAME, expected, why, fix)
    hub_lock.verify(folder, local, committed, fix)
    return local


def download(name: str, configs: tuple[str, ...] | None = None, source: DataSource | None = None) -> Path:
    """Fetch ``configs`` (default: all) into data/raw/hub/<owner>__<name>/ at the pinned revision
    (else the committed lock's, the local lock's, or the main branch's commit) and lock them."""
    spec, source = spec_of(name), resolve(source)
    configs = configs or spec.configs
    folder = spec.download_folder(source)
    local = checked(spec, folder, writable=True, configs=configs) if folder.is_dir() else None
    if paths.hub_offline():
        raise DataNotFoundError(not_found(spec, configs, source, " HF_HUB_OFFLINE is set: no download."))
    from huggingface_hub import HfApi, snapshot_download

    def online(call, *args, **kwargs):  # any failure of the Hub's client (its transport differs by version)
        try:
            return call(*args, **kwargs)
        except Exception as err:  # noqa: BLE001
            first = str(err).splitlines()[0] if str(err) else ""
            raise DataNotFoundError(not_found(spec, configs, source, f" Downloading failed ({type(err).__name__}: "
                                                                     f"{first}).")) from None

    committed = hub_lock.read(hub_lock.committed_path(name))
    revision = (spec.revision or (committed or local or {}).get("revision")
                or online(lambda: HfApi().dataset_info(spec.repo_id).sha))
    fetch = dict(repo_id=spec.repo_id, repo_type="dataset", revision=revision, local_dir=folder)
    online(snapshot_download, **fetch, allow_patterns=[hub_layout.CARD])
    declared = hub_layout.card_configs(folder / hub_layout.CARD)
    patterns = [p for c in configs for p in download_patterns(spec, declared, c)]
    online(snapshot_download, **fetch, allow_patterns=[hub_layout.CARD, *patterns])
    hub_lock.write(folder, spec.repo_id, revision, previous=local)
    missing = sorted(set(configs) - set(config_files(folder, spec, configs)))
    if missing:
        raise DataNotFoundError(f"{spec.repo_id} at {revision} has no {spec.split} files for {', '.join(missing)} "
                                f"(looked in {folder} after downloading)")
    checked(spec, folder, writable=True, configs=configs)
    return folder


def command(spec: HubDataset, configs: tuple[str, ...] = ()) -> str:
    """The project's command that downloads ``configs`` of the dataset."""
    some = set(configs) != set(spec.configs) and configs
    option = f" --languages {','.join(configs)}" if some and spec.name == "multiblimp" else ""
    return f"python -m helpers.data --download {spec.name}{option}"


def not_found(spec: HubDataset, configs: tuple[str, ...], source: DataSource, why: str = "") -> str:
    """Which files are missing, where they were looked for, and both ways of fetching them."""
    target = spec.download_folder(source)
    pinned = spec.revision or (hub_lock.read(hub_lock.committed_path(spec.name)) or {}).get("revision")
    partial = set(configs) != set(spec.configs) and not spec.card_config  # a split has no folder to include
    includes = "".join(f' --include "{c}/*"' for c in configs) + f" --include {hub_layout.CARD}" if partial else ""
    plain = (f"hf download {spec.repo_id} --repo-type dataset" + (f" --revision {pinned}" if pinned else "")
             + f"{includes} --local-dir {target}")
    absent = missing(spec.name, configs, source) or list(configs)
    kind = spec.config_kind if len(absent) > 1 else spec.config_kind.removesuffix("s")
    what = f"{len(absent)} {kind} ({', '.join(absent[:5])}{', ...' if len(absent) > 5 else ''})"
    looked = " and ".join(str(f) for f in spec.folders(source))
    return (f"{spec.name} ({spec.repo_id} on the Hugging Face Hub) is not downloaded: no {spec.split} files of "
            f"{what} in {looked}.{why} To fix, on a machine that reaches the Hub run `{command(spec, configs)}`, or "
            f"`{plain}`; the files go to {target} (copy that folder here if you downloaded elsewhere).")


def commit_lock(name: str, source: DataSource | None = None) -> Path:
    """Copy the local copy's lock, checked, to data/hub_locks/<name>.yaml (joined with the one
    committed there, which must be of the same revision and agree on every file both list)."""
    spec, source = spec_of(name), resolve(source)
    folders = [f for f in spec.folders(source) if (f / hub_lock.LOCK_NAME).is_file()]
    if not folders:
        raise DataNotFoundError(f"no lock of {name} to commit: no {hub_lock.LOCK_NAME} in "
                                f"{' or '.join(map(str, spec.folders(source)))}. Download it first: {command(spec)}")
    local = checked(spec, folders[0], writable=folders[0] == spec.download_folder(source))
    target = hub_lock.committed_path(name)
    committed = (hub_lock.read(target) or {"files": {}})["files"]
    differ = sorted(f for f in set(committed) & set(local["files"]) if committed[f] != local["files"][f])
    if differ:
        raise ChecksumError(f"{folders[0] / hub_lock.LOCK_NAME} and {target} record other sums for "
                            f"{', '.join(differ)}: the copy is not the one committed; download it again into an "
                            "empty folder")
    return hub_lock.save(target, {"repo": spec.repo_id, "revision": local["revision"],
                                  "files": {**local["files"], **committed}})
