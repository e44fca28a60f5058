"""Which Hub datasets are downloaded here, and what notebook 01 (``make data``) builds from a
selection: "all" offline leaves out the Hub datasets that are not downloaded, saying how to get
them; a Hub dataset named on its own must be there (its DataNotFoundError says how)."""
from __future__ import annotations

from . import dataset_names, hub
from .hub_catalog import HUB
from .multiblimp_languages import language_codes
from .sources import DataSource, resolve


def hub_configs(name: str, options: dict) -> tuple[str, ...]:
    """The configs that reading ``name`` with ``options`` needs (MultiBLiMP: its ``languages``)."""
    if name == "multiblimp":
        return language_codes(options.get("languages", "all"))
    return HUB[name].configs


def hub_status(name: str, source: DataSource | None = None, **options) -> str:
    """"downloaded (<folder>)" or "not downloaded: run <command>" for Hub dataset ``name``."""
    configs, source = hub_configs(name, options), resolve(source)
    folder = hub.present(name, configs, source)
    if folder is not None:
        return f"downloaded ({folder})"
    absent = hub.missing(name, configs, source)
    kind = HUB[name].config_kind
    listed = ", ".join(absent[:5]) + (", ..." if len(absent) > 5 else "")
    some = f" ({len(absent)} of the {len(configs)} {kind} missing: {listed})" if len(absent) < len(configs) else ""
    return (f"not downloaded{some}: run `{hub.command(HUB[name], configs)}` on a machine that reaches the "
            "Hugging Face Hub")


def prepare_plan(datasets, source: DataSource | None = None,
                 options: dict | None = None) -> tuple[list[str], dict[str, str]]:
    """The datasets to build from ``datasets`` ("all", names or a list), and each Hub dataset of
    the selection with its status; with "all", Hub datasets not downloaded are left out (unless
    ``source`` downloads: then their readers fetch them)."""
    names, options = dataset_names(datasets), options or {}
    status = {n: hub_status(n, source, **options.get(n, {})) for n in names if n in HUB}
    everything = isinstance(datasets, str) and datasets.strip().lower() == "all" and resolve(source).mode != "download"
    skipped = {n for n, s in status.items() if everything and not s.startswith("downloaded")}
    return [n for n in names if n not in skipped], status
