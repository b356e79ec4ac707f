"""The savepoint layout and its commit protocol, shared by the heap and bytes backends and by
the Spark pipeline.

A savepoint is a directory (a local path) or a prefix (a URI: ``s3://``, ``gs://``,
``hdfs://``, ``file://``; see ``reference.savepoint._storage``)::

    <savepoint>/
      _metadata.json            format version, max parallelism, key serializer snapshot,
                                per state: name, kind, data directory, serializer snapshots and
                                the list of its data files with their sizes (the manifest)
      state-0000/part-00000.parquet   rows of the first state (more part files are allowed)
      state-0001/part-00000.parquet   ...

Every data file has the columns of ``SAVEPOINT_COLUMNS`` (see ``savepoint_arrow_schema``):
``key_group`` int32, ``key`` binary, ``namespace`` binary (empty for the default namespace),
``user_key`` binary (null for value and list state), ``value`` binary (null only for a null map
value). Writers sort the rows by (key_group, key, namespace, user_key).

Commit protocol (``savepoint_output``): data files first, ``_metadata.json`` last; a savepoint
exists exactly when its ``_metadata.json`` does, and readers read only the files it lists
(checking each one's size), never a directory listing. On a local disk the whole directory is
also written under a temporary sibling name and renamed into place (the output appears complete
or not at all). In an object store, which has no rename, every data file of an attempt carries
the attempt's name (``part-00000.<host>-<pid>-<random>.parquet``), the metadata is one object
written after every data file, and a failed attempt removes its files; what a killed attempt
leaves is removed by the next attempt at the same prefix once its owner is provably gone.
Savepoints written before the manifest existed (no file list) are read on local disks by
listing the data directories. The full description is docs/savepoint-format.md.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import json
import os
import re
import shutil
import socket
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .._bounds import MAX_JSON_DEPTH, json_depth_exceeds
from .._errors import SerializationError, StateError
from .._io import DataInputView, DataOutputView
from .._serializer import TypeSerializer
from ._storage import Location, StorageError, locate

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
    "DataFile",
    "SavepointOutput",
    "savepoint_output",
    "savepoint_exists",
    "remove_abandoned_objects",
    "savepoint_arrow_schema",
    "state_data_dir",
    "data_file_name",
    "state_data_files",
    "read_savepoint_metadata",
    "write_savepoint_metadata",
    "encode_list_value",
    "decode_list_value",
    "list_element_ends",
    "atomic_directory",
    "remove_abandoned_attempts",
    "remove_abandoned",
    "owned_temp_name",
    "ABANDONED_AFTER",
    "write_state_rows",
    "read_state_rows",
    "check_state_files",
    "open_data_file",
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


@dataclass(frozen=True)
class DataFile:
    """One data file of a state as the manifest lists it: its name inside the state's data
    directory and its size in bytes when it was written."""

    name: str
    size: int


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
    #: The state's data files in part order (the manifest); None for a savepoint written
    #: before the manifest existed (read by listing its data directory, on local disks only).
    #: Not part of equality: two savepoints of the same content may name their files apart.
    files: tuple[DataFile, ...] | None = field(default=None, compare=False)

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
                    **({} if s.files is None else {
                        "files": [{"name": f.name, "size": f.size} for f in s.files]}),
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
            if not _listed_name(data, _LISTED_DATA_DIR):
                raise SavepointFormatError(
                    f"{where}: state {name!r} has an invalid data directory {_shown_name(data)} (the "
                    "format writes state-NNNN, a plain name in the savepoint directory); the "
                    "savepoint is corrupt or forged: restore an intact copy"
                )
            files = None
            if isinstance(s, dict) and "files" in s:
                files = tuple(_data_file(item, f"{where}: state {name!r} file #{j}")
                              for j, item in enumerate(get(s, "files", list, what)))
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
                    files=files,
                )
            )
        return cls(
            max_parallelism=max_parallelism,
            key_serializer_snapshot=key_snapshot,  # type: ignore[arg-type]
            states=tuple(states),
            format_version=version,
        )


def _data_file(item: Any, where: str) -> DataFile:
    """One validated entry of a state's ``files`` list."""
    if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not isinstance(
            item.get("size"), int) or isinstance(item.get("size"), bool):
        raise SavepointFormatError(f"{where} is not {{'name': string, 'size': int}}; the savepoint is corrupt")
    name, size = item["name"], item["size"]
    if not _listed_name(name, _LISTED_DATA_FILE) or size < 0:
        raise SavepointFormatError(
            f"{where}: invalid data file {_shown_name(name)} of {size} bytes (the format writes "
            "part-NNNNN.parquet, or part-NNNNN.<attempt>.parquet in an object store, a plain name "
            "in the state's data directory, of a size >= 0); the savepoint is corrupt or forged: "
            "restore an intact copy"
        )
    return DataFile(name, size)


