"""Which Hub datasets are here, and what notebook 01 (``make data``) builds from a selection:
"all" offline leaves out the Hub datasets that neither a release in the mirror nor a download
provides, saying how to get them; a Hub dataset named on its own must be there (its
DataNotFoundError says how)."""
from __future__ import annotations

from . import bhs, blimp_nl, dataset_names, hub, multiblimp, qfrblimp, turblimp
from .hub_catalog import HUB
from .multiblimp_languages import LANGUAGES, language_codes
from .sources import DataSource, resolve

# the Hub datasets whose GitHub release the readers also take: name -> its mirror folder
RELEASES = {"turblimp": turblimp.FOLDER, "blimp_nl": blimp_nl.FOLDER, "bhs": bhs.FOLDER,
            "qfrblimp": qfrblimp.FOLDER}


def hub_configs(name: str, options: dict) -> tuple[str, ...]:
    """The configs that reading ``name`` with ``options`` needs (MultiBLiMP: its ``languages``)."""
    if name == "multiblimp":
        return language_codes(options.get("languages", "all"))
    return HUB[name].configs


def hub_status(name: str, source: DataSource | None = None, **options) -> str:
    """"release in the mirror (<folder>)", "downloaded (<folder>)", "mirrored (...)" (MultiBLiMP's
    languages the mirror holds) or "not downloaded: run <command>" for Hub dataset ``name``."""
    configs, source = hub_configs(name, options), resolve(source)
    if name in RELEASES and source.has(RELEASES[name]):
        return f"release in the mirror ({RELEASES[name]})"
    folder = hub.present(name, configs, source)
    if folder is not None:
        return f"downloaded ({folder})"
    have = sorted(multiblimp.mirrored(tuple(LANGUAGES), source)) if name == "multiblimp" else []
    if have and set(configs) <= set(have):
        return f"mirrored ({multiblimp.MIRRORED_FOLDER}: {', '.join(configs)})"
    absent = hub.missing(name, configs, source)
    kind = HUB[name].config_kind
    listed = ", ".join(absent[:5]) + (", ..." if len(absent) > 5 else "")
    some = f" ({len(absent)} of the {len(configs)} {kind} missing: {listed})" if len(absent) < len(configs) else ""
    mirror = (f"; the mirror holds {', '.join(have)} ({multiblimp.MIRRORED_FOLDER}): multiblimp_languages="
              f"\"{','.join(have)}\" prepares those") if have else ""
    return (f"not downloaded{some}: run `{hub.command(HUB[name], configs)}` on a machine that reaches the "
            f"Hugging Face Hub{mirror}")


def available(status: str) -> bool:
    """Whether a status of :func:`hub_status` means the dataset can be read here."""
    return not status.startswith("not downloaded")


def prepare_plan(datasets, source: DataSource | None = None,
                 options: dict | None = None) -> tuple[list[str], dict[str, str]]:
    """The datasets to build from ``datasets`` ("all", names or a list), and each Hub dataset of
    the selection with its status; with "all", Hub datasets not here are left out (unless
    ``source`` downloads: then their readers fetch them)."""
    names, options = dataset_names(datasets), options or {}
    status = {n: hub_status(n, source, **options.get(n, {})) for n in names if n in HUB}
    everything = isinstance(datasets, str) and datasets.strip().lower() == "all" and resolve(source).mode != "download"
    skipped = {n for n, s in status.items() if everything and not available(s)}
    return [n for n in names if n not in skipped], status
