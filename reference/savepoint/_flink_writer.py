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
  ``max(old size, INLINE_THRESHOLD)`` (Flink's default ``data-inline-threshold``, 20 KiB), else
  it becomes a file;
- every file is a relative handle (type 6) to a new file beside ``_metadata``, so the output
  directory may be moved as a whole. Its name is a ``uuid5`` of the operator id, the subtask
  and the stream (``keyed``, ``raw-keyed``, ``operator``, ``raw-operator``), so the same input
  and replacements give the same output byte for byte, however the work was spread; in an
  object store the attempt's name follows it (``<uuid>.<host>-<pid>-<random>``, below).

The work is a list of tasks, one per file to write: a stream copied, or a keyed-state stream
rewritten; a stream to rewrite whose input holds ``piece_bytes`` or more (``PIECE_BYTES``, 64
MiB) is split into runs of consecutive key groups of about that size, one task each, written as
pieces (``<name>.piece-N``) that are then joined after the header into the stream's file (the
pieces removed). Tasks are numbered from the largest input to the smallest. A task opens the savepoint itself (from its directory), so tasks run in any
process: ``run_tasks`` (a ``TaskRunner``) runs them, by default in this process one after the
other; ``conformance.spark`` runs them on Spark executors. Whoever runs them, the same code
writes every file, and this process writes ``_metadata``, last.

