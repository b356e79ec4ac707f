"""Where the bytes backend keeps its bytes: a dict ("memory") or an embedded RocksDB.

A table holds one state. Its entries are addressed by a primary key ``(key_group, key bytes,
namespace bytes)`` and, for map state, a user-key suffix. Map values are stored as Flink's
RocksDB map layout (``bool is-null + value``); value and list values as they are.
Migration (``transform``) is all-or-nothing: the new values go to a staging area (a new dict, a
new column family) that replaces the old one only when every entry has been rewritten.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import shutil
import struct
import sys
import threading
import traceback
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .._errors import StateError

__all__ = ["Primary", "Row", "MemoryStore", "RocksDBStore", "open_store", "bulk"]

Primary = tuple[int, bytes, bytes]
#: (key_group, key, namespace, user_key or None, stored value)
Row = tuple[int, bytes, bytes, "bytes | None", bytes]

_HEAD = struct.Struct(">HI")
_LEN = struct.Struct(">I")
_BATCH = 8192


@contextlib.contextmanager
def bulk() -> Iterator[None]:
    """Pause the cyclic garbage collector during a bulk rewrite: the new entries only add
    acyclic objects, and with millions of live tuples every full collection would walk them
    all (measured: a third of the time of a 1M-entry in-memory migration)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class Table:
    """The operations a state needs from its store."""

    def get(self, primary: Primary) -> bytes | None:
        raise NotImplementedError
    def put(self, primary: Primary, value: bytes) -> None:
        raise NotImplementedError
    def delete(self, primary: Primary) -> None:
        raise NotImplementedError
    def map_get(self, primary: Primary, user_key: bytes) -> bytes | None:
        raise NotImplementedError
    def map_put(self, primary: Primary, user_key: bytes, value: bytes) -> None:
        raise NotImplementedError
    def map_delete(self, primary: Primary, user_key: bytes) -> None:
        raise NotImplementedError
    def map_items(self, primary: Primary) -> Iterator[tuple[bytes, bytes]]:
        raise NotImplementedError
    def map_clear(self, primary: Primary) -> None:
        raise NotImplementedError
    def rows(self) -> Iterator[Row]:
        raise NotImplementedError
    def load(self, rows: Iterable[Row]) -> None:
        raise NotImplementedError
    def transform(self, fn: Callable[[bytes], bytes]) -> None:
        raise NotImplementedError
    def drop(self) -> None:
        raise NotImplementedError


# -- memory -----------------------------------------------------------------------------------
class _MemoryTable(Table):
    def __init__(self) -> None:
        self._data: dict[Primary, bytes] = {}

    def get(self, primary: Primary) -> bytes | None:
        return self._data.get(primary)

    def put(self, primary: Primary, value: bytes) -> None:
        self._data[primary] = value

    def delete(self, primary: Primary) -> None:
        self._data.pop(primary, None)

    def rows(self) -> Iterator[Row]:
        return iter([(kg, key, ns, None, value) for (kg, key, ns), value in self._data.items()])

    def load(self, rows: Iterable[Row]) -> None:
        data = self._data
        with bulk():
            for kg, key, ns, _uk, value in rows:
                data[(kg, key, ns)] = value

    def transform(self, fn: Callable[[bytes], bytes]) -> None:
        # A new dict replaces the old one only once every value has been rewritten.
        with bulk():
            self._data = {primary: fn(value) for primary, value in self._data.items()}

    def drop(self) -> None:
        self._data = {}


class _MemoryMapTable(Table):
    def __init__(self) -> None:
        self._data: dict[Primary, dict[bytes, bytes]] = {}

    def map_get(self, primary: Primary, user_key: bytes) -> bytes | None:
        entries = self._data.get(primary)
        return None if entries is None else entries.get(user_key)

    def map_put(self, primary: Primary, user_key: bytes, value: bytes) -> None:
        self._data.setdefault(primary, {})[user_key] = value

    def map_delete(self, primary: Primary, user_key: bytes) -> None:
        entries = self._data.get(primary)
        if entries is not None:
            entries.pop(user_key, None)
            if not entries:
                del self._data[primary]

    def map_items(self, primary: Primary) -> Iterator[tuple[bytes, bytes]]:
        return iter(sorted(self._data.get(primary, {}).items()))

    def map_clear(self, primary: Primary) -> None:
        self._data.pop(primary, None)

    def rows(self) -> Iterator[Row]:
        return iter([(kg, key, ns, user_key, value) for (kg, key, ns), entries in self._data.items()
                     for user_key, value in entries.items()])

    def load(self, rows: Iterable[Row]) -> None:
        with bulk():
            for kg, key, ns, user_key, value in rows:
                assert user_key is not None
                self._data.setdefault((kg, key, ns), {})[user_key] = value

    def transform(self, fn: Callable[[bytes], bytes]) -> None:
        with bulk():
            self._data = {
                primary: {uk: fn(v) for uk, v in entries.items()} for primary, entries in self._data.items()
            }

    def drop(self) -> None:
        self._data = {}


