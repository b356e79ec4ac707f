"""Flink's ``_metadata`` file of a canonical savepoint (docs/flink-savepoints.md).

Layout (Flink's ``Checkpoints`` and ``MetadataV3Serializer`` .. ``MetadataV6Serializer`` over
``MetadataV2V3SerializerBase``; big-endian ``java.io.DataOutput``, strings ``writeUTF``)::

    int magic 0x4960672d | int version (3..6) | long checkpointId
    int nMasterStates | {int 0xc96b1696 | int len | len bytes: int version, UTF name, int n, n bytes}
    int nOperators | Operator...
    [version 4+: CheckpointProperties as a Java object stream, to the end: kept opaque]

    Operator = [v5+: UTF name, UTF uid ("" = none)] | 16 bytes OperatorID | int parallelism
               | int maxParallelism | StreamHandle coordinator state
               | int nSubtasks (negative: fully finished) | Subtask...
    Subtask  = int index (negative: finished, nothing follows) | int 0/1 + OperatorStateHandle
               | int 0/1 + OperatorStateHandle (raw) | KeyedStateHandle | KeyedStateHandle (raw)
               | int nInputChannelHandles | int nResultSubpartitionHandles   (both 0 in a savepoint)

Handles start with a type byte: stream handles 0 (none), 1 bytes inline (UTF name, int n, n
bytes), 2 absolute file (long size, UTF path), 6 relative file (UTF name, long size); keyed
handles 0 (none), 7 ``KeyGroupsSavepointStateHandle`` (int first key group, int n, n long
offsets, stream handle); operator-state handles 0 (none), 4 (int n, per state UTF name, byte
distribution mode, int m, m long offsets; then a stream handle). Every other keyed handle type
(checkpoint key groups 3/12, incremental or native RocksDB 5/11, changelog 8-10/13/14) and the
file-merging stream handles (15/16) are refused: the savepoint is not canonical.

File names in handles are untrusted: a relative handle must name a plain file in the savepoint's
directory; an absolute file handle is used only when it lies inside that directory, or anywhere
when the caller passes ``allow_external_files=True`` (``resolve_stream``).
"""

from __future__ import annotations

import os
import posixpath
import struct
from dataclasses import dataclass, field
from typing import Any

from .._bounds import MAX_FLINK_METADATA_BYTES
from .._errors import SerializationError
from .._io import DataInputView
from ._format import SavepointFormatError
from ._key_groups import MAX_MAX_PARALLELISM
from ._murmur import murmur3_128
from ._storage import Location, StorageError, is_uri, locate, shown

__all__ = [
    "FLINK_METADATA_FILE",
    "FlinkMetadata",
    "FlinkOperatorMetadata",
    "FlinkSubtaskState",
    "KeyGroupsHandle",
    "MasterState",
    "OperatorStateEntry",
    "OperatorStateHandle",
    "StreamHandle",
    "flink_metadata_location",
    "is_flink_savepoint",
    "operator_id_for_uid",
    "parse_flink_metadata",
    "read_flink_metadata",
    "resolve_stream",
]

FLINK_METADATA_FILE = "_metadata"
HEADER_MAGIC = 0x4960672D
MASTER_STATE_MAGIC = 0xC96B1696
VERSIONS = (3, 4, 5, 6)
#: OperatorStateHandle.Mode, by ordinal.
DISTRIBUTION_MODES = ("SPLIT_DISTRIBUTE", "UNION", "BROADCAST")
_JAVA_OBJECT_STREAM = b"\xac\xed\x00\x05"
_NOT_CANONICAL = {
    3: "a checkpoint's key-group handle (KeyGroupsStateHandle)",
    12: "a checkpoint's key-group handle (KeyGroupsStateHandle)",
    5: "an incremental RocksDB handle (IncrementalRemoteKeyedStateHandle)",
    11: "an incremental RocksDB handle (IncrementalRemoteKeyedStateHandle)",
    8: "a changelog handle (ChangelogStateBackendHandle)",
    14: "a changelog handle (ChangelogStateBackendHandle)",
    9: "a changelog increment (InMemoryChangelogStateHandle)",
    10: "a changelog increment (ChangelogStateHandleStreamImpl)",
    13: "a changelog increment (ChangelogStateHandleStreamImpl)",
}
_TAKE_CANONICAL = (
    "only canonical savepoints are read (native and incremental RocksDB snapshots, checkpoints "
    "and changelog state are not); take one with `flink savepoint --type canonical JOB_ID DIR` "
    "or triggerSavepoint(dir, SavepointFormatType.CANONICAL)"
)


