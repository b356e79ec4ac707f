"""Serializer snapshots: the registry, the versioned framing, and the two helper bases.

A snapshot's class identity is ``module:qualname``. Reading a snapshot resolves that name only
through the registry below, which every ``TypeSerializerSnapshot`` subclass joins when its
class statement runs. Nothing read from bytes ever triggers an import or an unpickling (the
pre-1.7 pickled-serializer form is refused unless the caller opts in).

A built-in snapshot class also answers to Flink's Java class name (``java_name=...`` in its class
statement, plus ``java_aliases`` for Flink classes read as it), in the same registry. Writing has
two dialects: ``"reference"`` (the default: ``module:qualname`` and this project's layouts, what
every earlier release reads) and ``"flink"`` (Java names and Flink's exact layouts and versions,
what Flink reads). A nested snapshot is written in the dialect of the write that contains it;
``snapshot_dialect()`` tells a ``write_snapshot`` which one is in force.
"""

from __future__ import annotations

import abc
import threading
import warnings
from collections.abc import Sequence
from typing import Any, ClassVar, Generic, TypeVar

from ._bounds import MAX_SNAPSHOT_DEPTH, pickle_length_problem
from ._classes import class_identity
from ._compat import OuterSchemaCompatibility, SchemaCompatibility, combine_nested
from ._errors import (
    SerializationError,
    SnapshotFormatError,
    StateError,
    UnknownSnapshotClassError,
)
from ._io import DataInputView, DataOutputView
from ._serializer import TypeSerializer

T = TypeVar("T")

__all__ = [
    "TypeSerializerSnapshot",
    "SimpleTypeSerializerSnapshot",
    "CompositeTypeSerializerSnapshot",
    "PickledSerializerSnapshot",
    "class_identity",
    "registered_snapshot_class",
    "snapshot_aliases",
    "snapshot_class",
    "write_versioned_snapshot",
    "read_versioned_snapshot",
    "reading_allows_pickle",
    "write_serializer_snapshot",
    "read_serializer_snapshot",
    "snapshot_to_bytes",
    "snapshot_from_bytes",
    "resolve_compatibility",
    "migrated_element",
    "snapshot_dialect",
    "java_snapshot_name",
    "DIALECTS",
]

#: Flink's TypeSerializerSnapshotSerializationUtil proxy version written before a snapshot.
PROXY_VERSION = 2
#: The proxy version of the pre-1.7 form: a (here: pickled) serializer instead of a snapshot.
LEGACY_PICKLED_PROXY_VERSION = 1
COMPOSITE_MAGIC = 911108
NESTED_MAGIC = 1333245
NESTED_VERSION = 1
COMPOSITE_VERSION = 3

_REGISTRY: dict[str, type[TypeSerializerSnapshot[Any]]] = {}
_REGISTRY_LOCK = threading.Lock()
#: The Java class name each built-in snapshot class writes in the Flink dialect.
_JAVA_NAMES: dict[type, str] = {}
#: The other Java classes each built-in snapshot class is read as: a snapshot read under one
#: writes itself back under it in the Flink dialect (the class Flink would instantiate).
_JAVA_ALIASES: dict[type, tuple[str, ...]] = {}
#: ``"reference"``: module:qualname and this project's layouts; ``"flink"``: Flink's own.
DIALECTS = ("reference", "flink")
_dialect = threading.local()


def snapshot_dialect() -> str:
    """The dialect of the snapshot write in progress (``"reference"`` outside any write)."""
    return getattr(_dialect, "name", "reference")


def java_snapshot_name(snapshot: TypeSerializerSnapshot[Any]) -> str | None:
    """The Java class name ``snapshot`` is written under in the Flink dialect: the Java alias
    it was read under, else its class's Java name; None for a class without one."""
    read_as = snapshot.__dict__.get("_java_name_read")
    return read_as if read_as is not None else _JAVA_NAMES.get(type(snapshot))


def registered_snapshot_class(name: str) -> type[TypeSerializerSnapshot[Any]]:
    """The snapshot class registered under ``name``; never imports anything."""
    try:
        return _REGISTRY[name]
    except KeyError:
        module = name.partition(":")[0] if ":" in name else None
        which = f"import module {module!r}" if module else "import the module that defines it"
        raise UnknownSnapshotClassError(
            f"snapshot class {name!r} is not registered; {which} before restoring (snapshot classes "
            "register themselves when defined, the reference's own, under their names and Flink's, "
            "when reference.serializers is imported; nothing is imported on a savepoint's behalf)"
        ) from None