class MemoryStore:
    """Bytes in Python dicts."""

    name = "memory"

    def table(self, kind: str) -> Table:
        return _MemoryMapTable() if kind == "map" else _MemoryTable()

    def close(self) -> None:
        pass


# -- RocksDB ----------------------------------------------------------------------------------
def _encode(primary: Primary) -> bytes:
    kg, key, ns = primary
    return b"".join((_HEAD.pack(kg, len(key)), key, _LEN.pack(len(ns)), ns))


def _decode(composite: bytes) -> Row:
    """(key_group, key, namespace, user-key suffix, b"") of a RocksDB key."""
    kg, key_len = _HEAD.unpack_from(composite, 0)
    end = 6 + key_len
    (ns_len,) = _LEN.unpack_from(composite, end)
    ns_end = end + 4 + ns_len
    return kg, composite[6:end], composite[end + 4 : ns_end], composite[ns_end:], b""


class _RocksTable(Table):
    """One column family; RocksDB keys are key group (2 bytes), key length (4) + key,
    namespace length (4) + namespace, then the user key (map state)."""

    def __init__(self, store: RocksDBStore, kind: str) -> None:
        self._store = store
        self._kind = kind
        self._name, self._cf, self._used = store._new_column_family()

    def get(self, primary: Primary) -> bytes | None:
        return self._cf.get(_encode(primary))  # type: ignore[no-any-return]

    def put(self, primary: Primary, value: bytes) -> None:
        self._cf[_encode(primary)] = value

    def delete(self, primary: Primary) -> None:
        del self._cf[_encode(primary)]

    def map_get(self, primary: Primary, user_key: bytes) -> bytes | None:
        return self._cf.get(_encode(primary) + user_key)  # type: ignore[no-any-return]

    def map_put(self, primary: Primary, user_key: bytes, value: bytes) -> None:
        self._cf[_encode(primary) + user_key] = value

    def map_delete(self, primary: Primary, user_key: bytes) -> None:
        del self._cf[_encode(primary) + user_key]

    def map_items(self, primary: Primary) -> Iterator[tuple[bytes, bytes]]:
        prefix = _encode(primary)
        n = len(prefix)
        result = []
        for composite, value in self._cf.items(from_key=prefix):
            if not composite.startswith(prefix):
                break
            result.append((composite[n:], value))
        return iter(result)

    def map_clear(self, primary: Primary) -> None:
        prefix = _encode(primary)
        doomed = []
        for composite in self._cf.keys(from_key=prefix):
            if not composite.startswith(prefix):
                break
            doomed.append(composite)
        for composite in doomed:
            del self._cf[composite]

    def rows(self) -> Iterator[Row]:
        is_map = self._kind == "map"
        for composite, value in self._cf.items():
            kg, key, ns, user_key, _ = _decode(composite)
            yield kg, key, ns, (user_key if is_map else None), value

    def load(self, rows: Iterable[Row]) -> None:
        self._live()
        self._write(self._name, ((_encode((kg, k, ns)) + (uk or b""), v) for kg, k, ns, uk, v in rows))

    def _write(self, cf_name: str, pairs: Iterable[tuple[bytes, bytes]]) -> None:
        try:
            self._write_batches(cf_name, pairs)
        except BaseException:
            # The traceback would keep iterators and column-family handles alive, and a live
            # handle keeps the database locked after close(): clear those frames' locals.
            traceback.clear_frames(sys.exc_info()[2])
            raise

    def _write_batches(self, cf_name: str, pairs: Iterable[tuple[bytes, bytes]]) -> None:
        from rocksdict import WriteBatch

        handle = self._store._db.get_column_family_handle(cf_name)
        batch = WriteBatch(raw_mode=True)
        batch.set_default_column_family(handle)
        put = batch.put
        count = 0
        for key, value in pairs:
            put(key, value)
            count += 1
            if count == _BATCH:
                self._store._db.write(batch)
                batch = WriteBatch(raw_mode=True)
                batch.set_default_column_family(handle)
                put = batch.put
                count = 0
        if count:
            self._store._db.write(batch)

    def transform(self, fn: Callable[[bytes], bytes]) -> None:
        # Stage the rewritten values in a fresh column family; the old one is dropped only
        # after the last value is written, so a failure leaves the state as it was.
        self._live()
        name, cf, used = self._store._new_column_family()
        try:
            self._write(name, ((k, fn(v)) for k, v in self._cf.items()))
        except BaseException:
            self._store._done_with(name, cf, used)
            del cf
            raise
        old = (self._name, self._cf, self._used)
        self._name, self._cf, self._used = name, cf, used
        self._store._done_with(*old)

    def drop(self) -> None:
        handle, self._cf = self._cf, None
        if handle is not None:  # a second drop, or one after close, has nothing to give back
            self._store._done_with(self._name, handle, self._used)

    def _live(self) -> None:
        # Column families are looked up by name and reused by later tables: a dropped table's
        # name may be another table's now.
        if self._cf is None:
            raise StateError("this state's table was dropped or its RocksDB store closed; "
                             "get the state from the backend again")


