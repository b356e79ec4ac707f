"""Flink's keyed-state (and operator-state) streams of a canonical savepoint, read without any
user class, and the public model of a Flink savepoint (docs/flink-savepoints.md).

A ``KeyGroupsSavepointStateHandle`` names one stream (inline bytes or a file) per subtask:

- a header (``KeyedBackendSerializationProxy`` version 6): ``int 6 | bool compressed | key
  serializer snapshot | short n | n x StateMetaInfo``, StateMetaInfo (``StateMetaInfoSnapshot``
  v6) = ``UTF name | int backend type (0 KEY_VALUE, 1 OPERATOR, 2 BROADCAST, 3 PRIORITY_QUEUE)
  | int n x (UTF, UTF) options | int n x (UTF key, serializer snapshot)``; snapshots are read with
  ``reference.read_serializer_snapshot`` (Flink's class names);
- then, at each key group's offset, that key group's entries (``FullSnapshotAsyncWriter``), in a
  Snappy framed stream of its own when the header says compressed: ``short stateId | {int klen,
  key | int vlen, value}... | short 0xFFFF``; the top bit of a key's first byte marks the last
  entry before the next ``short stateId`` (or the end mark), and is cleared before the key is read.

Keys (``CompositeKeySerializationUtils``): ``key group (1 byte if max parallelism <= 128, else 2,
big-endian) | key | namespace | [user key, map state]``; when the key's and the namespace's
serializers are both of variable length, each is followed by its length in bytes (little-endian
base 256, at least one byte). Values: value / reducing / aggregating state the value's bytes; list
state the elements joined by 0x2C; map state one entry per user key, the value after a boolean
is-null; a state with a time-to-live wraps each value (each list element, each map value) as
``long lastAccess | value`` (``TtlValue``); timers (PRIORITY_QUEUE) are keys ``key group | long
(timestamp XOR Long.MIN_VALUE) | key | namespace`` with an empty value.

Decoding uses ``reference.serializers.record_serializer``: POJOs and enums whose classes are not
registered read as plain records and constant names. A key, namespace or value that cannot be
decoded (a serializer the reference does not have, a PickleSerializer) is an ``Undecoded`` holding
its bytes; nothing read triggers an import or an unpickling. Files are read in 64 KiB pieces,
one key group at a time, so memory stays bounded by the largest entry. ``FlinkKeyedState.rows``
gives the entries split into key, namespace and user key bytes as this project's savepoint rows
hold them (what the state backends restore); ``_flink_writer.write_keyed_flink_savepoint`` is its
inverse.

Operator-state streams (``OperatorBackendSerializationProxy`` version 6): ``int 6 | bool
compressed | short n x StateMetaInfo | short n x StateMetaInfo (broadcast)``, then the elements at
the offsets the metadata lists (one element each; a broadcast state ``int n`` then n keys and
values), one Snappy framed stream flushed per element when compressed.
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .._bounds import MAX_FLINK_HEADER_BYTES, MAX_SNAPPY_EXPANSION
from .._errors import SerializationError, StateError, UnknownSnapshotClassError
from .._io import DataInputView
from .._snapshot import TypeSerializerSnapshot, java_snapshot_name, read_serializer_snapshot
from ..serializers import (
    ListSerializerSnapshot,
    MapSerializerSnapshot,
    TimerSerializerSnapshot,
    TtlSerializerSnapshot,
    record_serializer,
)
from ._flink_metadata import (
    FlinkMetadata,
    FlinkOperatorMetadata,
    KeyGroupsHandle,
    OperatorStateHandle,
    StreamHandle,
    operator_id_for_uid,
    read_flink_metadata,
    resolve_stream,
)
from ._format import LIST_DELIMITER, SavepointFormatError
from ._storage import Location

__all__ = [
    "FlinkEntry",
    "FlinkKeyedState",
    "FlinkOperator",
    "FlinkOperatorState",
    "FlinkSavepoint",
    "FlinkStateMeta",
    "KeyedStateHeader",
    "OperatorStateValue",
    "RawEntry",
    "Undecoded",
    "UnreadSnapshot",
    "read_flink_savepoint",
    "read_keyed_header",
]

HEADER_VERSION = 6
BACKEND_STATE_TYPES = ("KEY_VALUE", "OPERATOR", "BROADCAST", "PRIORITY_QUEUE")
#: StateDescriptor.Type names in the KEYED_STATE_TYPE option -> the kind this reader reports.
_KINDS = {"VALUE": "value", "LIST": "list", "MAP": "map", "REDUCING": "reducing", "AGGREGATING": "aggregating"}
_END_OF_KEY_GROUP = -1  # short 0xFFFF
_LAST_ENTRY_BIT = 0x80
_CHUNK = 1 << 16
#: What decoding corrupt bytes can raise besides a StateError (reported as SavepointFormatError).
_CORRUPT = (ValueError, TypeError, KeyError, IndexError, OverflowError, AttributeError, RecursionError,
            MemoryError)


@dataclass(frozen=True)
class Undecoded:
    """A key, namespace, user key or value the reference cannot decode: its ``data`` bytes,
    ``why`` (the serializer snapshot it was written with) and, where that snapshot names it, the
    Java class of the value (``java_class``, e.g. the class a Kryo snapshot serializes)."""

    data: bytes
    why: str
    java_class: str | None = None


class FlinkEntry(NamedTuple):
    """One decoded entry: a value state's value, a list state's list (one entry per key), a map
    state's value for one ``user_key``, or a timer (``value`` is its timestamp)."""

    key_group: int
    key: Any
    namespace: Any
    user_key: Any
    value: Any


class RawEntry(NamedTuple):
    """One entry as stored: the whole composite key (key-group prefix included, the last-entry
    bit cleared) and the value bytes."""

    key_group: int
    key: bytes
    value: bytes


