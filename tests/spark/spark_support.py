"""Helpers for the Spark tests: a deterministic history written through a reference backend,
its evolution with an independent oracle, and serializers that cannot go to executors.

This module is shipped to the executors with ``SparkContext.addPyFile`` (see conftest.py), so
the serializers defined here can be unpickled there.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from reference import (
    DataInputView,
    DataOutputView,
    SchemaCompatibility,
    SerializationError,
    SimpleTypeSerializerSnapshot,
    SnapshotFormatError,
    TypeSerializer,
    TypeSerializerSnapshot,
)
from reference.backends import (
    BytesStateBackend,
    HeapStateBackend,
    ListStateDescriptor,
    MapStateDescriptor,
    ValueStateDescriptor,
)
from reference.savepoint import read_savepoint_metadata, read_state_rows
from reference.serializers import (
    DoubleSerializer,
    IntSerializer,
    ListSerializer,
    LongSerializer,
    RowSerializer,
    StringSerializer,
)

EVOLUTION = {"state.schema-evolution.enable": True}
KEY = LongSerializer()
USER_KEY = IntSerializer()


def old_row() -> RowSerializer:
    return RowSerializer(
        [("id", LongSerializer(), False), ("name", StringSerializer(), True),
         ("score", DoubleSerializer(), True), ("tags", ListSerializer(StringSerializer()), True)]
    )


def new_row() -> RowSerializer:
    """Reordered by name and one nullable field added: compatible after migration (FLIP-527)."""
    return RowSerializer(
        [("score", DoubleSerializer(), True), ("extra", IntSerializer(), True),
         ("id", LongSerializer(), False), ("tags", ListSerializer(StringSerializer()), True),
         ("name", StringSerializer(), True)]
    )


def broken_row() -> RowSerializer:
    """``score`` changes type: incompatible, the message must name the field."""
    return RowSerializer(
        [("id", LongSerializer(), False), ("name", StringSerializer(), True),
         ("score", StringSerializer(), True), ("tags", ListSerializer(StringSerializer()), True)]
    )


def migrate_oracle(value: tuple) -> tuple:
    """Written independently of the serializers: the FLIP-527 mapping by field name."""
    ident, name, score, tags = value
    return (score, None, ident, tags, name)


def old_value(key: int, i: int = 0) -> tuple:
    # -0.0 and a NaN with payload check bit-exactness through migration.
    score = [1.5, -0.0, float.fromhex("0x1.8p-3"), 1e308][(key + i) % 4]
    return (key * 10 + i, None if key % 7 == 0 else f"name-{key}-{i}", score,
            None if key % 5 == 0 else [f"t{key % 3}", ""])


def descriptors(row: RowSerializer) -> list[Any]:
    return [
        ValueStateDescriptor("profile", row),
        ListStateDescriptor("events", row),
        MapStateDescriptor("by-slot", IntSerializer(), row),
    ]


def new_descriptors() -> list[Any]:
    """What ``conformance migrate --serializers spark_support:new_descriptors`` loads."""
    return descriptors(new_row())


def broken_descriptors() -> list[Any]:
    """``--serializers spark_support:broken_descriptors``: every state incompatible."""
    return descriptors(broken_row())


def history(keys: int) -> dict[str, dict[int, Any]]:
    """The state content, per state name: key -> value / list / dict (a None map value kept)."""
    values = {k: old_value(k) for k in range(keys)}
    lists = {k: [old_value(k, i) for i in range(1 + k % 3)] for k in range(keys) if k % 11 != 3}
    maps = {k: {s: (None if (k + s) % 4 == 0 else old_value(k, s)) for s in range(k % 4 + 1)}
            for k in range(keys)}
    return {"profile": values, "events": lists, "by-slot": maps}


def write_history(path: str, keys: int, max_parallelism: int = 128) -> dict[str, dict[int, Any]]:
    """Write ``history(keys)`` through the bytes backend as a savepoint at ``path``."""
    content = history(keys)
    backend = BytesStateBackend(KEY, max_parallelism=max_parallelism)
    try:
        value, listing, mapping = descriptors(old_row())
        for k in range(keys):
            backend.set_current_key(k)
            backend.get_value_state(value).update(content["profile"][k])
            if k in content["events"]:
                backend.get_list_state(listing).update(content["events"][k])
            backend.get_map_state(mapping).put_all(content["by-slot"][k])
        backend.savepoint(path)
    finally:
        backend.close()
    return content


def backend_migrated(source: str, out: str, mode: str) -> str:
    """The single-process reference result: restore with the new serializers, savepoint."""
    cls = HeapStateBackend if mode == "heap" else BytesStateBackend
    backend = cls.restore(source, KEY, config=EVOLUTION)
    try:
        value, listing, mapping = descriptors(new_row())
        backend.get_value_state(value)
        backend.get_list_state(listing)
        backend.get_map_state(mapping)
        backend.savepoint(out)
    finally:
        backend.close()
    return out


def read_back(path: str, keys: int) -> dict[str, dict[int, Any]]:
    """Everything in a savepoint, read through a restored heap backend."""
    backend = HeapStateBackend.restore(path, KEY, config=EVOLUTION)
    try:
        value, listing, mapping = descriptors(new_row())
        result: dict[str, dict[int, Any]] = {"profile": {}, "events": {}, "by-slot": {}}
        for k in range(keys):
            backend.set_current_key(k)
            v = backend.get_value_state(value).value()
            if v is not None:
                result["profile"][k] = v
            elements = backend.get_list_state(listing).get()
            if elements:
                result["events"][k] = elements
            entries = dict(backend.get_map_state(mapping).items())
            if entries:
                result["by-slot"][k] = entries
        return result
    finally:
        backend.close()


def expected_after_migration(content: dict[str, dict[int, Any]]) -> dict[str, dict[int, Any]]:
    return {
        "profile": {k: migrate_oracle(v) for k, v in content["profile"].items()},
        "events": {k: [migrate_oracle(e) for e in v] for k, v in content["events"].items()},
        "by-slot": {k: {s: None if e is None else migrate_oracle(e) for s, e in v.items()}
                    for k, v in content["by-slot"].items()},
    }


def rows_of(path: str) -> dict[str, tuple[Any, ...]]:
    """Every state's rows and snapshots, read with pyarrow (not through Spark)."""
    meta = read_savepoint_metadata(path)
    return {
        s.name: (s.kind, s.value_serializer_snapshot, s.namespace_serializer_snapshot,
                 s.user_key_serializer_snapshot, sorted(read_state_rows(path, s), key=lambda r: r[:4] + (r[4] or b"",)))
        for s in meta.states
    }