@dataclass(frozen=True)
class StreamHandle:
    """Where a stream of state lives: ``kind`` "inline" (``data`` holds the bytes, ``name`` is
    Flink's handle name), "relative" (``name``: a file in the savepoint's directory) or "file"
    (``name``: an absolute path or URI as Flink wrote it); ``size`` in bytes."""

    kind: str
    name: str
    size: int
    data: bytes | None = None


@dataclass(frozen=True)
class KeyGroupsHandle:
    """A ``KeyGroupsSavepointStateHandle``: the key groups ``first .. first+len(offsets)-1``,
    each one's offset in ``stream`` (0: the key group holds nothing)."""

    first: int
    offsets: tuple[int, ...]
    stream: StreamHandle

    @property
    def key_groups(self) -> range:
        return range(self.first, self.first + len(self.offsets))

    def offset(self, key_group: int) -> int:
        return self.offsets[key_group - self.first]


@dataclass(frozen=True)
class OperatorStateEntry:
    """One operator (non-keyed) state in an operator-state handle: its name, distribution mode
    (``SPLIT_DISTRIBUTE``, ``UNION`` or ``BROADCAST``) and the offsets of its partitions."""

    name: str
    mode: str
    offsets: tuple[int, ...]


@dataclass(frozen=True)
class OperatorStateHandle:
    states: tuple[OperatorStateEntry, ...]
    stream: StreamHandle


@dataclass(frozen=True)
class FlinkSubtaskState:
    index: int
    finished: bool = False
    managed_operator_state: OperatorStateHandle | None = None
    raw_operator_state: OperatorStateHandle | None = None
    managed_keyed_state: KeyGroupsHandle | None = None
    raw_keyed_state: KeyGroupsHandle | None = None


@dataclass(frozen=True)
class FlinkOperatorMetadata:
    """One operator of the savepoint. ``uid`` and ``name`` are None before metadata version 5
    and where the job set none; ``operator_id`` is 32 hex digits; ``coordinator_state`` is the
    operator coordinator's opaque bytes, if any."""

    operator_id: str
    parallelism: int
    max_parallelism: int
    uid: str | None = None
    name: str | None = None
    coordinator_state: bytes | None = None
    subtasks: tuple[FlinkSubtaskState, ...] = ()
    fully_finished: bool = False
    #: The coordinator state's handle as stored (its name kept for a writer).
    coordinator_handle: StreamHandle | None = field(default=None, repr=False, compare=False)

    @property
    def uid_matches_id(self) -> bool | None:
        """Whether the uid hashes to the operator id as Flink derives it (None without a uid)."""
        return None if self.uid is None else operator_id_for_uid(self.uid) == self.operator_id


@dataclass(frozen=True)
class MasterState:
    """A master hook's state (opaque)."""

    name: str
    version: int
    data: bytes


@dataclass(frozen=True)
class FlinkMetadata:
    """A Flink savepoint's ``_metadata``: ``properties`` is the opaque Java object stream of
    its ``CheckpointProperties`` (version 4+, else None); ``directory`` is where the savepoint
    lives (relative handles are resolved there)."""

    version: int
    checkpoint_id: int
    operators: tuple[FlinkOperatorMetadata, ...]
    master_states: tuple[MasterState, ...] = ()
    properties: bytes | None = None
    directory: Location | None = None


def operator_id_for_uid(uid: str) -> str:
    """The operator id (32 hex digits) Flink gives an operator with ``uid``: Guava's
    murmur3_128 (seed 0) of the uid's UTF-8 bytes."""
    return murmur3_128(uid.encode("utf-8", "surrogatepass")).hex()


# -- parsing ---------------------------------------------------------------------------------
class _Reader:
    """A ``DataInputView`` whose failures become ``SavepointFormatError``s naming the place."""

    def __init__(self, data: bytes, where: str) -> None:
        self.src = DataInputView(data)
        self.where = where

    def fail(self, what: str) -> SavepointFormatError:
        return SavepointFormatError(f"{self.where}: {what} (at byte {self.src.position})")

    def count(self, what: str, each: int) -> int:
        n = self.src.read_int()
        if n < 0 or n * each > self.src.available():
            raise self.fail(f"{what} {n} does not fit the {self.src.available()} bytes left; the file is corrupt")
        return n

    def longs(self, n: int) -> tuple[int, ...]:
        return struct.unpack(f">{n}q", self.src.read_fully(8 * n)) if n else ()


