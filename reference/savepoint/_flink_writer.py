"""Writing Flink canonical savepoints: the inverse of ``_flink_metadata`` and ``_flink_keyed``
(docs/flink-savepoints.md).

``write_flink_savepoint(savepoint, out, replacements)`` writes a new savepoint from one read by
``read_flink_savepoint``, with some keyed states replaced: ``replacements`` maps an operator
(its uid, or its 32-hex-digit id) to ``{state name: StateReplacement}``, a replacement giving the
state's new serializer snapshots (by the header's keys, e.g. ``VALUE_SERIALIZER``; written in
Flink's dialect, ``snapshot_to_bytes(..., dialect="flink")``) and a function from a stored value's
bytes to the new value's bytes (the whole stored value: a list state's delimited list, a map
state's is-null flag and value).

What is written:

- ``_metadata`` in the input's version: the master states, every operator (name, uid, id,
  parallelism, coordinator state), every subtask, and the ``CheckpointProperties`` trailer as
  read, byte for byte; only the keyed-state handles of subtasks whose streams were rewritten
  change (their offsets and stream handle);
- a stream that stays as it was (operator state, raw keyed state, the keyed state of an
  operator none of whose states is replaced) keeps its bytes: an inline one stays inline under
  its name, a file one is copied to a file of the output;
- a keyed-state stream holding a replaced state is written anew: the proxy header (version 6,
  the input's compression flag, the key serializer snapshot and every state not replaced as
  stored, a replaced state's name, backend type and options as stored and its serializer
  snapshots replaced), then each key group holding data in the input, at its new offset, with the
  same entries in the same order (keys, namespaces, user keys and key groups byte for byte; a
  replaced state's values through its function), in a Snappy framed stream of its own when the
  header says compressed (``_snappy.frame``: literal-only blocks); empty key groups keep offset
  0. Such a stream stays inline when it was inline and its new size is at most
  ``max(old size, INLINE_THRESHOLD)`` (Flink's default ``data-inline-threshold``), else it
  becomes a file;
- every file is a relative handle (type 6) to a new ``<uuid>`` file beside ``_metadata``, so the
  output directory may be moved as a whole.

Commit protocol: the output is a new local directory written under a temporary sibling name
(``atomic_directory``), ``_metadata`` last, and renamed into place: a failure or a kill leaves no
directory a reader takes for a savepoint, and an existing output is never overwritten. The input
is only read. Replacements are checked before anything is written: an operator or state the
savepoint does not hold is a ``SavepointFormatError`` naming it.

Memory: a rewritten stream goes to its file key group by key group, each key group assembled
whole (bounded by the largest key group); copied streams go in 1 MiB pieces.

``write_keyed_flink_savepoint(out, operator_uid=..., max_parallelism=..., key_serializer=...,
states=[NewKeyedState, ...])`` writes a savepoint from scratch, what a state backend holds (one
operator, its keyed states): ``_metadata`` version 3 (the last without the
``CheckpointProperties`` Java object, which only a JVM writes; Flink 2.x reads it), checkpoint id
0, no master state, one operator (its id derived from ``operator_uid`` as Flink derives it, its
uid and name not stored in version 3) at parallelism 1 with ``max_parallelism`` key groups, one
subtask whose keyed state is one uncompressed stream in a relative file: the proxy header
(version 6, the key serializer snapshot, per state its name, ``KEY_VALUE``,
``KEYED_STATE_TYPE`` and its ``VALUE_SERIALIZER`` and ``NAMESPACE_SERIALIZER`` snapshots in
Flink's dialect) and every key group holding data, each state's entries in one run, in the
order given. Rows are this project's savepoint rows ``(key_group, key, namespace, user key,
value)`` (``FlinkKeyedState.rows`` reads them back): the composite key is built as Flink's
``SerializedCompositeKeyBuilder`` builds it (key-group prefix, key, namespace, the two lengths
when both serializers are of variable length, the user key), a map value gets its is-null flag.
Every row's key group must be the one Flink assigns its key (the caller's duty: the backends use
``flink_key_group``); it is checked to lie in ``[0, max_parallelism)`` and rows must come in key
group order. The commit protocol is the one above.
"""

from __future__ import annotations