def assert_same_savepoint_content(got_path: str, want_path: str, where: str) -> None:
    """The same states, snapshots and rows (in any file layout), exactly."""
    got, want = rows_of(got_path), rows_of(want_path)
    assert list(got) == list(want), f"got states {list(got)}, should be {list(want)} [{where}]"
    for name in want:
        for i, part in enumerate(("kind", "value snapshot", "namespace snapshot", "map key snapshot")):
            assert got[name][i] == want[name][i], f"got {part} {got[name][i]!r}, should be {want[name][i]!r} [{where}, {name}]"
        g, w = got[name][4], want[name][4]
        assert len(g) == len(w), f"got {len(g)} rows, should be {len(w)} [{where}, {name}]"
        diff = next((i for i, (a, b) in enumerate(zip(g, w, strict=True)) if a != b), None)
        assert diff is None, f"got row {g[diff]}, should be {w[diff]} [{where}, {name}, row {diff}]"


class LockedSerializer(LongSerializer):
    """Holds a lock: cannot be pickled, so it cannot be shipped to executors."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()


class ProcessBoundRow(RowSerializer):
    """A row serializer that works only in the process that created it (a stand-in for
    serializers bound to process-global state): anywhere else it refuses to work."""

    def __init__(self, fields: Any, supports_row_kind: bool = True) -> None:
        super().__init__(fields, supports_row_kind)
        self.pid = os.getpid()

    def __reduce__(self) -> tuple[Any, ...]:
        return (_process_bound_row, (self.fields, self.supports_row_kind, self.pid))

    def _here(self) -> None:
        if os.getpid() != self.pid:
            raise SerializationError(f"ProcessBoundRow created in process {self.pid} used in {os.getpid()}")

    def serialize(self, value: Any, target: DataOutputView) -> None:
        self._here()
        super().serialize(value, target)

    def deserialize(self, source: DataInputView) -> Any:
        self._here()
        return super().deserialize(source)


def _process_bound_row(fields: Any, supports_row_kind: bool, pid: int) -> ProcessBoundRow:
    row = ProcessBoundRow(fields, supports_row_kind)
    row.pid = pid
    return row


_CODES: dict[str, int] = {}
_NAMES: list[str] = []


class InternedStringSerializer(TypeSerializer[str]):
    """Writes each string as an int code from a process-global intern table: it round-trips
    in the process that wrote, and nowhere else (the kind of serializer Spark must expose)."""

    def serialize(self, value: str, target: DataOutputView) -> None:
        code = _CODES.get(value)
        if code is None:
            code = _CODES[value] = len(_NAMES)
            _NAMES.append(value)
        target.write_int(code)

    def deserialize(self, source: DataInputView) -> str:
        code = source.read_int()
        if not 0 <= code < len(_NAMES):
            raise SerializationError(f"InternedStringSerializer: code {code} is unknown in process {os.getpid()}")
        return _NAMES[code]

    @property
    def is_immutable_type(self) -> bool:
        return True

    def snapshot_configuration(self) -> InternedStringSnapshot:
        return InternedStringSnapshot()


class InternedStringSnapshot(SimpleTypeSerializerSnapshot[str]):
    def __init__(self) -> None:
        super().__init__(InternedStringSerializer)


#: Readers of earlier releases' formats, registered as their snapshots are read: a process-global
#: table that a pickled serializer does not carry.
_LEGACY_READERS: dict[str, Any] = {}


def _read_le32(source: DataInputView) -> int:
    return int.from_bytes(source.read_fully(4), "little", signed=True)


class CounterSerializer(TypeSerializer[int]):
    """Counts as 8-byte big-endian longs since release 2.0; release 1.0 wrote 4-byte
    little-endian ints (snapshot version 1). The serializer restored from a 1.0 snapshot reads
    them through the reader that reading the snapshot registered in a process-global table,
    named by ``legacy``: right in the process that read the snapshot, broken in any other
    (Spark's executors), which only the upgrade on Spark shows."""

    #: The release the class is at: 2, or 1 to record release 1.0's golden files.
    RELEASE = 2

    def __init__(self, legacy: str | None = None) -> None:
        self.legacy = legacy

    def serialize(self, value: int, target: DataOutputView) -> None:
        if self.legacy is not None or CounterSerializer.RELEASE == 1:
            target.write(value.to_bytes(4, "little", signed=True))
        else:
            target.write_long(value)

    def deserialize(self, source: DataInputView) -> int:
        if self.legacy is not None:
            reader = _LEGACY_READERS.get(self.legacy)
            if reader is None:
                raise SerializationError(f"CounterSerializer: no reader of format {self.legacy!r} in process "
                                         f"{os.getpid()} (registered where its snapshot was read)")
            return reader(source)  # type: ignore[no-any-return]
        if CounterSerializer.RELEASE == 1:
            return _read_le32(source)
        return source.read_long()

    @property
    def is_immutable_type(self) -> bool:
        return True

    def create_instance(self) -> int:
        return 0

    def duplicate(self) -> CounterSerializer:
        return self

    def snapshot_configuration(self) -> CounterSnapshot:
        snapshot = CounterSnapshot()
        snapshot.legacy = self.legacy
        return snapshot


class CounterSnapshot(TypeSerializerSnapshot[int]):
    def __init__(self) -> None:
        self.legacy: str | None = None

    def get_current_version(self) -> int:
        return CounterSerializer.RELEASE

    def write_snapshot(self, target: DataOutputView) -> None:
        if CounterSerializer.RELEASE != 1:  # version 1 held nothing
            target.write_boolean(self.legacy is not None)

    def read_snapshot(self, read_version: int, source: DataInputView) -> None:
        if read_version not in (1, 2):
            raise SnapshotFormatError(f"CounterSnapshot: unknown version {read_version}")
        legacy = source.read_boolean() if read_version == 2 else CounterSerializer.RELEASE != 1
        if legacy:
            _LEGACY_READERS["le32"] = _read_le32
            self.legacy = "le32"

    def restore_serializer(self) -> CounterSerializer:
        return CounterSerializer(self.legacy)

    def resolve_schema_compatibility(self, old_snapshot: TypeSerializerSnapshot[int]) -> SchemaCompatibility[int]:
        if not isinstance(old_snapshot, CounterSnapshot):
            return SchemaCompatibility.incompatible(f"{type(old_snapshot).__name__} is not a CounterSnapshot")
        if old_snapshot.legacy is not None:
            return SchemaCompatibility.compatible_after_migration()
        return SchemaCompatibility.compatible_as_is()
