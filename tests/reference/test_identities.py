"""Class identities are part of the savepoint format: every built-in answers to a public name
that never changes (the names the built-ins' golden files recorded are tests/harness/test_golden_identities.py)."""

from __future__ import annotations

import importlib
import re

import pytest

import reference
import reference.serializers  # noqa: F401  (defines and registers the built-ins)
from reference import class_identity, snapshot_class

_NAMES = ["Boolean", "Byte", "Short", "Int", "Long", "Float", "Double", "String", "Bytes", "Nullable",
          "List", "Map", "Tuple", "Row", "Pojo", "Enum", "Avro", "Pickle"]
#: The identities built-ins are written under. Pinned: changing one breaks every savepoint
#: that recorded it, so a change here must come with an alias for the old name.
PINNED = sorted(
    [f"reference.serializers:{n}Serializer" for n in _NAMES]
    + [f"reference.serializers:{n}SerializerSnapshot" for n in _NAMES]
    + ["reference:CompositeTypeSerializerSnapshot", "reference:PickledSerializerSnapshot",
       "reference:SimpleTypeSerializerSnapshot"]
    # Flink's state-runtime serializers, read from Flink's own savepoints
    + [f"reference.serializers:{n}SerializerSnapshot" for n in ("VoidNamespace", "Ttl", "Timer", "TimeWindow",
                                                               "GlobalWindow", "Kryo")]
    # the Table runtime's rows (RowData)
    + ["reference.serializers:RowDataSerializerSnapshot", "reference.serializers:RowDataSerializer",
       "reference.serializers:TimestampData"]
)


def _public_object(identity: str) -> object:
    module_name, _, qualname = identity.partition(":")
    obj: object = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("identity", PINNED)
def test_every_builtin_answers_to_its_pinned_public_name(identity):
    cls = _public_object(identity)
    assert class_identity(cls) == identity, f"got {class_identity(cls)}, should be {identity} (pinned)"
    if identity.endswith("Snapshot"):
        assert snapshot_class(identity) is cls, f"got {snapshot_class(identity)}, should be {cls} for {identity}"


def test_no_builtin_identity_names_a_private_module_or_is_unpinned():
    from reference._snapshot import _REGISTRY

    own = sorted(class_identity(cls) for cls in set(_REGISTRY.values()) if cls.__module__.startswith("reference"))
    private = [i for i in own if any(part.startswith("_") for part in re.split(r"[.:]", i))]
    assert not private, f"got built-in identities {private} in private modules, should be public names"
    unpinned = sorted(set(own) - set(PINNED))
    assert not unpinned, f"got built-in snapshot identities {unpinned} that are not pinned in this test, should be"


def test_an_unknown_identity_is_refused_without_importing():
    import sys

    name = "json.decoder:NotASnapshot"
    before = set(sys.modules)
    with pytest.raises(reference.UnknownSnapshotClassError, match="not registered"):
        snapshot_class(name)
    assert set(sys.modules) == before, f"got {sorted(set(sys.modules) - before)} imported, should be none"
