"""snapshot: the snapshot class, its bytes, restoring from it, and resolving against itself.

- ``snapshot.top_level_class``: the snapshot class is top-level, reachable by module:qualname and
  in the registry.
- ``snapshot.zero_arg_constructor``: every snapshot class, the serializer's and each evolution's,
  has a public zero-argument constructor (restores call it).
- ``snapshot.modern_form``: neither the pre-1.7 pickled-serializer form nor the pre-1.19-only
  resolution direction.
- ``snapshot.no_pickle``: the snapshot's content holds no pickle (restoring must never unpickle).
- ``snapshot.exact_read``: ``read_snapshot`` consumes exactly what ``write_snapshot`` wrote, and
  writing is stable.
- ``snapshot.restore``: ``restore_serializer()`` of the read snapshot equals the serializer and
  reads its bytes.
- ``snapshot.self_resolution``: the serializer's snapshot judges its own restored snapshot as is
  (or reconfigured).
- ``snapshot.not_shared``: serializers of different layouts never write the same snapshot (else a
  restore cannot tell which layout the bytes have).
- ``snapshot.corrupt_bytes``: truncated and corrupted snapshot bytes give a clear ``StateError``,
  never a crash; a version no release wrote, after the name of one of the reference's snapshot
  classes (``UNKNOWN_VERSIONS``), is refused, so is a magic number of one of its composite
  snapshots with a bit flipped (``CompositeTypeSerializerSnapshot.MAGIC_NUMBERS``, and the
  optional-map header of Flink's POJO form), and such a
  name put in a module nobody imported (``MISSING_MODULE``) is refused with a message naming
  that module. Of a serializer built only of the reference's classes, each number the
  snapshot's reading reads (a version, count, length or padding), set to -1, the least or the
  greatest of its width, is refused with a ``StateError`` or taken as it is: the snapshot read
  and the serializer it restores write it back unchanged (``SNAPSHOT_NUMBERS`` of them, in
  both forms; a composite's outer version that Flink ignores is not judged).
- ``snapshot.class_confusion``: each class name the snapshot's bytes hold that resolves through
  the registry (``reference.lookup_type``: ``module:qualname``, or a Java name in the Flink
  dialect's form), replaced by the name of a registered class of another kind (an Enum class,
  a dataclass, another class, a registered non-class object), gives a snapshot whose reading,
  ``restore_serializer()`` and reading of the serializer's records either work or raise a
  ``StateError``, never another exception: a class named by a snapshot is checked for the kind
  it must be before it is used. Well-formed bytes, so not a case of ``corrupt_bytes``; bounded
  (``CONFUSED_NAMES`` names per form, one decoy of each other kind). Each such name of the
  snapshot's own form replaced by the name of a class in a module that is not imported
  (``MISSING_MODULE``), as a savepoint restored where the user's module was not imported, is
  refused with a ``StateError`` as well (or works); by a serializer built only of the
  reference's classes, with a message that names the module to import.
- ``snapshot.untrusted_form``: a savepoint's snapshot in a form that would unpickle, read as a
  restore reads it (``snapshot_from_bytes`` and ``read_serializer_snapshot`` with their
  defaults), unpickles nothing: the pre-1.7 form (proxy version 1, a pickled serializer) is
  refused with a ``StateError`` naming ``allow_pickled_serializer``, and a ``PickleSerializer``
  restored from its snapshot refuses to read a pickled record (a ``StateError`` naming
  ``allow_pickle``). The pickles are of a marker that records its unpickling.
- ``snapshot.flink_dialect``: where the snapshot names Flink classes, its form in Flink's dialect
  reads back, writes itself again unchanged, and restores a serializer that reads and writes the
  serializer's records as they are. A subject that declares the bytes Flink writes for its
  serializer (``Subject(flink_snapshot=...)``) must write exactly those in Flink's dialect.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import itertools
import pickle
import pickletools
import re
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from reference import (
    CompositeTypeSerializerSnapshot,
    DataInputView,
    DataOutputView,
    NoFlinkFormError,
    PickledSerializerSnapshot,
    StateError,
    TypeSerializerSnapshot,
    UnknownSnapshotClassError,
    class_identity,
    lookup_type,
    read_serializer_snapshot,
    read_versioned_snapshot,
    register_type,
    resolve_compatibility,
    snapshot_aliases,
    snapshot_class,
    snapshot_from_bytes,
    snapshot_to_bytes,
    write_versioned_snapshot,
)

from .._engine.canonical import show
from .._engine.property import guarded
from .._engine.providers import Provider, provider
from .._engine.registry import Violation, check
from ._support import (
    CORRUPTIONS,
    SNAPSHOT_VERSION_HINT,
    IntReads,
    bytes_difference,
    bytes_example,
    expect_equal,
    hexdump,
    int_extremes,
    read_one,
    reference_built,
    spread_positions,
    write,
)

if TYPE_CHECKING:
    from .._engine.runner import CheckContext

API = ("roundtrip.api_valid",)
_SENTINEL = b"\xfe\xed\xfa\xce\x00\x01"


#: The serializer's snapshot as ``snapshot_to_bytes`` writes it.
SNAPSHOT_BYTES: Provider[bytes] = provider("snapshot_bytes", lambda ctx: guarded(
    "writing the snapshot", snapshot_to_bytes, ctx.serializer().snapshot_configuration()))
#: That snapshot read back from its bytes, as a restore reads it (the subject's own bytes: its
#: Pickle serializers may unpickle, as a restore that opts in with allow_pickle).
RESTORED_SNAPSHOT: Provider[TypeSerializerSnapshot[Any]] = provider("restored_snapshot", lambda ctx: guarded(
    "reading the snapshot back", _trusted_snapshot, ctx.get(SNAPSHOT_BYTES)))


def _trusted_snapshot(data: bytes) -> TypeSerializerSnapshot[Any]:
    """``snapshot_from_bytes`` of bytes the subject wrote itself (allow_pickle=True)."""
    return snapshot_from_bytes(data, allow_pickle=True)


@check(id="snapshot.top_level_class", family="snapshot", requires=API)
def top_level_class(ctx: CheckContext) -> None:
    """The snapshot class is top-level, reachable by module:qualname and in the registry."""
    cls = type(ctx.serializer().snapshot_configuration())
    name = class_identity(cls)
    if "." in cls.__qualname__ or "<locals>" in cls.__qualname__:
        raise Violation(
            f"snapshot class {name} is nested, should be a top-level class of its module (a "
            "restore finds snapshot classes by module:qualname)"
        )
    module = sys.modules.get(cls.__module__)
    if module is None or getattr(module, cls.__qualname__, None) is not cls:
        raise Violation(f"snapshot class {name} is not reachable as {name}, should be (define it at module level)")
    try:
        registered = snapshot_class(name)
    except UnknownSnapshotClassError:
        registered = None
    if registered is not cls:
        raise Violation(f"snapshot class {name} is not the class registered under its name, should be")


@check(id="snapshot.zero_arg_constructor", family="snapshot", requires=API)
def zero_arg_constructor(ctx: CheckContext) -> None:
    """Every snapshot class, the serializer's and each evolution's, has a public zero-argument
    constructor (restores call it)."""
    for label, serializer in _own_serializers(ctx):
        try:
            cls = type(serializer.snapshot_configuration())
        except Exception:
            continue  # the evolution's own problems are reported where it is used
        try:
            cls()
        except Exception as exc:
            raise Violation(
                f"{label}'s snapshot class: {cls.__name__}() raised {type(exc).__name__}: {exc}; a "
                "snapshot class should have a zero-argument constructor (make the serializer "
                "argument optional)"
            ) from None


@check(id="snapshot.modern_form", family="snapshot", requires=API)
def modern_form(ctx: CheckContext) -> None:
    """Neither the pre-1.7 pickled-serializer form nor the pre-1.19-only resolution direction."""
    snap = ctx.serializer().snapshot_configuration()
    if isinstance(snap, PickledSerializerSnapshot):
        raise Violation(
            "the snapshot is the pre-1.7 form (a pickled serializer), should be a snapshot of the "
            "serializer's configuration; non-conforming"
        )
    if type(snap).resolve_schema_compatibility is TypeSerializerSnapshot.resolve_schema_compatibility:
        raise Violation(
            f"{type(snap).__name__} only implements the pre-1.19 "
            "resolve_schema_compatibility_with_serializer, should implement "
            "resolve_schema_compatibility(old_snapshot) (the new snapshot judges the old one)"
        )


def pickle_offset(data: bytes) -> int | None:
    """Offset of an embedded pickle stream (protocol 2+), or None."""
    start = 0
    while True:
        at = data.find(b"\x80", start)
        if at < 0 or at + 1 >= len(data):
            return None
        if 2 <= data[at + 1] <= 5:
            try:
                ops = list(pickletools.genops(data[at:]))
                if ops and ops[-1][0].name == "STOP":
                    return at
            except Exception:
                pass
        start = at + 1


@check(id="snapshot.no_pickle", family="snapshot", requires=API)
def no_pickle(ctx: CheckContext) -> None:
    """Snapshot content holds no pickle (restoring must never unpickle)."""
    data = ctx.get(SNAPSHOT_BYTES)
    at = pickle_offset(data)
    if at is not None:
        raise Violation(
            f"the snapshot bytes contain a pickle stream at offset {at}, should hold plain "
            "configuration (restoring a savepoint must never unpickle)",
            example=bytes_example(data[at:], 24),
        )


@check(id="snapshot.exact_read", family="snapshot",
       requires=("snapshot.top_level_class", "snapshot.zero_arg_constructor", "snapshot.modern_form"))
def exact_read(ctx: CheckContext) -> None:
    """read_snapshot consumes exactly what write_snapshot wrote, and writing is stable."""
    snap = ctx.serializer().snapshot_configuration()
    out = DataOutputView()
    guarded("write_snapshot", write_versioned_snapshot, out, snap)
    written = out.getvalue()
    source = DataInputView(written + _SENTINEL)
    try:
        again = read_versioned_snapshot(source, allow_pickle=True)
    except Exception as exc:
        # It cannot read what it has just written at its own current version.
        text = isinstance(exc, UnicodeError) or any(w in str(exc).lower() for w in ("utf-8", "unicode"))
        hint = _TEXT_HINT if text else SNAPSHOT_VERSION_HINT
        raise Violation(
            f"read_snapshot raised {type(exc).__name__}: {exc}, reading what write_snapshot wrote at "
            f"get_current_version() {guarded('get_current_version', snap.get_current_version)}, should read it "
            f"back; {hint}"
        ) from exc
    consumed = source.position
    if consumed != len(written):
        body = DataOutputView()
        guarded("write_snapshot", snap.write_snapshot, body)
        wrote = body.getvalue()
        read = consumed - (len(written) - len(wrote))  # less the class name and version before it
        if consumed < len(written):
            raise Violation(
                f"read_snapshot read {read} of the {len(wrote)} bytes write_snapshot wrote, should read "
                f"exactly what it writes; left unread, from byte {read}: {hexdump(wrote[read:])}",
                example=bytes_example(wrote),
            )
        raise Violation(
            f"read_snapshot read {read} bytes, {read - len(wrote)} more than the {len(wrote)} "
            "write_snapshot wrote (it reads into whatever follows the snapshot), should read exactly "
            "what it writes",
            example=bytes_example(wrote),
        )
    out2 = DataOutputView()
    guarded("write_snapshot of the read snapshot", write_versioned_snapshot, out2, again)
    rewritten = out2.getvalue()
    if rewritten != written:
        raise Violation(
            f"the snapshot read back writes other bytes than it was read from {bytes_difference(rewritten, written)}: "
            "configuration is lost in between (read_snapshot must restore every attribute write_snapshot writes)"
        )
    if snapshot_to_bytes(ctx.serializer().snapshot_configuration()) != ctx.get(SNAPSHOT_BYTES):
        raise Violation("two snapshots of the same serializer wrote different bytes, should be identical")


@check(id="snapshot.restore", family="snapshot", requires=("snapshot.exact_read", "roundtrip.bit_exact"))
def restore(ctx: CheckContext) -> None:
    """restore_serializer() of the read snapshot equals the serializer and reads its bytes."""
    s = ctx.serializer()
    restored = guarded("restore_serializer", ctx.get(RESTORED_SNAPSHOT).restore_serializer)
    if restored != s:
        again = guarded("restore_serializer", ctx.get(RESTORED_SNAPSHOT).restore_serializer)
        if again != restored:  # not the snapshot: equality itself is not by configuration
            raise Violation(
                f"restore_serializer() gave {show(restored)}, should equal {show(s)}; two serializers "
                "restored from the same snapshot are not equal either, so __eq__ compares something "
                "other than configuration (an attribute such as a lock, handle or cache?): implement "
                "__eq__ and __hash__ by configuration only"
            )
        raise Violation(
            f"restore_serializer() gave {show(restored)}, should equal {show(s)} (the snapshot "
            "forgot or ignores configuration)"
        )

    ctx.for_all(ctx.subject.values, _reads_and_writes_as(s, restored, "the restored serializer"),
                max_examples=max(10, ctx.examples // 2))


def _reads_and_writes_as(s: Any, restored: Any, what: str) -> Any:
    """A property of one value: ``restored`` reads what ``s`` wrote to the same value and
    writes the same bytes. Each writes from a fresh ``duplicate()``: bytes that follow what a
    serializer wrote before (stale scratch state, ``roundtrip.key_determinism``'s finding) are
    then not blamed on the snapshot."""

    def body(value: Any) -> None:
        data = write(s.duplicate(), value)
        expect_equal(read_one(restored, data, f"{what}'s deserialize"), value, f"{what} reading the original's bytes")
        again = write(restored.duplicate(), value)
        if again != data:
            raise Violation(f"{what} wrote {hexdump(again)}, should write {hexdump(data)}")

    return body


@check(id="snapshot.self_resolution", family="snapshot", requires=("snapshot.exact_read",))
def self_resolution(ctx: CheckContext) -> None:
    """The serializer's snapshot judges its own restored snapshot as is (or reconfigured)."""
    s = ctx.serializer()
    result = guarded("resolve_schema_compatibility", resolve_compatibility,
                     s.snapshot_configuration(), ctx.get(RESTORED_SNAPSHOT))
    if result.is_compatible_as_is():
        return
    if not result.is_compatible_with_reconfigured_serializer():
        raise Violation(
            f"resolving the serializer's own snapshot gave {result!r}, should be "
            "compatible_as_is (or compatible_with_reconfigured_serializer)"
        )
    reconfigured = result.get_reconfigured_serializer()

    def body(value: Any) -> None:
        expect_equal(read_one(reconfigured, write(s, value)), value, "the reconfigured serializer")

    ctx.for_all(ctx.subject.values, body, max_examples=max(10, ctx.examples // 4))


def _own_serializers(ctx: Any) -> list[tuple[str, Any]]:
    """The serializer and every version the subject declares (evolutions, chain steps)."""
    found = [("the serializer", ctx.serializer())]
    for i, evo in enumerate(ctx.subject.evolutions):
        found.append((evo.label(i), evo.serializer()))
    for c, chain in enumerate(ctx.subject.chains):
        for i, evo in enumerate(chain):
            found.append((f"chain {c} step {i}", evo.serializer()))
    return found


def _known_serializers(ctx: Any) -> list[tuple[str, Any]]:
    found = _own_serializers(ctx)
    for label, peer in ctx.options.get("peers", ()):
        found.append((label, peer))
    return found


@check(id="snapshot.not_shared", family="snapshot", requires=("snapshot.exact_read",))
def not_shared(ctx: CheckContext) -> None:
    """Serializers of different layouts never write the same snapshot (else a restore cannot
    tell which layout the bytes have)."""
    serializers = _known_serializers(ctx)
    if len(serializers) < 2:
        ctx.not_applicable("no other serializer to compare with (declare evolutions)")
    seen: dict[bytes, tuple[str, Any]] = {}
    for label, serializer in serializers:
        try:
            data = snapshot_to_bytes(serializer.snapshot_configuration())
        except Exception:
            continue  # that serializer's own problems are reported by its own checks
        other = seen.get(data)
        if other is not None and other[1] != serializer:
            raise Violation(
                f"{other[0]} ({show(other[1])}) and {label} ({show(serializer)}) write the same "
                f"{type(serializer.snapshot_configuration()).__name__} bytes, should differ: the "
                "snapshot must record what distinguishes their layouts",
                example=bytes_example(data),
            )
        seen.setdefault(data, (label, serializer))


#: The fix for a snapshot whose text does not read back as it was written.
_TEXT_HINT = ("read text with read_utf where write_snapshot writes it with write_utf (Java's modified "
              "UTF-8, which is not Python's UTF-8 for NUL and for characters outside the BMP), or write "
              "and read it the same way (a length, then the same codec)")


@check(id="snapshot.corrupt_bytes", family="snapshot", requires=("snapshot.exact_read",))
def corrupt_bytes(ctx: CheckContext) -> None:
    """Truncated and corrupted snapshot bytes give a clear StateError, never a crash: every
    prefix of the snapshot (of a long one, ``SNAPSHOT_CUTS`` of them), and the snapshot with one
    byte flipped (by 0xFF, 0x80 and 0x01:
    a boolean's presence flag read as absent, a count off by one) at each of up to 256
    positions, in this project's form and in Flink's dialect where it differs; the version after
    the name of each of the reference's snapshot classes set to one no release wrote, refused;
    such a name put in a module nobody imported, refused naming that module. A name holding
    a character outside the BMP, written in standard UTF-8's 4-byte form instead of modified
    UTF-8's two surrogates, must be refused, as Java's readUTF refuses it. Of a serializer
    built only of the reference's classes, each number the snapshot's reading reads set to -1,
    the least or the greatest of its width: refused, or taken as it is (``_numbers_taken_as_read``)."""
    data = ctx.get(SNAPSHOT_BYTES)
    for cut in _snapshot_cuts(len(data)):
        try:
            snapshot_from_bytes(data[:cut])
        except StateError:
            continue
        except Exception as exc:
            raise Violation(
                f"reading the snapshot truncated to {cut} of {len(data)} bytes raised "
                f"{type(exc).__name__}: {exc}, should raise a reference.StateError "
                "(SnapshotFormatError) saying the bytes are truncated",
                example=bytes_example(data[:cut]),
            ) from None
        raise Violation(
            f"reading the snapshot truncated to {cut} of {len(data)} bytes succeeded, should "
            "fail with a StateError (read_snapshot does not read everything it wrote)",
            example=bytes_example(data[:cut]),
        )
    strict = reference_built(ctx.serializer())
    _flipped_bytes_refused_or_read(data, "the snapshot")
    _four_byte_utf8_refused(data, "the snapshot")
    _unknown_versions_refused(data, "the snapshot")
    _unknown_snapshot_classes_refused(data)
    if strict:
        _numbers_taken_as_read(data, "the snapshot", "reference")
    try:
        flink = snapshot_to_bytes(ctx.serializer().snapshot_configuration(), dialect="flink")
    except StateError:
        return  # no Flink form, or one that cannot be written: snapshot.flink_dialect's to judge
    if flink != data:
        _flipped_bytes_refused_or_read(flink, "the snapshot's Flink form")
        _four_byte_utf8_refused(flink, "the snapshot's Flink form")
        _unknown_versions_refused(flink, "the snapshot's Flink form")
        if strict:
            _numbers_taken_as_read(flink, "the snapshot's Flink form", "flink")


#: Versions no release of the reference's snapshot classes wrote (``snapshot.corrupt_bytes``).
UNKNOWN_VERSIONS = (0, -1, 1000)
#: How many snapshot class names of one form ``_unknown_versions_refused`` changes the version of.
VERSIONED_NAMES = 16


def _unknown_versions_refused(data: bytes, what: str) -> None:
    """The version after each name of one of the reference's snapshot classes in ``data`` set
    to one no release wrote (``UNKNOWN_VERSIONS``), and the outer version of a composite one
    that declares the outer versions it reads (``READ_OUTER_VERSIONS``) set to another: the
    snapshot must be refused with a StateError, as those classes refuse a version they do not
    know (read as theirs, a later layout would be misread byte after byte). A user's snapshot
    class decides for itself."""
    for end, name, cls in _snapshot_class_names(data):
        places: list[tuple[int, str, tuple[int, ...]]] = [(end, "version", UNKNOWN_VERSIONS)]
        if issubclass(cls, CompositeTypeSerializerSnapshot) and not any(
                "READ_OUTER_VERSIONS" in vars(k) for k in cls.__mro__ if k is not CompositeTypeSerializerSnapshot):
            raise Violation(f"{name}, a composite snapshot class of the reference, declares no READ_OUTER_VERSIONS: "
                            "it should say which outer versions it reads (None: any, as Flink's list and map "
                            "snapshots ignore theirs), so that another is refused")
        known = getattr(cls, "READ_OUTER_VERSIONS", None)
        if known is not None:
            places.append((end + CompositeTypeSerializerSnapshot.OUTER_VERSION_AT, "outer version",
                           tuple(v for v in UNKNOWN_VERSIONS + (max(known) + 1,) if v not in known)))
        for at, which, versions in places:
            _versions_refused(data, what, name, at, which, versions)
        if issubclass(cls, CompositeTypeSerializerSnapshot):
            _magic_numbers_refused(data, what, name, end, cls)


def _magic_numbers_refused(data: bytes, what: str, name: str, end: int, cls: type) -> None:
    """The magic numbers of a composite snapshot of the reference whose class name ends at
    ``end`` (``CompositeTypeSerializerSnapshot.MAGIC_NUMBERS``: the first after its version, the
    second the first of its kind after its outer version), and the first optional-map header of
    a class whose Flink form has them (``PojoSerializerSnapshot.OPTIONAL_MAP_HEADER``), each with
    its lowest bit flipped: refused, as Flink refuses a snapshot whose layout it does not
    recognise."""
    composite, nested = CompositeTypeSerializerSnapshot.MAGIC_NUMBERS
    start = end + CompositeTypeSerializerSnapshot.OUTER_VERSION_AT + 4
    places = [(end + 4, "composite magic number", composite),
              (data.find(nested.to_bytes(4, "big"), start), "nested-serializers magic number", nested)]
    for at, which, magic in places:
        if at >= 0 and data[at:at + 4] == magic.to_bytes(4, "big"):
            _versions_refused(data, what, name, at, which, (magic ^ 1,), refuses="a layout it does not recognise")
    header = getattr(cls, "OPTIONAL_MAP_HEADER", None)  # Flink's POJO form: a long before each map
    at = data.find(header.to_bytes(8, "big"), end) if header is not None else -1
    if at >= 0:
        low = int.from_bytes(data[at + 4:at + 8], "big", signed=True)
        _versions_refused(data, what, name, at + 4, "optional-map header's low word", (low ^ 1,),
                          refuses="a layout it does not recognise")


def _unknown_snapshot_classes_refused(data: bytes) -> None:
    """Each name of one of the reference's snapshot classes in ``data`` (this project's form:
    ``module:qualname``) replaced by the same class in a module nobody imported
    (``MISSING_MODULE``): refused with a StateError that names that module, as a savepoint
    restored before the module defining its serializer's snapshot class is imported must say."""
    for end, name, _ in _snapshot_class_names(data):
        if ":" not in name:
            continue
        missing = f"{MISSING_MODULE}:{name.rpartition(':')[2]}"
        at = end - len(_utf(name))
        where = f"the snapshot, byte {at}: the snapshot class {name!r} replaced by {missing!r} (a module not imported)"
        unknown = data[:at] + _utf(missing) + data[end:]
        restored, exc = _restored_or_refused(unknown, where, "naming the module to import", "name the module to import")
        if restored is not None or not re.search(re.escape(MISSING_MODULE) + r"(?![\w:.$])", str(exc)):
            got = "restored" if restored is not None else f"raised StateError: {exc}"
            raise Violation(f"reading the snapshot {got}; it should raise a StateError naming the module to import, "
                            f"{MISSING_MODULE!r}, on its own [{where}]", example=bytes_example(unknown, 64))


def _versions_refused(data: bytes, what: str, name: str, at: int, which: str, versions: tuple[int, ...],
                      refuses: str = "a version it does not know") -> None:
    """``data`` with the 4 bytes at ``at`` (a class's ``which``) set to each of ``versions``: refused."""
    for version in versions:
        broken = data[:at] + version.to_bytes(4, "big", signed=True) + data[at + 4:]
        where = f"{what}, the {which} of {name} (byte {at}) set to {version}"
        restored, _ = _restored_or_refused(broken, where, f"refusing the {which}", f"refuse {refuses}")
        if restored is None:
            continue
        raise Violation(
            f"reading {what} with the {which} of {name} (byte {at}) set to {version} succeeded, should "
            f"fail with a StateError: no release of {name} wrote that {which}, and a snapshot class of "
            f"the reference refuses {refuses}", example=bytes_example(broken, 64))


def _snapshot_class_names(data: bytes, limit: int = VERSIONED_NAMES) -> list[tuple[int, str, type]]:
    """Where each name of one of the reference's snapshot classes ends in ``data`` (its version
    follows), with the name and the class: the first ``limit`` of them."""
    def reference_class(name: str) -> type | None:
        cls = snapshot_class(name)
        return cls if cls.__module__.split(".")[0] == "reference" else None

    return [(end, name, cls) for _, end, name, cls in _utf_names(data, reference_class, limit, room=4)]


def _utf_names(data: bytes, resolve: Callable[[str], Any], limit: int, room: int = 0) -> list[tuple[int, int, str, Any]]:
    """The strings of ``data`` written as Java's ``writeUTF`` does (an unsigned 2-byte length,
    modified UTF-8), holding a "." or ":" and followed by ``room`` bytes at least, that
    ``resolve`` maps to something (None, or a StateError: not a name): as (offset, end, name,
    what it resolves to), the first ``limit`` of them. A name found is skipped whole."""
    found: list[tuple[int, int, str, Any]] = []
    at = 0
    while at + 2 < len(data) and len(found) < limit:
        end = at + 2 + (data[at] << 8 | data[at + 1])
        if end - at > 4 and end + room <= len(data) and (data.find(b":", at + 2, end) >= 0
                                                         or data.find(b".", at + 2, end) >= 0):
            try:
                name = DataInputView(data[at:end]).read_utf()
                target = resolve(name)
            except StateError:
                target = None
            if target is not None:
                found.append((at, end, name, target))
                at = end
                continue
        at += 1
    return found


#: A supplementary character in modified UTF-8 (Java's writeUTF): two 3-byte surrogates.
_SURROGATE_PAIR = re.compile(rb"\xed[\xa0-\xaf][\x80-\xbf]\xed[\xb0-\xbf][\x80-\xbf]")


def _four_byte_utf8_refused(data: bytes, what: str) -> None:
    """Each supplementary character of the snapshot's names (modified UTF-8: two 3-byte
    surrogates) put in standard UTF-8's 4-byte form, padded to the same 6 bytes with "__": Java's
    readUTF refuses a 4-byte sequence, so the snapshot must be refused with a StateError (read,
    it would be a savepoint Flink cannot restore, or a name read as another)."""
    for found in _SURROGATE_PAIR.finditer(data):
        # The two surrogate halves, paired again by a round trip through UTF-16.
        char = found.group().decode("utf-8", "surrogatepass").encode("utf-16-be", "surrogatepass").decode("utf-16-be")
        standard = char.encode("utf-8") + b"__"
        broken = data[:found.start()] + standard + data[found.end():]
        try:
            snapshot_from_bytes(broken)
        except StateError:
            continue
        except Exception as exc:
            raise Violation(
                f"reading {what} with the supplementary character at byte {found.start()} in standard UTF-8's "
                f"4-byte form raised {type(exc).__name__}: {exc}, should raise a reference.StateError",
                example=bytes_example(broken)) from None
        raise Violation(
            f"reading {what} with the supplementary character at byte {found.start()} in standard UTF-8's "
            f"4-byte form ({hexdump(standard[:4])}) succeeded, should fail with a StateError: Java's readUTF "
            "refuses a 4-byte sequence (modified UTF-8 writes two 3-byte surrogates), so Flink would refuse "
            "what this reads", example=bytes_example(broken))


#: Snapshots up to this many bytes are cut at every byte; a longer one (a RowData snapshot's
#: Java object streams, which are read to their end from every cut) at every byte of its first
#: half of this and its last quarter, and at as many positions spread between.
SNAPSHOT_CUTS = 2048


def _snapshot_cuts(size: int) -> list[int]:
    """Where ``snapshot.corrupt_bytes`` cuts a snapshot of ``size`` bytes (``SNAPSHOT_CUTS``)."""
    return spread_positions(size, SNAPSHOT_CUTS, SNAPSHOT_CUTS // 2, SNAPSHOT_CUTS // 4, SNAPSHOT_CUTS // 4)


def _flipped_bytes_refused_or_read(data: bytes, what: str) -> None:
    positions = range(len(data)) if len(data) <= 256 else range(0, len(data), len(data) // 256 + 1)
    for at in positions:
        for flip in CORRUPTIONS:
            broken = bytearray(data)
            broken[at] ^= flip
            try:
                snap = snapshot_from_bytes(bytes(broken))
                snap.restore_serializer()
            except StateError:
                continue
            except RecursionError:
                raise Violation(f"corrupting byte {at} of {what} led to unbounded recursion, should raise a "
                                "StateError") from None
            except Exception as exc:
                raise Violation(
                    f"reading {what} with byte {at} corrupted (xor {flip:#04x}) raised {type(exc).__name__}: "
                    f"{exc}, should raise a reference.StateError naming the problem",
                    example=bytes_example(bytes(broken)),
                ) from None


#: How many corrupted forms of a snapshot ``snapshot.corrupt_bytes`` makes by setting a number its
#: reading reads to an extreme (``int_extremes``), for a serializer of the reference's classes.
SNAPSHOT_NUMBERS = 128

#: What ``snapshot.corrupt_bytes`` says when a number of a snapshot was read as another one.
_SNAPSHOT_NUMBER_READ_AS_ANOTHER = (
    "the number was taken as another one. The reference's snapshot classes take each number of a snapshot "
    "as it is (a padding, a width, a count that counts what follows) or refuse it with a StateError "
    "when they cannot (a version no release wrote, a negative count, one past the bytes left); the "
    "outer version of a composite snapshot that reads any (READ_OUTER_VERSIONS = None) is not judged, "
    "as Flink ignores it")


def _numbers_taken_as_read(data: bytes, what: str, dialect: str) -> None:
    """Each short, int or long the reading of ``data`` (a snapshot of the reference's classes,
    written in ``dialect``) reads, set to -1, the least or the greatest of its width
    (``int_extremes``, ``SNAPSHOT_NUMBERS`` of them at most): refused with a StateError, or read
    as a snapshot that writes those bytes again and restores a serializer whose snapshot writes
    them too. A negative count read as none, or a padding taken from elsewhere than the
    snapshot, shows as other bytes written; flipped bytes rarely make such a number."""
    source = IntReads(data)
    read_serializer_snapshot(source)
    any_outer_version = {
        end + CompositeTypeSerializerSnapshot.OUTER_VERSION_AT
        for end, _, cls in _snapshot_class_names(data, limit=len(data))
        if issubclass(cls, CompositeTypeSerializerSnapshot) and getattr(cls, "READ_OUTER_VERSIONS", None) is None
    }
    numbers = [(at, width) for at, width in source.at if at not in any_outer_version]
    for how, broken in int_extremes(data, numbers, SNAPSHOT_NUMBERS):
        where = f"{what} with {how}"
        try:
            snap = snapshot_from_bytes(broken)
            written = [("the snapshot read", snapshot_to_bytes(snap, dialect=dialect))]
            restored = snap.restore_serializer()
            written.append(("the snapshot of the serializer it restores",
                            snapshot_to_bytes(restored.snapshot_configuration(), dialect=dialect)))
        except StateError:
            continue
        except Exception as exc:
            raise Violation(f"reading {where} raised {type(exc).__name__}: {exc}, should raise a reference.StateError "
                            "naming the problem (the reference's snapshot classes refuse corrupt bytes so; another "
                            "exception is a guard missing)", example=bytes_example(broken)) from None
        for which, got in written:
            if got != broken:
                raise Violation(f"{where} was read, and {which} writes other bytes {bytes_difference(got, broken)}: "
                                f"{_SNAPSHOT_NUMBER_READ_AS_ANOTHER}", example=bytes_example(broken))


# -- class confusion ----------------------------------------------------------------------------
#: How many class names of one form (the reference's, Flink's) class_confusion replaces.
CONFUSED_NAMES = 6
#: How many of the subject's records a serializer restored from a confused snapshot reads.
CONFUSED_RECORDS = 5
#: Java names the decoys answer to, for the Flink dialect's form (which names classes so).
_DECOY_JAVA_PACKAGE = "org.conformance.decoys."


class ConfusionEnum(enum.Enum):
    """A registered Enum class, named where a snapshot names a class of another kind."""

    DECOY = 1


@dataclasses.dataclass
class ConfusionRecord:
    """A registered dataclass, named where a snapshot names a class of another kind."""

    decoy: int = 0


class ConfusionClass:
    """A registered class that is neither an Enum class nor a dataclass."""


def confusion_function() -> None:
    """A registered object that is no class at all (the registry takes any object with a
    module and a qualified name)."""


#: kind -> the registered decoy of that kind.
_DECOYS: dict[str, Any] = {"an Enum class": ConfusionEnum, "a dataclass": ConfusionRecord,
                           "a class neither Enum nor dataclass": ConfusionClass,
                           "a non-class object": confusion_function}
_decoys_registered: list[bool] = []
_decoys_lock = threading.Lock()


def _register_decoys() -> None:
    """Register the decoys, once (by ``module:qualname`` and by a Java name)."""
    with _decoys_lock:
        if not _decoys_registered:
            for decoy in _DECOYS.values():
                register_type(cast(type, decoy), _DECOY_JAVA_PACKAGE + decoy.__qualname__)
            _decoys_registered.append(True)


def kind_of(found: Any) -> str:
    """What kind of object a registry name resolves to (the keys of ``_DECOYS``)."""
    if not isinstance(found, type):
        return "a non-class object"
    if issubclass(found, enum.Enum):
        return "an Enum class"
    if dataclasses.is_dataclass(found):
        return "a dataclass"
    return "a class neither Enum nor dataclass"


def registry_names(data: bytes, limit: int = CONFUSED_NAMES) -> list[tuple[int, int, str, Any]]:
    """The strings of ``data`` written as Java's ``writeUTF`` does that resolve through
    ``reference.lookup_type`` and are no snapshot class: as (offset, end, name, what it resolves
    to), the first ``limit`` of them."""
    def registered(name: str) -> Any:
        if not name.isprintable() or " " in name:
            return None
        target = lookup_type(name)
        return target if target is not None and not _names_snapshot_class(name) else None

    return _utf_names(data, registered, limit)


def _names_snapshot_class(name: str) -> bool:
    try:
        snapshot_class(name)
    except UnknownSnapshotClassError:
        return False
    return True


def _utf(text: str) -> bytes:
    out = DataOutputView()
    out.write_utf(text)
    return out.getvalue()


def _confused_forms(ctx: Any) -> list[tuple[str, bytes]]:
    """The snapshot's top-level forms a savepoint may hold: the reference's, and Flink's where
    it differs."""
    forms = [("the snapshot", ctx.get(SNAPSHOT_BYTES))]
    try:
        flink = snapshot_to_bytes(ctx.serializer().snapshot_configuration(), dialect="flink")
    except StateError:
        return forms
    if flink != forms[0][1]:
        forms.append(("the snapshot's Flink form", flink))
    return forms


#: The module of the class ``snapshot.class_confusion`` names where no class is known.
MISSING_MODULE = "conformance_not_imported"


@check(id="snapshot.class_confusion", family="snapshot", requires=("snapshot.exact_read",))
def class_confusion(ctx: CheckContext) -> None:
    """A class the snapshot names, replaced by a registered class of another kind, is refused
    with a StateError (or works), never used as if it were of the kind expected; replaced by a
    class of a module not imported, refused with a StateError (naming the module, by the
    reference's own classes)."""
    _register_decoys()
    records: list[bytes] | None = None
    tried = 0
    for at, end, name, _ in registry_names(ctx.get(SNAPSHOT_BYTES)):
        tried += 1
        _unknown_class_refused(ctx, ctx.get(SNAPSHOT_BYTES), at, end, name)
    for form, data in _confused_forms(ctx):
        for at, end, name, target in registry_names(data):
            kind = kind_of(target)
            for decoy_kind, decoy in _DECOYS.items():
                if decoy_kind == kind:
                    continue
                decoy_name = class_identity(decoy) if ":" in name else _DECOY_JAVA_PACKAGE + decoy.__qualname__
                confused = data[:at] + _utf(decoy_name) + data[end:]
                where = (f"{form}, byte {at}: {name!r} ({kind}) replaced by {decoy_name!r} (registered, "
                         f"{decoy_kind})")
                tried += 1
                restored = _confused_restore(confused, where)
                if restored is None:
                    continue
                if records is None:
                    records = _some_records(ctx)
                for record in records:
                    _confused_read(restored, record, where)
    if not tried:
        ctx.not_applicable("the snapshot names no class through the registry (reference.lookup_type): "
                           "no class to confuse")


def _unknown_class_refused(ctx: Any, data: bytes, at: int, end: int, name: str) -> None:
    """The snapshot ``data`` with the class ``name`` (bytes ``at:end``) replaced by one of
    ``MISSING_MODULE``, which no process has imported: restoring it raises a StateError (or
    works), whose message names the module when the serializer is the reference's own."""
    missing = f"{MISSING_MODULE}:{name.rpartition(':')[2] or 'Missing'}" if ":" in name else f"{MISSING_MODULE}.Missing"
    where = f"the snapshot, byte {at}: {name!r} replaced by {missing!r} (a module not imported)"
    unknown = data[:at] + _utf(missing) + data[end:]
    _, exc = _restored_or_refused(unknown, where, "(or restore)", "say which class is not known and which module to import")
    wanted = MISSING_MODULE if ":" in missing else missing  # a Java name has no module apart
    if exc is not None and reference_built(ctx.serializer()) and not re.search(re.escape(wanted) + r"(?![\w:.$])", str(exc)):
        raise Violation(
            f"restoring the snapshot raised StateError: {exc}; it should name the module to import, "
            f"{wanted!r}, on its own [{where}]: a savepoint restored where the user's module is not "
            "imported must say which one", example=bytes_example(unknown, 64))


def _confused_restore(data: bytes, where: str) -> Any:
    """The serializer restored from ``data`` as a restore does (default options), None when
    reading or restoring refused it with a StateError."""
    return _restored_or_refused(data, where, "(or restore)", "check the class a snapshot names is of the kind it "
                                "expects before using it; raise StateError")[0]


def _restored_or_refused(data: bytes, where: str, should: str, fix: str) -> tuple[Any, StateError | None]:
    """(the serializer restored from ``data`` as a restore does, None), or (None, the StateError
    that refused it); any other exception is a Violation saying where, what it ``should`` do
    besides raising a StateError, and the ``fix``."""
    try:
        return snapshot_from_bytes(data).restore_serializer(), None
    except StateError as exc:
        return None, exc
    except RecursionError:
        raise Violation(f"reading and restoring recursed without bound, should raise a StateError [{where}]") from None
    except Exception as exc:
        raise Violation(
            f"reading and restoring the snapshot raised {type(exc).__name__}: {exc}, should raise a "
            f"reference.StateError {should} [{where}]: {fix}", example=bytes_example(data, 64)) from None


def _confused_read(restored: Any, record: bytes, where: str) -> None:
    try:
        restored.deserialize(DataInputView(record))
    except StateError:
        return
    except Exception as exc:
        raise Violation(
            f"the serializer restored from the snapshot ({show(restored)}) raised {type(exc).__name__}: "
            f"{exc} reading a record the serializer wrote, should raise a reference.StateError (or read "
            f"it) [{where}]: check the class a snapshot names is of the kind it expects before using it "
            "(when restoring); raise StateError",
            example=bytes_example(record),
        ) from None


def _some_records(ctx: Any) -> list[bytes]:
    values: list[Any] = []
    ctx.for_all(ctx.subject.values, values.append, max_examples=CONFUSED_RECORDS)
    s = ctx.serializer()
    return [write(s, value) for value in values[:CONFUSED_RECORDS]]


# -- untrusted forms ----------------------------------------------------------------------------
_unpickled: set[int] = set()
_tokens = itertools.count()


def marker_unpickled(token: int) -> str:
    """What unpickling an ``UnpicklingMarker`` calls: records that it happened."""
    _unpickled.add(token)
    return "an unpickled marker"


class UnpicklingMarker:
    """A harmless object whose unpickling is seen (``marker_unpickled``)."""

    def __init__(self, token: int) -> None:
        self.token = token

    def __reduce__(self) -> tuple[Any, tuple[int]]:
        return marker_unpickled, (self.token,)


def _marker() -> tuple[int, bytes]:
    token = next(_tokens)
    return token, pickle.dumps(UnpicklingMarker(token), protocol=5)


#: The two public readers of a savepoint's snapshot bytes, each as a restore calls it (defaults).
_READERS = (("snapshot_from_bytes", lambda data: snapshot_from_bytes(data)),
            ("read_serializer_snapshot", lambda data: read_serializer_snapshot(DataInputView(data))))


@check(id="snapshot.untrusted_form", family="snapshot", requires=API)
def untrusted_form(ctx: CheckContext) -> None:
    """A savepoint's snapshot that would unpickle (the pre-1.7 form, a PickleSerializer's
    records) is refused by the readers' defaults, and nothing is unpickled."""
    from reference.serializers import ListSerializer, PickleSerializer

    for reader, read in _READERS:
        token, payload = _marker()
        legacy = DataOutputView()
        legacy.write_int(1)  # Flink's proxy version of the pre-1.7 form: int length, serialized serializer
        legacy.write_int(len(payload))
        legacy.write(payload)
        where = f"{reader}() with its defaults, of the pre-1.7 form (proxy version 1) holding a pickle"
        _refused_naming(token, where, "allow_pickled_serializer", functools.partial(read, legacy.getvalue()),
                        "", "the pre-1.7 form", "unpickling runs code the savepoint names")

        token, payload = _marker()
        record = DataOutputView()
        record.write_int(len(payload))
        record.write(payload)
        where = f"a PickleSerializer restored from its snapshot read by {reader}() with its defaults"
        snapshot = guarded(f"reading a PickleSerializer's snapshot with {reader}()",
                           read, snapshot_to_bytes(PickleSerializer().snapshot_configuration()))
        restored = guarded(f"restoring a PickleSerializer's snapshot read by {reader}()", snapshot.restore_serializer)
        _refused_naming(token, where, "allow_pickle", functools.partial(restored.deserialize, DataInputView(record.getvalue())),
                        " reading a pickled record", "it", "the snapshot's bytes are no opt-in")

        # The same PickleSerializer nested in a list: a nested snapshot read takes the enclosing
        # read's choice, never an opt-in of its own.
        token, _ = _marker()
        nested = ListSerializer(PickleSerializer())
        where = f"a list of PickleSerializer restored from its snapshot read by {reader}() with its defaults"
        snapshot = guarded(f"reading the snapshot of a list of PickleSerializer with {reader}()",
                           read, snapshot_to_bytes(nested.snapshot_configuration()))
        restored = guarded(f"restoring the snapshot of a list of PickleSerializer read by {reader}()",
                           snapshot.restore_serializer)
        records = nested.to_bytes([UnpicklingMarker(token)])
        _refused_naming(token, where, "allow_pickle", functools.partial(restored.deserialize, DataInputView(records)),
                        " reading a list of a pickled record", "it",
                        "a nested snapshot inherits the reader's choice, and the bytes are no opt-in")


def _refused_naming(token: int, where: str, opt_in: str, attempt: Any, doing: str, refused: str, why: str) -> None:
    """``attempt()`` must raise a StateError naming ``opt_in`` and unpickle nothing (the marker
    ``token``); ``doing`` and ``refused`` word the messages, ``why`` says why it matters."""
    try:
        got = attempt()
    except StateError as exc:
        _not_unpickled(token, where)
        if opt_in not in str(exc):
            raise Violation(f"got {type(exc).__name__}: {exc}{doing}, should name the opt-in {opt_in}=True "
                            f"[{where}]") from None
    except Exception as exc:
        _not_unpickled(token, where)
        raise Violation(f"got {type(exc).__name__}: {exc}{doing}, should raise a reference.StateError naming "
                        f"{opt_in} [{where}]") from None
    else:
        _not_unpickled(token, where)
        raise Violation(f"got {show(got)}{doing}, should refuse {refused} with a StateError naming {opt_in} "
                        f"[{where}]: {why}")


def _not_unpickled(token: int, where: str) -> None:
    if token in _unpickled:
        _unpickled.discard(token)
        raise Violation(f"got the pickle unpickled (its marker ran), should be left as bytes [{where}]: "
                        "reading a savepoint's snapshot must unpickle nothing unless the caller opts in "
                        "(allow_pickled_serializer=True, allow_pickle=True)")


@check(id="snapshot.flink_dialect", family="snapshot", requires=("snapshot.restore",))
def flink_dialect(ctx: CheckContext) -> None:
    """Where the snapshot names Flink classes, its form in Flink's dialect (Java names and
    layouts, what a Flink job restoring the savepoint reads) reads back, writes itself again
    unchanged, and restores a serializer that reads and writes the serializer's records as
    they are; with ``Subject(flink_snapshot=...)``, that form is those bytes, the ones Flink
    writes. Read under another name its class answers to (``reference.snapshot_aliases()``), it
    writes what that name stands for."""
    s = ctx.serializer()
    flink = ctx.subject.flink_snapshot
    try:
        data = snapshot_to_bytes(s.snapshot_configuration(), dialect="flink")
    except NoFlinkFormError as exc:
        if flink is not None:
            raise Violation(f"the snapshot has no form in Flink's dialect ({exc}), should be the bytes Flink writes "
                            "for this serializer (Subject(flink_snapshot=...))", example=bytes_example(flink)) from None
        ctx.not_applicable(f"the snapshot has no form in Flink's dialect ({exc})")
    except StateError as exc:
        raise Violation(
            f"writing the snapshot in Flink's dialect raised {type(exc).__name__}: {exc}; should write its Flink "
            "form, or raise reference.NoFlinkFormError when the format it describes has none (no Flink "
            "serializer reads it)") from None
    if flink is not None and data != flink:
        raise Violation(
            f"the snapshot's form in Flink's dialect is not the one Flink writes for this serializer "
            f"(Subject(flink_snapshot=...)) {bytes_difference(data, flink)}: a Flink job restoring a savepoint "
            "written in Flink's dialect reads these bytes (its Java class names, versions and layout)")
    if flink is None and data == ctx.get(SNAPSHOT_BYTES):
        ctx.not_applicable("the snapshot names no Flink (Java) class, so Flink's dialect writes it unchanged "
                           "(its module:qualname): nothing of Flink's to check")
    back = guarded("reading the snapshot's Flink form", _trusted_snapshot, data)
    again = guarded("writing the read Flink form", snapshot_to_bytes, back, "flink")
    if again != data:
        raise Violation(
            f"the snapshot's Flink form read back writes {hexdump(again)}, should write the bytes it was "
            f"read from ({hexdump(data)}): Flink's form loses or changes configuration on the way",
        )
    _read_under_aliases(ctx.get(SNAPSHOT_BYTES), data)
    restored = guarded("restore_serializer of the Flink form", back.restore_serializer)

    ctx.for_all(ctx.subject.values, _reads_and_writes_as(s, restored, "the serializer restored from the Flink form"),
                max_examples=max(10, ctx.examples // 4))


_DIALECT_NAMES = {"flink": "Flink's dialect", "reference": "the reference dialect"}

#: Other names the reference's own snapshot classes answer to when reading: alias -> (the name it
#: stands for, its dialect, why), as ``reference.snapshot_aliases()`` must list them. Facts of
#: Flink's classes and of the reference's releases, held here so that the check does not take its
#: cases from the code it judges alone.
KNOWN_ALIASES: dict[str, tuple[str, str, str]] = {
    "org.apache.flink.runtime.state.ArrayListSerializerSnapshot": (
        "org.apache.flink.api.common.typeutils.base.ListSerializerSnapshot", "flink",
        "Flink writes a list state's serializer snapshot under that class, and reads it as a ListSerializerSnapshot"),
    "reference.serializers._avro:AvroSerializerSnapshot": (
        "reference.serializers:AvroSerializerSnapshot", "reference",
        "the reference's earlier releases wrote the Avro snapshot under that name"),
}


def _read_under_aliases(reference_form: bytes, flink_form: bytes) -> None:
    """A snapshot whose class is named by another name it answers to when reading
    (``reference.snapshot_aliases``) writes what that name stands for: an earlier identity
    writes the class's identity, and its Java name in Flink's dialect (a savepoint of an
    earlier release written out for Flink); a Java alias (another Flink class read as this one,
    such as the list state's ArrayListSerializerSnapshot) is written back in Flink's dialect,
    since that class is the one Flink instantiates. Only the top-level class is renamed: a
    nested snapshot may sit inside a length its enclosing snapshot wrote. The names the
    reference's own classes answer to (``KNOWN_ALIASES``) are read under whatever that function
    lists, and it must list them."""
    listed = snapshot_aliases()
    for alias, (name, dialect) in {**listed, **{k: v[:2] for k, v in KNOWN_ALIASES.items()}}.items():
        form = flink_form if dialect == "flink" else reference_form
        head = form[:4] + _utf(name)  # the proxy version, then the top-level class's name
        if not form.startswith(head):
            continue
        if alias in KNOWN_ALIASES and listed.get(alias) != (name, dialect):
            raise Violation(
                f"reference.snapshot_aliases() gives {listed.get(alias)!r} for {alias}, should give {(name, dialect)!r}: "
                f"{KNOWN_ALIASES[alias][2]}")
        aliased = form[:4] + _utf(alias) + form[len(head):]
        back = guarded(f"reading the snapshot with {name} named by its alias {alias}", _trusted_snapshot, aliased)
        wanted = [("flink", aliased)] if dialect == "flink" else [("reference", reference_form), ("flink", flink_form)]
        for written_in, expected in wanted:
            got = guarded(f"writing the snapshot read under the alias {alias}", snapshot_to_bytes, back, written_in)
            if got != expected:
                raise Violation(
                    f"the snapshot read with {name} named by its alias {alias} writes in "
                    f"{_DIALECT_NAMES[written_in]} {bytes_difference(got, expected)}: {alias} stands for {name}"
                    + (", which Flink's dialect writes back as read (the class Flink reads)" if dialect == "flink" else
                       " (an earlier name of the class), which every later write names by the class's own name"),
                    example=bytes_example(aliased))
