"""api: the subject is usable at all (every other check needs this)."""

from __future__ import annotations

from reference import TypeSerializer, TypeSerializerSnapshot

from .._property import guarded
from .._registry import Violation, check


@check(id="api.valid", family="roundtrip")
def api_valid(ctx) -> None:  # type: ignore[no-untyped-def]
    """The serializer is a TypeSerializer with sane length/immutability and a snapshot, and
    create_instance() round-trips."""
    serializer = ctx.serializer()
    if not isinstance(serializer, TypeSerializer):
        raise Violation(f"got a {type(serializer).__name__}, should be a reference.TypeSerializer")
    length = serializer.length
    if type(length) is not int or not (length == -1 or length > 0):
        raise Violation(f"length is {length!r}, should be -1 (variable) or a positive byte count")
    immutable = serializer.is_immutable_type
    if type(immutable) is not bool:
        raise Violation(f"is_immutable_type is {immutable!r}, should be True or False")
    snapshot = serializer.snapshot_configuration()
    if not isinstance(snapshot, TypeSerializerSnapshot):
        raise Violation(
            f"snapshot_configuration() returned {type(snapshot).__name__}, should return a "
            "reference.TypeSerializerSnapshot"
        )
    version = snapshot.get_current_version()
    if type(version) is not int or not 0 <= version < 2**31:
        raise Violation(f"snapshot get_current_version() is {version!r}, should be a non-negative int")
    _fresh_instance(serializer, getattr(ctx.subject, "schema", None))


def _fresh_instance(serializer, schema) -> None:  # type: ignore[no-untyped-def]
    """create_instance() (what a restore fills a new field with) is the schema's zero when the
    subject has a schema, and a value the serializer writes and reads back unless it is None
    (a type without a zero, as Flink allows)."""
    from ._roundtrip import expect_equal, read_one, write

    instance = guarded("create_instance", serializer.create_instance)
    if schema is not None:
        import strategies

        expect_equal(instance, strategies.zero_value(schema), "create_instance()")
    if instance is not None:
        expect_equal(read_one(serializer, write(serializer, instance)), instance,
                     "reading back create_instance() written by serialize")