#: The shapes of the names a listing may hold, exactly those the writers of the format write
#: (``state_data_dir``, ``data_file_name`` with ``owned_temp_name`` attempts): checked before a
#: name read from ``_metadata.json`` reaches any file system call, so a listing can name
#: nothing outside the savepoint (no absolute path, no ``..``, no separator, no NUL) and no
#: name a file system refuses (too long, a path under a file).
_LISTED_DATA_DIR = re.compile(r"state-[0-9]{4,9}")
_LISTED_DATA_FILE = re.compile(r"part-[0-9]{5,9}(?:\.[A-Za-z0-9_][A-Za-z0-9_.-]{0,199})?\.parquet")
#: Bytes a listed name may take (the common file-name limit of local file systems).
MAX_LISTED_NAME = 255


def _listed_name(name: str, shape: re.Pattern[str]) -> bool:
    """Whether ``name``, read from a listing, is a plain relative name of ``shape``."""
    return (len(name.encode("utf-8", "surrogatepass")) <= MAX_LISTED_NAME and ".." not in name
            and shape.fullmatch(name) is not None)


def _shown_name(name: str) -> str:
    """A listed name as a message shows it (bounded: a forged one may be long)."""
    return repr(name) if len(name) <= 80 else f"{name[:80]!r}... ({len(name)} characters)"


def state_data_dir(index: int) -> str:
    """Name of the data directory of the ``index``-th state (never derived from the state
    name, which may hold any character)."""
    return f"state-{index:04d}"


def data_file_name(part: int, attempt: str | None = None) -> str:
    """Name of the ``part``-th Parquet file of a state's data directory; in an object store
    the writing attempt's name is part of it (``part-00000.<attempt>.parquet``)."""
    return f"part-{part:05d}.parquet" if attempt is None else f"part-{part:05d}.{attempt}.parquet"


#: A data file written by an attempt in an object store: part number and the attempt's name.
_ATTEMPT_FILE = re.compile(r"^state-\d{4}/part-\d{5}\.(?P<attempt>[^/]+)\.parquet$")


def state_data_files(savepoint: str | os.PathLike[str] | Location, state: StateMetadata) -> list[str]:
    """The state's data files (local paths or URIs) in part order: the files its manifest
    lists, each checked to exist; for a savepoint without a manifest (written before it
    existed; local disks only), the ``*.parquet`` files of its data directory in name order."""
    where = locate(savepoint)
    directory = where.child(state.data)
    if state.files is not None:
        return [str(directory.child(f.name)) for f in state.files]
    if where.remote:
        raise SavepointFormatError(
            f"savepoint {where}: state {state.name!r} does not list its data files (a savepoint "
            "written before the manifest existed); read it from a local copy, or write it again "
            "with this release"
        )
    if not os.path.isdir(directory.path):
        raise SavepointFormatError(
            f"savepoint {where}: data directory {state.data!r} of state "
            f"{state.name!r} is missing; the savepoint is incomplete"
        )
    try:
        names = sorted(os.listdir(directory.path))
    except (OSError, ValueError) as exc:
        raise StorageError(
            f"savepoint {where}: listing data directory {state.data!r} of state {state.name!r} "
            f"failed ({type(exc).__name__}: {exc}); check that this process may read it"
        ) from None
    return [
        os.path.join(directory.path, name)
        for name in names
        if name.endswith(".parquet") and not name.startswith((".", "_"))
    ]