@dataclass(frozen=True)
class FlinkStateMeta:
    """One state of a keyed-state header (``StateMetaInfoSnapshot``)."""

    name: str
    backend_type: str
    options: dict[str, str]
    serializers: dict[str, TypeSerializerSnapshot[Any]]
    #: Each serializer snapshot's bytes as stored (its top-level form), by the same keys (what a
    #: writer carries over unchanged).
    snapshot_bytes: dict[str, bytes] = field(default_factory=dict, repr=False, compare=False)
    #: The whole StateMetaInfo as stored.
    raw: bytes = field(default=b"", repr=False, compare=False)


@dataclass(frozen=True)
class KeyedStateHeader:
    compressed: bool
    key_serializer: TypeSerializerSnapshot[Any]
    states: tuple[FlinkStateMeta, ...]
    size: int
    #: The key serializer snapshot's bytes as stored.
    key_serializer_bytes: bytes = field(default=b"", repr=False, compare=False)


# -- byte sources -------------------------------------------------------------------------------
class _Source:
    """The bytes of one stream handle: inline, or a file opened once and read in 64 KiB
    pieces from any offset."""

    def __init__(self, handle: StreamHandle, directory: Location, allow_external_files: bool) -> None:
        self.handle = handle
        self._data = handle.data
        self._file: Any = None
        if handle.data is not None:
            self.where = f"inline state {handle.name!r}"
            self.size = len(handle.data)
            return
        location = resolve_stream(handle, directory, allow_external_files)
        self.where = location.uri
        try:
            size = location.size()
        except OSError as exc:
            raise SavepointFormatError(f"{location.uri}: cannot be read ({type(exc).__name__}: {exc})") from None
        if size is None:
            raise SavepointFormatError(f"{location.uri}: the state file the savepoint's _metadata names is missing")
        if size != handle.size:
            raise SavepointFormatError(
                f"{location.uri}: {size} bytes, the savepoint's _metadata says {handle.size}; the "
                "file is damaged, truncated or from another savepoint"
            )
        self.size = size
        self._location = location

    def _open(self) -> Any:
        if self._file is None:
            location = self._location
            if location.remote:
                with location.guard("opening"):
                    self._file = location.filesystem().open_input_file(location.path)
            else:
                self._file = open(location.path, "rb", buffering=0)  # noqa: SIM115
        return self._file

    def pread(self, offset: int, n: int) -> bytes:
        n = max(0, min(n, self.size - offset))
        if self._data is not None:
            return self._data[offset : offset + n]
        try:
            handle = self._open()
            with self._location.guard("reading"):
                handle.seek(offset)
                data = handle.read(n)
        except OSError as exc:
            raise SavepointFormatError(f"{self.where}: cannot be read ({type(exc).__name__}: {exc})") from None
        return bytes(data)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class _Cursor:
    """Sequential reads from ``offset`` of a source, buffered."""

    def __init__(self, source: _Source, offset: int) -> None:
        self.source = source
        self.pos = offset
        self._buf = b""
        self._at = 0

    def read(self, n: int) -> bytes:
        """Up to ``n`` bytes (fewer only at the end of the source)."""
        left = len(self._buf) - self._at
        if n <= left:
            start = self._at
            self._at += n
            self.pos += n
            return self._buf[start : self._at]
        parts = [self._buf[self._at :]]
        got = left
        self.pos += left
        self._buf, self._at = b"", 0
        while got < n:
            piece = self.source.pread(self.pos, max(_CHUNK, n - got))
            if not piece:
                break
            take = min(n - got, len(piece))
            parts.append(piece[:take])
            self._buf, self._at = piece, take
            got += take
            self.pos += take
        return b"".join(parts)

    def left(self) -> int:
        return self.source.size - self.pos


# -- the header ---------------------------------------------------------------------------------
def _header_failure(where: str, exc: Exception) -> SavepointFormatError:
    return SavepointFormatError(f"{where}: the keyed-state header cannot be read: {exc}")


@dataclass(frozen=True)
class UnreadSnapshot:
    """A serializer snapshot of a class the reference does not know (a user's own serializer):
    its class name and bytes, found by resynchronizing on what follows it (see
    ``_with_resync``); the values it describes stay ``Undecoded``."""

    java_class: str
    data: bytes


class _Unknown(Exception):
    """A snapshot class the registry does not know, at byte ``pos`` of a header."""

    def __init__(self, pos: int, name: str, body: int, message: str) -> None:
        super().__init__(message)
        self.pos, self.name, self.body = pos, name, body


#: Most unknown snapshot classes one header may hold, and the largest header searched for
#: where they end (each unknown one multiplies the work of the search).
_MAX_UNKNOWN = 3
_MAX_RESYNC_BYTES = 1 << 18
#: Bytes of header the search may parse again in all (over its attempts, each counted up to
#: where it failed).
_RESYNC_BUDGET = 64 << 10
_progress = threading.local()


def _read_snapshot_at(src: DataInputView, data: bytes, skip: dict[int, int]) -> Any:
    """The snapshot at the current position, or an ``UnreadSnapshot`` where ``skip`` says an
    unknown one ends; raises ``_Unknown`` for an unknown class not yet located."""
    start = src.position
    _progress.at = max(getattr(_progress, "at", 0), start)
    end = skip.get(start)
    if end is not None:
        probe = DataInputView(data[start:end])
        probe.read_int()
        name = probe.read_utf()
        src.skip_bytes(end - start)
        return UnreadSnapshot(name, data[start:end])
    try:
        return read_serializer_snapshot(src)
    except UnknownSnapshotClassError as exc:
        probe = DataInputView(data[start:])
        probe.read_int()
        name = probe.read_utf()
        raise _Unknown(start, name, start + probe.position + 4, str(exc)) from None


