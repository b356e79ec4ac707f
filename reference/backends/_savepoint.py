"""The savepoint layout, shared by the heap and bytes backends and by the Spark pipeline.

A savepoint is a directory::

    <savepoint>/
      _metadata.json            format version, max parallelism, key serializer snapshot,
                                per state: name, kind, data directory, serializer snapshots
      state-0000/part-00000.parquet   rows of the first state (more part files are allowed)
      state-0001/part-00000.parquet   ...

Every data file has the columns of ``SAVEPOINT_COLUMNS`` (see ``savepoint_arrow_schema``):
``key_group`` int32, ``key`` binary, ``namespace`` binary (empty for the default namespace),
``user_key`` binary (null for value and list state), ``value`` binary (null only for a null map
value). Writers sort the rows by (key_group, key, namespace, user_key). The full description,
with the list-value encoding and the key-group hash, is docs/savepoint-format.md.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import shutil
import socket
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._bounds import MAX_JSON_DEPTH, json_depth_exceeds
from .._errors import SerializationError, StateError
from .._io import DataInputView, DataOutputView
from .._serializer import TypeSerializer
from ._murmur import murmur3_32, murmur3_32_many

__all__ = [
    "SAVEPOINT_FORMAT_VERSION",
    "SAVEPOINT_FORMAT_NAME",
    "METADATA_FILE",
    "SAVEPOINT_COLUMNS",
    "STATE_KINDS",
    "LIST_DELIMITER",
    "SavepointFormatError",
    "SavepointMetadata",
    "StateMetadata",
    "key_group_for",
    "savepoint_arrow_schema",
    "state_data_dir",
    "data_file_name",
    "state_data_files",
    "read_savepoint_metadata",
    "write_savepoint_metadata",
    "encode_list_value",
    "decode_list_value",
    "atomic_directory",
    "remove_abandoned_attempts",
    "remove_abandoned",
    "owned_temp_name",
    "ABANDONED_AFTER",
    "write_state_rows",
    "read_state_rows",
    "check_state_files",
    "read_savepoint_content",
]

#: Version of this layout (the metadata file and the data columns).
SAVEPOINT_FORMAT_VERSION = 1
SAVEPOINT_FORMAT_NAME = "state-conformance-savepoint"
#: Name of the metadata file inside a savepoint directory; it is written last.
METADATA_FILE = "_metadata.json"
#: Data columns, in this order.
SAVEPOINT_COLUMNS = ("key_group", "key", "namespace", "user_key", "value")
STATE_KINDS = ("value", "list", "map")
#: Flink's RocksDB list state puts one 0x2C byte (',') between serialized elements.
LIST_DELIMITER = 0x2C
#: Rows per Parquet row group written by ``write_state_rows``.
ROW_GROUP_SIZE = 64 * 1024


class SavepointFormatError(StateError):
    """A savepoint directory is missing, incomplete, corrupt or of an unknown format version."""


def key_group_for(key_bytes: bytes, max_parallelism: int) -> int:
    """The key group of a serialized key: unsigned MurmurHash3_x86_32 (seed 0) of the key
    bytes, modulo ``max_parallelism``."""
    if not 1 <= max_parallelism <= 32768:
        raise ValueError(f"max_parallelism must be in [1, 32768], got {max_parallelism}")
    return murmur3_32(key_bytes) % max_parallelism


def key_groups_for(keys: list[bytes], max_parallelism: int) -> list[int]:
    """``key_group_for`` of each serialized key of a batch (vectorized when it can be)."""
    if not 1 <= max_parallelism <= 32768:
        raise ValueError(f"max_parallelism must be in [1, 32768], got {max_parallelism}")
    return [h % max_parallelism for h in murmur3_32_many(keys)]


@dataclass(frozen=True)
class StateMetadata:
    """One state in a savepoint.

    Snapshot fields hold ``reference.snapshot_to_bytes`` output (proxy version 2 framing).
    ``value_serializer_snapshot`` is the value serializer (value state), the ELEMENT serializer
    (list state) or the map-value serializer (map state); ``user_key_serializer_snapshot`` is
    the map-key serializer (map state only); ``namespace_serializer_snapshot`` is None for the
    default (empty) namespace.
    """

    name: str
    kind: str
    value_serializer_snapshot: bytes
    namespace_serializer_snapshot: bytes | None = None
    user_key_serializer_snapshot: bytes | None = None
    data: str = ""
    rows: int = 0

    def __post_init__(self) -> None:
        if self.kind not in STATE_KINDS:
            raise SavepointFormatError(
                f"state {self.name!r}: unknown kind {self.kind!r}; use one of {STATE_KINDS}"
            )
        if (self.kind == "map") != (self.user_key_serializer_snapshot is not None):
            raise SavepointFormatError(
                f"state {self.name!r}: a user-key serializer snapshot belongs to map state "
                f"only (kind {self.kind!r})"
            )


@dataclass(frozen=True)
class SavepointMetadata:
    """The content of ``_metadata.json``."""

    max_parallelism: int
    key_serializer_snapshot: bytes
    states: tuple[StateMetadata, ...] = field(default_factory=tuple)
    format_version: int = SAVEPOINT_FORMAT_VERSION

    def state(self, name: str) -> StateMetadata:
        for state in self.states:
            if state.name == name:
                return state
        raise KeyError(name)

    def to_json(self) -> str:
        def b64(data: bytes | None) -> str | None:
            return None if data is None else base64.b64encode(data).decode("ascii")

        doc = {
            "format": SAVEPOINT_FORMAT_NAME,
            "format_version": self.format_version,
            "max_parallelism": self.max_parallelism,
            "key_serializer_snapshot": b64(self.key_serializer_snapshot),
            "states": [
                {
                    "name": s.name,
                    "kind": s.kind,
                    "data": s.data,
                    "rows": s.rows,
                    "namespace_serializer_snapshot": b64(s.namespace_serializer_snapshot),
                    "user_key_serializer_snapshot": b64(s.user_key_serializer_snapshot),
                    "value_serializer_snapshot": b64(s.value_serializer_snapshot),
                }
                for s in self.states
            ],
        }
        return json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=True) + "\n"

    @classmethod
    def from_json(cls, text: str, where: str = "_metadata.json") -> SavepointMetadata:
        if json_depth_exceeds(text, MAX_JSON_DEPTH):
            raise SavepointFormatError(
                f"{where} nests JSON deeper than {MAX_JSON_DEPTH} levels; the savepoint is corrupt"
            )
        try:
            doc = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise SavepointFormatError(f"{where} is not valid JSON ({exc}); the savepoint is corrupt") from None
        if not isinstance(doc, dict) or doc.get("format") != SAVEPOINT_FORMAT_NAME:
            raise SavepointFormatError(
                f"{where} is not a {SAVEPOINT_FORMAT_NAME} metadata file (no matching 'format' entry)"
            )
        version = doc.get("format_version")
        if version != SAVEPOINT_FORMAT_VERSION:
            raise SavepointFormatError(
                f"{where}: savepoint format version {version!r} is not supported (this reader "
                f"knows {SAVEPOINT_FORMAT_VERSION}); use the release that wrote it"
            )

        def get(obj: Any, key: str, kind: type | tuple[type, ...], what: str) -> Any:
            if not isinstance(obj, dict) or key not in obj or not isinstance(obj[key], kind) or (
                kind is int and isinstance(obj[key], bool)
            ):
                raise SavepointFormatError(f"{where}: {what} '{key}' is missing or has the wrong type")
            return obj[key]

        def unb64(text: str | None, what: str) -> bytes | None:
            if text is None:
                return None
            try:
                return base64.b64decode(text.encode("ascii"), validate=True)
            except (ValueError, UnicodeError):
                raise SavepointFormatError(f"{where}: {what} is not valid base64") from None

        max_parallelism = get(doc, "max_parallelism", int, "entry")
        if not 1 <= max_parallelism <= 32768:
            raise SavepointFormatError(f"{where}: max_parallelism {max_parallelism} outside [1, 32768]")
        key_snapshot = unb64(get(doc, "key_serializer_snapshot", str, "entry"), "key_serializer_snapshot")
        states = []
        names = set()
        for i, s in enumerate(get(doc, "states", list, "entry")):
            what = f"state #{i}"
            name = get(s, "name", str, what)
            if name in names:
                raise SavepointFormatError(f"{where}: state {name!r} appears twice")
            names.add(name)
            data = get(s, "data", str, what)
            if not data or "/" in data or "\\" in data or data.startswith("."):
                raise SavepointFormatError(f"{where}: state {name!r} has an invalid data directory {data!r}")
            states.append(
                StateMetadata(
                    name=name,
                    kind=get(s, "kind", str, what),
                    data=data,
                    rows=get(s, "rows", int, what),
                    value_serializer_snapshot=unb64(
                        get(s, "value_serializer_snapshot", str, what), f"{name!r} value snapshot"
                    ),  # type: ignore[arg-type]
                    namespace_serializer_snapshot=unb64(
                        get(s, "namespace_serializer_snapshot", (str, type(None)), what),
                        f"{name!r} namespace snapshot",
                    ),
                    user_key_serializer_snapshot=unb64(
                        get(s, "user_key_serializer_snapshot", (str, type(None)), what),
                        f"{name!r} user-key snapshot",
                    ),
                )
            )
        return cls(
            max_parallelism=max_parallelism,
            key_serializer_snapshot=key_snapshot,  # type: ignore[arg-type]
            states=tuple(states),
            format_version=version,
        )


def state_data_dir(index: int) -> str:
    """Name of the data directory of the ``index``-th state (never derived from the state
    name, which may hold any character)."""
    return f"state-{index:04d}"


def data_file_name(part: int) -> str:
    """Name of the ``part``-th Parquet file of a state's data directory."""
    return f"part-{part:05d}.parquet"