def snapshot_aliases() -> dict[str, tuple[str, str]]:
    """Every other name a snapshot class answers to when reading: alias -> (the name it stands
    for, the dialect that name is written in). An earlier identity (``add_snapshot_alias``)
    stands for the class's identity (``"reference"``): a snapshot read under it writes its
    identity, and its Java name in the Flink dialect. A Java alias (``java_aliases``: another
    Flink class read as this one) stands for the class's Java name (``"flink"``): a snapshot
    read under it writes the alias back in the Flink dialect, the class Flink would read."""
    with _REGISTRY_LOCK:
        registered = list(_REGISTRY.items())
    found: dict[str, tuple[str, str]] = {}
    for name, cls in registered:
        identity, java = class_identity(cls), _JAVA_NAMES.get(cls)
        if name in _JAVA_ALIASES.get(cls, ()) and java is not None:
            found[name] = (java, "flink")
        elif name not in (identity, java):
            found[name] = (identity, "reference")
    return found


def add_snapshot_alias(identity: str, cls: type[TypeSerializerSnapshot[Any]]) -> None:
    """Let ``cls`` also answer to ``identity`` when reading (an earlier name it was written
    under); writing keeps using the class's own identity."""
    with _REGISTRY_LOCK:
        _REGISTRY[identity] = cls


def snapshot_class(identity: str) -> type[TypeSerializerSnapshot[Any]]:
    """The snapshot class a savepoint names by ``identity`` (``module:qualname``), looked up in
    the registry of defined snapshot classes only: nothing is ever imported. Raises
    ``UnknownSnapshotClassError`` for a name that no defined class answers to."""
    return registered_snapshot_class(identity)