def _utf_then_small_int(data: bytes, q: int) -> bool:
    """Whether ``data[q:]`` starts with a non-empty UTF string followed by an int 0..3."""
    if len(data) - q < 7:
        return False
    n = int.from_bytes(data[q : q + 2], "big")
    after = q + 2 + n
    return n > 0 and after + 4 <= len(data) and int.from_bytes(data[after : after + 4], "big") <= 3


def _candidates(data: bytes, body: int) -> Iterator[int]:
    """Where an unknown snapshot starting its body at ``body`` may end: the header's end; the
    next serializer entry (UTF key, then the proxy version 2) or the next state (UTF name, then
    its backend type 0..3); a state count (a short, then such a state, or 0 states before the
    end, or the 2-byte count of broadcast states)."""
    end = len(data)
    for q in range(body, end + 1):
        if q == end or _utf_then_small_int(data, q):
            yield q
        elif end - q >= 2 and int.from_bytes(data[q : q + 2], "big") < 0x8000 and (
                end - q in (2, 4) or _utf_then_small_int(data, q + 2)):
            yield q


def _with_resync(parse: Callable[[bytes, str, dict[int, int]], KeyedStateHeader], data: bytes,
                 where: str) -> KeyedStateHeader:
    """``parse`` the header; where a snapshot names a class the reference does not know (its
    body has no length), find where it ends: the first position from which the rest of the
    header parses to its exact end."""

    budget = [_RESYNC_BUDGET]

    def attempt(skip: dict[int, int]) -> KeyedStateHeader:
        if budget[0] < 0:
            raise SavepointFormatError(f"{where}: gave up looking for where unknown serializer snapshots end")
        _progress.at = 0
        try:
            return parse(data, where, skip)
        except _Unknown as unknown:
            budget[0] -= _progress.at + 64
            if len(skip) >= _MAX_UNKNOWN or len(data) > _MAX_RESYNC_BYTES:
                raise SavepointFormatError(
                    f"{where}: {unknown}; the reference cannot tell where a snapshot of that class "
                    "ends in a header this large or with this many unknown classes"
                ) from None
            for end in _candidates(data, unknown.body):
                try:
                    return attempt({**skip, unknown.pos: end})
                except SavepointFormatError:
                    budget[0] -= _progress.at + 64
                    if budget[0] < 0:
                        raise SavepointFormatError(
                            f"{where}: gave up looking for where a serializer snapshot of class "
                            f"{unknown.name!r}, which the reference does not know, ends; register its "
                            "snapshot class, or the file is corrupt"
                        ) from None
                    continue
            raise SavepointFormatError(
                f"{where}: a serializer snapshot of class {unknown.name!r}, which the reference does "
                "not know, and no end for it from which the rest of the header reads; register its "
                "snapshot class, or the file is corrupt"
            ) from None

    return attempt({})


def _read_metas(src: DataInputView, where: str, data: bytes = b"", skip: dict[int, int] | None = None) -> list[FlinkStateMeta]:
    """``short n | n x StateMetaInfo`` (StateMetaInfoSnapshotReadersWriters, version 6)."""
    count = src.read_short()
    if count < 0 or count * 18 > src.available():
        raise SavepointFormatError(f"{where}: state count {count} does not fit the header")
    states = []
    for _ in range(count):
        begin = src.position
        name = src.read_utf()
        kind = src.read_int()
        if not 0 <= kind < len(BACKEND_STATE_TYPES):
            raise SavepointFormatError(f"{where}: state {name!r} has backend state type {kind}, should be 0..3")
        n = src.read_int()
        if n < 0 or n * 4 > src.available():
            raise SavepointFormatError(f"{where}: state {name!r}: option count {n} does not fit the header")
        options = {src.read_utf(): src.read_utf() for _ in range(n)}
        n = src.read_int()
        if n < 0 or n * 8 > src.available():
            raise SavepointFormatError(f"{where}: state {name!r}: serializer count {n} does not fit the header")
        serializers: dict[str, TypeSerializerSnapshot[Any]] = {}
        stored: dict[str, bytes] = {}
        for _ in range(n):
            key = src.read_utf()
            at = src.position
            try:
                serializers[key] = _read_snapshot_at(src, data, skip or {})
                stored[key] = data[at : src.position]
            except _Unknown:
                raise
            except (StateError, *_CORRUPT) as exc:
                raise SavepointFormatError(f"{where}: state {name!r}, {key}: {exc}") from None
        states.append(FlinkStateMeta(name, BACKEND_STATE_TYPES[kind], options, serializers, stored,
                                     data[begin : src.position]))
    return states


def _parse_header(data: bytes, where: str, skip: dict[int, int] | None = None) -> KeyedStateHeader:
    skip = skip or {}
    src = DataInputView(data)
    try:
        version = src.read_int()
        if version != HEADER_VERSION:
            raise SavepointFormatError(
                f"{where}: keyed-state header version {version}; this reader knows version "
                f"{HEADER_VERSION} (Flink 1.7 and later)"
            )
        compressed = src.read_boolean()
        key_at = src.position
        key_snapshot = _read_snapshot_at(src, data, skip)
        key_bytes = data[key_at : src.position]
        states = _read_metas(src, where, data, skip)
    except SavepointFormatError:
        raise
    except (StateError, *_CORRUPT) as exc:  # truncated input, corrupt or unknown snapshots
        raise _header_failure(where, exc) from None
    if skip and src.available():
        raise SavepointFormatError(f"{where}: {src.available()} bytes after the header")
    names = [s.name for s in states]
    if len(set(names)) != len(names):
        raise SavepointFormatError(f"{where}: the header names a state twice ({names})")
    return KeyedStateHeader(compressed, key_snapshot, tuple(states), src.position, key_bytes)


def read_keyed_header(source: _Source, handle: KeyGroupsHandle) -> KeyedStateHeader:
    """The header of a keyed-state stream: read up to its first key group."""
    starts = [o for o in handle.offsets if o > 0]
    end = min(starts) if starts else source.size
    if end > MAX_FLINK_HEADER_BYTES:
        raise SavepointFormatError(
            f"{source.where}: the keyed-state header would be {end} bytes, more than the "
            f"{MAX_FLINK_HEADER_BYTES} allowed; the file is corrupt"
        )
    return _with_resync(_parse_header, source.pread(0, end), source.where)