def _stream_handle(r: _Reader, what: str) -> StreamHandle | None:
    src = r.src
    kind = src.read_unsigned_byte()
    if kind == 0:
        return None
    if kind == 1:
        name = src.read_utf()
        n = r.count(f"{what}: inline byte count", 1)
        return StreamHandle("inline", name, n, src.read_fully(n))
    if kind == 2:
        size = src.read_long()
        path = src.read_utf()
        if size < 0:
            raise r.fail(f"{what}: file {path!r} of negative size {size}")
        return StreamHandle("file", path, size)
    if kind == 6:
        name = src.read_utf()
        size = src.read_long()
        if size < 0:
            raise r.fail(f"{what}: file {name!r} of negative size {size}")
        return StreamHandle("relative", name, size)
    if kind in (15, 16):
        raise r.fail(f"{what}: a file-merging segment handle (type {kind}), which only checkpoints "
                     f"write; {_TAKE_CANONICAL}")
    raise r.fail(f"{what}: unknown stream handle type {kind}; the file is corrupt or of a newer Flink")


def _keyed_handle(r: _Reader, max_parallelism: int, what: str) -> KeyGroupsHandle | None:
    src = r.src
    kind = src.read_unsigned_byte()
    if kind == 0:
        return None
    if kind != 7:
        described = _NOT_CANONICAL.get(kind)
        if described is None:
            raise r.fail(f"{what}: unknown keyed state handle type {kind}; the file is corrupt or of a newer Flink")
        raise r.fail(f"{what}: the savepoint is not canonical, it holds {described}; {_TAKE_CANONICAL}")
    first = src.read_int()
    n = r.count(f"{what}: key-group count", 8)
    if first < 0 or first + n > max_parallelism:
        raise r.fail(f"{what}: key groups {first}..{first + n - 1} are outside [0, {max_parallelism}) "
                     "(the operator's max parallelism)")
    offsets = r.longs(n)
    stream = _stream_handle(r, what)
    if stream is None:
        raise r.fail(f"{what}: a key-group handle without a stream")
    bad = [o for o in offsets if not 0 <= o < max(stream.size, 1)]
    if bad:
        raise r.fail(f"{what}: key-group offset {bad[0]} is outside the {stream.size}-byte stream")
    return KeyGroupsHandle(first, offsets, stream)


def _operator_handle(r: _Reader, what: str) -> OperatorStateHandle | None:
    src = r.src
    kind = src.read_unsigned_byte()
    if kind == 0:
        return None
    if kind != 4:
        raise r.fail(f"{what}: unknown operator state handle type {kind}; the file is corrupt")
    states = []
    for _ in range(r.count(f"{what}: state count", 7)):
        name = src.read_utf()
        mode = src.read_unsigned_byte()
        if mode >= len(DISTRIBUTION_MODES):
            raise r.fail(f"{what}: state {name!r} has distribution mode {mode}, should be 0..2")
        offsets = r.longs(r.count(f"{what}: offsets of state {name!r}", 8))
        states.append(OperatorStateEntry(name, DISTRIBUTION_MODES[mode], offsets))
    stream = _stream_handle(r, what)
    if stream is None:
        raise r.fail(f"{what}: an operator state handle without a stream")
    return OperatorStateHandle(tuple(states), stream)


def _subtask(r: _Reader, index: int, parallelism: int, max_parallelism: int, what: str) -> FlinkSubtaskState:
    if index < 0:
        index = -index - 1
        if index >= parallelism:
            raise r.fail(f"{what}: finished subtask {index} of an operator of parallelism {parallelism}")
        return FlinkSubtaskState(index, finished=True)
    if index >= parallelism:
        raise r.fail(f"{what}: subtask {index} of an operator of parallelism {parallelism}")
    where = f"{what}, subtask {index}"
    src = r.src
    managed_op = _operator_handle(r, f"{where} operator state") if src.read_int() else None
    raw_op = _operator_handle(r, f"{where} raw operator state") if src.read_int() else None
    managed = _keyed_handle(r, max_parallelism, f"{where} keyed state")
    raw = _keyed_handle(r, max_parallelism, f"{where} raw keyed state")
    for channel in ("input channel", "result subpartition"):
        if src.read_int() != 0:
            raise r.fail(f"{where}: holds {channel} state (an unaligned checkpoint's), which a "
                         f"savepoint never does; {_TAKE_CANONICAL}")
    return FlinkSubtaskState(index, False, managed_op, raw_op, managed, raw)