class TypeSerializerSnapshot(abc.ABC, Generic[T]):
    """Point-in-time configuration of a serializer, written into savepoints.

    Subclasses are top-level classes with a public zero-argument constructor; they register
    themselves under ``module:qualname`` when defined.
    """

    def __init_subclass__(
        cls, java_name: str | None = None, java_aliases: Sequence[str] = (), **kwargs: Any
    ) -> None:
        super().__init_subclass__(**kwargs)
        with _REGISTRY_LOCK:
            _REGISTRY[class_identity(cls)] = cls
            if java_name is not None:
                _JAVA_NAMES[cls] = java_name
            for name in (java_name, *java_aliases):
                if name is not None:
                    _REGISTRY[name] = cls
            if java_aliases:
                _JAVA_ALIASES[cls] = tuple(java_aliases)

    @abc.abstractmethod
    def get_current_version(self) -> int: ...

    @abc.abstractmethod
    def write_snapshot(self, target: DataOutputView) -> None: ...

    @abc.abstractmethod
    def read_snapshot(self, read_version: int, source: DataInputView) -> None: ...

    @abc.abstractmethod
    def restore_serializer(self) -> TypeSerializer[T]: ...

    def resolve_schema_compatibility(
        self, old_snapshot: TypeSerializerSnapshot[T]
    ) -> SchemaCompatibility[T]:
        """The NEW snapshot (self) judges the OLD one (Flink 1.19+).

        The default bridges to the pre-1.19 direction: the old snapshot judges a serializer
        restored from this one (as Flink's default does), with a DeprecationWarning.
        """
        legacy = type(old_snapshot).resolve_schema_compatibility_with_serializer
        if legacy is TypeSerializerSnapshot.resolve_schema_compatibility_with_serializer:
            raise StateError(
                f"neither {class_identity(type(self))} implements resolve_schema_compatibility"
                f"(old_snapshot) nor {class_identity(type(old_snapshot))} implements the "
                "deprecated resolve_schema_compatibility_with_serializer(new_serializer); "
                "implement resolve_schema_compatibility on the new snapshot"
            )
        warnings.warn(
            f"{class_identity(type(old_snapshot))} only implements the pre-1.19 "
            "resolve_schema_compatibility_with_serializer; implement "
            "resolve_schema_compatibility(old_snapshot) on the new snapshot instead",
            DeprecationWarning,
            stacklevel=2,
        )
        return old_snapshot.resolve_schema_compatibility_with_serializer(self.restore_serializer())

    def resolve_schema_compatibility_with_serializer(
        self, new_serializer: TypeSerializer[T]
    ) -> SchemaCompatibility[T]:
        """Deprecated pre-1.19 direction (the OLD snapshot judges the new serializer)."""
        return new_serializer.snapshot_configuration().resolve_schema_compatibility(self)

    def migrate_element(
        self,
        prior_serializer: TypeSerializer[Any],
        new_serializer: TypeSerializer[T],
        element: Any,
        target: DataOutputView | None = None,
    ) -> T:
        """Bring an object read by ``prior_serializer`` to the new shape (FLIP-527).

        Two forms are honoured wherever elements migrate (``migrated_element``): this one,
        which returns the migrated element (and also writes it to ``target`` with
        ``new_serializer`` when one is given), and FLIP-527's writing form, an override whose
        ``target`` parameter has no default: it writes the migrated element to ``target`` and
        returns None. The default is the identity: it suits serializers whose restored form
        already reads new-shaped objects.
        """
        if target is not None:
            new_serializer.serialize(element, target)
        return element  # type: ignore[no-any-return]

    def migrate_state(
        self,
        prior_serializer: TypeSerializer[Any],
        new_serializer: TypeSerializer[T],
        source: DataInputView,
        target: DataOutputView,
    ) -> None:
        """Rewrite one record: read with the prior serializer, migrate, write with the new.
        ``migrate_element`` writes it where it takes a ``target``; the returning form without
        one (``migrate_element(prior, new, element)``) returns it, written here."""
        element = prior_serializer.deserialize(source)
        if migrate_element_form(self) == "returning":
            new_serializer.serialize(self.migrate_element(prior_serializer, new_serializer, element), target)
        else:
            self.migrate_element(prior_serializer, new_serializer, element, target)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class SimpleTypeSerializerSnapshot(TypeSerializerSnapshot[T]):
    """Snapshot of a serializer without configuration: same serializer class → as is."""

    __module__ = "reference"  # stable public identity

    VERSION: ClassVar[int] = 3

    def __init__(self, factory: Any) -> None:
        self._factory = factory

    def get_current_version(self) -> int:
        return self.VERSION

    def write_snapshot(self, target: DataOutputView) -> None:
        pass

    def read_snapshot(self, read_version: int, source: DataInputView) -> None:
        # As Flink's SimpleTypeSerializerSnapshot: version 2 carried the serializer class name,
        # read and dropped; version 1 was never a snapshot of this kind.
        if read_version == 2:
            source.read_utf()
        elif read_version != 3:
            raise SnapshotFormatError(
                f"{class_identity(type(self))}: unsupported snapshot version {read_version} "
                "(this reader knows 2 and 3, as Flink does)"
            )

    def restore_serializer(self) -> TypeSerializer[T]:
        return self._factory()  # type: ignore[no-any-return]

    def resolve_schema_compatibility(
        self, old_snapshot: TypeSerializerSnapshot[T]
    ) -> SchemaCompatibility[T]:
        if type(old_snapshot) is not type(self) or not isinstance(
            old_snapshot, SimpleTypeSerializerSnapshot
        ):
            return SchemaCompatibility.incompatible(
                f"{_describe(old_snapshot)} cannot become {_describe(self)}"
            )
        if type(old_snapshot.restore_serializer()) is not type(self.restore_serializer()):
            return SchemaCompatibility.incompatible(
                f"serializer class changed from {type(old_snapshot.restore_serializer()).__name__}"
                f" to {type(self.restore_serializer()).__name__}"
            )
        return SchemaCompatibility.compatible_as_is()