Commit protocol (the project's, ``reference.savepoint._format``): ``out`` is a local directory
or a URI (``s3://...``, anything ``locate`` accepts). Locally the output is written under a
temporary sibling name (``atomic_directory``), ``_metadata`` last, and renamed into place. In an
object store, which has no rename, every state file carries the attempt's name (``<uuid>.<host>-
<pid>-<random>``, ``ATTEMPT_FILE``), ``_metadata`` is one object written after every state file,
a failed attempt removes its files, and what a killed attempt left is removed by the next attempt
at the same prefix once its owner is provably gone (``remove_abandoned_objects``); a prefix that
holds ``_metadata`` or objects no attempt wrote is refused. Either way a failure or a kill leaves
nothing a reader takes for a savepoint (no ``_metadata``), an existing output is never
overwritten, and the input is only read. Replacements are checked before anything is written:
an operator or state the savepoint does not hold is a ``SavepointFormatError`` naming it.

``operator_uids={old: new}`` moves operators to new uids (``renamed_operators``): ``old`` names
an operator of the savepoint (its uid, or its 32-hex-digit id), ``new`` the new job's operator,
by uid (the id becomes the one Flink derives from it, ``operator_id_for_uid``, and ``_metadata``
of version 5 or later stores the uid) or by a 32-hex-digit id (for an operator the new job gives
no uid: the id is that, no uid is stored). The operator's name, state and subtasks stay; Flink
matches state to a job's operators by id alone. Two operators may not end with one id.

Memory: a rewritten stream goes to its file key group by key group, each key group assembled
whole (bounded by the largest key group); copied streams and joined pieces go in 1 MiB pieces.

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
group order. The output is a local directory, committed as above (a temporary sibling renamed into place,
``_metadata`` last).
"""

from __future__ import annotations

import contextlib
import os
import re
import struct
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._errors import SnapshotFormatError, StateError
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
from ._format import SavepointFormatError, atomic_directory, owned_temp_name, remove_abandoned_objects
from ._key_groups import MAX_MAX_PARALLELISM
from ._snappy import frame
from ._storage import Location, is_uri, locate, shown

__all__ = ["INLINE_THRESHOLD", "NewKeyedState", "PIECE_BYTES", "StateReplacement", "TaskRunner",
           "write_flink_savepoint", "write_keyed_flink_savepoint"]

#: Flink's default inline threshold, 20 KiB: a stream of at most this many bytes is stored in
#: ``_metadata`` (a ``ByteStreamStateHandle``) instead of a file. Flink 2.3's
#: ``CheckpointingOptions.FS_SMALL_FILE_THRESHOLD``, key
#: ``execution.checkpointing.data-inline-threshold`` (deprecated keys
#: ``state.storage.fs.memory-threshold``, ``state.backend.fs.memory-threshold``), default
#: ``"20kb"`` (read from the class in flink-dist-2.3.0.jar). File merging
#: (``execution.checkpointing.file-merging.enabled``, off by default) does not apply to savepoints.
INLINE_THRESHOLD = 20 * 1024
#: The input size from which a keyed-state stream to rewrite is split into pieces, each a task.
PIECE_BYTES = 64 << 20
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


# -- where new files go --------------------------------------------------------------------------
#: The namespace of the output's file names: ``uuid5`` of (operator id, subtask, stream), so
#: that the same savepoint and replacements give the same files, in one process or on Spark.
_NAMES = uuid.UUID("5f0b7c1e-8d2a-4c3b-9e6f-0a1b2c3d4e5f")
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
#: A state file an attempt writes in an object store, ``<uuid>.<attempt>`` (a piece of a split
#: stream ``<uuid>.piece-N.<attempt>``), the attempt being what ``owned_temp_name`` adds.
ATTEMPT_FILE = re.compile(rf"^{_UUID}(?:\.piece-\d+)?\.(?P<attempt>[^/]+)$")


@dataclass(frozen=True)
class _Output:
    """Where the new state files go: the temporary directory of a local output, or the output
    prefix itself in an object store (every name then carries the attempt's, ``attempt``)."""

    directory: Location
    attempt: str | None

    def name(self, stem: str) -> str:
        return stem if self.attempt is None else f"{stem}.{self.attempt}"

    def create(self, name: str) -> Any:
        """A new file to write (the object appears, complete, when it is closed)."""
        where = self.directory.child(name)
        if not where.remote:
            return open(where.path, "xb", buffering=_COPY_PIECE)  # noqa: SIM115
        with where.guard("writing"):
            return where.filesystem().open_output_stream(where.path)

    def open(self, name: str) -> Any:
        where = self.directory.child(name)
        if not where.remote:
            return open(where.path, "rb")  # noqa: SIM115
        with where.guard("reading"):
            return where.filesystem().open_input_stream(where.path)

    def remove(self, name: str) -> None:
        where = self.directory.child(name)
        if where.remote:
            where.delete()
        else:
            os.remove(where.path)

    def settle(self, name: str, size: int, old: StreamHandle) -> StreamHandle:
        """The handle of the new file ``name``: inline again (the file removed) when the old
        stream was inline and the new one fits (see the module docstring)."""
        if old.kind == "inline" and size <= max(old.size, INLINE_THRESHOLD):
            with self.directory.guard("reading"), self.open(name) as handle:
                data = bytes(handle.read())
            self.remove(name)
            return StreamHandle("inline", old.name, len(data), data)
        return StreamHandle("relative", name, size)

    def copy(self, source: _Source, name: str) -> StreamHandle:
        """The stream of ``source`` unchanged, as the file ``name``."""
        try:
            with self.directory.guard("writing"), self.create(name) as target:
                for offset in range(0, source.size, _COPY_PIECE):
                    target.write(source.pread(offset, _COPY_PIECE))
        finally:
            source.close()
        return StreamHandle("relative", name, source.size)


# -- streams -------------------------------------------------------------------------------------
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


def _pieces(part: _Part, piece_bytes: int) -> list[tuple[int, int, int]]:
    """The key groups of a stream to rewrite as consecutive ranges ``(first, stop, bytes)``,
    each but the last holding at least ``piece_bytes`` of the input (measured by the offsets)."""
    handle = part.handle
    starts = sorted({handle.offset(kg) for kg in handle.key_groups if handle.offset(kg) > 0} | {part.source.size})
    end_of = {start: starts[i + 1] for i, start in enumerate(starts[:-1])}
    pieces, first, held = [], handle.first, 0
    for key_group in handle.key_groups:
        offset = handle.offset(key_group)
        if offset > 0:
            held += end_of[offset] - offset
        if held >= piece_bytes and key_group + 1 < handle.key_groups.stop:
            pieces.append((first, key_group + 1, held))
            first, held = key_group + 1, 0
    pieces.append((first, handle.key_groups.stop, held))
    return pieces


def _rewrite_key_groups(part: _Part, replaced: Mapping[str, StateReplacement], key_groups: range,
                        target: Any, position: int) -> tuple[list[int | None], int]:
    """Write the key groups ``key_groups`` of ``part`` anew to ``target``, which is at byte
    ``position`` of the stream: (each key group's offset, None for an empty one; the new
    position)."""
    functions = {i: replaced[m.name].value for i, m in enumerate(part.header.states) if m.name in replaced}
    offsets: list[int | None] = []
    for key_group in key_groups:
        offset = part.handle.offset(key_group)
        if offset <= 0:
            offsets.append(None)
            continue
        if offset < part.header.size:
            raise SavepointFormatError(
                f"{part.source.where}: key group {key_group} starts at byte {offset}, inside the header")
        data = _key_group(part, key_group, offset, functions)
        offsets.append(position)
        target.write(data)
        position += len(data)
    return offsets, position


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


# -- the work: tasks run in this process or by Spark executors ----------------------------------
#: The streams of a subtask, by the name its tasks and files carry.
_ROLES = ("keyed", "raw-keyed", "operator", "raw-operator")


@dataclass(frozen=True)
class _Task:
    """One unit of the work: copy the stream ``role`` of subtask ``subtask`` (its position in
    the operator's list) of operator ``operator`` (its position), or rewrite its key groups
    ``first .. stop - 1`` (piece ``piece`` of ``pieces``: one piece writes the whole stream,
    header included; several write pieces that ``_assemble`` joins after the header)."""

    kind: str  # "copy" or "rewrite"
    operator: int
    subtask: int
    role: str
    stem: str
    piece: int = 0
    pieces: int = 1
    first: int = 0
    stop: int = 0
    #: The bytes of input it reads (what orders the tasks, largest first).
    size: int = 0


def _stream_of(subtask: FlinkSubtaskState, role: str) -> KeyGroupsHandle | OperatorStateHandle | None:
    return {"keyed": subtask.managed_keyed_state, "raw-keyed": subtask.raw_keyed_state,
            "operator": subtask.managed_operator_state, "raw-operator": subtask.raw_operator_state}[role]


def _part_of(op: FlinkOperator, subtask: FlinkSubtaskState) -> _Part:
    part = next((p for p in op._parts if p.handle is subtask.managed_keyed_state), None)
    assert part is not None, f"subtask {subtask.index} of operator {op.operator_id} has no keyed-state stream"
    return part


def _piece_name(stem: str, piece: int) -> str:
    return f"{stem}.piece-{piece}"


class _Work:
    """What runs the tasks (picklable: an executor opens the savepoint itself, from its
    directory; this process reuses the savepoint it read). Called with task numbers, yields
    (number, result): a rewritten stream's ``KeyGroupsHandle`` (one piece) or (offsets, size)
    of a piece, a copied stream's ``StreamHandle``."""

    def __init__(self, savepoint: FlinkSavepoint, allow_external_files: bool, output: _Output,
                 tasks: list[_Task], replaced: Mapping[str, Mapping[str, StateReplacement]],
                 headers: Mapping[tuple[int, int], bytes], fault: Callable[[int], None] | None) -> None:
        assert savepoint.directory is not None
        self.directory = savepoint.directory
        self.allow_external_files = allow_external_files
        self.output = output
        self.tasks = tasks
        self.replaced = replaced
        self.headers = headers
        self.fault = fault
        self.savepoint: FlinkSavepoint | None = savepoint

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["savepoint"] = None
        return state

    def __call__(self, numbers: Iterable[int]) -> Iterator[tuple[int, Any]]:
        if self.savepoint is None:
            from ._flink_keyed import read_flink_savepoint

            self.savepoint = read_flink_savepoint(self.directory, allow_external_files=self.allow_external_files)
        for number in numbers:
            if self.fault is not None:
                self.fault(number)
            yield number, self._run(self.savepoint, self.tasks[number])

    def _run(self, savepoint: FlinkSavepoint, task: _Task) -> Any:
        op = savepoint.operators[task.operator]
        subtask = op.metadata.subtasks[task.subtask]
        output = self.output
        if task.kind == "copy":
            handle = _stream_of(subtask, task.role)
            assert handle is not None
            source = _Source(handle.stream, self.directory, self.allow_external_files)
            return output.copy(source, output.name(task.stem))
        part = _part_of(op, subtask)
        replaced = self.replaced[op.operator_id]
        key_groups = range(task.first, task.stop)
        try:
            if task.pieces > 1:
                name = output.name(_piece_name(task.stem, task.piece))
                with output.directory.guard("writing"), output.create(name) as target:
                    return _rewrite_key_groups(part, replaced, key_groups, target, 0)
            name = output.name(task.stem)
            header = self.headers[(task.operator, task.subtask)]
            with output.directory.guard("writing"), output.create(name) as target:
                target.write(header)
                offsets, size = _rewrite_key_groups(part, replaced, key_groups, target, len(header))
        finally:
            part.source.close()
        return KeyGroupsHandle(part.handle.first, tuple(0 if o is None else o for o in offsets),
                               output.settle(name, size, part.handle.stream))


def _assemble(part: _Part, header: bytes, output: _Output, stem: str,
              pieces: list[tuple[list[int | None], int]]) -> KeyGroupsHandle:
    """A stream rewritten in pieces: the header, then the pieces in order, as one file (the
    pieces removed); the pieces' offsets moved to where each piece landed."""
    name = output.name(stem)
    offsets: list[int] = []
    position = len(header)
    with output.directory.guard("writing"), output.create(name) as target:
        target.write(header)
        for number, (piece_offsets, size) in enumerate(pieces):
            offsets += [0 if o is None else o + position for o in piece_offsets]
            piece = output.name(_piece_name(stem, number))
            with output.open(piece) as handle:
                while chunk := handle.read(_COPY_PIECE):
                    target.write(chunk)
            position += size
    for number in range(len(pieces)):
        output.remove(output.name(_piece_name(stem, number)))
    return KeyGroupsHandle(part.handle.first, tuple(offsets), output.settle(name, position, part.handle.stream))
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


#: Runs the tasks of a write: ``run_tasks(n, work)`` calls ``work`` on the task numbers
#: ``0 .. n - 1`` (in any grouping, in this process or elsewhere) and returns every (number,
#: result) it yields. ``conformance.spark`` gives one that runs them on Spark executors.
TaskRunner = Callable[[int, Callable[[Iterable[int]], Iterator[tuple[int, Any]]]], Iterable[tuple[int, Any]]]


def _in_this_process(tasks: int, work: Callable[[Iterable[int]], Iterator[tuple[int, Any]]]) -> list[tuple[int, Any]]:
    return list(work(range(tasks)))


def _plan(savepoint: FlinkSavepoint, by_id: Mapping[str, Mapping[str, StateReplacement]],
          piece_bytes: int) -> tuple[list[_Task], dict[tuple[int, int, str], list[int]], dict[tuple[int, int], bytes]]:
    """The tasks of a write, numbered from the largest input to the smallest (so that a runner
    dealing them round-robin spreads the work evenly); for each stream rewritten in pieces the
    task numbers of its pieces in order; the header of each stream rewritten (written here,
    where the caller's class registrations are, which name the new snapshots' classes: not in a
    task, which may run in another process)."""
    tasks: list[_Task] = []
    headers: dict[tuple[int, int], bytes] = {}
    for o, op in enumerate(savepoint.operators):
        replaced = by_id.get(op.operator_id, {})
        for s, subtask in enumerate(op.metadata.subtasks):
            if subtask.finished:
                continue
            for role in _ROLES:
                handle = _stream_of(subtask, role)
                if handle is None:
                    continue
                stem = str(uuid.uuid5(_NAMES, f"{op.operator_id}/{subtask.index}/{role}"))
                if role == "keyed" and any(m.name in replaced for m in _part_of(op, subtask).header.states):
                    part = _part_of(op, subtask)
                    headers[(o, s)] = _header(part, replaced)
                    ranges = _pieces(part, piece_bytes)
                    tasks += [_Task("rewrite", o, s, role, stem, j, len(ranges), first, stop, size)
                              for j, (first, stop, size) in enumerate(ranges)]
                elif handle.stream.kind != "inline":
                    tasks.append(_Task("copy", o, s, role, stem, size=handle.stream.size))
    tasks.sort(key=lambda task: -task.size)  # stable: equal sizes keep the savepoint's order
    split: dict[tuple[int, int, str], list[int]] = {}
    for number, task in sorted(enumerate(tasks), key=lambda item: item[1].piece):
        if task.pieces > 1:
            split.setdefault((task.operator, task.subtask, task.role), []).append(number)
    return tasks, split, headers


def _operators(savepoint: FlinkSavepoint, tasks: list[_Task], results: Mapping[int, Any],
               streams: Mapping[tuple[int, int, str], KeyGroupsHandle],
               renames: Mapping[str, tuple[str, str | None]]) -> tuple[FlinkOperatorMetadata, ...]:
    """The operators of the new ``_metadata``: every stream a task wrote in its new place, the
    renamed operators under their new id and uid."""
    new: dict[tuple[int, int, str], Any] = dict(streams)
    for number, task in enumerate(tasks):
        if task.pieces == 1:
            new[(task.operator, task.subtask, task.role)] = results[number]
    operators = []
    for o, op in enumerate(savepoint.operators):
        subtasks = []
        for s, subtask in enumerate(op.metadata.subtasks):
            if subtask.finished:
                subtasks.append(subtask)
                continue
            handles: dict[str, Any] = {}
            for role in _ROLES:
                old = _stream_of(subtask, role)
                got = new.get((o, s, role))
                if isinstance(got, StreamHandle):  # copied: same offsets, new stream
                    assert old is not None
                    got = (KeyGroupsHandle(old.first, old.offsets, got) if isinstance(old, KeyGroupsHandle)
                           else OperatorStateHandle(old.states, got))
                handles[role] = old if got is None else got
            subtasks.append(FlinkSubtaskState(subtask.index, False, handles["operator"], handles["raw-operator"],
                                              handles["keyed"], handles["raw-keyed"]))
        meta = op.metadata
        operator_id, uid = meta.operator_id, meta.uid
        if operator_id in renames:
            operator_id, uid = renames[operator_id]
            uid = uid if savepoint.metadata.version >= 5 else None
        operators.append(FlinkOperatorMetadata(operator_id, meta.parallelism, meta.max_parallelism, uid,
                                               meta.name, meta.coordinator_state, tuple(subtasks),
                                               meta.fully_finished, meta.coordinator_handle))
    return tuple(operators)


def _discard(final: Location, attempt: str) -> None:
    """Remove this attempt's files from the object store (best effort)."""
    for name, _size, _mtime in final.files():
        match = ATTEMPT_FILE.match(name)
        if match is not None and match["attempt"] == attempt:
            with contextlib.suppress(StateError):
                final.child(name).delete()


@contextlib.contextmanager
def _flink_output(out: str | os.PathLike[str]) -> Iterator[tuple[Location, _Output]]:
    """The commit protocol for a Flink savepoint (see the module docstring): (where
    ``_metadata`` goes, where the state files go)."""
    final = locate(out)
    if not final.remote:
        with atomic_directory(final.path) as temp:
            directory = locate(temp)
            yield directory, _Output(directory, None)
        return
    final.check_writable()
    remove_abandoned_objects(final, metadata_file=FLINK_METADATA_FILE, attempt_file=ATTEMPT_FILE)
    attempt = owned_temp_name("")
    try:
        yield final, _Output(final, attempt)
    except BaseException:
        _discard(final, attempt)
        raise


_OPERATOR_ID = re.compile(r"[0-9a-fA-F]{32}")


def renamed_operators(savepoint: FlinkSavepoint, operator_uids: Mapping[str, str]) -> dict[str, tuple[str, str | None]]:
    """``{old operator id: (new operator id, new uid or None)}`` for ``operator_uids`` (``{old
    uid or id: new uid or 32-hex-digit id}``, see the module docstring); raises ``StateError``
    naming the entry when an old operator is not in the savepoint or two operators would end
    with one id."""
    out: dict[str, tuple[str, str | None]] = {}
    for old, new in operator_uids.items():
        if not isinstance(old, str) or not isinstance(new, str) or not old or not new:
            raise StateError(f"operator_uids: got {old!r} -> {new!r}, should map a non-empty old uid (or operator "
                             "id) to a non-empty new uid (or 32-hex-digit operator id)")
        try:
            op = savepoint.operator(old)
        except KeyError as exc:
            raise StateError(f"operator_uids {old!r} -> {new!r}: {exc.args[0]}") from None
        if op.operator_id in out:
            raise StateError(f"operator_uids: operator {old!r} (id {op.operator_id}) is renamed twice")
        if _OPERATOR_ID.fullmatch(new):
            renamed: tuple[str, str | None] = (new.lower(), None)
        else:
            renamed = (operator_id_for_uid(new), new)
        if renamed[0] == op.operator_id and renamed[1] == op.uid:
            raise StateError(f"operator_uids {old!r} -> {new!r}: the operator has that uid and id already; "
                             "leave it out")
        out[op.operator_id] = renamed
    final = [out.get(op.operator_id, (op.operator_id, None))[0] for op in savepoint.operators]
    for new_id in {i for i in final if final.count(i) > 1}:
        holders = [op.uid or op.operator_id for op in savepoint.operators
                   if out.get(op.operator_id, (op.operator_id, None))[0] == new_id]
        raise StateError(f"operator_uids: operators {holders} would all have the id {new_id}; Flink restores one "
                         "operator's state per id: rename them apart")
    return out


def write_flink_savepoint(savepoint: FlinkSavepoint, out: str | os.PathLike[str],
                          replacements: Mapping[str, Mapping[str, StateReplacement]] | None = None, *,
                          allow_external_files: bool = False, run_tasks: TaskRunner | None = None,
                          piece_bytes: int = PIECE_BYTES, operator_uids: Mapping[str, str] | None = None,
                          _fault: Callable[[int], None] | None = None) -> str:
    """Write ``savepoint`` (read by ``read_flink_savepoint``) with ``replacements`` applied as a
    new canonical savepoint at ``out``, a local directory or a URI (see the module docstring);
    returns its path (the URI as given for a URI). ``allow_external_files`` as for reading (the
    input's absolute file handles). ``run_tasks`` runs the tasks (``TaskRunner``; default: in
    this process, one after the other); ``piece_bytes`` is the input size from which a stream
    to rewrite is split into pieces, each a task of its own; ``operator_uids`` moves operators
    to new uids (``renamed_operators``)."""
    if piece_bytes < 1:
        raise StateError(f"write_flink_savepoint: got piece_bytes={piece_bytes}, should be at least 1 (bytes of "
                         "input per task of a stream split into pieces)")
    by_id = _check_replacements(savepoint, replacements or {})
    renames = renamed_operators(savepoint, operator_uids or {})
    assert savepoint.directory is not None
    tasks, split, headers = _plan(savepoint, by_id, piece_bytes)
    with _flink_output(out) as (directory, output):
        work = _Work(savepoint, allow_external_files, output, tasks, by_id, headers, _fault)
        results = dict((run_tasks or _in_this_process)(len(tasks), work))
        missing = sorted(set(range(len(tasks))) - set(results))
        if missing:
            raise SavepointFormatError(f"{shown(out)}: task {missing[0]} of {len(tasks)} reported nothing; "
                                       "nothing was committed")
        streams = {}
        for (o, s, role), numbers in split.items():
            op = savepoint.operators[o]
            streams[(o, s, role)] = _assemble(_part_of(op, op.metadata.subtasks[s]), headers[(o, s)], output,
                                              tasks[numbers[0]].stem, [results[n] for n in numbers])
        old = savepoint.metadata
        metadata = FlinkMetadata(old.version, old.checkpoint_id,
                                 _operators(savepoint, tasks, results, streams, renames),
                                 old.master_states, old.properties, directory)
        target = directory.child(FLINK_METADATA_FILE)
        if not directory.remote:
            with open(target.path, "xb") as handle:
                handle.write(metadata_bytes(metadata))
        else:
            if target.exists():
                raise SavepointFormatError(
                    f"{target.uri!r} appeared while the savepoint was written; it was left untouched")
            target.write_bytes(metadata_bytes(metadata))
    final = locate(out)
    return final.uri if final.remote else final.path


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
    operator_id = operator_id_for_uid(operator_uid)
    with atomic_directory(final) as temp:
        output = _Output(locate(temp), None)
        name = str(uuid.uuid5(_NAMES, f"{operator_id}/0/keyed"))
        offsets = [0] * max_parallelism
        with output.create(name) as target:
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
        operator = FlinkOperatorMetadata(operator_id, 1, max_parallelism, None, None, None,
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