import os
import struct
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._errors import SnapshotFormatError
from .._io import DataOutputView
from .._snapshot import TypeSerializerSnapshot, java_snapshot_name, snapshot_to_bytes
from ._flink_keyed import _CORRUPT, FlinkOperator, FlinkSavepoint, _key_group_entries, _Part, _Source
from ._flink_metadata import (
    DISTRIBUTION_MODES,
    FLINK_METADATA_FILE,
    HEADER_MAGIC,
    MASTER_STATE_MAGIC,
    FlinkMetadata,
    FlinkOperatorMetadata,
    FlinkSubtaskState,
    KeyGroupsHandle,
    OperatorStateHandle,
    StreamHandle,
    operator_id_for_uid,
)
from ._format import SavepointFormatError, atomic_directory
from ._key_groups import MAX_MAX_PARALLELISM
from ._snappy import frame
from ._storage import Location, is_uri

__all__ = ["INLINE_THRESHOLD", "NewKeyedState", "StateReplacement", "write_flink_savepoint",
           "write_keyed_flink_savepoint"]

#: Flink's default ``execution.checkpointing.data-inline-threshold`` (20 KiB).
INLINE_THRESHOLD = 20 * 1024
_COPY_PIECE = 1 << 20
_END_OF_KEY_GROUP = b"\xff\xff"
_LAST_ENTRY_BIT = 0x80


@dataclass(frozen=True)
class StateReplacement:
    """A keyed state's new serializer snapshots (header key -> snapshot; keys not named keep
    theirs) and the function giving a stored value's new bytes (None: values stay)."""

    serializers: Mapping[str, TypeSerializerSnapshot[Any]] = field(default_factory=dict)
    value: Callable[[bytes], bytes] | None = None


# -- _metadata -----------------------------------------------------------------------------------
def _stream(out: DataOutputView, handle: StreamHandle | None) -> None:
    if handle is None:
        out.write_byte(0)
    elif handle.kind == "inline":
        assert handle.data is not None
        out.write_byte(1)
        out.write_utf(handle.name)
        out.write_int(len(handle.data))
        out.write(handle.data)
    elif handle.kind == "relative":
        out.write_byte(6)
        out.write_utf(handle.name)
        out.write_long(handle.size)
    else:
        out.write_byte(2)
        out.write_long(handle.size)
        out.write_utf(handle.name)


def _keyed(out: DataOutputView, handle: KeyGroupsHandle | None) -> None:
    if handle is None:
        out.write_byte(0)
        return
    out.write_byte(7)
    out.write_int(handle.first)
    out.write_int(len(handle.offsets))
    out.write(struct.pack(f">{len(handle.offsets)}q", *handle.offsets))
    _stream(out, handle.stream)


def _operator_state(out: DataOutputView, handle: OperatorStateHandle | None) -> None:
    if handle is None:
        out.write_int(0)
        return
    out.write_int(1)
    out.write_byte(4)
    out.write_int(len(handle.states))
    for state in handle.states:
        out.write_utf(state.name)
        out.write_byte(DISTRIBUTION_MODES.index(state.mode))
        out.write_int(len(state.offsets))
        out.write(struct.pack(f">{len(state.offsets)}q", *state.offsets))
    _stream(out, handle.stream)


def _subtask(out: DataOutputView, subtask: FlinkSubtaskState) -> None:
    if subtask.finished:
        out.write_int(-subtask.index - 1)
        return
    out.write_int(subtask.index)
    _operator_state(out, subtask.managed_operator_state)
    _operator_state(out, subtask.raw_operator_state)
    _keyed(out, subtask.managed_keyed_state)
    _keyed(out, subtask.raw_keyed_state)
    out.write_int(0)  # input channel state
    out.write_int(0)  # result subpartition state


def metadata_bytes(metadata: FlinkMetadata) -> bytes:
    """The ``_metadata`` file of ``metadata`` (the layout ``parse_flink_metadata`` reads)."""
    out = DataOutputView()
    out.write_int(HEADER_MAGIC)
    out.write_int(metadata.version)
    out.write_long(metadata.checkpoint_id)
    out.write_int(len(metadata.master_states))
    for master in metadata.master_states:
        inner = DataOutputView()
        inner.write_int(master.version)
        inner.write_utf(master.name)
        inner.write_int(len(master.data))
        inner.write(master.data)
        body = inner.getvalue()
        out.write_int(MASTER_STATE_MAGIC)
        out.write_int(len(body))
        out.write(body)
    out.write_int(len(metadata.operators))
    for op in metadata.operators:
        if metadata.version >= 5:
            out.write_utf(op.name or "")
            out.write_utf(op.uid or "")
        out.write(bytes.fromhex(op.operator_id))
        out.write_int(op.parallelism)
        out.write_int(op.max_parallelism)
        coordinator = op.coordinator_handle
        if coordinator is None and op.coordinator_state is not None:
            coordinator = StreamHandle("inline", str(uuid.uuid4()), len(op.coordinator_state), op.coordinator_state)
        _stream(out, coordinator)
        if op.fully_finished:
            out.write_int(-1)
            continue
        out.write_int(len(op.subtasks))
        for subtask in op.subtasks:
            _subtask(out, subtask)
    if metadata.version >= 4:
        out.write(metadata.properties or b"")
    return out.getvalue()