def read_savepoint_metadata(path: str | os.PathLike[str] | Location) -> SavepointMetadata:
    """Read and validate ``<path>/_metadata.json`` (``path`` a local path or a URI)."""
    where = locate(path)
    file = where.child(METADATA_FILE)
    try:
        if file.remote and not file.exists():
            raise FileNotFoundError(file.uri)
        text = file.read_bytes().decode("utf-8")
    except FileNotFoundError:
        where.check_bucket(writing=False)
        raise SavepointFormatError(
            f"{where.uri!r} is not a savepoint: it has no {METADATA_FILE} (a savepoint is "
            "complete only once it holds the metadata file)"
        ) from None
    except (OSError, ValueError) as exc:  # UnicodeError is a ValueError
        raise SavepointFormatError(
            f"cannot read {file.uri!r} ({type(exc).__name__}: {exc}); check that {where.uri!r} is "
            "a savepoint directory this process may read"
        ) from None
    return SavepointMetadata.from_json(text, where=file.uri)


def savepoint_exists(path: str | os.PathLike[str] | Location) -> bool:
    """Whether a savepoint may not be written at ``path``: locally, anything is there; in an
    object store, a savepoint (its ``_metadata.json``) is."""
    where = locate(path)
    return where.child(METADATA_FILE).exists() if where.remote else where.exists()


def write_savepoint_metadata(directory: str | os.PathLike[str] | Location, metadata: SavepointMetadata) -> str:
    """Write ``<directory>/_metadata.json`` (flushed to disk when local); returns its path."""
    file = locate(directory).child(METADATA_FILE)
    file.write_bytes(metadata.to_json().encode("utf-8"))
    return file.uri


# -- list values ------------------------------------------------------------------------------
def encode_list_value(elements: Iterable[bytes]) -> bytes:
    """Flink's RocksDB list layout: serialized elements joined by one 0x2C byte."""
    return b",".join(elements)


def list_element_ends(
    source: DataInputView, scan: Callable[[DataInputView], None], describe: Callable[[], str]
) -> Iterator[int]:
    """Walk a delimited list value: ``scan`` reads one element from ``source``; yields the
    element's index after each element (the position is then at its end). An element that
    fails to scan, a missing or misplaced delimiter, or one at the very end, is a
    ``SerializationError`` that names the element and ``describe()`` (the element serializer)."""
    index = 0
    while True:
        start = source.position
        try:
            scan(source)
        except SerializationError as exc:
            raise type(exc)(
                f"list value element {index} at byte {start} could not be read with {describe()}: {exc}"
            ) from None
        yield index
        if not source.available():
            return
        delimiter = source.read_unsigned_byte()
        if delimiter != LIST_DELIMITER or not source.available():
            raise SerializationError(
                f"list value: byte {source.position - 1} is 0x{delimiter:02x} "
                f"{'at the end' if delimiter == LIST_DELIMITER else 'instead of the 0x2C delimiter'}"
                f" after element {index}; the value was not written with {describe()} or is corrupt"
            )
        index += 1


def decode_list_value(data: bytes, element_serializer: TypeSerializer[Any]) -> list[bytes]:
    """Split a delimited list value into its elements' bytes.

    The layout carries no lengths, so the element serializer finds each element's end (by
    ``copy_serialized``); a missing or wrong delimiter is a ``SerializationError``.
    """
    source = DataInputView(data)
    elements: list[bytes] = []
    scratch = DataOutputView()

    def scan(source: DataInputView) -> None:
        scratch.clear()
        element_serializer.copy_serialized(source, scratch)

    start = 0
    for _ in list_element_ends(source, scan, lambda: repr(element_serializer)):
        elements.append(data[start : source.position])
        start = source.position + 1
    return elements


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