class CompositeTypeSerializerSnapshot(TypeSerializerSnapshot[T]):
    """Snapshot of a serializer built from nested serializers (Flink's
    ``CompositeTypeSerializerSnapshot``): outer configuration plus nested snapshots."""

    __module__ = "reference"  # stable public identity

    #: How many nested snapshots the serializer is built from, when that is fixed (a List: 1,
    #: a Map: 2); another count in the bytes is refused while reading. None: any count.
    NESTED_ARITY: ClassVar[int | None] = None
    #: The outer versions this class reads; another in the bytes is refused while reading. None:
    #: ``read_outer_snapshot`` decides (Flink's list and map snapshots ignore theirs).
    READ_OUTER_VERSIONS: ClassVar[tuple[int, ...] | None] = None
    #: Bytes from the end of a versioned snapshot's class name to its outer version: the
    #: snapshot's version and the composite magic number.
    OUTER_VERSION_AT: ClassVar[int] = 8
    #: The magic numbers of the layout (Flink's): after the snapshot's version, and before the
    #: nested snapshots' block (after the outer snapshot); another number there is refused.
    MAGIC_NUMBERS: ClassVar[tuple[int, int]] = (COMPOSITE_MAGIC, NESTED_MAGIC)

    def __init__(self, serializer: TypeSerializer[T] | None = None) -> None:
        self._serializer = serializer
        self.nested_snapshots: list[TypeSerializerSnapshot[Any]] = []
        if serializer is not None:
            self.nested_snapshots = [
                s.snapshot_configuration() for s in self.get_nested_serializers(serializer)
            ]

    # -- what subclasses provide --------------------------------------------------------------
    @abc.abstractmethod
    def get_current_outer_snapshot_version(self) -> int: ...

    @abc.abstractmethod
    def get_nested_serializers(self, outer_serializer: TypeSerializer[T]) -> Sequence[TypeSerializer[Any]]: ...

    @abc.abstractmethod
    def create_outer_serializer_with_nested_serializers(
        self, nested_serializers: Sequence[TypeSerializer[Any]]
    ) -> TypeSerializer[T]: ...

    def write_outer_snapshot(self, target: DataOutputView) -> None:
        pass

    def read_outer_snapshot(self, read_outer_version: int, source: DataInputView) -> None:
        pass

    def resolve_outer_schema_compatibility(
        self, old_snapshot: CompositeTypeSerializerSnapshot[T]
    ) -> OuterSchemaCompatibility:
        return OuterSchemaCompatibility.COMPATIBLE_AS_IS

    def nested_labels(self) -> list[str] | None:
        """Names for nested serializers in messages (e.g. ``"element"``); None: numbered."""
        return None

    # -- the framework ------------------------------------------------------------------------
    def get_current_version(self) -> int:
        return COMPOSITE_VERSION

    def write_snapshot(self, target: DataOutputView) -> None:
        target.write_int(COMPOSITE_MAGIC)
        target.write_int(self.get_current_outer_snapshot_version())
        self.write_outer_snapshot(target)
        target.write_int(NESTED_MAGIC)
        target.write_int(NESTED_VERSION)
        target.write_int(len(self.nested_snapshots))
        for nested in self.nested_snapshots:
            write_versioned_snapshot(target, nested)

    def read_snapshot(self, read_version: int, source: DataInputView) -> None:
        name = class_identity(type(self))
        if read_version != COMPOSITE_VERSION:
            raise SnapshotFormatError(
                f"{name}: unsupported composite snapshot version {read_version} (this reader "
                f"knows {COMPOSITE_VERSION})"
            )
        _read_magic(source, COMPOSITE_MAGIC, f"{name}: corrupt composite snapshot")
        outer_version = source.read_int()
        known = self.READ_OUTER_VERSIONS
        if known is not None and outer_version not in known:
            raise SnapshotFormatError(
                f"{name}: unsupported outer version {outer_version} (this reader knows "
                f"{', '.join(map(str, known))}); the snapshot is corrupt or from a newer release"
            )
        self.read_outer_snapshot(outer_version, source)
        _read_magic(source, NESTED_MAGIC, f"{name}: corrupt nested-serializers block")
        version = source.read_int()
        if version != NESTED_VERSION:
            raise SnapshotFormatError(f"{name}: unsupported nested block version {version}")
        count = source.read_int()
        # Each nested snapshot takes at least 6 bytes (empty name, version), so a count beyond
        # that is corrupt: refuse it before allocating anything.
        if count < 0 or count * 6 > source.available():
            raise SnapshotFormatError(
                f"{name}: nested snapshot count {count} does not fit the "
                f"{source.available()} remaining bytes; the snapshot is corrupt"
            )
        if self.NESTED_ARITY is not None and count != self.NESTED_ARITY:
            raise SnapshotFormatError(
                f"{name}: {count} nested snapshots, should be {self.NESTED_ARITY}; the snapshot "
                "is corrupt"
            )
        self.nested_snapshots = [read_versioned_snapshot(source) for _ in range(count)]
        self._serializer = None

    def _new_nested_serializers(self) -> list[TypeSerializer[Any]]:
        if self._serializer is not None:
            return list(self.get_nested_serializers(self._serializer))
        return [s.restore_serializer() for s in self.nested_snapshots]

    def restore_serializer(self) -> TypeSerializer[T]:
        labels = self.nested_labels() or []
        nested = []
        for i, snapshot in enumerate(self.nested_snapshots):
            try:
                nested.append(snapshot.restore_serializer())
            except StateError as exc:  # said again with where it stands: the class a user restores is the outer one
                label = labels[i] if i < len(labels) else f"nested serializer {i}"
                raise _in_context(exc, f"restoring the {label} of {_describe(self)}") from None
        return self.create_outer_serializer_with_nested_serializers(nested)

    def resolve_schema_compatibility(
        self, old_snapshot: TypeSerializerSnapshot[T]
    ) -> SchemaCompatibility[T]:
        if type(old_snapshot) is not type(self):
            return SchemaCompatibility.incompatible(
                f"{_describe(old_snapshot)} cannot become {_describe(self)}"
            )
        assert isinstance(old_snapshot, CompositeTypeSerializerSnapshot)
        if len(old_snapshot.nested_snapshots) != len(self.nested_snapshots):
            return SchemaCompatibility.incompatible(
                f"{_describe(self)}: {len(old_snapshot.nested_snapshots)} nested serializers "
                f"before, {len(self.nested_snapshots)} now"
            )
        outer = self.resolve_outer_schema_compatibility(old_snapshot)
        if not isinstance(outer, OuterSchemaCompatibility):
            raise StateError(
                f"{class_identity(type(self))}.resolve_outer_schema_compatibility returned "
                f"{type(outer).__name__}, not an OuterSchemaCompatibility; return one of its members "
                "(COMPATIBLE_AS_IS when the outer configuration did not change)"
            )
        if outer is OuterSchemaCompatibility.INCOMPATIBLE:
            return SchemaCompatibility.incompatible(self.outer_incompatibility_reason(old_snapshot))
        nested = [
            resolve_compatibility(new, old)
            for new, old in zip(self.nested_snapshots, old_snapshot.nested_snapshots, strict=True)
        ]
        return combine_nested(
            outer,
            nested,
            self._new_nested_serializers(),
            self.create_outer_serializer_with_nested_serializers,
            self.nested_labels(),
        )

    def outer_incompatibility_reason(self, old_snapshot: CompositeTypeSerializerSnapshot[T]) -> str:
        return f"{_describe(self)}: the outer configuration changed incompatibly"