def _parse_operator_header(data: bytes, where: str, skip: dict[int, int] | None = None) -> KeyedStateHeader:
    """An operator-state stream's header (``OperatorBackendSerializationProxy`` version 6):
    ``int 6 | bool compressed | short n x StateMetaInfo | short n x StateMetaInfo (broadcast)``;
    ``key_serializer`` is unused (None)."""
    src = DataInputView(data)
    try:
        version = src.read_int()
        if version != HEADER_VERSION:
            raise SavepointFormatError(
                f"{where}: operator-state header version {version}; this reader knows version {HEADER_VERSION}"
            )
        compressed = src.read_boolean()
        states = _read_metas(src, where, data, skip) + _read_metas(src, where, data, skip)
        if skip and src.available():
            raise SavepointFormatError(f"{where}: {src.available()} bytes after the header")
    except SavepointFormatError:
        raise
    except (StateError, *_CORRUPT) as exc:
        raise SavepointFormatError(f"{where}: the operator-state header cannot be read: {exc}") from None
    names = [s.name for s in states]
    if len(set(names)) != len(names):
        raise SavepointFormatError(f"{where}: the header names a state twice ({names})")
    return KeyedStateHeader(compressed, None, tuple(states), src.position)  # type: ignore[arg-type]


class _Bounded:
    """Reads of a cursor that stop at ``end`` (the next element's offset)."""

    def __init__(self, cursor: _Cursor, end: int) -> None:
        self.cursor, self.end = cursor, end

    def read(self, n: int) -> bytes:
        return self.cursor.read(max(0, min(n, self.end - self.cursor.pos)))


def _element_bytes(source: _Source, start: int, end: int, compressed: bool, where: str) -> bytes:
    """The bytes of one operator-state element written between two offsets (decompressed: each
    element is flushed as chunks of the operator state's Snappy framed stream)."""
    if not compressed:
        return source.pread(start, end - start)
    from ._snappy import FramedReader

    reader = FramedReader(_Bounded(_Cursor(source, start), end).read, where, started=True)
    parts: list[bytes] = []
    budget = (end - start) * MAX_SNAPPY_EXPANSION + (1 << 16)
    while True:
        piece = reader.read(_CHUNK)
        if not piece:
            return b"".join(parts)
        budget -= len(piece)
        if budget < 0:
            raise SavepointFormatError(f"{where}: decompresses beyond what {end - start} stored bytes can hold")
        parts.append(piece)


# -- key groups ---------------------------------------------------------------------------------
def _key_group_entries(source: _Source, offset: int, compressed: bool, key_group: int,
                       state_count: int) -> Iterator[tuple[int, bytes, bytes]]:
    """(state id, composite key, value) of one key group, streamed."""
    cursor = _Cursor(source, offset)
    where = f"{source.where}, key group {key_group} at byte {offset}"
    read: Callable[[int], bytes]
    if compressed:
        from ._snappy import FramedReader

        reader = FramedReader(cursor.read, where)
        read = reader.read

        def limit() -> int:
            return cursor.left() * MAX_SNAPPY_EXPANSION + (1 << 16)
    else:
        read = cursor.read
        limit = cursor.left

    def exact(n: int, what: str) -> bytes:
        data = read(n)
        if len(data) != n:
            raise SavepointFormatError(f"{where}: the stream ends inside {what}; the file is truncated or corrupt")
        return data

    def length(what: str) -> int:
        n = struct.unpack(">i", exact(4, what))[0]
        if n < 0 or n > limit():
            raise SavepointFormatError(f"{where}: {what} {n} does not fit the {cursor.left()} bytes left")
        return n

    state_id = struct.unpack(">h", exact(2, "a state id"))[0]
    while state_id != _END_OF_KEY_GROUP:
        if not 0 <= state_id < state_count:
            raise SavepointFormatError(f"{where}: state id {state_id}, the header has {state_count} states")
        while True:
            key = bytearray(exact(length("key length"), "a key"))
            if not key:
                raise SavepointFormatError(f"{where}: an empty key (a key holds at least its key group)")
            value = exact(length("value length"), "a value")
            last = key[0] & _LAST_ENTRY_BIT
            key[0] &= ~_LAST_ENTRY_BIT & 0xFF
            yield state_id, bytes(key), value
            if last:
                break
        state_id = struct.unpack(">h", exact(2, "a state id"))[0]


# -- decoding -----------------------------------------------------------------------------------
class _Why(NamedTuple):
    """Why bytes stay undecoded: the snapshot's class, and the value's Java class if known."""

    snapshot: str
    java_class: str | None

    def of(self, data: bytes) -> Undecoded:
        return Undecoded(bytes(data), self.snapshot, self.java_class)


def _describe(snapshot: TypeSerializerSnapshot[Any] | None, prefix: str = "") -> _Why:
    if snapshot is None:
        return _Why(f"{prefix}no serializer snapshot", None)
    if isinstance(snapshot, UnreadSnapshot):
        return _Why(f"{prefix}{snapshot.java_class} (a snapshot class the reference does not know)", None)
    name = java_snapshot_name(snapshot) or type(snapshot).__name__
    java_class = getattr(snapshot, "type_class", None) or getattr(snapshot, "class_name", None) or None
    return _Why(prefix + name, java_class)


def _reader(snapshot: TypeSerializerSnapshot[Any] | None) -> Any:
    if snapshot is None or isinstance(snapshot, UnreadSnapshot):
        return None
    try:
        return record_serializer(snapshot)
    except (StateError, *_CORRUPT):
        return None