def new_owned_directory(prefix: str, parent: str | os.PathLike[str] | None = None) -> str:
    """A new directory ``<parent>/<prefix><owner>`` (``owned_temp_name``; ``parent`` defaults to
    the temporary directory), made after removing the entries of ``prefix`` that processes
    now gone left there (``remove_abandoned``): scratch space a killed process cannot leak for
    good."""
    parent = tempfile.gettempdir() if parent is None else os.fspath(parent)
    remove_abandoned(parent, prefix)
    path = os.path.join(parent, owned_temp_name(prefix))
    os.mkdir(path, 0o700)
    return path


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
    now = time.time() if now is None else now
    removed = []
    for entry in entries:
        path = os.path.join(parent, entry)
        try:
            abandoned = _owner_gone(entry[len(prefix):], functools.partial(_newest_mtime, path), now)
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


def _owner_gone(owned: str, mtime: Callable[[], float | None], now: float) -> bool:
    """Whether the owner of ``owned`` (what ``owned_temp_name`` adds) is provably gone: same
    host and its pid no longer runs; otherwise (another host, or a name that does not say its
    owner) once ``mtime()`` is more than ``ABANDONED_AFTER`` seconds old."""
    parts = owned.rsplit("-", 2)
    if len(parts) == 3 and parts[0] == _host_label() and parts[1].isdigit():
        return not _process_alive(int(parts[1]))
    modified = mtime()
    return modified is not None and now - modified > ABANDONED_AFTER


def _same(value: float | None) -> float | None:
    return value


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


def remove_abandoned_objects(final: str | os.PathLike[str] | Location, now: float | None = None, *,
                             metadata_file: str = METADATA_FILE,
                             attempt_file: re.Pattern[str] = _ATTEMPT_FILE) -> list[str]:
    """In an object store: remove what abandoned attempts to write the savepoint ``final``
    left under its prefix (data files of attempts whose owner is provably gone, see
    ``remove_abandoned``); returns the URIs removed. Files of live attempts stay. Raises
    ``SavepointFormatError`` when a savepoint is there, or objects no attempt wrote (the prefix
    belongs to something else). ``metadata_file`` and ``attempt_file`` (a pattern whose group
    ``attempt`` is what ``owned_temp_name`` adds) describe the layout: this project's by
    default; Flink's (``_metadata``, its state files) for ``write_flink_savepoint``."""
    where = locate(final)
    now = time.time() if now is None else now
    removed, foreign = [], []
    for name, _size, mtime in where.files():
        if name == metadata_file:
            raise SavepointFormatError(
                f"{where.uri!r} already holds a savepoint; a savepoint never overwrites anything, "
                "choose a new path"
            )
        match = attempt_file.match(name)
        if match is None:
            foreign.append(name)
        elif _owner_gone(match["attempt"], functools.partial(_same, mtime), now):
            where.child(name).delete()
            removed.append(where.child(name).uri)
    if foreign:
        raise SavepointFormatError(
            f"{where.uri!r} holds objects that no savepoint writer left (e.g. {foreign[0]!r}); "
            "a savepoint is written under a new prefix: choose another one"
        )
    return removed


class SavepointOutput:
    """One attempt at writing the savepoint ``final`` (see ``savepoint_output``): data files go
    to ``data_file(...)``, then ``commit(metadata)`` writes the manifest, last."""

    def __init__(self, final: Location, directory: Location, attempt: str | None) -> None:
        self.final = final
        #: Where the data directories go: a temporary sibling locally, the prefix itself remotely.
        self.directory = directory
        #: The attempt's name in its data files' names (None locally: names as before).
        self.attempt = attempt
        self.committed = False

    def data_file(self, data: str, part: int) -> Location:
        return self.directory.child(data, data_file_name(part, self.attempt))

    def listing(self, data: str, parts: int) -> tuple[DataFile, ...]:
        """The manifest entries of a state's ``parts`` data files, as written."""
        files = []
        for part in range(parts):
            file = self.data_file(data, part)
            size = file.size()
            if size is None:
                raise SavepointFormatError(f"data file {file.uri!r} was not written; nothing was committed")
            files.append(DataFile(file.name, size))
        return tuple(files)

    def commit(self, metadata: SavepointMetadata) -> None:
        """Write the metadata: the savepoint exists from here on (locally, once renamed)."""
        for state in metadata.states:
            if state.files is None:
                raise ValueError(f"state {state.name!r}: the metadata of a new savepoint lists its files")
        if self.directory.remote and self.final.child(METADATA_FILE).exists():
            raise SavepointFormatError(
                f"{self.final.uri!r} appeared while the savepoint was written; it was left untouched"
            )
        write_savepoint_metadata(self.directory, metadata)
        self.committed = True

    def discard(self) -> None:
        """Remove this attempt's data files from the object store (best effort)."""
        for name, _size, _mtime in self.final.files():
            match = _ATTEMPT_FILE.match(name)
            if match is not None and match["attempt"] == self.attempt:
                with contextlib.suppress(StateError):
                    self.final.child(name).delete()