def state_data_files(savepoint: str | os.PathLike[str], state: StateMetadata) -> list[str]:
    """The state's Parquet files in name order (readers must read every ``*.parquet`` file)."""
    directory = os.path.join(os.fspath(savepoint), state.data)
    if not os.path.isdir(directory):
        raise SavepointFormatError(
            f"savepoint {os.fspath(savepoint)!r}: data directory {state.data!r} of state "
            f"{state.name!r} is missing; the savepoint is incomplete"
        )
    return [
        os.path.join(directory, name)
        for name in sorted(os.listdir(directory))
        if name.endswith(".parquet") and not name.startswith((".", "_"))
    ]


def read_savepoint_metadata(path: str | os.PathLike[str]) -> SavepointMetadata:
    """Read and validate ``<path>/_metadata.json``."""
    file = os.path.join(os.fspath(path), METADATA_FILE)
    try:
        with open(file, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        raise SavepointFormatError(
            f"{os.fspath(path)!r} is not a savepoint: it has no {METADATA_FILE} (a savepoint is "
            "complete only once its directory holds the metadata file)"
        ) from None
    except (OSError, UnicodeError) as exc:
        raise SavepointFormatError(f"cannot read {file!r}: {exc}") from None
    return SavepointMetadata.from_json(text, where=file)


def write_savepoint_metadata(directory: str | os.PathLike[str], metadata: SavepointMetadata) -> str:
    """Write ``<directory>/_metadata.json`` and flush it to disk; returns the file path."""
    file = os.path.join(os.fspath(directory), METADATA_FILE)
    with open(file, "w", encoding="utf-8") as handle:
        handle.write(metadata.to_json())
        handle.flush()
        os.fsync(handle.fileno())
    return file


# -- list values ------------------------------------------------------------------------------
def encode_list_value(elements: Iterable[bytes]) -> bytes:
    """Flink's RocksDB list layout: serialized elements joined by one 0x2C byte."""
    return b",".join(elements)


def decode_list_value(data: bytes, element_serializer: TypeSerializer[Any]) -> list[bytes]:
    """Split a delimited list value into its elements' bytes.

    The layout carries no lengths, so the element serializer finds each element's end (by
    ``copy_serialized``); a missing or wrong delimiter is a ``SerializationError``.
    """
    source = DataInputView(data)
    elements: list[bytes] = []
    scratch = DataOutputView()
    total = len(data)
    while True:
        start = source.position
        scratch.clear()
        try:
            element_serializer.copy_serialized(source, scratch)
        except SerializationError as exc:
            raise SerializationError(
                f"list value element {len(elements)} at byte {start} could not be read with "
                f"{element_serializer!r}: {exc}"
            ) from None
        elements.append(source.slice_from(start))
        if not source.available():
            return elements
        delimiter = source.read_unsigned_byte()
        if delimiter != LIST_DELIMITER:
            raise SerializationError(
                f"list value: byte {source.position - 1} of {total} is 0x{delimiter:02x} where "
                f"the 0x2C delimiter after element {len(elements) - 1} should be; the value was "
                f"not written with {element_serializer!r} or is corrupt"
            )
        if not source.available():
            raise SerializationError(
                "list value ends with a delimiter; an element is missing (corrupt value)"
            )


# -- atomic directory commit ------------------------------------------------------------------
def _fsync_tree(root: str) -> None:
    for dirpath, _dirnames, filenames in os.walk(root, topdown=False):
        for name in filenames:
            fd = os.open(os.path.join(dirpath, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        _fsync_dir(dirpath)


def _fsync_dir(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory handles
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


#: A temporary sibling of a writer on another host (or of an unknown writer) is taken for
#: abandoned once it has not been modified for this long (seconds).
ABANDONED_AFTER = 24 * 3600


def _host_label() -> str:
    return re.sub(r"[^A-Za-z0-9_.]", "_", socket.gethostname())[:64] or "host"


def owned_temp_name(prefix: str) -> str:
    """``<prefix><host>-<pid>-<random>``: a temporary file or directory name that says which
    process owns it, so that ``remove_abandoned`` can tell when its owner is gone."""
    return f"{prefix}{_host_label()}-{os.getpid()}-{uuid.uuid4().hex}"


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists (another user's), or cannot tell: keep its files
    return True


def remove_abandoned_attempts(final_path: str | os.PathLike[str], now: float | None = None) -> list[str]:
    """Remove the temporary siblings (``.<name>.tmp-*``) that earlier, abandoned attempts to
    write ``final_path`` left behind (see ``remove_abandoned``); returns the paths removed."""
    parent, name = os.path.split(os.path.abspath(os.fspath(final_path)))
    return remove_abandoned(parent, f".{name}.tmp-", now)


def remove_abandoned(parent: str | os.PathLike[str], prefix: str, now: float | None = None) -> list[str]:
    """Remove the entries of ``parent`` named ``prefix`` + what ``owned_temp_name`` adds whose
    owner is provably gone; returns the paths removed.

    Gone means: same host and the owner's pid is no longer running. An entry of another host,
    or whose name does not say its owner, is removed only once nothing in it has changed for
    ``ABANDONED_AFTER`` seconds. A live owner's entry is never touched (a recycled pid only
    delays the removal)."""
    parent = os.fspath(parent)
    try:
        entries = [e for e in os.listdir(parent) if e.startswith(prefix)]
    except OSError:
        return []
    host = _host_label()
    now = time.time() if now is None else now
    removed = []
    for entry in entries:
        path = os.path.join(parent, entry)
        parts = entry[len(prefix):].rsplit("-", 2)
        if len(parts) == 3 and parts[0] == host and parts[1].isdigit():
            abandoned = not _process_alive(int(parts[1]))
        else:
            try:
                abandoned = now - _newest_mtime(path) > ABANDONED_AFTER
            except OSError:
                continue
        if abandoned:
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.remove(path)
            if not os.path.lexists(path):
                removed.append(path)
    return removed


def _newest_mtime(path: str) -> float:
    newest = os.lstat(path).st_mtime
    for dirpath, dirnames, filenames in os.walk(path):
        for item in dirnames + filenames:
            with contextlib.suppress(OSError):
                newest = max(newest, os.lstat(os.path.join(dirpath, item)).st_mtime)
    return newest


@contextlib.contextmanager
def atomic_directory(final_path: str | os.PathLike[str]) -> Iterator[str]:
    """Yield a temporary sibling directory of ``final_path``; on success flush everything in
    it and rename it to ``final_path`` (the last step). On an exception the temporary
    directory is removed; a crash leaves only a ``.<name>.tmp-<host>-<pid>-*`` sibling, never a
    partial ``final_path``, and the next write to the same ``final_path`` removes it
    (``remove_abandoned_attempts``). An existing ``final_path`` is never touched: it is an
    error up front."""
    final = os.path.abspath(os.fspath(final_path))
    parent, name = os.path.split(final)
    if not name:
        raise ValueError(f"invalid savepoint path {os.fspath(final_path)!r}")
    if os.path.lexists(final):
        raise SavepointFormatError(
            f"{final!r} already exists; a savepoint never overwrites anything, choose a new path"
        )
    os.makedirs(parent, exist_ok=True)
    remove_abandoned_attempts(final)
    temp = os.path.join(parent, owned_temp_name(f".{name}.tmp-"))
    os.mkdir(temp)
    try:
        yield temp
        _fsync_tree(temp)
        if os.path.lexists(final):
            raise SavepointFormatError(
                f"{final!r} appeared while the savepoint was written; it was left untouched"
            )
        os.rename(temp, final)
        _fsync_dir(parent)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise


# -- data files -------------------------------------------------------------------------------
def savepoint_arrow_schema() -> Any:
    """The pyarrow schema of every data file (pyarrow is imported on first use)."""
    import pyarrow as pa

    return pa.schema(
        [
            pa.field("key_group", pa.int32(), nullable=False),
            pa.field("key", pa.binary(), nullable=False),
            pa.field("namespace", pa.binary(), nullable=False),
            pa.field("user_key", pa.binary(), nullable=True),
            pa.field("value", pa.binary(), nullable=True),
        ]
    )


def write_state_rows(
    directory: str | os.PathLike[str],
    rows: Sequence[tuple[int, bytes, bytes, bytes | None, bytes | None]],
    part: int = 0,
) -> str:
    """Write rows (already sorted) as one Parquet file ``directory/part-NNNNN.parquet``.

    Writing is deterministic: the same rows give the same file bytes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    os.makedirs(os.fspath(directory), exist_ok=True)
    columns = list(zip(*rows, strict=True)) if rows else [(), (), (), (), ()]
    table = pa.Table.from_arrays(
        [pa.array(list(col), type=f.type) for col, f in zip(columns, savepoint_arrow_schema(), strict=True)],
        schema=savepoint_arrow_schema(),
    )
    file = os.path.join(os.fspath(directory), data_file_name(part))
    pq.write_table(table, file, row_group_size=ROW_GROUP_SIZE, compression="zstd", write_statistics=True)
    return file


def _open_data_file(file: str, state: StateMetadata) -> Any:
    """The ``pyarrow.parquet.ParquetFile`` of one data file, its footer read and its columns
    checked (names, types and nullability of ``savepoint_arrow_schema()``)."""
    import pyarrow.parquet as pq

    should = [(f.name, str(f.type), f.nullable) for f in savepoint_arrow_schema()]
    # pyarrow reports damaged files with many exception types (ArrowException, OSError,
    # UnicodeDecodeError from a corrupt footer, ValueError...): all mean an unreadable file.
    try:
        parquet = pq.ParquetFile(file)
        found = [(f.name, str(f.type), f.nullable) for f in parquet.schema_arrow]
    except Exception as exc:
        raise SavepointFormatError(
            f"data file {file!r} of state {state.name!r} is unreadable "
            f"({type(exc).__name__}: {exc}); the savepoint is corrupt"
        ) from None
    if found != should:
        raise SavepointFormatError(
            f"data file {file!r} of state {state.name!r} has columns (name, type, nullable) "
            f"{found}, should be {should}; the savepoint is corrupt or not of this format"
        )
    return parquet


def check_state_files(savepoint: str | os.PathLike[str], state: StateMetadata) -> list[str]:
    """The state's data files, each one's footer and columns checked as ``read_state_rows``
    checks them (for readers such as Spark that read the rows themselves)."""
    files = state_data_files(savepoint, state)
    for file in files:
        _open_data_file(file, state)
    return files


def read_state_rows(
    savepoint: str | os.PathLike[str], state: StateMetadata
) -> Iterator[tuple[int, bytes, bytes, bytes | None, bytes | None]]:
    """Every row of a state, file by file, batch by batch. Any damage is a
    ``SavepointFormatError`` naming the file and the state: unreadable files, columns of other
    names, types or nullability than ``savepoint_arrow_schema()``, nulls in the key columns."""
    for file in state_data_files(savepoint, state):
        parquet = _open_data_file(file, state)
        try:
            batches = parquet.iter_batches(batch_size=ROW_GROUP_SIZE)
            while True:
                try:
                    batch = next(batches)
                except StopIteration:
                    break
                for i in range(3):  # key_group, key, namespace: never null
                    if batch.column(i).null_count:
                        raise SavepointFormatError(
                            f"data file {file!r} of state {state.name!r}: column "
                            f"{SAVEPOINT_COLUMNS[i]!r} holds a null; the savepoint is corrupt"
                        )
                cols = [batch.column(i).to_pylist() for i in range(5)]
                yield from zip(*cols, strict=True)
        except StateError:
            raise
        except Exception as exc:
            raise SavepointFormatError(
                f"data file {file!r} of state {state.name!r} is corrupt "
                f"({type(exc).__name__}: {exc})"
            ) from None


def read_savepoint_content(
    path: str | os.PathLike[str],
) -> tuple[SavepointMetadata, dict[str, list[tuple[int, bytes, bytes, bytes | None, bytes | None]]]]:
    """What two savepoints of the same history must agree on, whoever wrote them: the
    metadata and, per state name, the sorted data rows (file layout, compression, part files
    and row order do not matter)."""
    metadata = read_savepoint_metadata(path)
    rows = {
        state.name: sorted(read_state_rows(path, state), key=lambda r: (r[0], r[1], r[2], r[3] or b""))
        for state in metadata.states
    }
    return metadata, rows
