"""Shared by the strategies' quality tests: check one evolution against the reference."""

from __future__ import annotations

from typing import Any

import strategies
from reference import (
    DataInputView,
    DataOutputView,
    resolve_compatibility,
    snapshot_from_bytes,
    snapshot_to_bytes,
)
from reference.types import serializer_for


def to_bytes(serializer: Any, value: Any) -> bytes:
    out = DataOutputView()
    serializer.serialize(value, out)
    return out.getvalue()


def read_all(serializer: Any, data: bytes) -> Any:
    source = DataInputView(data)
    value = serializer.deserialize(source)
    assert source.available() == 0, (
        f"got {source.available()} bytes left after reading, should be 0 [{serializer!r}]"
    )
    return value


def check_evolution(ev: strategies.SchemaEvolution, old_values: list[Any]) -> None:
    """The reference's verdict equals ``ev.expect`` and, when compatible, migrating through
    the reference (migrate_state over bytes, migrate_element, or the reconfigured serializer)
    gives ``ev.migrate(value)`` for every value."""
    old_serializer = serializer_for(ev.old)
    stored = [to_bytes(old_serializer, v) for v in old_values]
    old_snapshot_bytes = snapshot_to_bytes(old_serializer.snapshot_configuration())
    new_serializer = serializer_for(ev.new)
    strategies.activate(ev.new)  # the new release's classes are the ones loaded now
    old_snapshot = snapshot_from_bytes(old_snapshot_bytes, allow_pickle=True)  # the test's own bytes
    new_snapshot = new_serializer.snapshot_configuration()
    result = resolve_compatibility(new_snapshot, old_snapshot)
    where = f"[{ev.change} at {ev.path}: {ev.old!r} -> {ev.new!r}]"
    assert result.kind == ev.expect, (
        f"got {result.kind} ({result.reason}), should be {ev.expect} {where}"
    )
    if ev.expect == "incompatible":
        assert ev.migrate is None, f"got a migrate function, should be None {where}"
        if ev.reason_contains is not None:
            assert ev.reason_contains in (result.reason or ""), (
                f"got reason {result.reason!r}, should mention {ev.reason_contains!r} {where}"
            )
        reason, at = (result.reason or "").lower(), 0
        for word in ev.reason_where:  # where the change is, outermost first
            found = reason.find(word.lower(), at)
            assert found >= 0, (
                f"got reason {result.reason!r}, should name {word!r} after {reason[:at]!r} "
                f"(the places {ev.reason_where} in order) {where}")
            at = found + len(word)
        return
    assert ev.migrate is not None, f"got no migrate function, should have one {where}"
    if ev.expect == "compatible_as_is":
        for value, data in zip(old_values, stored, strict=True):
            expected = ev.migrate(value)
            got = read_all(new_serializer, data)
            assert strategies.values_equal(got, expected), (
                f"got {got!r} reading old bytes as is, should be {expected!r} {where}"
            )
        return
    if ev.expect == "compatible_with_reconfigured_serializer":
        reconfigured = result.get_reconfigured_serializer()
        for value, data in zip(old_values, stored, strict=True):
            expected = ev.migrate(value)
            got = read_all(reconfigured, data)
            assert strategies.values_equal(got, expected), (
                f"got {got!r} from the reconfigured serializer, should be {expected!r} {where}"
            )
            again = read_all(reconfigured, to_bytes(reconfigured, got))
            assert strategies.values_equal(again, expected), (
                f"got {again!r} after a round trip through the reconfigured serializer, "
                f"should be {expected!r} {where}"
            )
        return
    prior = old_snapshot.restore_serializer()
    for value, data in zip(old_values, stored, strict=True):
        expected = ev.migrate(value)
        target = DataOutputView()
        new_snapshot.migrate_state(prior, new_serializer, DataInputView(data), target)
        got = read_all(new_serializer, target.getvalue())
        assert strategies.values_equal(got, expected), (
            f"got {got!r} from migrate_state, should be {expected!r} {where}"
        )
        element = read_all(prior, data)
        got = new_snapshot.migrate_element(prior, new_serializer, element)
        assert strategies.values_equal(got, expected), (
            f"got {got!r} from migrate_element, should be {expected!r} {where}"
        )