def _nested(snapshot: TypeSerializerSnapshot[Any] | None, index: int) -> TypeSerializerSnapshot[Any] | None:
    nested = getattr(snapshot, "nested_snapshots", None)
    return nested[index] if nested and index < len(nested) else None


def _length_suffix(src: DataInputView, length: int, what: str) -> None:
    value = 0
    shift = 0
    while True:
        value |= src.read_unsigned_byte() << shift
        shift += 8
        if (length >> shift) == 0:
            break
    if value != length:
        raise SerializationError(f"{what} length suffix says {value} bytes, {length} were read")


class _Decoder:
    """Decodes the entries of one state of one keyed-state header."""

    def __init__(self, meta: FlinkStateMeta, key_snapshot: TypeSerializerSnapshot[Any], max_parallelism: int) -> None:
        self.meta = meta
        self.prefix = 1 if max_parallelism <= 128 else 2
        self.kind = _kind(meta)
        value = meta.serializers.get("VALUE_SERIALIZER")
        self.value_snapshot = value
        if self.kind == "timers":
            self.timer = _reader(value)
            return
        self.key = _reader(key_snapshot)
        self.key_why = _describe(key_snapshot)
        namespace = meta.serializers.get("NAMESPACE_SERIALIZER")
        self.namespace = _reader(namespace)
        self.namespace_why = _describe(namespace)
        key_length = self.key.length if self.key is not None else -1
        namespace_length = self.namespace.length if self.namespace is not None else -1
        self.ambiguous = key_length < 0 and namespace_length < 0
        self.namespace_length = namespace_length
        if self.kind == "list":
            element = _nested(value, 0) if isinstance(value, ListSerializerSnapshot) else None
            self.element = _reader(element)
            self.value_why = _describe(element)
        elif self.kind == "map":
            user_key = _nested(value, 0) if isinstance(value, MapSerializerSnapshot) else None
            map_value = _nested(value, 1) if isinstance(value, MapSerializerSnapshot) else None
            self.user_key = _reader(user_key)
            self.user_key_why = _describe(user_key)
            self.value = _reader(map_value)
            self.value_why = _describe(map_value)
        else:
            self.value = _reader(value)
            self.value_why = _describe(value)

    def decode(self, key_group: int, key: bytes, value: bytes, where: str) -> Iterator[FlinkEntry]:
        found = int.from_bytes(key[: self.prefix], "big")
        if found != key_group or len(key) < self.prefix:
            raise SavepointFormatError(f"{where}: an entry of key group {found} inside key group {key_group}")
        try:
            decoded = self._decode(key_group, key, value)
        except (StateError, *_CORRUPT) as exc:
            raise SavepointFormatError(
                f"{where}: an entry of state {self.meta.name!r} cannot be decoded ({exc}); the file "
                "is corrupt or its serializer snapshots do not describe its bytes"
            ) from None
        yield decoded

    def _decode(self, key_group: int, key: bytes, value: bytes) -> FlinkEntry:
        src = DataInputView(key)
        src.skip_bytes(self.prefix)
        if self.kind == "timers":
            if self.timer is None:
                return FlinkEntry(key_group, _describe(self.value_snapshot).of(key[self.prefix :]), None, None, None)
            timer = self.timer.deserialize(src)
            _done(src, "timer")
            if value:
                raise SerializationError(f"a timer with a {len(value)}-byte value, should be empty")
            return FlinkEntry(key_group, timer.key, timer.namespace, None, timer.timestamp)
        if self.key is None:
            rest = key[self.prefix :]
            if self.kind != "map" and self.namespace is not None and self.namespace_length >= 0 and not self.ambiguous:
                cut = len(rest) - self.namespace_length
                if cut < 0:
                    raise SerializationError("a key shorter than its namespace")
                ns_src = DataInputView(rest[cut:])
                namespace = self.namespace.deserialize(ns_src)
                _done(ns_src, "namespace")
                return FlinkEntry(key_group, self.key_why.of(rest[:cut]), namespace, None, self._value(value))
            return FlinkEntry(key_group, self.key_why.of(rest), None, None,
                              self._value(value) if self.kind != "map" else self.value_why.of(value))
        start = src.position
        k = self.key.deserialize(src)
        if self.ambiguous:
            _length_suffix(src, src.position - start, "key")
        if self.namespace is None:
            return FlinkEntry(key_group, k, self.namespace_why.of(key[src.position :]), None,
                              self._value(value) if self.kind != "map" else self.value_why.of(value))
        start = src.position
        namespace = self.namespace.deserialize(src)
        if self.ambiguous:
            _length_suffix(src, src.position - start, "namespace")
        user_key = None
        if self.kind == "map":
            if self.user_key is None:
                user_key = self.user_key_why.of(key[src.position :])
                src.skip_bytes(src.available())
            else:
                user_key = self.user_key.deserialize(src)
        _done(src, "key")
        return FlinkEntry(key_group, k, namespace, user_key, self._value(value))

    def _value(self, value: bytes) -> Any:
        if self.kind == "list":
            if self.element is None:
                return _Why(f"list of {self.value_why.snapshot}", self.value_why.java_class).of(value)
            src = DataInputView(value)
            elements = []
            while True:
                elements.append(self.element.deserialize(src))
                if not src.available():
                    return elements
                delimiter = src.read_unsigned_byte()
                if delimiter != LIST_DELIMITER or not src.available():
                    raise SerializationError(
                        f"list value: byte {src.position - 1} is 0x{delimiter:02x} after element "
                        f"{len(elements) - 1}, should be the 0x2C delimiter followed by an element"
                    )
        src = DataInputView(value)
        if self.kind == "map":
            if src.read_boolean():
                _done(src, "null map value")
                return None
            if self.value is None:
                return self.value_why.of(value[1:])
        elif self.value is None:
            return self.value_why.of(value)
        decoded = self.value.deserialize(src)
        _done(src, "value")
        return decoded


