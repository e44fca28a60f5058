"""Models: the registry of short names, quantization, placement, loading and weight
fingerprints, and the tiny random test models (built offline in seconds).

The public names are importable from here: ``from helpers.models import load, REGISTRY``.
"""
from .loading import Loadable, LoadedModel, check_loadable, load
from .placement import check_placement, execution_device
from .quantization import QuantizationUnavailableError, default_dtype, quantization_config, quantization_probe
from .registry import DEFAULT_MODEL, REGISTRY, ModelNotFoundError, ModelSpec, registry_table, resolve

__all__ = ["DEFAULT_MODEL", "REGISTRY", "Loadable", "LoadedModel", "ModelNotFoundError", "ModelSpec", "QuantizationUnavailableError",
           "check_loadable", "check_placement", "default_dtype", "execution_device", "load", "quantization_config", "quantization_probe", "registry_table", "resolve"]
