"""Generated classes, values, schemas and evolutions travel to another process (a Spark
worker) by pickle: the receiving process rebuilds the same classes and the oracle runs there."""

from __future__ import annotations

import pickle
import subprocess
import sys
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import strategies

_CHILD = r"""
import pickle, sys
import strategies
evolutions, values = pickle.loads(sys.stdin.buffer.read())
out = []
for ev, value in zip(evolutions, values):
    out.append((strategies.canonical(value), strategies.canonical(ev.migrate(value)), repr(ev.new)))
sys.stdout.buffer.write(pickle.dumps(out))
"""


def test_strategies_evolutions_and_values_unpickle_in_a_fresh_process() -> None:
    cases: list[tuple[Any, Any]] = []

    @settings(max_examples=30, database=None, derandomize=True, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def collect(data: Any) -> None:
        schema = data.draw(strategies.schemas(families=("pojo", "enum", "row", "list", "map")))
        ev = data.draw(strategies.evolutions(schema, verdict="compatible"))
        cases.append((ev, data.draw(strategies.values(schema))))

    collect()
    evs = [ev for ev, _ in cases]
    values = [v for _, v in cases]
    out = subprocess.run([sys.executable, "-c", _CHILD], input=pickle.dumps((evs, values)),
                         capture_output=True, timeout=300)
    assert out.returncode == 0, f"got exit {out.returncode}: {out.stderr.decode()[-2000:]}, should unpickle and run"
    got = pickle.loads(out.stdout)
    for (ev, value), (value_form, migrated_form, new_repr) in zip(cases, got, strict=True):
        assert value_form == strategies.canonical(value), (
            f"got {value_form!r} in the other process, should be {strategies.canonical(value)!r}"
        )
        want = strategies.canonical(ev.migrate(value))
        assert migrated_form == want, f"got {migrated_form!r} migrated there, should be {want!r} [{ev.change}]"
        assert new_repr == repr(ev.new), f"got schema {new_repr}, should be {ev.new!r} (same class names)"