def _done(src: DataInputView, what: str) -> None:
    if src.available():
        raise SerializationError(f"{src.available()} bytes left after the {what}")


def _kind(meta: FlinkStateMeta) -> str:
    if meta.backend_type == "PRIORITY_QUEUE":
        return "timers"
    declared = meta.options.get("KEYED_STATE_TYPE", "")
    kind = _KINDS.get(declared)
    if kind is None:
        raise SavepointFormatError(
            f"keyed state {meta.name!r}: KEYED_STATE_TYPE {declared!r}, this reader knows "
            f"{sorted(_KINDS)} (and timers)"
        )
    return kind


def _is_ttl(meta: FlinkStateMeta, kind: str) -> bool:
    value = meta.serializers.get("VALUE_SERIALIZER")
    if kind == "list" and isinstance(value, ListSerializerSnapshot):
        value = _nested(value, 0)
    elif kind == "map" and isinstance(value, MapSerializerSnapshot):
        value = _nested(value, 1)
    return isinstance(value, TtlSerializerSnapshot)


# -- the public model ---------------------------------------------------------------------------
@dataclass
class _Part:
    """One subtask's keyed-state stream: its handle, source and header."""

    handle: KeyGroupsHandle
    source: _Source
    header: KeyedStateHeader
    decoders: dict[int, _Decoder] = field(default_factory=dict)

    def state_id(self, name: str) -> int | None:
        for i, meta in enumerate(self.header.states):
            if meta.name == name:
                return i
        return None


@dataclass(frozen=True, eq=False)
class FlinkKeyedState:
    """One keyed state of an operator: ``kind`` is "value", "list", "map", "reducing",
    "aggregating" or "timers"; the serializer snapshots are those of the savepoint (for a
    state with a time-to-live, ``value_serializer`` is the TTL wrapper's snapshot and ``ttl`` is
    True; a map state's ``user_key_serializer`` is its map snapshot's key). ``key_groups`` are the
    key groups that hold data of the operator (of any of its states)."""

    name: str
    kind: str
    ttl: bool
    backend_type: str
    options: dict[str, str]
    key_serializer: TypeSerializerSnapshot[Any]
    namespace_serializer: TypeSerializerSnapshot[Any] | None
    value_serializer: TypeSerializerSnapshot[Any] | None
    user_key_serializer: TypeSerializerSnapshot[Any] | None
    key_groups: tuple[int, ...]
    _operator: FlinkOperator = field(repr=False)

    def raw_entries(self, key_groups: Iterable[int] | None = None) -> Iterator[RawEntry]:
        """Every entry of this state as stored, key group by key group (streamed)."""
        for part, key_group, state_id, key, value in self._operator._scan(self.name, key_groups):
            del part, state_id
            yield RawEntry(key_group, key, value)

    def entries(self, key_groups: Iterable[int] | None = None) -> Iterator[FlinkEntry]:
        """Every entry of this state decoded (``FlinkEntry``), key group by key group, streamed;
        ``key_groups`` restricts the walk to those key groups (each read from its offset)."""
        max_parallelism = self._operator.max_parallelism
        for part, key_group, state_id, key, value in self._operator._scan(self.name, key_groups):
            decoder = part.decoders.get(state_id)
            if decoder is None:
                decoder = _Decoder(part.header.states[state_id], part.header.key_serializer, max_parallelism)
                part.decoders[state_id] = decoder
            yield from decoder.decode(key_group, key, value, f"{part.source.where}, key group {key_group}")

    def rows(self, key_groups: Iterable[int] | None = None) -> Iterator[tuple[int, bytes, bytes, bytes | None, bytes | None]]:
        """Every entry as this project's savepoint rows hold it: ``(key_group, key bytes,
        namespace bytes, user key bytes or None, value bytes or None)``, the composite key split
        by the key's and the namespace's serializers (their length suffixes checked and
        dropped); a map state's value without its is-null flag (None for a null value); a list
        state's delimited elements as stored. What the state backends restore from (timers are
        not entries of this kind: refused)."""
        where = f"keyed state {self.name!r}"
        if self.kind == "timers":
            raise SavepointFormatError(f"{where}: timers have no (key, namespace, value) rows")
        key_reader = _reader(self.key_serializer)
        namespace_reader = _reader(self.namespace_serializer)
        if key_reader is None or namespace_reader is None:
            what = "key" if key_reader is None else "namespace"
            raise SavepointFormatError(
                f"{where}: its {what} serializer snapshot ({_describe(self.key_serializer if key_reader is None else self.namespace_serializer).snapshot}) "
                "is not one the reference can read, so its keys cannot be split into key and namespace")
        prefix = 1 if self._operator.max_parallelism <= 128 else 2
        ambiguous = key_reader.length < 0 and namespace_reader.length < 0
        is_map = self.kind == "map"
        for raw in self.raw_entries(key_groups):
            key = raw.key
            try:
                if int.from_bytes(key[:prefix], "big") != raw.key_group or len(key) < prefix:
                    raise SerializationError(f"its key-group prefix is not key group {raw.key_group}")
                src = DataInputView(key)
                src.skip_bytes(prefix)
                key_reader.deserialize(src)
                key_end = src.position
                if ambiguous:
                    _length_suffix(src, key_end - prefix, "key")
                ns_start = src.position
                namespace_reader.deserialize(src)
                ns_end = src.position
                if ambiguous:
                    _length_suffix(src, ns_end - ns_start, "namespace")
                user_key = key[src.position :] if is_map else None
                if not is_map:
                    _done(src, "key")
                value: bytes | None = raw.value
                if is_map:
                    flag = raw.value[:1]
                    if flag not in (b"\x00", b"\x01") or (flag == b"\x01" and len(raw.value) != 1):
                        raise SerializationError("a map value without its is-null flag")
                    value = None if flag == b"\x01" else raw.value[1:]
            except (StateError, *_CORRUPT) as exc:
                raise SavepointFormatError(
                    f"{where}, key group {raw.key_group}: an entry cannot be split ({exc}); the file is corrupt "
                    "or its serializer snapshots do not describe its bytes") from None
            yield raw.key_group, key[prefix:key_end], key[ns_start:ns_end], user_key, value