# -- streams -------------------------------------------------------------------------------------
class _Output:
    """The temporary directory being written: new state files get uuid names."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def new_file(self) -> tuple[str, Any]:
        name = str(uuid.uuid4())
        return name, open(os.path.join(self.directory, name), "xb")  # noqa: SIM115

    def settle(self, name: str, size: int, old: StreamHandle) -> StreamHandle:
        """The handle of the new file ``name``: inline again (the file removed) when the old
        stream was inline and the new one fits (see the module docstring)."""
        path = os.path.join(self.directory, name)
        if old.kind == "inline" and size <= max(old.size, INLINE_THRESHOLD):
            with open(path, "rb") as handle:
                data = handle.read()
            os.remove(path)
            return StreamHandle("inline", old.name, len(data), data)
        return StreamHandle("relative", name, size)

    def copy(self, source: _Source) -> StreamHandle:
        """The stream of ``source`` unchanged."""
        old = source.handle
        if old.kind == "inline":
            return old
        name, handle = self.new_file()
        try:
            with handle:
                for offset in range(0, source.size, _COPY_PIECE):
                    handle.write(source.pread(offset, _COPY_PIECE))
        finally:
            source.close()
        return StreamHandle("relative", name, source.size)


def _runs(entries: Iterator[tuple[int, bytes, bytes]]) -> Iterator[tuple[int, list[tuple[bytes, bytes]]]]:
    """Consecutive entries of one state id, grouped."""
    current: int | None = None
    run: list[tuple[bytes, bytes]] = []
    for state_id, key, value in entries:
        if state_id != current and run:
            assert current is not None
            yield current, run
            run = []
        current = state_id
        run.append((key, value))
    if run:
        assert current is not None
        yield current, run


def _header(part: _Part, replaced: Mapping[str, StateReplacement]) -> bytes:
    header = part.header
    out = DataOutputView()
    out.write_int(6)
    out.write_boolean(header.compressed)
    out.write(header.key_serializer_bytes)
    out.write_short(len(header.states))
    for meta in header.states:
        replacement = replaced.get(meta.name)
        if replacement is None:
            out.write(meta.raw)
            continue
        out.write_utf(meta.name)
        out.write_int(("KEY_VALUE", "OPERATOR", "BROADCAST", "PRIORITY_QUEUE").index(meta.backend_type))
        out.write_int(len(meta.options))
        for key, value in meta.options.items():
            out.write_utf(key)
            out.write_utf(value)
        keys = list(meta.snapshot_bytes) + [k for k in replacement.serializers if k not in meta.snapshot_bytes]
        out.write_int(len(keys))
        for key in keys:
            out.write_utf(key)
            snapshot = replacement.serializers.get(key)
            out.write(meta.snapshot_bytes[key] if snapshot is None else snapshot_to_bytes(snapshot, dialect="flink"))
    return out.getvalue()


def _rewrite(part: _Part, replaced: Mapping[str, StateReplacement], output: _Output) -> KeyGroupsHandle:
    """One keyed-state stream written anew (see the module docstring), to a file as it goes."""
    functions = {i: replaced[m.name].value for i, m in enumerate(part.header.states) if m.name in replaced}
    header = _header(part, replaced)
    offsets = []
    old = part.handle
    name, target = output.new_file()
    try:
        with target:
            target.write(header)
            position = len(header)
            for key_group in old.key_groups:
                offset = old.offset(key_group)
                if offset <= 0:
                    offsets.append(0)
                    continue
                if offset < part.header.size:
                    raise SavepointFormatError(
                        f"{part.source.where}: key group {key_group} starts at byte {offset}, inside the header")
                data = _key_group(part, key_group, offset, functions)
                offsets.append(position)
                target.write(data)
                position += len(data)
    finally:
        part.source.close()
    return KeyGroupsHandle(old.first, tuple(offsets), output.settle(name, position, old.stream))


def _key_group(part: _Part, key_group: int, offset: int,
               functions: Mapping[int, Callable[[bytes], bytes] | None]) -> bytes:
    """One key group's entries as stored, the replaced states' values changed."""
    body = bytearray()
    entries = _key_group_entries(part.source, offset, part.header.compressed, key_group, len(part.header.states))
    for state_id, run in _runs(entries):
        body += struct.pack(">h", state_id)
        change = functions.get(state_id)
        for i, (key, value) in enumerate(run):
            if change is not None:
                try:
                    value = change(value)
                except _CORRUPT as exc:  # a StateError passes as it is
                    raise SavepointFormatError(
                        f"{part.source.where}, key group {key_group}: a value of state "
                        f"{part.header.states[state_id].name!r} cannot be migrated ({type(exc).__name__}: {exc}); "
                        "the savepoint is corrupt or its snapshots do not describe its bytes") from None
            stored = bytearray(key)
            if i == len(run) - 1:
                stored[0] |= _LAST_ENTRY_BIT
            body += struct.pack(">i", len(stored)) + stored + struct.pack(">i", len(value)) + value
    body += _END_OF_KEY_GROUP
    return frame(bytes(body)) if part.header.compressed else bytes(body)


def _copy_keyed(handle: KeyGroupsHandle | None, source_of: Callable[[StreamHandle], _Source],
                output: _Output) -> KeyGroupsHandle | None:
    if handle is None:
        return None
    return KeyGroupsHandle(handle.first, handle.offsets, output.copy(source_of(handle.stream)))


def _copy_operator(handle: OperatorStateHandle | None, source_of: Callable[[StreamHandle], _Source],
                   output: _Output) -> OperatorStateHandle | None:
    if handle is None:
        return None
    return OperatorStateHandle(handle.states, output.copy(source_of(handle.stream)))


def _operator_out(op: FlinkOperator, replaced: Mapping[str, StateReplacement], output: _Output,
                  source_of: Callable[[StreamHandle], _Source]) -> FlinkOperatorMetadata:
    subtasks = []
    for subtask in op.metadata.subtasks:
        if subtask.finished:
            subtasks.append(subtask)
            continue
        managed = subtask.managed_keyed_state
        part = next((p for p in op._parts if p.handle is managed), None) if managed is not None else None
        new_managed: KeyGroupsHandle | None
        if part is not None and any(m.name in replaced for m in part.header.states):
            new_managed = _rewrite(part, replaced, output)
        else:
            new_managed = _copy_keyed(managed, source_of, output)
        subtasks.append(FlinkSubtaskState(
            subtask.index, False,
            _copy_operator(subtask.managed_operator_state, source_of, output),
            _copy_operator(subtask.raw_operator_state, source_of, output),
            new_managed,
            _copy_keyed(subtask.raw_keyed_state, source_of, output),
        ))
    meta = op.metadata
    return FlinkOperatorMetadata(meta.operator_id, meta.parallelism, meta.max_parallelism, meta.uid, meta.name,
                                 meta.coordinator_state, tuple(subtasks), meta.fully_finished,
                                 meta.coordinator_handle)


def _check_replacements(savepoint: FlinkSavepoint,
                        replacements: Mapping[str, Mapping[str, StateReplacement]]) -> dict[str, Mapping[str, StateReplacement]]:
    by_id: dict[str, Mapping[str, StateReplacement]] = {}
    for name, states in replacements.items():
        try:
            op = savepoint.operator(name)
        except KeyError as exc:
            raise SavepointFormatError(f"replacement for operator {name!r}: {exc.args[0]}") from None
        held = {s.name for s in op.keyed_states}
        missing = sorted(set(states) - held)
        if missing:
            raise SavepointFormatError(
                f"operator {name!r} has no keyed state {missing[0]!r} to replace (it has {sorted(held)})")
        if op.operator_id in by_id:
            raise SavepointFormatError(f"operator {name!r} is named twice in the replacements")
        by_id[op.operator_id] = states
    return by_id


def write_flink_savepoint(savepoint: FlinkSavepoint, out: str | os.PathLike[str],
                          replacements: Mapping[str, Mapping[str, StateReplacement]] | None = None, *,
                          allow_external_files: bool = False) -> str:
    """Write ``savepoint`` (read by ``read_flink_savepoint``) with ``replacements`` applied as a
    new canonical savepoint at the local directory ``out`` (see the module docstring); returns
    its path. ``allow_external_files`` as for reading (the input's absolute file handles)."""
    if is_uri(os.fspath(out)):
        raise SavepointFormatError(
            f"{os.fspath(out)!r}: a Flink savepoint is written to a local directory here; write it "
            "locally and copy the directory to the store")
    by_id = _check_replacements(savepoint, replacements or {})
    directory = savepoint.directory
    assert directory is not None

    def source_of(handle: StreamHandle) -> _Source:
        return _Source(handle, directory, allow_external_files)

    final = os.path.abspath(os.fspath(out))
    with atomic_directory(final) as temp:
        output = _Output(temp)
        operators = tuple(_operator_out(op, by_id.get(op.operator_id, {}), output, source_of)
                          for op in savepoint.operators)
        old = savepoint.metadata
        metadata = FlinkMetadata(old.version, old.checkpoint_id, operators, old.master_states, old.properties,
                                 Location(temp, temp))
        with open(os.path.join(temp, FLINK_METADATA_FILE), "xb") as handle:
            handle.write(metadata_bytes(metadata))
    return final


# -- a savepoint from scratch ----------------------------------------------------------------------
#: ``KEYED_STATE_TYPE`` values Flink writes (``StateDescriptor.Type``).
KEYED_STATE_TYPES = ("VALUE", "LIST", "MAP", "REDUCING", "AGGREGATING")
_NEW_METADATA_VERSION = 3
_Row = tuple[int, bytes, bytes, "bytes | None", "bytes | None"]


@dataclass(frozen=True)
class NewKeyedState:
    """One keyed state of ``write_keyed_flink_savepoint``: its name, Flink's ``KEYED_STATE_TYPE``
    (``VALUE``, ``LIST``, ``MAP``, ``REDUCING``, ``AGGREGATING``), its ``VALUE_SERIALIZER``
    snapshot as Flink holds it (a list state's list snapshot, a map state's map snapshot), its
    ``NAMESPACE_SERIALIZER`` snapshot, and its rows in key-group order."""

    name: str
    state_type: str
    value_serializer: TypeSerializerSnapshot[Any]
    namespace_serializer: TypeSerializerSnapshot[Any]
    rows: Any  # Iterable[_Row]


def _length_suffix(length: int) -> bytes:
    out = bytearray()
    while True:
        out.append(length & 0xFF)
        length >>= 8
        if not length:
            return bytes(out)


def _check_flink_identity(snapshot: Any, where: str) -> None:
    """Refuse a snapshot (or one nested in it) that has no Java class name: Flink could not
    load it."""
    if java_snapshot_name(snapshot) is None:
        raise SnapshotFormatError(
            f"{where}: {type(snapshot).__module__}.{type(snapshot).__qualname__} has no Flink identity (no Java "
            "snapshot class), so Flink cannot restore it; a Flink savepoint needs Flink's serializers (the "
            "reference's built-ins; POJOs and enums registered with reference.register_type(cls, java_name))")
    for nested in getattr(snapshot, "nested_snapshots", None) or ():
        _check_flink_identity(nested, where)


def _new_header(key_serializer: TypeSerializerSnapshot[Any], states: list[NewKeyedState]) -> bytes:
    _check_flink_identity(key_serializer, "the key serializer")
    for state in states:
        _check_flink_identity(state.value_serializer, f"state {state.name!r}")
        _check_flink_identity(state.namespace_serializer, f"state {state.name!r} (namespace)")
    out = DataOutputView()
    out.write_int(6)
    out.write_boolean(False)
    out.write(snapshot_to_bytes(key_serializer, dialect="flink"))
    out.write_short(len(states))
    for state in states:
        out.write_utf(state.name)
        out.write_int(0)  # KEY_VALUE
        out.write_int(1)
        out.write_utf("KEYED_STATE_TYPE")
        out.write_utf(state.state_type)
        out.write_int(2)
        out.write_utf("VALUE_SERIALIZER")
        out.write(snapshot_to_bytes(state.value_serializer, dialect="flink"))
        out.write_utf("NAMESPACE_SERIALIZER")
        out.write(snapshot_to_bytes(state.namespace_serializer, dialect="flink"))
    return out.getvalue()


def write_keyed_flink_savepoint(out: str | os.PathLike[str], *, operator_uid: str, max_parallelism: int,
                                key_serializer: TypeSerializerSnapshot[Any],
                                states: list[NewKeyedState]) -> str:
    """Write the keyed ``states`` of one operator as a new Flink canonical savepoint at the
    local directory ``out`` (see the module docstring); returns its path."""
    if is_uri(os.fspath(out)):
        raise SavepointFormatError(
            f"{os.fspath(out)!r}: a Flink savepoint is written to a local directory here; write it "
            "locally and copy the directory to the store")
    if not isinstance(operator_uid, str) or not operator_uid:
        raise SavepointFormatError(f"operator_uid should be the Flink operator's uid (a non-empty string), got {operator_uid!r}")
    if not 1 <= max_parallelism <= MAX_MAX_PARALLELISM:
        raise SavepointFormatError(f"max_parallelism should be in [1, {MAX_MAX_PARALLELISM}], got {max_parallelism}")
    names = [s.name for s in states]
    if len(set(names)) != len(names):
        raise SavepointFormatError(f"a state is named twice in {names}")
    for state in states:
        if state.state_type not in KEYED_STATE_TYPES:
            raise SavepointFormatError(f"state {state.name!r}: KEYED_STATE_TYPE {state.state_type!r}, should be one of {KEYED_STATE_TYPES}")
    header = _new_header(key_serializer, states)  # a snapshot without a Flink identity fails here
    prefix = 1 if max_parallelism <= 128 else 2
    key_length = key_serializer.restore_serializer().length
    ambiguous = [key_length < 0 and s.namespace_serializer.restore_serializer().length < 0 for s in states]
    final = os.path.abspath(os.fspath(out))
    with atomic_directory(final) as temp:
        output = _Output(temp)
        name, target = output.new_file()
        offsets = [0] * max_parallelism
        with target:
            target.write(header)
            position = len(header)
            iterators = [iter(state.rows) for state in states]
            pending: list[Any] = [next(it, None) for it in iterators]
            last = -1
            while any(row is not None for row in pending):
                key_group = min(row[0] for row in pending if row is not None)
                if not last < key_group < max_parallelism:
                    raise SavepointFormatError(
                        f"a row of key group {key_group} after key group {last} (max parallelism "
                        f"{max_parallelism}): rows must come in key-group order, in range")
                last = key_group
                body = bytearray()
                for state_id, state in enumerate(states):
                    run: list[bytes] = []
                    while pending[state_id] is not None and pending[state_id][0] == key_group:
                        run.append(_entry(pending[state_id], prefix, ambiguous[state_id], state.state_type))
                        pending[state_id] = next(iterators[state_id], None)
                    if run:
                        body += struct.pack(">h", state_id)
                        for i, entry in enumerate(run):
                            if i == len(run) - 1:
                                entry = _mark_last(entry)
                            body += entry
                body += _END_OF_KEY_GROUP
                offsets[key_group] = position
                target.write(body)
                position += len(body)
        stream = StreamHandle("relative", name, position)
        subtask = FlinkSubtaskState(0, False, None, None, KeyGroupsHandle(0, tuple(offsets), stream), None)
        operator = FlinkOperatorMetadata(operator_id_for_uid(operator_uid), 1, max_parallelism, None, None, None,
                                         (subtask,), False, None)
        metadata = FlinkMetadata(_NEW_METADATA_VERSION, 0, (operator,), (), None, Location(temp, temp))
        with open(os.path.join(temp, FLINK_METADATA_FILE), "xb") as handle:
            handle.write(metadata_bytes(metadata))
    return final


def _entry(row: Any, prefix: int, ambiguous: bool, state_type: str) -> bytes:
    key_group, key, namespace, user_key, value = row
    composite = bytearray(key_group.to_bytes(prefix, "big"))
    composite += key
    if ambiguous:
        composite += _length_suffix(len(key))
    composite += namespace
    if ambiguous:
        composite += _length_suffix(len(namespace))
    if state_type == "MAP":
        if user_key is None:
            raise SavepointFormatError("a map state's row without a user key")
        composite += user_key
        stored = b"\x01" if value is None else b"\x00" + value
    else:
        if value is None or user_key is not None:
            raise SavepointFormatError(f"a {state_type} state's row with a user key or without a value")
        stored = value
    return struct.pack(">i", len(composite)) + bytes(composite) + struct.pack(">i", len(stored)) + stored


def _mark_last(entry: bytes) -> bytes:
    marked = bytearray(entry)
    marked[4] |= _LAST_ENTRY_BIT
    return bytes(marked)
