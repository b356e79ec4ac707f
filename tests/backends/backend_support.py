"""Test-only helpers for the backend tests: an evolving serializer whose verdicts are chosen by
the test, and factories for the three backend configurations."""

from __future__ import annotations

import os
import pathlib
from typing import Any

import pyarrow.parquet as pq
import pytest

from reference import (
    DataInputView,
    DataOutputView,
    SchemaCompatibility,
    SerializationError,
    TypeSerializer,
    TypeSerializerSnapshot,
)
from reference.backends import BytesStateBackend, HeapStateBackend
from reference.savepoint import file_tree as tree_bytes  # noqa: F401
from reference.savepoint import read_savepoint_metadata, state_data_files

#: How far migration moves a value per version step (an independent oracle for the tests).
STEP = 1000


class EvolvingSerializer(TypeSerializer[int]):
    """Ints written as a version byte plus 8 bytes, so bytes of another version are refused.

    ``judge`` is what this (new) serializer's snapshot says about an older version:
    "after_migration", "row_migration" (after migration with a row path), "reconfigured",
    "incompatible" or "as_is". Migration adds STEP per version; ``poison`` makes migrating
    that one value fail (to test all-or-nothing migration).
    """

    def __init__(self, version: int = 1, judge: str = "after_migration", poison: int | None = None) -> None:
        self.version = version
        self.judge = judge
        self.poison = poison

    def serialize(self, value: int, target: DataOutputView) -> None:
        target.write_byte(self.version)
        target.write_long(value)

    def deserialize(self, source: DataInputView) -> int:
        version = source.read_unsigned_byte()
        if version != self.version:
            raise SerializationError(f"EvolvingSerializer v{self.version} got bytes of v{version}")
        return source.read_long()

    def copy_serialized(self, source: DataInputView, target: DataOutputView) -> None:
        target.write(source.read_fully(9))

    @property
    def is_immutable_type(self) -> bool:
        return True

    @property
    def length(self) -> int:
        return 9

    def snapshot_configuration(self) -> EvolvingSnapshot:
        return EvolvingSnapshot(self)

    def __repr__(self) -> str:
        return f"EvolvingSerializer(v{self.version})"


class EvolvingSnapshot(TypeSerializerSnapshot[int]):
    def __init__(self, serializer: EvolvingSerializer | None = None) -> None:
        self.serializer = serializer
        self.version = serializer.version if serializer is not None else 0

    def get_current_version(self) -> int:
        return 1

    def write_snapshot(self, target: DataOutputView) -> None:
        target.write_int(self.version)

    def read_snapshot(self, read_version: int, source: DataInputView) -> None:
        self.version = source.read_int()

    def restore_serializer(self) -> EvolvingSerializer:
        return self.serializer if self.serializer is not None else EvolvingSerializer(self.version)

    def resolve_schema_compatibility(self, old_snapshot: TypeSerializerSnapshot[Any]) -> SchemaCompatibility[int]:
        if not isinstance(old_snapshot, EvolvingSnapshot):
            return SchemaCompatibility.incompatible(f"{type(old_snapshot).__name__} is not an EvolvingSnapshot")
        if old_snapshot.version == self.version:
            return SchemaCompatibility.compatible_as_is()
        judge = self.serializer.judge if self.serializer is not None else "after_migration"
        if judge == "after_migration":
            return SchemaCompatibility.compatible_after_migration()
        if judge == "row_migration":
            return SchemaCompatibility.compatible_after_migration(row_paths=("evolved_field",))
        if judge == "reconfigured":
            return SchemaCompatibility.compatible_with_reconfigured_serializer(EvolvingSerializer(old_snapshot.version))
        if judge == "as_is":
            return SchemaCompatibility.compatible_as_is()
        return SchemaCompatibility.incompatible(
            f"version {old_snapshot.version} cannot become version {self.version} (test verdict)"
        )

    def migrate_element(self, prior: Any, new: Any, element: Any, target: DataOutputView | None = None) -> int:
        if new.poison is not None and element == new.poison:
            raise ValueError(f"poisoned value {element}")
        migrated = element + STEP * (new.version - prior.version)
        if target is not None:
            new.serialize(migrated, target)
        return migrated


BACKENDS = ("heap", "bytes-memory", "bytes-rocksdb")


def _rocksdb_path(store: str) -> str | None:
    # RocksDB syncs its manifest on open and per column family: on tmpfs that is free.
    if store != "rocksdb" or not os.path.isdir("/dev/shm"):
        return None
    import uuid

    return f"/dev/shm/backend-test-rocksdb-{uuid.uuid4().hex}"


def make_backend(kind: str, key_serializer: TypeSerializer[Any], config: dict | None = None, **kw: Any) -> Any:
    if kind == "heap":
        return HeapStateBackend(key_serializer, config=config, **kw)
    store = kind.split("-", 1)[1]
    return BytesStateBackend(key_serializer, store=store, path=_rocksdb_path(store), config=config, **kw)


def restore_backend(kind: str, path: Any, key_serializer: TypeSerializer[Any], config: dict | None = None) -> Any:
    if kind == "heap":
        return HeapStateBackend.restore(path, key_serializer=key_serializer, config=config)
    store = kind.split("-", 1)[1]
    return BytesStateBackend.restore(
        path, key_serializer=key_serializer, config=config, store=store, path=_rocksdb_path(store)
    )


def savepoint_content(path: Any) -> tuple[Any, dict[str, list[tuple]]]:
    """What two savepoints must agree on: the metadata and each state's sorted rows."""
    metadata = read_savepoint_metadata(path)
    rows = {}
    for state in metadata.states:
        found = []
        for file in state_data_files(path, state):
            table = pq.ParquetFile(file).read()
            found += zip(*(table.column(c).to_pylist() for c in table.column_names), strict=True)
        rows[state.name] = sorted(found)
    return metadata, rows


def fill_backend(backend: Any, states: int = 4, keys: int = 1500) -> Any:
    """A deterministic history over built-in serializers (used by the crash test's writer)."""
    from reference.backends import ListStateDescriptor, MapStateDescriptor, ValueStateDescriptor
    from reference.serializers import IntSerializer, LongSerializer, StringSerializer

    for s in range(states):
        value = backend.get_value_state(ValueStateDescriptor(f"value-{s}", LongSerializer()))
        items = backend.get_list_state(ListStateDescriptor(f"list-{s}", IntSerializer()))
        table = backend.get_map_state(MapStateDescriptor(f"map-{s}", StringSerializer(), LongSerializer()))
        for k in range(keys):
            backend.set_current_key(f"key-{k}")
            value.update(k * 31 + s)
            items.add_all([k, s, 44])
            table.put(f"u{k % 7}", None if k % 5 == 0 else k)
    return backend


def scratch_directory() -> Any:
    """A temporary directory, on tmpfs when the machine has one (many savepoints per test:
    fsync on a disk-backed /tmp costs milliseconds each)."""
    import tempfile

    shm = "/dev/shm"
    base = shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None
    return tempfile.TemporaryDirectory(prefix="backend-test-", dir=base)


# -- fixtures shared by the backend test modules (imported there by name) ---------------------
@pytest.fixture
def tmp_path() -> Any:
    """Savepoints on tmpfs when available (each savepoint fsyncs every file)."""
    with scratch_directory() as directory:
        yield pathlib.Path(directory)


@pytest.fixture(params=BACKENDS)
def backend_kind(request: Any) -> str:
    return request.param  # type: ignore[no-any-return]