def _operator(r: _Reader, version: int, number: int) -> FlinkOperatorMetadata:
    src = r.src
    name = uid = None
    if version >= 5:
        name = src.read_utf() or None
        uid = src.read_utf() or None
    operator_id = src.read_fully(16).hex()
    what = f"operator {uid or operator_id}"
    parallelism = src.read_int()
    max_parallelism = src.read_int()
    if not 1 <= max_parallelism <= MAX_MAX_PARALLELISM or not 1 <= parallelism <= max_parallelism:
        raise r.fail(f"{what}: parallelism {parallelism} / max parallelism {max_parallelism}, should be "
                     f"1 <= parallelism <= max parallelism <= {MAX_MAX_PARALLELISM}")
    coordinator = _stream_handle(r, f"{what} coordinator state")
    if coordinator is not None and coordinator.kind != "inline":
        raise r.fail(f"{what}: the coordinator state should be inline bytes, got a {coordinator.kind} handle")
    n = src.read_int()
    if n < 0:
        return FlinkOperatorMetadata(operator_id, parallelism, max_parallelism, uid, name,
                                     coordinator.data if coordinator else None, (), True, coordinator)
    if n * 4 > src.available():
        raise r.fail(f"{what}: subtask count {n} does not fit the {src.available()} bytes left")
    subtasks = [_subtask(r, src.read_int(), parallelism, max_parallelism, what) for _ in range(n)]
    seen = [s.index for s in subtasks]
    if len(set(seen)) != len(seen):
        raise r.fail(f"{what}: subtask indexes {seen} repeat")
    return FlinkOperatorMetadata(operator_id, parallelism, max_parallelism, uid, name,
                                 coordinator.data if coordinator else None, tuple(subtasks), False, coordinator)


def _master_state(r: _Reader) -> MasterState:
    src = r.src
    if src.read_int() & 0xFFFFFFFF != MASTER_STATE_MAGIC:
        raise r.fail("master state without its magic number 0xc96b1696")
    n = src.read_int()
    if not 0 < n <= src.available():
        raise r.fail(f"master state of {n} bytes with {src.available()} left")
    inner = _Reader(src.read_fully(n), f"{r.where}, master state")
    version = inner.src.read_int()
    name = inner.src.read_utf()
    data = inner.src.read_fully(inner.count("master state byte count", 1))
    if inner.src.available():
        raise inner.fail(f"{inner.src.available()} bytes after master state {name!r}")
    return MasterState(name, version, data)


def parse_flink_metadata(data: bytes, where: str = FLINK_METADATA_FILE,
                         directory: Location | None = None) -> FlinkMetadata:
    """Parse the bytes of a ``_metadata`` file (see the module docstring)."""
    r = _Reader(data, where)
    src = r.src
    try:
        magic = src.read_int() & 0xFFFFFFFF
        if magic != HEADER_MAGIC:
            raise r.fail(f"magic number {magic:#010x}, a Flink _metadata file starts with {HEADER_MAGIC:#010x}; "
                         "this is not a Flink savepoint's metadata")
        version = src.read_int()
        if version not in VERSIONS:
            raise r.fail(f"metadata version {version}; this reader knows versions {VERSIONS[0]}..{VERSIONS[-1]} "
                         "(Flink 1.11 .. 2.x)")
        checkpoint_id = src.read_long()
        if checkpoint_id < 0:
            raise r.fail(f"negative checkpoint id {checkpoint_id}")
        masters = tuple(_master_state(r) for _ in range(r.count("master state count", 8)))
        operators = tuple(_operator(r, version, i) for i in range(r.count("operator count", 29)))
        ids = [op.operator_id for op in operators]
        if len(set(ids)) != len(ids):
            raise r.fail("an operator id appears twice")
        properties = None
        if version >= 4:
            properties = src.read_fully(src.available())
            if not properties.startswith(_JAVA_OBJECT_STREAM):
                raise r.fail("the checkpoint properties should be a Java object stream (0xaced0005)")
        elif src.available():
            raise r.fail(f"{src.available()} bytes after the last operator")
    except (SerializationError, ValueError, struct.error) as exc:
        raise r.fail(f"truncated or corrupt: {exc}") from None
    return FlinkMetadata(version, checkpoint_id, operators, masters, properties, directory)


# -- locating --------------------------------------------------------------------------------
def _parent(location: Location) -> Location:
    if not location.remote:
        parent = os.path.dirname(location.path)
        return Location(parent, parent)
    return Location(location.uri.rsplit("/", 1)[0], location.path.rsplit("/", 1)[0], location.scheme, location.root)