_OWNED_PREFIX = "state-rocksdb-"

#: Spare column families: creating or dropping one costs RocksDB a new options file and a
#: manifest record (about 3 ms of CPU each, most of a short-lived store's cost), so the store
#: empties a column family it is done with and hands it to the next table of this process,
#: ``_REUSES`` times at most (its deletions stay behind as tombstones until then), when it holds
#: at most ``_EMPTIED_MAX`` entries (else it is dropped), keeping ``_SPARE_MAX`` per database.
_REUSES, _EMPTIED_MAX, _SPARE_MAX = 16, 4096, 16
#: Databases of owned directories closed lately, kept open (with their spare column families)
#: for the next store of this process; closed and deleted at exit.
_IDLE_MAX = 2


class _Database:
    """One open RocksDB (raw bytes, no write-ahead log) and its spare, empty column families."""

    def __init__(self, path: str, owned_dir: str | None) -> None:
        from rocksdict import Options, Rdict, WriteOptions

        self.path, self.owned_dir, self.pid = path, owned_dir, os.getpid()
        self.options = Options(raw_mode=True)
        self.options.create_if_missing(True)
        self.db: Any = Rdict(path, self.options)
        try:
            # The database is a working store, deleted on close (savepoints carry state
            # across processes), so a write-ahead log buys nothing.
            write_options = WriteOptions()
            write_options.disable_wal = True  # type: ignore[method-assign,assignment]  # a property at runtime
            self.db.set_write_options(write_options)
        except BaseException:
            self.db.close()
            Rdict.destroy(path, self.options)
            raise
        self.spare: list[tuple[str, Any, int]] = []  # (name, handle, times used)
        self.lock = threading.Lock()

    def column_family(self) -> tuple[str, Any, int]:
        """An empty column family: a spare one, else a new one (name, handle, times used)."""
        with self.lock:
            if self.spare:
                return self.spare.pop()
        from rocksdict import Options

        name = f"state-{uuid.uuid4().hex}"
        return name, self.db.create_column_family(name, Options(raw_mode=True)), 0

    def done_with(self, name: str, handle: Any, used: int) -> None:
        """The column family ``name`` is no longer a table's: emptied and kept spare, or
        dropped. Clean-up only, after the table's state is settled: it does not raise (a column
        family it could not drop goes with the database)."""
        try:
            if used + 1 < _REUSES and len(self.spare) < _SPARE_MAX and self._emptied(handle):
                with self.lock:
                    self.spare.append((name, handle, used + 1))
                return
        except Exception:
            pass  # not emptied: dropped instead
        del handle
        with contextlib.suppress(Exception):
            self.db.drop_column_family(name)

    @staticmethod
    def _emptied(handle: Any) -> bool:
        """Delete every entry of ``handle`` if it holds at most ``_EMPTIED_MAX``."""
        keys: list[bytes] = []
        for key in handle.keys():
            if len(keys) == _EMPTIED_MAX:
                return False
            keys.append(key)
        for key in keys:
            del handle[key]
        return True

    def destroy(self, strict: bool) -> None:
        """Close the database and delete its files (``strict``: an undeletable directory the
        caller named raises)."""
        from rocksdict import Rdict

        spare, self.spare = self.spare, []
        for name, handle, _ in spare:
            del handle
            self.db.drop_column_family(name)
        del spare
        self.db.close()
        self.db = None
        try:
            Rdict.destroy(self.path, self.options)
        except Exception:
            # A handle still referenced somewhere (e.g. by a traceback) holds the lock until
            # it is collected.
            gc.collect()
            try:
                Rdict.destroy(self.path, self.options)
            except Exception as exc:
                if strict:
                    raise StateError(
                        f"the RocksDB files under {self.path!r} could not be deleted ({exc}); "
                        "delete the directory yourself"
                    ) from None
        if self.owned_dir is not None:
            shutil.rmtree(self.owned_dir, ignore_errors=True)