@contextlib.contextmanager
def savepoint_output(final_path: str | os.PathLike[str] | Location) -> Iterator[SavepointOutput]:
    """Write a new savepoint at ``final_path`` (a local path or a URI) with the commit
    protocol: the caller writes the data files at ``output.data_file(...)`` and then calls
    ``output.commit(metadata)``, last. Locally this is ``atomic_directory`` (a temporary
    sibling renamed into place). In an object store: the bucket must exist, no savepoint may be
    there, abandoned attempts are removed first (``remove_abandoned_objects``), and on an
    exception this attempt's files are removed; a killed attempt leaves data files but no
    metadata, which no reader takes for a savepoint."""
    final = locate(final_path)
    if not final.remote:
        with atomic_directory(final.path) as temp:
            output = SavepointOutput(final, locate(temp), None)
            yield output
            if not output.committed:
                raise SavepointFormatError(f"{final.uri!r}: nothing was committed")
        return
    final.check_writable()
    remove_abandoned_objects(final)
    output = SavepointOutput(final, final, owned_temp_name(""))
    try:
        yield output
        if not output.committed:
            raise SavepointFormatError(f"{final.uri!r}: nothing was committed")
    except BaseException:
        if not output.committed:
            output.discard()
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
    directory: str | os.PathLike[str] | Location,
    rows: Sequence[tuple[int, bytes, bytes, bytes | None, bytes | None]] | Any,
    part: int = 0,
    file: Location | None = None,
) -> str:
    """Write rows (already sorted) as one Parquet file ``directory/part-NNNNN.parquet`` (or
    at ``file``); returns its path or URI. ``rows`` may also be a ``pyarrow.Table`` of the
    savepoint's columns (``savepoint_arrow_schema()``), sorted the same way.

    Writing is deterministic: the same rows give the same file bytes, as tuples or as a table."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if file is None:
        file = locate(directory).child(data_file_name(part))
    if not file.remote:
        os.makedirs(os.path.dirname(file.path), exist_ok=True)
    if isinstance(rows, pa.Table):
        if not rows.schema.equals(savepoint_arrow_schema()):
            raise ValueError(f"a table of state rows needs the savepoint's columns {savepoint_arrow_schema()}, "
                             f"got {rows.schema}")
        table = rows.combine_chunks()
    else:
        columns = list(zip(*rows, strict=True)) if rows else [(), (), (), (), ()]
        table = pa.Table.from_arrays(
            [pa.array(col, type=f.type) for col, f in zip(columns, savepoint_arrow_schema(), strict=True)],
            schema=savepoint_arrow_schema(),
        )
    with file.guard("writing"):
        sink = file.open_output()
        try:
            pq.write_table(table, sink, row_group_size=ROW_GROUP_SIZE, compression="zstd", write_statistics=True)
        finally:
            if file.remote:
                sink.close()
    return file.uri


def write_savepoint_rows(
    directory: str | os.PathLike[str] | Location,
    states: Iterable[tuple[StateMetadata, Sequence[tuple[int, bytes, bytes, bytes | None, bytes | None]] | Any]],
    *,
    max_parallelism: int,
    key_serializer_snapshot: bytes,
) -> str:
    """Write a savepoint at ``directory`` (a local path or a URI, where no savepoint may be)
    with the commit protocol of ``savepoint_output``: per state, its rows (already sorted; a
    sequence of tuples or a table, as ``write_state_rows`` takes them) as one data file
    (parallelism 1), under the name, kind and snapshots of its metadata (its
    ``data``, ``rows`` and ``files`` are filled in); the metadata last. ``states`` is consumed
    one state at a time. Returns the savepoint's absolute path or URI."""
    with savepoint_output(directory) as output:
        written = []
        for index, (state, rows) in enumerate(states):
            data = state_data_dir(index)
            write_state_rows(output.directory, rows, file=output.data_file(data, 0))
            written.append(replace(state, data=data, rows=len(rows), files=output.listing(data, 1)))
        output.commit(SavepointMetadata(max_parallelism=max_parallelism,
                                        key_serializer_snapshot=key_serializer_snapshot,
                                        states=tuple(written)))
    return output.final.uri