def _read_magic(source: DataInputView, magic: int, what: str) -> None:
    """Read a magic number of a layout (Flink's), refusing another: the bytes are damaged or of
    another class."""
    found = source.read_int()
    if found != magic:
        raise SnapshotFormatError(
            f"{what}, magic number {found} instead of {magic}; the snapshot bytes are damaged or of another class")


class PickledSerializerSnapshot(TypeSerializerSnapshot[Any]):
    """Stand-in for the pre-1.7 form, where a savepoint held the (pickled) serializer itself.

    Produced only by ``read_serializer_snapshot(..., allow_pickled_serializer=True)``; never
    written by this project, and reported as non-conforming by the harness.
    """

    __module__ = "reference"  # stable public identity

    def __init__(self, serializer: TypeSerializer[Any] | None = None) -> None:
        self.serializer = serializer

    def get_current_version(self) -> int:
        return 1

    def write_snapshot(self, target: DataOutputView) -> None:
        raise SnapshotFormatError(
            "the pre-1.7 pickled-serializer form is read-only; write the serializer's own "
            "snapshot (serializer.snapshot_configuration()) instead"
        )

    def read_snapshot(self, read_version: int, source: DataInputView) -> None:
        raise SnapshotFormatError("the pre-1.7 pickled form is read by read_serializer_snapshot")

    def restore_serializer(self) -> TypeSerializer[Any]:
        assert self.serializer is not None
        return self.serializer

    def resolve_schema_compatibility(self, old_snapshot: TypeSerializerSnapshot[Any]) -> SchemaCompatibility[Any]:
        assert self.serializer is not None
        return resolve_compatibility(self.serializer.snapshot_configuration(), old_snapshot)


def _describe(snapshot: TypeSerializerSnapshot[Any]) -> str:
    return type(snapshot).__name__


def _in_context(exc: StateError, where: str) -> StateError:
    """``exc`` again, of its class, with ``where`` it stood appended (a class whose constructor
    takes more than a message: a StateError)."""
    message = f"{exc} [{where}]"
    try:
        return type(exc)(message)
    except TypeError:
        return StateError(message)


# -- resolution entry point -------------------------------------------------------------------
_guard = threading.local()