class OperatorStateValue(NamedTuple):
    """One element of an operator list state (``SPLIT_DISTRIBUTE`` or ``UNION``) as the subtask
    wrote it, or one (key, value) entry of a broadcast state."""

    subtask: int
    value: Any


@dataclass(frozen=True, eq=False)
class FlinkOperatorState:
    """An operator (non-keyed) state: its name, distribution mode (``SPLIT_DISTRIBUTE``,
    ``UNION`` or ``BROADCAST``), how many partitions its subtasks wrote (elements of a list
    state; one per subtask for a broadcast state), and the serializer snapshots of its values
    (``value_serializer``; a broadcast state's keys: ``key_serializer``)."""

    name: str
    mode: str
    partitions: int
    value_serializer: TypeSerializerSnapshot[Any] | None = None
    key_serializer: TypeSerializerSnapshot[Any] | None = None
    _parts: tuple[tuple[int, OperatorStateHandle, _Source, KeyedStateHeader], ...] = field(default=(), repr=False)

    def values(self) -> Iterator[OperatorStateValue]:
        """Every element (a broadcast state: every (key, value) entry), subtask by subtask, in
        the order written, decoded as keyed values are (``Undecoded`` where they cannot be)."""
        for subtask, handle, source, header in self._parts:
            entry = next((e for e in handle.states if e.name == self.name), None)
            meta = next((m for m in header.states if m.name == self.name), None)
            if entry is None or meta is None:
                continue
            ends = sorted({o for e in handle.states for o in e.offsets} | {source.size})
            value_why = _describe(meta.serializers.get("VALUE_SERIALIZER"))
            value = _reader(meta.serializers.get("VALUE_SERIALIZER"))
            key = _reader(meta.serializers.get("KEY_SERIALIZER"))
            try:
                for offset in entry.offsets:
                    if not header.size <= offset < source.size:
                        raise SavepointFormatError(
                            f"{source.where}: state {self.name!r} has an element at byte {offset}, outside "
                            f"[{header.size}, {source.size})")
                    end = next(e for e in ends if e > offset)
                    data = _element_bytes(source, offset, end, header.compressed, f"{source.where}, state {self.name!r}")
                    yield from self._decode(subtask, data, key, value, value_why, source.where)
            finally:
                source.close()

    def _decode(self, subtask: int, data: bytes, key: Any, value: Any, value_why: _Why,
                where: str) -> Iterator[OperatorStateValue]:
        src = DataInputView(data)
        decoded: list[Any]
        try:
            if self.mode != "BROADCAST":
                if value is None:
                    decoded = [value_why.of(data)]
                else:
                    decoded = [value.deserialize(src)]
                    _done(src, "operator state element")
            else:
                count = src.read_int()
                if count < 0 or count > src.available():
                    raise SerializationError(f"broadcast state of {count} entries in {src.available()} bytes")
                if key is None or value is None:
                    decoded = [value_why.of(data)]
                else:
                    decoded = [(key.deserialize(src), value.deserialize(src)) for _ in range(count)]
                    _done(src, "broadcast state")
        except (StateError, *_CORRUPT) as exc:
            raise SavepointFormatError(
                f"{where}: an element of operator state {self.name!r} cannot be decoded ({exc}); the file "
                "is corrupt or its serializer snapshots do not describe its bytes") from None
        for item in decoded:
            yield OperatorStateValue(subtask, item)


@dataclass(frozen=True, eq=False)
class FlinkOperator:
    """One operator of a Flink savepoint, with its keyed and operator states."""

    uid: str | None
    name: str | None
    operator_id: str
    parallelism: int
    max_parallelism: int
    metadata: FlinkOperatorMetadata = field(repr=False)
    keyed_states: tuple[FlinkKeyedState, ...] = ()
    operator_states: tuple[FlinkOperatorState, ...] = ()
    _parts: tuple[_Part, ...] = field(default=(), repr=False)

    def keyed_state(self, name: str) -> FlinkKeyedState:
        for state in self.keyed_states:
            if state.name == name:
                return state
        raise KeyError(f"operator {self.uid or self.operator_id} has no keyed state {name!r} "
                       f"(it has {[s.name for s in self.keyed_states]})")

    def count_entries(self) -> dict[str, int]:
        """Entries per keyed state (as ``entries()`` would yield them: a list state one per key
        and namespace, a map state one per user key, timers one per timer), in one streamed walk
        of every key group, nothing decoded."""
        counts = {state.name: 0 for state in self.keyed_states}
        for part, _, found, _, _ in self._scan(None, None):
            name = part.header.states[found].name
            if name in counts:
                counts[name] += 1
        return counts

    def all_entries(self, key_groups: Iterable[int] | None = None) -> Iterator[tuple[str, FlinkEntry]]:
        """(state name, entry) of every keyed state, decoded, in one streamed walk (the entries
        of each state in the order ``entries()`` gives them); ``key_groups`` as there."""
        for part, key_group, state_id, key, value in self._scan(None, key_groups):
            decoder = part.decoders.get(state_id)
            if decoder is None:
                decoder = _Decoder(part.header.states[state_id], part.header.key_serializer, self.max_parallelism)
                part.decoders[state_id] = decoder
            name = part.header.states[state_id].name
            for entry in decoder.decode(key_group, key, value, f"{part.source.where}, key group {key_group}"):
                yield name, entry

    def _scan(self, name: str | None, key_groups: Iterable[int] | None) -> Iterator[tuple[_Part, int, int, bytes, bytes]]:
        """(part, key group, state id, key, value) of state ``name`` (None: of every state)."""
        wanted = None if key_groups is None else set(key_groups)
        for part in self._parts:
            state_id = part.state_id(name) if name is not None else None
            if name is not None and state_id is None:
                continue
            try:
                for key_group in part.handle.key_groups:
                    offset = part.handle.offset(key_group)
                    if offset <= 0 or (wanted is not None and key_group not in wanted):
                        continue
                    if offset < part.header.size:
                        raise SavepointFormatError(
                            f"{part.source.where}: key group {key_group} starts at byte {offset}, inside the header"
                        )
                    entries = _key_group_entries(part.source, offset, part.header.compressed, key_group,
                                                 len(part.header.states))
                    for found, key, value in entries:
                        if name is None or found == state_id:
                            yield part, key_group, found, key, value
            finally:
                part.source.close()


