"""A row state whose serializer snapshot is the one Flink 1.10 wrote, held to Flink 2.3.

The built-in ``flink_row_1_10`` certifies the reference's row restored from Flink 1.10's snapshot
(outer version 2: rows without a kind) and migrated by Flink 2.3's row. Here Flink itself says
what that migration is. From each savepoint Flink wrote (SavepointJob), the ``row`` state
(``Row(String, Long, Double)``) is written again as a Flink 1.10 job held it: its snapshot in
1.10's form (``RowSerializerSnapshot.in_flink_outer_version(2)``), each value without a row kind (a 1.10 row had none, so the
UPDATE_AFTER rows the job wrote are INSERT rows there). Then, in one JVM run:

- Flink 2.3 restores that savepoint with its own ``Row(String, Long, Double)``, which migrates
  the state on restore; it must read back every value, each row an INSERT row;
- ``migrate_flink_savepoint`` migrates the same savepoint with the row serializer Flink 2.3
  snapshots; Flink must restore the result and read back the same values.

The reference's own verdict must be Flink's: compatible after migration (the 1.10 form read
as-is would misread every value, which Flink reading them back shows it does not do).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import savepoints

from reference import snapshot_from_bytes, snapshot_to_bytes
from reference.backends import ValueStateDescriptor, migrate_flink_savepoint
from reference.savepoint import StateReplacement, read_flink_savepoint, write_flink_savepoint
from reference.serializers import RowSerializer

pytestmark = [pytest.mark.flink, pytest.mark.xdist_group("flink")]

CASES = ("rocksdb_inline_string", "hashmap_files_long", "hashmap_compressed_tuple")
OPERATOR, STATE = "keyed-states", "row"


def _row_state(directory: Path) -> Any:
    return read_flink_savepoint(directory).operator(OPERATOR).keyed_state(STATE)


def _as_flink_1_10(directory: Path, out: Path) -> tuple[Path, Any, Any]:
    """The savepoint at ``directory`` with its row state as Flink 1.10 held it; with the old
    snapshot read back from the bytes written and Flink 2.3's row serializer of the savepoint."""
    state = _row_state(directory)
    current = state.value_serializer.restore_serializer()
    without = RowSerializer(current.fields, supports_row_kind=False)
    old = without.snapshot_configuration().in_flink_outer_version(2)
    written = snapshot_to_bytes(old, dialect="flink")
    legacy = snapshot_from_bytes(written).restore_serializer()

    def without_kind(value: bytes) -> bytes:
        return legacy.to_bytes(tuple(current.from_bytes(value)))  # type: ignore[no-any-return]

    path = write_flink_savepoint(read_flink_savepoint(directory), out,
                                 {OPERATOR: {STATE: StateReplacement({"VALUE_SERIALIZER": old}, without_kind)}})
    return Path(path), snapshot_from_bytes(written), current


@pytest.fixture(scope="module")
def restored(flink_savepoints, flink_restore, tmp_path_factory) -> dict[str, Any]:
    """Per case: the verdict of the reference, what the reader reads from the 1.10 form, what
    Flink should read back, and Flink's restores of the 1.10 form and of its migration."""
    work = tmp_path_factory.mktemp("row-1-10")
    out: dict[str, Any] = {}
    requests = []
    for name in CASES:
        directory, expected = flink_savepoints[name]
        old_form, old_snapshot, current = _as_flink_1_10(directory, work / f"{name}-1.10")
        migrated = migrate_flink_savepoint(old_form, work / f"{name}-migrated",
                                           {OPERATOR: {STATE: ValueStateDescriptor(STATE, current)}})
        types = {STATE: "row<string,long,double>"}
        requests.append(savepoints.RestoreRequest.of(f"{name}-1.10", old_form, expected, state_types=types))
        requests.append(savepoints.RestoreRequest.of(f"{name}-migrated", Path(migrated), expected, state_types=types))
        want = []
        for line in savepoints.restorable(expected):
            entry = json.loads(line)
            if entry.get("uid") == OPERATOR and entry["state"] == STATE:
                entry["value"]["row_kind"] = "INSERT"
            want.append(savepoints.canonical(entry))
        rows = [e for e in expected["operators"][OPERATOR]["states"][STATE]["entries"]]
        out[name] = {
            "verdict": current.snapshot_configuration().resolve_schema_compatibility(old_snapshot),
            "kinds": {e["value"]["row_kind"] for e in rows},
            "read": sorted(repr(tuple(e.value)) for e in _row_state(old_form).entries()),
            "read_migrated": sorted(repr(tuple(e.value)) for e in _row_state(Path(migrated)).entries()),
            "migrated_snapshot": snapshot_to_bytes(_row_state(Path(migrated)).value_serializer, dialect="flink"),
            "current_snapshot": snapshot_to_bytes(current.snapshot_configuration(), dialect="flink"),
            "want": sorted(want),
        }
    for request_name, result in flink_restore(requests).items():
        name, _, form = request_name.rpartition("-")
        out[name][form] = result
    return out


@pytest.mark.parametrize("case", CASES)
def test_the_cases_hold_rows_of_another_kind_than_insert(restored, case):
    kinds = restored[case]["kinds"]
    assert kinds - {"INSERT"}, f"{case}: got row kinds {sorted(kinds)}, should hold some other than INSERT (else the " \
                               "1.10 form, which has none, would lose nothing)"


@pytest.mark.parametrize("case", CASES)
def test_the_reference_judges_the_1_10_row_compatible_after_migration(restored, case):
    verdict = restored[case]["verdict"]
    assert verdict.is_compatible_after_migration(), (
        f"got {verdict}, should be compatible after migration [{case}: Flink 1.10's row snapshot against Flink 2.3's "
        "row serializer]")


@pytest.mark.parametrize("case", CASES)
def test_flink_restores_the_1_10_row_reading_every_value_as_an_insert_row(restored, case):
    result, want = restored[case]["1.10"], restored[case]["want"]
    assert result.verdict == "restored", f"{case}: Flink refused the 1.10 form: {result.error}"
    got = savepoints.read_back(result)
    assert [g for g in got if f'"state": "{STATE}"' in g], f"{case}: Flink read no row"
    assert got == want, (f"{case}: Flink read back differs; missing {sorted(set(want) - set(got))[:3]}, "
                         f"unexpected {sorted(set(got) - set(want))[:3]}")


@pytest.mark.parametrize("case", CASES)
def test_flink_restores_the_row_the_reference_migrated(restored, case):
    found = restored[case]
    assert found["migrated_snapshot"] == found["current_snapshot"], (
        f"{case}: got the snapshot {found['migrated_snapshot'].hex()}, should be Flink 2.3's row serializer's "
        f"{found['current_snapshot'].hex()} [the migrated row state]")
    assert found["read_migrated"] == found["read"], (
        f"{case}: the migration changed values: got {found['read_migrated'][:3]}, should be {found['read'][:3]}")
    result, want = found["migrated"], found["want"]
    assert result.verdict == "restored", f"{case}: Flink refused the migrated savepoint: {result.error}"
    got = savepoints.read_back(result)
    assert got == want, (f"{case}: Flink read back differs; missing {sorted(set(want) - set(got))[:3]}, "
                         f"unexpected {sorted(set(got) - set(want))[:3]}")