def resolve_compatibility(
    new: TypeSerializerSnapshot[T] | TypeSerializer[T], old_snapshot: TypeSerializerSnapshot[T]
) -> SchemaCompatibility[T]:
    """``new.resolve_schema_compatibility(old_snapshot)``, with what callers always need:
    a serializer is replaced by its snapshot, a pre-1.7 stand-in by the snapshot of the
    serializer it carries, and mutual recursion between the two legacy defaults becomes a
    clear ``StateError`` instead of a RecursionError."""
    if isinstance(new, TypeSerializer):
        new = new.snapshot_configuration()
    if isinstance(old_snapshot, PickledSerializerSnapshot):
        old_snapshot = old_snapshot.restore_serializer().snapshot_configuration()
    key = (id(new), id(old_snapshot))
    active: set[tuple[int, int]] = getattr(_guard, "active", None) or set()
    _guard.active = active
    if key in active:
        raise StateError(
            f"compatibility resolution between {class_identity(type(new))} and "
            f"{class_identity(type(old_snapshot))} recursed into itself: neither implements "
            "resolve_schema_compatibility(old_snapshot); implement it on the new snapshot"
        )
    active.add(key)
    try:
        result = new.resolve_schema_compatibility(old_snapshot)
    except RecursionError:
        raise StateError(
            f"compatibility resolution between {class_identity(type(new))} and "
            f"{class_identity(type(old_snapshot))} recursed without end: neither implements "
            "resolve_schema_compatibility(old_snapshot); implement it on the new snapshot"
        ) from None
    finally:
        active.discard(key)
    if not isinstance(result, SchemaCompatibility):
        raise StateError(
            f"{class_identity(type(new))}.resolve_schema_compatibility returned "
            f"{type(result).__name__}, not a SchemaCompatibility; return one (e.g. "
            "SchemaCompatibility.compatible_as_is() when the old snapshot reads as it is)"
        )
    return result


# -- framing ----------------------------------------------------------------------------------
def _check_dialect(dialect: str | None) -> str:
    if dialect is None:
        return snapshot_dialect()
    if dialect not in DIALECTS:
        raise ValueError(f"unknown snapshot dialect {dialect!r}; use one of {', '.join(DIALECTS)}")
    return dialect


def write_versioned_snapshot(
    target: DataOutputView, snapshot: TypeSerializerSnapshot[Any], dialect: str | None = None
) -> None:
    """Class identity (UTF), int version, body: Flink's ``writeVersionedSnapshot``.

    ``dialect`` (``"reference"`` or ``"flink"``) defaults to the enclosing write's, else
    ``"reference"``. In the Flink dialect a class with a Java name is written under it, with
    Flink's version and layout; a class without one keeps its ``module:qualname``."""
    dialect = _check_dialect(dialect)
    name = class_identity(type(snapshot))
    if _REGISTRY.get(name) is not type(snapshot):
        raise SnapshotFormatError(
            f"snapshot class {name} cannot be written: another class is registered under "
            "that name (snapshot classes must be top-level with a unique module:qualname)"
        )
    if dialect == "flink":
        name = java_snapshot_name(snapshot) or name
    previous = snapshot_dialect()
    _dialect.name = dialect
    try:
        target.write_utf(name)
        target.write_int(snapshot.get_current_version())
        snapshot.write_snapshot(target)
    finally:
        _dialect.name = previous


_depth = threading.local()
#: ``allow_pickle`` of the snapshot read in progress (None outside any read).
_reading = threading.local()


def reading_allows_pickle() -> bool:
    """Whether the snapshot read in progress was given ``allow_pickle=True``: the one answer a
    ``read_snapshot`` consults to tell whether the serializer it restores may unpickle data
    (``PickleSerializerSnapshot``'s). False outside any read: snapshot bytes are untrusted."""
    return getattr(_reading, "allow_pickle", None) is True


