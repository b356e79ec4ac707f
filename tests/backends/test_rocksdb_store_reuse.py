"""A temporary RocksDB store hands its emptied database and column families to the next store
of its process: the next store must see nothing of what an earlier one held, whatever it did
(values, maps, migrations, dropped tables, more entries than are emptied), a forked child must
never use its parent's database, and nothing may be left on disk once the process exits."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import tempfile
import textwrap

import pytest

from reference import StateError
from reference.backends import _stores
from reference.backends._stores import RocksDBStore

pytest.importorskip("rocksdict")


def _fill(store: RocksDBStore, entries: int) -> list:
    value, listing, mapping = store.table("value"), store.table("list"), store.table("map")
    for i in range(entries):
        primary = (i % 128, b"k%d" % i, b"ns")
        value.put(primary, b"v%d" % i)
        listing.put(primary, b"l%d" % i)
        mapping.map_put(primary, b"u%d" % i, b"\x00m%d" % i)
    return [value, listing, mapping]


def _seen(store: RocksDBStore, tables: list) -> dict:
    """Everything the tables of ``store`` hold, and what a few reads of the old keys give."""
    return {
        "rows": [list(t.rows()) for t in tables],
        "reads": [tables[0].get((0, b"k0", b"ns")), tables[1].get((0, b"k0", b"ns")),
                  tables[2].map_get((0, b"k0", b"ns"), b"u0"), list(tables[2].map_items((0, b"k0", b"ns")))],
    }


_EMPTY = {"rows": [[], [], []], "reads": [None, None, None, []]}


@pytest.mark.parametrize("entries", [1, 300, _stores._EMPTIED_MAX + 5])
def test_the_next_store_sees_nothing_of_the_last(entries):
    first = RocksDBStore()
    tables = _fill(first, entries)
    tables[0].transform(lambda v: v + b"!")  # a migration's staging column family
    tables[1].drop()
    first.close()
    for round_ in range(_stores._REUSES + 2):  # past the reuse limit of a column family
        store = RocksDBStore()
        tables = [store.table("value"), store.table("list"), store.table("map")]
        got = _seen(store, tables)
        assert got == _EMPTY, f"got {got} in a new store (round {round_}), should be empty [after {entries} entries]"
        _fill(store, 3)
        store.close()


def test_an_emptied_column_family_is_reused_and_a_full_one_dropped():
    store = RocksDBStore()
    small, big = store.table("value"), store.table("value")
    small.put((0, b"a", b""), b"1")
    for i in range(_stores._EMPTIED_MAX + 1):
        big.put((0, b"k%d" % i, b""), b"v")
    small_name, big_name, database = small._name, big._name, store._database
    store.close()
    spare = [name for name, _, _ in database.spare]
    assert small_name in spare, f"got spares {spare}, should hold the emptied column family {small_name}"
    assert big_name not in spare, (
        f"got the column family of {_stores._EMPTIED_MAX + 1} entries among the spares, should be dropped")
    again = RocksDBStore()
    assert again._database is database, "got a new database, should reuse the idle one of this process"
    again.close()


def _child(queue, directory):
    tempfile.tempdir = directory  # where this child's temporary database goes
    store = RocksDBStore()
    table = store.table("value")
    table.put((0, b"child", b""), b"x")
    queue.put((store._database.pid, list(table.rows())))
    store.close()


@pytest.mark.skipif(sys.platform != "linux", reason="fork start method")
def test_a_forked_child_never_uses_its_parents_database(tmp_path):
    parent = RocksDBStore()
    parent.table("value").put((0, b"parent", b""), b"p")
    parent.close()  # idle in this process, inherited by the child
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_child, args=(queue, str(tmp_path)), daemon=True)
    child.start()
    try:
        pid, rows = queue.get(timeout=60)  # a child using its parent's database hangs
        child.join(60)
    finally:
        if child.is_alive():
            child.kill()
    assert child.exitcode == 0, f"got exit code {child.exitcode} from the child, should be 0"
    assert pid == child.pid, f"got a database of process {pid} in the child {child.pid}, should be its own"
    assert rows == [(0, b"child", b"", None, b"x")], f"got {rows} in the child, should be only its own write"
    left = os.listdir(tmp_path)
    assert left == [], f"got {left} left by the child, should be nothing once it exits (multiprocessing skips atexit)"
    again = RocksDBStore()
    got = list(again.table("value").rows())
    again.close()
    assert got == [], f"got {got} in the parent after the child ran, should be empty"


def test_nothing_is_left_on_disk_at_exit(tmp_path):
    script = textwrap.dedent("""
        import atexit
        late = []
        atexit.register(lambda: [s.close() for s in late])  # first registered, so run last
        from reference.backends._stores import RocksDBStore
        stores = [RocksDBStore() for _ in range(3)]  # more than are kept idle
        for store in stores:
            store.table("map").map_put((0, b"k", b""), b"u", b"\\x00v")
            store.close()
        late.append(RocksDBStore())  # closed after the idle databases were: deleted, not kept
        late[0].table("value").put((0, b"k", b""), b"v")
    """)
    env = dict(os.environ, TMPDIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"got exit code {done.returncode}: {done.stderr}"
    left = sorted(n for n in os.listdir(tmp_path) if n.startswith("state-rocksdb-"))
    assert left == [], f"got {left} left in the temporary directory, should be nothing once the process exits"


def test_a_dropped_or_closed_table_cannot_reach_the_column_family_another_table_took():
    store = RocksDBStore()
    dropped = store.table("value")
    dropped.put((0, b"old", b""), b"x")
    dropped.drop()
    dropped.drop()  # a second drop gives back nothing
    taker = store.table("value")  # takes the emptied column family
    taker.put((0, b"mine", b""), b"y")
    for what, act in [("load", lambda: dropped.load([(0, b"stale", b"", None, b"z")])),
                      ("transform", lambda: dropped.transform(lambda v: v))]:
        with pytest.raises(StateError, match="dropped or its RocksDB store closed"):
            act()
            pytest.fail(f"got a {what} of a dropped table done, should be refused")
    got = list(taker.rows())
    assert got == [(0, b"mine", b"", None, b"y")], f"got {got} in the table that took the column family, should be its own"
    store.close()

    later = RocksDBStore()  # the same database, its column families given back
    live = [later.table("value") for _ in range(3)]
    for i, table in enumerate(live):
        table.put((0, b"k", b""), b"%d" % i)
    taker.drop()  # a table of the closed store
    got = [list(t.rows()) for t in live]
    later.close()
    assert got == [[(0, b"k", b"", None, b"%d" % i)] for i in range(3)], (
        f"got {got} after a closed store's table was dropped, should be each live table's own entry")


def test_a_failed_migration_leaves_the_state_and_the_next_store_clean():
    store = RocksDBStore()
    table = store.table("value")
    for i in range(10):
        table.put((0, b"k%d" % i, b""), b"v%d" % i)

    def fails_at_the_sixth(value):
        if value == b"v5":
            raise ValueError("poisoned")
        return value + b"!"

    with pytest.raises(ValueError):
        table.transform(fails_at_the_sixth)
    got = sorted(v for *_, v in table.rows())
    assert got == sorted(b"v%d" % i for i in range(10)), f"got {got} after a failed migration, should be the old values"
    store.close()
    again = RocksDBStore()
    tables = [again.table("value") for _ in range(4)]  # the staging column family among them
    got = [list(t.rows()) for t in tables]
    again.close()
    assert got == [[]] * 4, f"got {got} in a new store after a failed migration, should be empty"