@dataclass(frozen=True, eq=False)
class FlinkSavepoint:
    """A Flink canonical savepoint read without user classes (``read_flink_savepoint``)."""

    metadata: FlinkMetadata
    operators: tuple[FlinkOperator, ...]

    @property
    def metadata_version(self) -> int:
        return self.metadata.version

    @property
    def checkpoint_id(self) -> int:
        return self.metadata.checkpoint_id

    @property
    def directory(self) -> Location | None:
        return self.metadata.directory

    def operator(self, uid_or_id: str) -> FlinkOperator:
        """The operator with this uid (or, for one without a uid, this 32-hex-digit id). A
        savepoint of ``_metadata`` version 3 or 4 stores no uids: a uid finds the operator whose
        id Flink derives from it (``operator_id_for_uid``)."""
        for op in self.operators:
            if op.uid == uid_or_id or op.operator_id == uid_or_id.lower():
                return op
        derived = operator_id_for_uid(uid_or_id)
        for op in self.operators:
            if op.uid is None and op.operator_id == derived:
                return op
        raise KeyError(f"no operator {uid_or_id!r} in the savepoint (uids: "
                       f"{[op.uid or op.operator_id for op in self.operators]})")


def _operator(meta: FlinkOperatorMetadata, directory: Location, allow_external_files: bool) -> FlinkOperator:
    parts = []
    for subtask in meta.subtasks:
        handle = subtask.managed_keyed_state
        if handle is None:
            continue
        source = _Source(handle.stream, directory, allow_external_files)
        try:
            header = read_keyed_header(source, handle)
        finally:
            source.close()
        parts.append(_Part(handle, source, header))
    states: dict[str, FlinkStateMeta] = {}
    for part in parts:
        for state in part.header.states:
            states.setdefault(state.name, state)
    key_groups = tuple(sorted(kg for part in parts for kg in part.handle.key_groups if part.handle.offset(kg) > 0))
    op = FlinkOperator(meta.uid, meta.name, meta.operator_id, meta.parallelism, meta.max_parallelism, meta,
                       (), _operator_states(meta, directory, allow_external_files), tuple(parts))
    keyed = []
    for state in states.values():
        if state.backend_type not in ("KEY_VALUE", "PRIORITY_QUEUE"):
            continue
        kind = _kind(state)
        value = state.serializers.get("VALUE_SERIALIZER")
        namespace = state.serializers.get("NAMESPACE_SERIALIZER")
        if kind == "timers" and isinstance(value, TimerSerializerSnapshot):
            namespace = _nested(value, 1)
        user_key = _nested(value, 0) if kind == "map" and isinstance(value, MapSerializerSnapshot) else None
        keyed.append(FlinkKeyedState(state.name, kind, _is_ttl(state, kind), state.backend_type, dict(state.options),
                                     parts[0].header.key_serializer, namespace, value, user_key, key_groups, op))
    object.__setattr__(op, "keyed_states", tuple(keyed))
    return op


def _operator_states(meta: FlinkOperatorMetadata, directory: Location,
                     allow_external_files: bool) -> tuple[FlinkOperatorState, ...]:
    found: dict[str, list[Any]] = {}
    parts = []
    for subtask in meta.subtasks:
        handle = subtask.managed_operator_state
        if handle is None:
            continue
        source = _Source(handle.stream, directory, allow_external_files)
        starts = [o for e in handle.states for o in e.offsets]
        end = min(starts) if starts else source.size
        if not 0 <= end <= min(source.size, MAX_FLINK_HEADER_BYTES):
            raise SavepointFormatError(f"{source.where}: the operator-state header would end at byte {end}")
        try:
            header = _with_resync(_parse_operator_header, source.pread(0, end), source.where)
        finally:
            source.close()
        parts.append((subtask.index, handle, source, header))
        for entry in handle.states:
            seen = found.setdefault(entry.name, [entry.mode, 0, None, None])
            seen[1] += len(entry.offsets)
            if seen[2] is None:
                meta_info = next((m for m in header.states if m.name == entry.name), None)
                if meta_info is not None:
                    seen[2] = meta_info.serializers.get("VALUE_SERIALIZER")
                    seen[3] = meta_info.serializers.get("KEY_SERIALIZER")
    return tuple(FlinkOperatorState(name, mode, n, value, key, tuple(parts))
                 for name, (mode, n, value, key) in found.items())


def read_flink_savepoint(path: Any, *, allow_external_files: bool = False) -> FlinkSavepoint:
    """Read the Flink canonical savepoint at ``path`` (its directory or its ``_metadata``, a
    local path or any URI ``locate`` accepts): the metadata and every keyed-state header now,
    the entries when ``FlinkKeyedState.entries`` is iterated. ``allow_external_files`` lets
    absolute state-file paths outside the savepoint's directory be read (trusted savepoints
    only). Raises ``SavepointFormatError`` for anything it cannot read."""
    metadata = read_flink_metadata(path)
    assert metadata.directory is not None
    operators = tuple(_operator(op, metadata.directory, allow_external_files) for op in metadata.operators)
    return FlinkSavepoint(metadata, operators)
