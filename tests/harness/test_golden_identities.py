"""Class identities are part of the savepoint format: every name an earlier release of the
built-in subjects recorded in their golden files still resolves, to the same public class."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import conformance._user_serializers  # noqa: F401  (a built-in subject's own snapshot class, in its golden files)
from reference import class_identity, snapshot_class, snapshot_from_bytes

#: Names release 0.1.0 wrote that are not a class's own identity today.
ALIASES = {"reference.serializers._avro:AvroSerializerSnapshot": "reference.serializers:AvroSerializerSnapshot"}
GOLDEN = Path(__file__).resolve().parents[2] / "conformance" / "_builtins" / "golden"


def _identities_in(data: bytes) -> set[str]:
    return {m.decode() for m in re.findall(rb"reference[A-Za-z0-9_.]*:[A-Za-z_][A-Za-z0-9_]*", data)}


def test_every_identity_release_0_1_0_recorded_resolves_to_the_same_public_class():
    if not GOLDEN.is_dir():
        pytest.skip(f"no golden files at {GOLDEN} (not a source checkout)")
    files = sorted(GOLDEN.glob("*/0.1.0/snapshot.bin"))
    assert len(files) >= 16, f"got {len(files)} golden snapshots of release 0.1.0, should be at least 16"
    seen = set()
    for file in files:
        data = file.read_bytes()
        snapshot_from_bytes(data)  # the whole snapshot still reads
        for identity in _identities_in(data):
            seen.add(identity)
            public = ALIASES.get(identity, identity)
            assert not any(part.startswith("_") for part in re.split(r"[.:]", public)), (
                f"got {identity} recorded in {file}, should be a public name (or aliased to one)")
            resolved = class_identity(snapshot_class(identity))
            assert resolved == public, f"got {resolved} for {identity} recorded in {file}, should be {public}"
    assert "reference.serializers._avro:AvroSerializerSnapshot" in seen, f"got {sorted(seen)}"