_idle: list[_Database] = []
_idle_lock = threading.Lock()


def _take_idle() -> _Database | None:
    with _idle_lock:
        while _idle:
            database = _idle.pop()
            if database.pid == os.getpid():
                return database
            # Inherited from the parent by fork: its files and lock are the parent's.
        return None


def _put_idle(database: _Database) -> bool:
    global _exit_hooked
    with _idle_lock:
        if database.pid != os.getpid() or len(_idle) >= _IDLE_MAX or _exited == os.getpid():
            return False
        if _exit_hooked != database.pid:
            # A multiprocessing child ends by os._exit, past atexit: its exit runs these.
            from multiprocessing import util

            util.Finalize(None, _close_idle, exitpriority=0)
            _exit_hooked = database.pid
        _idle.append(database)
        return True


#: The process whose exit closes its idle databases (a forked child is not hooked yet). A
#: process ended another way (killed, os._exit) leaves its directory to ``remove_abandoned``.
_exit_hooked: int | None = None


#: The process whose idle databases were closed at its exit: a store closed after that is deleted.
_exited: int | None = None


@atexit.register
def _close_idle() -> None:
    global _exited
    with _idle_lock:
        _exited = os.getpid()
        idle = [d for d in _idle if d.pid == os.getpid()]
        _idle.clear()
    for database in idle:
        with contextlib.suppress(Exception):
            database.destroy(strict=False)


class RocksDBStore:
    """An embedded RocksDB (rocksdict, raw bytes), one column family per state.

    ``path`` is the working directory of the database (created if missing, must be empty);
    without it a temporary directory ``state-rocksdb-<host>-<pid>-*`` is used. ``close()`` closes and deletes the database:
    state outlives a backend only through savepoints, as in Flink. (A temporary database is
    emptied instead and kept open for the next store of the process, which cannot see what it
    held; it is deleted at exit.)
    """

    name = "rocksdb"

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        database = None
        if path is None:
            database = _take_idle()
            if database is None:
                # Named by host and pid: a killed process's database is removed by the next
                # store opened on this host (reference.savepoint.remove_abandoned).
                from ..savepoint import new_owned_directory

                owned_dir = new_owned_directory(_OWNED_PREFIX)
                database = _Database(os.path.join(owned_dir, "db"), owned_dir)
        else:
            base = os.fspath(path)
            if os.path.isdir(base) and os.listdir(base):
                raise StateError(
                    f"RocksDB working directory {base!r} is not empty; give the bytes backend "
                    "a new or empty directory (state is carried over only by savepoints)"
                )
            database = _Database(base, None)
        self._database = database
        self._db: Any = database.db
        self._path = database.path
        self._tables: list[_RocksTable] = []
        self._closed = False

    def table(self, kind: str) -> Table:
        if self._closed:
            raise StateError("the RocksDB store is closed")
        table = _RocksTable(self, kind)
        self._tables.append(table)
        return table

    def _new_column_family(self) -> tuple[str, Any, int]:
        return self._database.column_family()

    def _done_with(self, name: str, handle: Any, used: int) -> None:
        self._database.done_with(name, handle, used)

    def close(self) -> None:
        """Close and delete the database (idempotent)."""
        if self._closed:
            return
        self._closed = True
        database, tables = self._database, self._tables
        self._tables = []
        self._db = None
        if database.owned_dir is not None and _hand_back(database, tables) and _put_idle(database):
            return
        for table in tables:
            table._cf = None
        database.destroy(strict=database.owned_dir is None)


def _hand_back(database: _Database, tables: list[_RocksTable]) -> bool:
    """Give ``database`` back every column family of ``tables``; False if that failed (then
    no handle of them is left in a frame here, so the database can be closed)."""
    try:
        for table in tables:
            handle, table._cf = table._cf, None
            if handle is not None:
                database.done_with(table._name, handle, table._used)
            handle = None
        return True
    except Exception:
        return False


def open_store(store: str, path: str | os.PathLike[str] | None) -> MemoryStore | RocksDBStore:
    if store == "memory":
        if path is not None:
            raise StateError("store='memory' keeps no files; pass path only with store='rocksdb'")
        return MemoryStore()
    if store == "rocksdb":
        return RocksDBStore(path)
    raise StateError(f"unknown store {store!r}; use 'memory' or 'rocksdb'")
