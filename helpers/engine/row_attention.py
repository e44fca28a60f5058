"""How packed rows attend, and which ways a model and device allow.

A packed row (a shared part and the branches that continue it) attends in one of three ways:

- "segments": segment by segment with SDPA (:mod:`.segment_attention`): no masked pair
  computed (a sliding layer's window applied by position); SDPA models. Preferred on the CPU; a
  candidate on CUDA.
- "flex": FlexAttention under a ``mask_mod`` built from the row's segments (:mod:`.flex_rows`):
  only the tiles with a seen pair computed; windows and soft-capping included. Preferred on
  CUDA, where it is compiled (with the compiler turned off it runs eagerly there, computing every
  pair, and comes after segments; on the CPU it runs eagerly and is asked for only).
- "dense": a 4D tree mask (every pair computed): the fallback wherever a model takes a custom mask.

Every way that works on the device is a candidate of ``share="auto"``, whose cost model
(:mod:`.cost_model`) weighs them; the preferred one runs an explicit ``share="prefix"`` or
``"tree"``. Each way but "dense" runs only where a start-up probe (two branches packed after a
stem, against each branch alone) passes.
"""
from __future__ import annotations

from . import flex_rows, model_checks

KINDS = ("segments", "flex", "dense")
SUFFIX = {"segments": "", "flex": ", flex attention", "dense": ", dense mask"}  # of a share mode's name
_DEFAULTS = {"cpu": ("segments", "dense"), "cuda": ("flex", "segments", "dense")}


def defaults(device) -> tuple[str, ...]:
    """The ways packed rows may attend on ``device``, preferred first (module docstring)."""
    if device.type != "cuda":
        return _DEFAULTS["cpu"]
    return _DEFAULTS["cuda"] if flex_rows.compiles(device) else ("segments", "flex", "dense")


def usable(body, pack: str | None, first_id: int, device, asked: str | None) -> list[str]:
    """The ways packed rows may attend for ``share="auto"`` to choose from, preferred first:
    ``asked`` alone when given, else the device's defaults whose probes pass; empty where
    nothing packs (``pack`` None: the model takes no custom mask)."""
    if asked is not None and asked not in KINDS:
        raise ValueError(f"attention must be one of {KINDS} (or None: the device's default), got {asked!r}")
    if pack is None:
        return []
    wanted = (asked,) if asked is not None else defaults(device)
    works = {"dense": lambda: True,
             "segments": lambda: pack == "bool" and model_checks.segments_work(body, first_id, device),
             "flex": lambda: model_checks.flex_works(body, first_id, device)}
    out = [kind for kind in wanted if works[kind]()]
    if asked is not None and not out:
        raise ValueError(f"attention={asked!r} does not work for {type(body).__name__} here (its start-up probe "
                         f"failed{': segments need SDPA' if asked == 'segments' else ''}); "
                         "leave attention unset for the device's default")
    return out or ["dense"]