def read_versioned_snapshot(
    source: DataInputView, *, allow_pickle: bool | None = None
) -> TypeSerializerSnapshot[Any]:
    """Read what ``write_versioned_snapshot`` wrote, resolving the class via the registry.

    Snapshots nested deeper than ``MAX_SNAPSHOT_DEPTH`` are refused before the next level is
    read (so neither reading nor anything done later with the snapshot recurses without bound).

    Snapshot bytes are untrusted: a ``PickleSerializer`` restored from what is read (at any
    depth) refuses to unpickle (``PickleNotAllowedError``) unless ``allow_pickle`` is True,
    the caller's statement that it trusts the data those serializers will read. None (the
    default) is the enclosing read's choice for a nested snapshot, False for a top-level one."""
    depth = getattr(_depth, "value", 0)
    if depth >= MAX_SNAPSHOT_DEPTH:
        raise SnapshotFormatError(
            f"serializer snapshots nested deeper than {MAX_SNAPSHOT_DEPTH} levels (the limit "
            "for snapshots read from bytes); the snapshot is corrupt or not from this project"
        )
    if allow_pickle is not None and type(allow_pickle) is not bool:
        raise TypeError(f"allow_pickle must be True or False, got {allow_pickle!r}")
    enclosing = getattr(_reading, "allow_pickle", None)
    _reading.allow_pickle = (enclosing is True) if allow_pickle is None else allow_pickle
    _depth.value = depth + 1
    try:
        return _read_versioned_snapshot(source)
    finally:
        _depth.value = depth
        _reading.allow_pickle = enclosing


def _read_versioned_snapshot(source: DataInputView) -> TypeSerializerSnapshot[Any]:
    try:
        name = source.read_utf()
    except SerializationError as exc:
        raise SnapshotFormatError(f"cannot read a snapshot class name: {exc}") from None
    cls = registered_snapshot_class(name)
    try:
        version = source.read_int()
        try:
            snapshot = cls()
        except TypeError as exc:
            raise SnapshotFormatError(
                f"snapshot class {name} cannot be instantiated without arguments ({exc}); "
                "snapshot classes need a public zero-argument constructor"
            ) from None
        snapshot.read_snapshot(version, source)
        if name in _JAVA_ALIASES.get(cls, ()):
            snapshot.__dict__["_java_name_read"] = name  # a Java alias: written back under it
    except SnapshotFormatError:
        raise
    except StateError as exc:
        raise SnapshotFormatError(f"corrupt snapshot of {name}: {exc}") from None
    except (ValueError, TypeError, KeyError, IndexError, OverflowError, AttributeError,
            UnicodeError, RecursionError, MemoryError) as exc:
        raise SnapshotFormatError(
            f"corrupt snapshot of {name}: {type(exc).__name__}: {exc}"
        ) from None
    return snapshot


def write_serializer_snapshot(
    target: DataOutputView, snapshot: TypeSerializerSnapshot[Any], dialect: str | None = None
) -> None:
    """The top-level form used in savepoints: proxy version 2, then the versioned snapshot."""
    target.write_int(PROXY_VERSION)
    write_versioned_snapshot(target, snapshot, dialect)


def read_serializer_snapshot(
    source: DataInputView, *, allow_pickled_serializer: bool = False, allow_pickle: bool = False
) -> TypeSerializerSnapshot[Any]:
    """Read the top-level form. The pre-1.7 form (proxy version 1: an int length and a pickled
    serializer) is unpickled only when ``allow_pickled_serializer`` is True. A
    ``PickleSerializer`` restored from the snapshot unpickles data only when ``allow_pickle``
    is True (``read_versioned_snapshot``)."""
    try:
        proxy = source.read_int()
    except SerializationError as exc:
        raise SnapshotFormatError(f"cannot read the snapshot proxy version: {exc}") from None
    if proxy == PROXY_VERSION:
        return read_versioned_snapshot(source, allow_pickle=allow_pickle)
    if proxy == LEGACY_PICKLED_PROXY_VERSION:
        if not allow_pickled_serializer:
            raise SnapshotFormatError(
                "this snapshot is the pre-1.7 form (a pickled serializer, not a snapshot); "
                "unpickling runs code from the savepoint, so it is refused unless you pass "
                "allow_pickled_serializer=True for a savepoint you trust"
            )
        import pickle  # only on the caller's explicit request

        try:
            payload = source.read_fully(source.read_int())
        except SerializationError as exc:
            raise SnapshotFormatError(f"corrupt pre-1.7 pickled serializer: {exc}") from None
        problem = pickle_length_problem(payload)
        try:
            if problem is not None:
                raise ValueError(problem)
            serializer = pickle.loads(payload)
        except Exception as exc:  # a damaged pickle can fail in any way
            raise SnapshotFormatError(
                f"the pre-1.7 pickled serializer cannot be unpickled ({type(exc).__name__}: "
                f"{exc}); the snapshot is corrupt or needs a class that is not importable here"
            ) from None
        if not isinstance(serializer, TypeSerializer):
            raise SnapshotFormatError(
                f"the pre-1.7 snapshot held a {type(serializer).__name__}, not a TypeSerializer"
            )
        return PickledSerializerSnapshot(serializer)
    raise SnapshotFormatError(
        f"unknown snapshot proxy version {proxy} (this reader knows {PROXY_VERSION} and, "
        f"on request, the pre-1.7 form {LEGACY_PICKLED_PROXY_VERSION}); the bytes are corrupt"
    )


