"""backends.fresh_process's restoring process (``conformance._fresh.process`` starts it,
``conformance._fresh.restore`` runs it): forked from a
zygote that never saw the writer's state, taking the writer's path, environment and directory
per restore, in another time zone, locale and hash seed (``conformance._fresh.foreign``); a new
interpreter where ``os.fork`` is missing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

import conformance._fresh.process as _fresh_process
from conformance._fresh.layout import descriptors, expected_state
from reference.backends import BytesStateBackend
from reference.serializers import LongSerializer, StringSerializer

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the zygote forks (POSIX only)")

VALUES = ["a", "é", "\U0001f600", ""]


def _savepoint(path, serializer=None, values=VALUES):
    serializer = serializer or StringSerializer()
    backend = BytesStateBackend(LongSerializer())
    vs, ls, ms = (backend.get_value_state(d) if i == 0 else backend.get_list_state(d) if i == 1
                  else backend.get_map_state(d) for i, d in enumerate(descriptors(serializer)))
    for key, (value, elements, entries) in expected_state(values).items():
        backend.set_current_key(key)
        vs.update(value)
        ls.update(elements)
        ms.put_all(entries)
    try:
        return backend.savepoint(str(path))
    finally:
        backend.close()


def _wanted(values=VALUES):
    s = StringSerializer()
    return [[s.to_bytes(v).hex(), [s.to_bytes(e).hex() for e in elements], {k: s.to_bytes(e).hex() for k, e in entries.items()}]
            for v, elements, entries in expected_state(values).values()]


def _read_bytes(out):
    """The bytes the restoring process wrote for every key's state."""
    return [key["bytes"] for key in json.loads(out)["keys"]]


def _spec(savepoint, modules=()):
    return {"savepoint": savepoint, "keys": len(VALUES), "modules": list(modules), "locator": None}


def test_restores_in_a_child_of_the_zygote_and_reports_what_it_read(tmp_path):
    restore = _fresh_process.start_restore(_spec(_savepoint(tmp_path / "sp")), str(tmp_path))
    assert isinstance(restore, _fresh_process.Restore), f"got {type(restore).__name__}, should be a zygote's child"
    out, err = restore.communicate(timeout=60)
    assert restore.returncode == 0, f"got exit {restore.returncode}: {err}"
    assert _read_bytes(out) == _wanted(), f"got {out[:200]}, should be the bytes of every key's state"
    assert restore.pid not in (os.getpid(), _fresh_process._zygote.proc.pid), "the restore should be its own process"
    leftover = [n for n in os.listdir(tmp_path) if n.startswith("fresh-restore-")]
    assert leftover == [], f"got {leftover}, the output files should be removed once read"


def test_each_restore_takes_the_writers_sys_path_at_the_time(tmp_path, monkeypatch):
    first = _fresh_process.start_restore(_spec(_savepoint(tmp_path / "one")), str(tmp_path))
    first.communicate(timeout=60)  # the zygote runs now, started before the module below existed
    folder = tmp_path / "late"
    folder.mkdir()
    (folder / "late_module_for_fresh_restore.py").write_text(textwrap.dedent("""
        import os
        MARK = os.environ["FRESH_RESTORE_MARK"]
    """))
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setenv("FRESH_RESTORE_MARK", "seen")
    restore = _fresh_process.start_restore(_spec(_savepoint(tmp_path / "two"), ["late_module_for_fresh_restore"]),
                                           str(tmp_path))
    out, err = restore.communicate(timeout=60)
    assert restore.returncode == 0, f"got exit {restore.returncode}: {err[-500:]}, should import a module on the writer's path"
    assert "late_module_for_fresh_restore" not in sys.modules, "the writer never imported it; only the child did"


def test_the_child_never_sees_what_the_writer_set_at_run_time(tmp_path, monkeypatch):
    folder = tmp_path / "mod"
    folder.mkdir()
    (folder / "runtime_state_for_fresh_restore.py").write_text("REGISTRY = {}\n")
    monkeypatch.syspath_prepend(str(folder))
    import runtime_state_for_fresh_restore as module

    module.REGISTRY["written"] = True  # state that lives only in this process
    checker = folder / "check_registry_for_fresh_restore.py"
    checker.write_text("import runtime_state_for_fresh_restore as m\nassert not m.REGISTRY, m.REGISTRY\n")
    restore = _fresh_process.start_restore(
        _spec(_savepoint(tmp_path / "sp"), ["check_registry_for_fresh_restore"]), str(tmp_path))
    out, err = restore.communicate(timeout=60)
    assert restore.returncode == 0, f"got exit {restore.returncode}: {err[-500:]}, the child should see an empty registry"