def flink_metadata_location(path: Any) -> tuple[Location, Location]:
    """(the savepoint directory, its ``_metadata`` file) for a savepoint directory or its
    ``_metadata`` file given as a local path or URI."""
    location = locate(path)
    if location.name == FLINK_METADATA_FILE and location.size() is not None:
        return _parent(location), location
    return location, location.child(FLINK_METADATA_FILE)


def is_flink_savepoint(path: Any) -> bool:
    """Whether ``path`` is a Flink savepoint directory (or its ``_metadata``): the file exists
    and starts with Flink's magic number."""
    _, metadata = flink_metadata_location(path)
    if metadata.size() is None:
        return False
    if not metadata.remote:
        with open(metadata.path, "rb") as handle:
            head = handle.read(4)
    else:
        with metadata.guard("reading"), metadata.filesystem().open_input_file(metadata.path) as handle:
            head = handle.read(4)
    return head == HEADER_MAGIC.to_bytes(4, "big")


def read_flink_metadata(path: Any) -> FlinkMetadata:
    """Read the ``_metadata`` of the Flink savepoint at ``path`` (its directory or the file)."""
    directory, metadata = flink_metadata_location(path)
    size = metadata.size()
    if size is None:
        raise SavepointFormatError(
            f"{shown(directory.uri)}: no {FLINK_METADATA_FILE} file, so this is not a Flink savepoint "
            "(give the savepoint's directory, the one holding _metadata)"
        )
    if size > MAX_FLINK_METADATA_BYTES:
        raise SavepointFormatError(
            f"{metadata.uri}: {size} bytes, more than the {MAX_FLINK_METADATA_BYTES} a _metadata file may "
            "have here; store state in files (execution.checkpointing.data-inline-threshold) and retake it"
        )
    return parse_flink_metadata(metadata.read_bytes(), metadata.uri, directory)


# -- resolving state files -------------------------------------------------------------------
def _plain_name(name: str) -> bool:
    return (bool(name) and name not in (".", "..") and "/" not in name and "\\" not in name
            and "\x00" not in name and len(name.encode("utf-8", "surrogatepass")) <= 255)


def _split_flink_path(path: str) -> tuple[str, str]:
    """(scheme, path) of a path as Flink writes it: ``file:/x``, ``file:///x``, ``/x``,
    ``s3://bucket/x``."""
    if path.startswith("file:"):
        rest = path[5:]
        if rest.startswith("//"):
            authority, _, tail = rest[2:].partition("/")
            if authority not in ("", "localhost"):
                return "", ""
            rest = "/" + tail
        return "file", rest
    if is_uri(path):
        scheme, _, rest = path.partition("://")
        return scheme.lower(), rest
    return "file", path


def resolve_stream(handle: StreamHandle, directory: Location, allow_external_files: bool = False) -> Location:
    """The file a relative or absolute stream handle names (see the module docstring for the
    rule); raises ``SavepointFormatError`` for a name that breaks it."""
    if handle.kind == "relative":
        if not _plain_name(handle.name):
            raise SavepointFormatError(
                f"{directory.uri}/_metadata names the state file {handle.name!r}, which is not a plain "
                "file name inside the savepoint directory; the metadata is corrupt or hostile"
            )
        return directory.child(handle.name)
    if handle.kind != "file":
        raise SavepointFormatError(f"a {handle.kind} handle has no file")
    scheme, path = _split_flink_path(handle.name)
    if "\x00" in handle.name or not path.startswith("/") and scheme == "file" or not scheme:
        raise SavepointFormatError(f"{directory.uri}/_metadata names the state file {handle.name!r}, "
                                   "which is not an absolute path or URI; the metadata is corrupt")
    normal = posixpath.normpath(path)
    if directory.remote:
        inside_scheme = scheme == directory.scheme
        base = directory.path.rstrip("/")
        candidate = normal.lstrip("/")
    else:
        inside_scheme = scheme == "file"
        base = directory.path.rstrip(os.sep).replace(os.sep, "/")
        candidate = normal
    if inside_scheme and candidate.startswith(base + "/"):
        parts = candidate[len(base) + 1:].split("/")
        if all(_plain_name(p) for p in parts):
            return directory.child(*parts)
    if not allow_external_files:
        raise SavepointFormatError(
            f"{directory.uri}/_metadata names the state file {handle.name!r}, outside the savepoint "
            "directory; it is read only when you trust the savepoint: pass allow_external_files=True"
        )
    try:
        return locate(handle.name if scheme != "file" else normal)
    except StorageError as exc:
        raise SavepointFormatError(f"state file {handle.name!r}: {exc}") from None
