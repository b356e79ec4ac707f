"""Resolving user classes (dataclasses, enums) named in snapshots, without importing anything.

A name is looked up in an explicit registry first (``register_type``; built-in serializers
register the classes they are built with), then among modules that are *already* imported,
where only dataclasses and enums resolve: any other class found there is refused with
``ClassNotAllowedError`` (a snapshot or record may name a user type, never an arbitrary class
that happens to be loaded, such as ``subprocess:Popen``), whichever modules are loaded. A
module that is not loaded is never imported on a snapshot's behalf.

A class may also answer to a Java class name (``register_type(cls, java_name)``), the name
Flink's snapshots carry: snapshots naming it resolve to ``cls``, and snapshots written in the
Flink dialect name it so. Registering a Java name again rebinds it (the last call wins), so one
process can model a class before and after an upgrade.

The fallback reads attributes only from namespaces as they are: the module's ``__dict__``
for the first part of the qualified name, then the ``__dict__`` of each enclosing class. It
never calls ``getattr``, so a module's ``__getattr__`` (which may import lazy submodules), a
metaclass' ``__getattr__`` or a descriptor never runs, and a qualified name never walks
through a submodule (``numpy:testing.TestCase`` is not a class name).
"""

from __future__ import annotations

import enum
import sys
import threading
import types
from collections.abc import Mapping

from ._errors import ClassNotAllowedError

__all__ = ["register_type", "lookup_type", "class_identity", "qualified_name", "java_name_of", "class_key",
           "not_known_hint"]

_TYPES: dict[str, type] = {}
_JAVA_NAMES: dict[type, str] = {}
_LOCK = threading.Lock()


def class_identity(cls: type) -> str:
    """``module:qualname``: how snapshots, golden files and reports name a class (the one
    definition of a class's identity)."""
    return f"{cls.__module__}:{cls.__qualname__}"


qualified_name = class_identity


def register_type(cls: type, java_name: str | None = None) -> type:
    """Make ``cls`` resolvable by its ``module:qualname`` (usable as a class decorator) and,
    with ``java_name``, by that Java class name too (the last registration of a name wins)."""
    if java_name is not None and (type(java_name) is not str or not java_name or ":" in java_name):
        raise ValueError(
            f"register_type({cls!r}, {java_name!r}): a Java class name is a non-empty str "
            "without ':' (e.g. 'com.example.Color' or 'com.example.Outer$Inner')"
        )
    with _LOCK:
        _TYPES[qualified_name(cls)] = cls
        if java_name is not None:
            _TYPES[java_name] = cls
            _JAVA_NAMES[cls] = java_name
    return cls


def java_name_of(cls: type) -> str | None:
    """The Java class name ``cls`` was registered with, else None."""
    return _JAVA_NAMES.get(cls)


def class_key(name: str) -> str:
    """What two class names in snapshots are compared by: a name that resolves to a class with
    a Java name compares as that Java name (so ``module:qualname`` and the Java name of one
    class are the same class), any other name as itself."""
    if ":" not in name:
        return name
    try:
        found = lookup_type(name)
    except ClassNotAllowedError:
        return name
    java = _JAVA_NAMES.get(found) if found is not None else None
    return java if java is not None else name


def not_known_hint(name: str, doing: str = "restoring") -> str:
    """What to do when ``lookup_type(name)`` knows no class (the one wording of that fix, for
    every reader that names a class): import its module, named, or register the class."""
    module, colon, _ = name.partition(":")
    if not colon:  # a Java name: only a class registered under it answers to it
        return (f"register the class that answers to it with reference.register_type(cls, {name!r}) "
                f"before {doing}")
    local = ("a class defined in a function is known by its name only once registered: call "
             "reference.register_type on it in code that runs when its module is imported")
    if module in sys.modules:
        return f"module {module!r} is imported but defines no such class at its top level; {local}"
    return f"import module {module!r} before {doing} (nothing is imported on a snapshot's behalf); {local}"


def lookup_type(name: str) -> type | None:
    """The class a snapshot or record may name by ``name``: the one registered under it (a
    ``module:qualname`` or a Java name), else a dataclass or enum of an already imported
    module; None when no class is there. Any other class found in a loaded module raises
    ``ClassNotAllowedError``; nothing is ever imported."""
    found = _TYPES.get(name)
    if found is not None:
        return found
    found = _loaded_class(name)
    # Told from the classes' own dicts (no hasattr: no metaclass __getattr__ runs).
    if found is None or issubclass(found, enum.Enum) or any(
            "__dataclass_fields__" in vars(k) for k in found.__mro__):
        return found
    raise ClassNotAllowedError(
        f"{name!r} names {found!r}, a class of an imported module that is neither registered "
        "(reference.register_type), a dataclass nor an enum; a snapshot or record may name only "
        "those. If the savepoint is yours and the class is meant to be named, register it "
        "before restoring"
    )


def _loaded_class(name: str) -> type | None:
    """The class at ``module:qualname`` in an already imported module, read from namespaces
    only, else None."""
    module_name, _, qualname = name.partition(":")
    module = sys.modules.get(module_name)
    if not isinstance(module, types.ModuleType) or not qualname or "<locals>" in qualname:
        return None
    # The module's own dict, then each enclosing class's own dict (a mappingproxy): plain
    # lookups, so no __getattr__, descriptor or lazy import ever runs.
    namespace: Mapping[str, object] = vars(module)
    obj: object = None
    for part in qualname.split("."):
        obj = namespace.get(part)
        if not isinstance(obj, type):
            return None
        namespace = vars(obj)
    return obj if isinstance(obj, type) else None