def test_a_failing_restore_reports_its_error_and_the_next_one_still_runs(tmp_path):
    broken = _fresh_process.start_restore(_spec(str(tmp_path / "missing")), str(tmp_path))
    out, err = broken.communicate(timeout=60)
    assert broken.returncode not in (0, None) and "missing" in err, f"got exit {broken.returncode}: {err[-300:]}"
    good = _fresh_process.start_restore(_spec(_savepoint(tmp_path / "sp")), str(tmp_path))
    out, _ = good.communicate(timeout=60)
    assert good.returncode == 0 and _read_bytes(out) == _wanted(), f"got exit {good.returncode}"


def _start_slow(tmp_path, monkeypatch, name):
    """A restore that sleeps for a minute (its subject's module does)."""
    folder = tmp_path / "mod"
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.py").write_text("import time\ntime.sleep(60)\n")
    monkeypatch.syspath_prepend(str(folder))
    return _fresh_process.start_restore(_spec(_savepoint(tmp_path / name), [name]), str(tmp_path))


def test_an_abandoned_restore_is_ended_before_the_next_starts(tmp_path, monkeypatch):
    slow = _start_slow(tmp_path, monkeypatch, "sleepy_module_for_fresh_restore")
    good = _fresh_process.start_restore(_spec(_savepoint(tmp_path / "two")), str(tmp_path))
    assert slow.returncode == -9, f"got {slow.returncode}, the abandoned restore should have been killed"
    out, _ = good.communicate(timeout=60)
    assert good.returncode == 0 and _read_bytes(out) == _wanted(), f"got exit {good.returncode}"


def test_a_timeout_leaves_the_restore_running_until_killed(tmp_path, monkeypatch):
    slow = _start_slow(tmp_path, monkeypatch, "slow_module_for_fresh_restore")
    with pytest.raises(subprocess.TimeoutExpired):
        slow.communicate(timeout=0.2)
    assert slow.returncode is None, f"got {slow.returncode}, should still run after the timeout"
    slow.kill()
    slow.communicate(timeout=60)
    assert slow.returncode == -9, f"got {slow.returncode}, should be killed"


def test_without_fork_each_restore_is_a_new_interpreter(tmp_path, monkeypatch):
    monkeypatch.delattr(os, "fork")
    restore = _fresh_process.start_restore(_spec(_savepoint(tmp_path / "sp")), str(tmp_path))
    assert not isinstance(restore, _fresh_process.Restore), "without fork there is no zygote"
    out, err = restore.communicate(timeout=120)
    assert restore.returncode == 0 and _read_bytes(out) == _wanted(), f"got exit {restore.returncode}: {err[-300:]}"


