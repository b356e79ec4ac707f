"""How fast the strategies generate: schemas + values, and schemas + evolutions + values.

Run: ``python bench/bench_strategies.py [--examples N]``. Figures are examples per second on
one core, through hypothesis' own engine (``@given``), next to a baseline measured in the same
run: the same engine drawing one flat tuple of ints (hypothesis' fixed cost per example). The
target is >= 200 nested examples/s. The last row draws 20 schemas and values per test case,
which shares hypothesis' fixed cost per test case and shows the strategies' own rate.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import strategies
from reference import types as t


def _nodes(schema: Any) -> int:
    from strategies._evolutions import _sites

    return len(_sites(schema))


def _run(n: int, body: Callable[[Any], Any]) -> tuple[float, int]:
    stats = {"examples": 0, "nodes": 0}

    @settings(max_examples=n, database=None, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def go(data: Any) -> None:
        stats["examples"] += 1
        stats["nodes"] += body(data) or 0

    start = time.perf_counter()
    go()
    elapsed = time.perf_counter() - start
    return stats["examples"] / elapsed, stats["nodes"] // max(stats["examples"], 1)


def baseline(data: Any) -> int:
    data.draw(st.tuples(st.integers(), st.integers(), st.integers()))
    return 1


def schema_and_values(data: Any) -> int:
    schema = data.draw(strategies.schemas())
    data.draw(strategies.values(schema))
    return _nodes(schema)


def nested_schema_and_values(data: Any) -> int:
    schema = data.draw(strategies.schemas(families=("row", "list", "map", "tuple", "nullable", "pojo")))
    data.draw(strategies.values(schema))
    return _nodes(schema)


def schema_evolution_values(data: Any) -> int:
    schema = data.draw(strategies.schemas())
    data.draw(strategies.evolutions(schema))
    data.draw(strategies.values(schema))
    return _nodes(schema)


def batch_of_20(data: Any) -> int:
    nodes = 0
    for _ in range(20):
        nodes += schema_and_values(data)
    return nodes


def fixed_schema_values(data: Any) -> int:
    data.draw(strategies.values(_FIXED))
    return _nodes(_FIXED)


_FIXED = t.RowType(tuple(
    t.RowField(name, typ) for name, typ in [
        ("id", t.LongType()), ("name", t.StringType()), ("score", t.DoubleType()),
        ("tags", t.ListType(t.StringType())), ("attrs", t.MapType(t.StringType(), t.IntType())),
        ("pos", t.TupleType((t.FloatType(), t.FloatType()))),
        ("inner", t.RowType((t.RowField("a", t.IntType()), t.RowField("b", t.BytesType())))),
    ]
))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--examples", type=int, default=1000)
    args = parser.parse_args()
    base, _ = _run(args.examples, baseline)
    print(f"{'workload':44} {'examples/s':>11} {'nodes/ex':>9} {'x baseline':>11}")
    print(f"{'baseline: flat tuple of 3 ints':44} {base:11.0f} {1:9d} {1.0:11.2f}")
    for name, body in [
        ("fixed 7-field nested row: values only", fixed_schema_values),
        ("schemas() + values", schema_and_values),
        ("nested families schemas() + values", nested_schema_and_values),
        ("schemas() + evolutions() + values", schema_evolution_values),
    ]:
        rate, nodes = _run(args.examples, body)
        print(f"{name:44} {rate:11.0f} {nodes:9d} {rate / base:11.2f}")
    # Many schemas per test case: hypothesis' fixed cost per test case is shared, what is left
    # is the strategies' own cost per schema + value.
    rate, nodes = _run(max(args.examples // 20, 10), batch_of_20)
    print(f"{'schemas() + values, 20 per test case':44} {rate * 20:11.0f} {nodes // 20:9d} "
          f"{rate * 20 / base:11.2f}")


if __name__ == "__main__":
    main()