def open_data_file(file: str, state: StateMetadata, size: int | None = None) -> Any:
    """The ``pyarrow.parquet.ParquetFile`` of one data file (a local path or a URI), its footer
    read and its columns checked (names, types and nullability of ``savepoint_arrow_schema()``),
    and its size when the manifest gives one."""
    import pyarrow.parquet as pq

    where = locate(file)
    try:
        found_size = where.size()
    except StorageError as exc:
        raise StorageError(f"data file {file!r} of state {state.name!r}: {exc}") from None
    if found_size is None:
        raise SavepointFormatError(
            f"data file {file!r} of state {state.name!r} is missing; the savepoint is incomplete "
            "or was damaged after it was written"
        )
    resized = "" if size is None or size == found_size else (
        f" (it is {found_size} bytes where the manifest says {size}: truncated or replaced)")
    should = [(f.name, str(f.type), f.nullable) for f in savepoint_arrow_schema()]
    # pyarrow reports damaged files with many exception types (ArrowException, OSError,
    # UnicodeDecodeError from a corrupt footer, ValueError...): all mean an unreadable file.
    try:
        parquet = pq.ParquetFile(where.open_input())
        found = [(f.name, str(f.type), f.nullable) for f in parquet.schema_arrow]
    except StorageError:
        raise
    except Exception as exc:
        raise SavepointFormatError(
            f"data file {file!r} of state {state.name!r} is unreadable "
            f"({type(exc).__name__}: {exc}){resized}; the savepoint is corrupt"
        ) from None
    if found != should:
        raise SavepointFormatError(
            f"data file {file!r} of state {state.name!r} has columns (name, type, nullable) "
            f"{found}, should be {should}{resized}; the savepoint is corrupt or not of this format"
        )
    if resized:
        raise SavepointFormatError(f"data file {file!r} of state {state.name!r}{resized}; the savepoint is corrupt")
    return parquet


def _listed_files(savepoint: str | os.PathLike[str] | Location, state: StateMetadata) -> list[tuple[str, int | None]]:
    files = state_data_files(savepoint, state)
    sizes = [None] * len(files) if state.files is None else [f.size for f in state.files]
    return list(zip(files, sizes, strict=True))


def check_state_files(savepoint: str | os.PathLike[str], state: StateMetadata) -> list[str]:
    """The state's data files, each one's footer and columns checked as ``read_state_rows``
    checks them (for readers such as Spark that read the rows themselves)."""
    return [file for file, _ in state_row_groups(savepoint, state)]


def state_row_groups(savepoint: str | os.PathLike[str], state: StateMetadata) -> list[tuple[str, int]]:
    """``check_state_files`` with each file's number of Parquet row groups, from the footer it
    checked: (file, row groups) per data file, in part order."""
    return [(file, open_data_file(file, state, size).metadata.num_row_groups)
            for file, size in _listed_files(savepoint, state)]


def read_state_rows(
    savepoint: str | os.PathLike[str], state: StateMetadata
) -> Iterator[tuple[int, bytes, bytes, bytes | None, bytes | None]]:
    """Every row of a state, file by file, batch by batch. Any damage is a
    ``SavepointFormatError`` naming the file and the state: unreadable files, columns of other
    names, types or nullability than ``savepoint_arrow_schema()``, nulls in the key columns."""
    for file, size in _listed_files(savepoint, state):
        parquet = open_data_file(file, state, size)
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