def test_a_forked_harness_process_starts_its_own_zygote(tmp_path):
    first = _fresh_process.start_restore(_spec(_savepoint(tmp_path / "one")), str(tmp_path))
    first.communicate(timeout=60)
    parents = _fresh_process._zygote.proc.pid
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # a lane-one process, forked from a harness that has a zygote
        code = 1
        try:
            restore = _fresh_process.start_restore(_spec(_savepoint(tmp_path / "two")), str(tmp_path))
            out, _ = restore.communicate(timeout=60)
            ok = restore.returncode == 0 and _read_bytes(out) == _wanted()
            os.write(write, f"{int(ok)} {_fresh_process._zygote.proc.pid}".encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    reply = os.read(read, 100).decode().split()
    os.waitpid(pid, 0)
    assert reply and reply[0] == "1", f"got {reply}, the forked process should restore through a zygote"
    assert int(reply[1]) != parents, "the forked process should start its own zygote, not share its parent's"
    again = _fresh_process.start_restore(_spec(_savepoint(tmp_path / "three")), str(tmp_path))
    out, _ = again.communicate(timeout=60)
    assert again.returncode == 0 and _fresh_process._zygote.proc.pid == parents, "the parent keeps its own zygote"


def test_a_restore_whose_zygote_is_killed_runs_again_in_a_new_interpreter(tmp_path, monkeypatch):
    folder = tmp_path / "mod"
    folder.mkdir()
    (folder / "brief_pause_for_fresh_restore.py").write_text("import time\ntime.sleep(1)\n")
    monkeypatch.syspath_prepend(str(folder))
    restore = _fresh_process.start_restore(_spec(_savepoint(tmp_path / "sp"), ["brief_pause_for_fresh_restore"]),
                                           str(tmp_path))
    zygote = _fresh_process._zygote.proc
    zygote.kill()  # from outside, while its child runs
    zygote.wait()
    out, err = restore.communicate(timeout=120)
    assert restore.returncode == 0 and _read_bytes(out) == _wanted(), (
        f"got exit {restore.returncode}: {err[-300:]}, should restore again in a new interpreter")
    again = _fresh_process.start_restore(_spec(_savepoint(tmp_path / "two")), str(tmp_path))
    assert isinstance(again, _fresh_process.Restore) and _fresh_process._zygote.proc is not zygote, (
        "the next restore should start a new zygote")
    out, _ = again.communicate(timeout=60)
    assert again.returncode == 0 and _read_bytes(out) == _wanted(), f"got exit {again.returncode}"


# -- a foreign process --------------------------------------------------------------------------
def test_the_foreign_environment_differs_from_the_writers_in_each_way():
    from conformance._fresh.foreign import LOCALE_CANDIDATES, foreign_environment

    for writer_tz in (None, "NST+3:30NDT,M3.2.0,M11.1.0", "UTC"):
        env = {} if writer_tz is None else {"TZ": writer_tz}
        env["PYTHONHASHSEED"] = "7"
        foreign = foreign_environment(env)
        assert foreign.get("TZ") not in (None, writer_tz), f"got TZ {foreign.get('TZ')}, should differ from {writer_tz}"
        assert ":" in foreign["TZ"].split(",")[0], f"got TZ {foreign['TZ']}, should have a half-hour offset"
        assert "," in foreign["TZ"], f"got TZ {foreign['TZ']}, should have daylight saving rules"
        assert foreign["PYTHONHASHSEED"] == "8", f"got hash seed {foreign['PYTHONHASHSEED']}, should be 8 (7 + 1)"
        assert foreign[LOCALE_CANDIDATES], "should name locales to try"
    assert foreign_environment({})["PYTHONHASHSEED"] not in ("", "0"), "a random writer seed gets a fixed other one"
    only_seed = foreign_environment({"TZ": "UTC"}, ("hash seed",))
    assert only_seed["TZ"] == "UTC" and LOCALE_CANDIDATES not in only_seed, f"got {only_seed}, should change the seed only"
    with pytest.raises(ValueError, match="unknown process differences"):
        foreign_environment({}, ("moon phase",))


def test_the_restore_runs_in_another_time_zone_and_hash_seed(tmp_path):
    restore = _fresh_process.start_restore(_spec(_savepoint(tmp_path / "sp")), str(tmp_path))
    out, err = restore.communicate(timeout=60)
    assert restore.returncode == 0, f"got exit {restore.returncode}: {err}"
    foreign = json.loads(out)["foreign"]
    assert foreign["time zone"] != os.environ.get("TZ", "(the writer's)"), f"got {foreign}, should be another zone"
    assert foreign["hash seed"] != os.environ.get("PYTHONHASHSEED"), f"got {foreign}, should be another hash seed"


def test_a_serializer_writing_local_time_is_caught_and_the_time_zone_named():
    sys.path.insert(0, os.path.dirname(__file__))
    try:
        from zoo import ZOO
    finally:
        sys.path.pop(0)
    from conformance import check_serializer

    check_id, make = ZOO["timestamps in the process's local time"]
    report = check_serializer(make(), examples=10, seed=3, checks=("backends",), backends=("heap",))
    failed = {r.id: r.message for r in report if r.status == "failed"}
    assert list(failed) == ["backends.fresh_process"], f"got failures {failed}, should be backends.fresh_process only"
    assert "another time zone (NST+3:30" in failed["backends.fresh_process"], (
        f"got {failed['backends.fresh_process']!r}, should name the time zone as the difference that mattered")