def write_legacy_pickled_serializer(target: DataOutputView, serializer: TypeSerializer[Any]) -> None:
    """Write the pre-1.7 form; exists to test the legacy read path, never used for savepoints."""
    import pickle

    payload = pickle.dumps(serializer)
    target.write_int(LEGACY_PICKLED_PROXY_VERSION)
    target.write_int(len(payload))
    target.write(payload)


def snapshot_to_bytes(snapshot: TypeSerializerSnapshot[Any], dialect: str = "reference") -> bytes:
    """The top-level form as bytes; ``dialect="flink"`` writes what Flink's
    ``TypeSerializerSnapshotSerializationUtil`` writes (Java names, Flink's layouts)."""
    out = DataOutputView()
    write_serializer_snapshot(out, snapshot, _check_dialect(dialect))
    return out.getvalue()


def snapshot_from_bytes(
    data: bytes, *, allow_pickled_serializer: bool = False, allow_pickle: bool = False
) -> TypeSerializerSnapshot[Any]:
    """Read one top-level snapshot; trailing bytes are corrupt data. The bytes are untrusted: a
    ``PickleSerializer`` the snapshot restores (at any depth) refuses to unpickle records
    (``PickleNotAllowedError``) unless ``allow_pickle=True`` says the caller trusts them."""
    source = DataInputView(data)
    snapshot = read_serializer_snapshot(
        source, allow_pickled_serializer=allow_pickled_serializer, allow_pickle=allow_pickle
    )
    if source.available():
        raise SnapshotFormatError(
            f"{source.available()} bytes left after the snapshot of "
            f"{class_identity(type(snapshot))}; its read_snapshot did not consume what "
            "write_snapshot wrote, or the bytes are corrupt"
        )
    return snapshot


_FORMS: dict[type[TypeSerializerSnapshot[Any]], str] = {}


def migrate_element_form(snapshot: TypeSerializerSnapshot[Any] | type[TypeSerializerSnapshot[Any]]) -> str:
    """Which FLIP-527 form ``migrate_element`` of a snapshot (or snapshot class) takes:
    ``"returning"`` (``migrate_element(prior, new, element)`` returns the migrated element),
    ``"writing"`` (a required ``target``: it writes the migrated element there) or ``"either"``
    (a ``target`` with a default, or ``*args``: called without one, it returns; given one, it
    writes). The one place the form is told from the signature."""
    cls = snapshot if isinstance(snapshot, type) else type(snapshot)
    known = _FORMS.get(cls)
    if known is None:
        import inspect

        try:
            parameters = list(inspect.signature(cls.migrate_element).parameters.values())
        except (TypeError, ValueError):
            parameters = []
        positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if len(positional) > 4:
            known = "writing" if positional[4].default is inspect.Parameter.empty else "either"
        elif any(p.kind is p.VAR_POSITIONAL for p in parameters):
            known = "either"
        else:
            known = "returning"
        _FORMS[cls] = known
    return known


def migrated_element(
    snapshot: TypeSerializerSnapshot[Any], prior: TypeSerializer[Any], new: TypeSerializer[Any], element: Any
) -> Any:
    """``element`` (read by ``prior``) migrated by ``snapshot.migrate_element`` to what ``new``
    writes, whichever form the snapshot implements: the returning form, or FLIP-527's writing
    form ``migrate_element(prior, new, element, target)``, whose output is read back with
    ``new``."""
    if migrate_element_form(snapshot) != "writing":
        return snapshot.migrate_element(prior, new, element)
    target = DataOutputView()
    returned = snapshot.migrate_element(prior, new, element, target)
    if returned is not None:
        return returned
    source = DataInputView(target.getvalue())
    migrated = new.deserialize(source)
    if source.available():
        raise SerializationError(
            f"{class_identity(type(snapshot))}.migrate_element wrote {source.available()} bytes more "
            f"than one element of {new!r}; it should write exactly one migrated element to target"
        )
    return migrated
