"""Resolving user classes (dataclasses, enums) named in snapshots, without importing anything.

A name is looked up in an explicit registry first (``register_type``; built-in serializers
register the classes they are built with), then among modules that are *already* imported.
A module that is not loaded is never imported on a snapshot's behalf.
"""

from __future__ import annotations

import sys
import threading

__all__ = ["register_type", "lookup_type", "class_identity", "qualified_name"]

_TYPES: dict[str, type] = {}
_LOCK = threading.Lock()


def class_identity(cls: type) -> str:
    """``module:qualname``: how snapshots, golden files and reports name a class (the one
    definition of a class's identity)."""
    return f"{cls.__module__}:{cls.__qualname__}"


qualified_name = class_identity


def register_type(cls: type) -> type:
    """Make ``cls`` resolvable by its ``module:qualname`` (usable as a class decorator)."""
    with _LOCK:
        _TYPES[qualified_name(cls)] = cls
    return cls


def lookup_type(name: str) -> type | None:
    """The class registered or already importable under ``module:qualname``, else None."""
    found = _TYPES.get(name)
    if found is not None:
        return found
    module_name, _, qualname = name.partition(":")
    module = sys.modules.get(module_name)
    if module is None or not qualname or "<locals>" in qualname:
        return None
    obj: object = module
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj if isinstance(obj, type) else None
