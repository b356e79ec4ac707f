"""api: the subject is usable at all (every other check needs this)."""

from __future__ import annotations

from reference import TypeSerializer, TypeSerializerSnapshot

from .._engine.registry import Violation, check


@check(id="api.valid", family="roundtrip")
def api_valid(ctx) -> None:  # type: ignore[no-untyped-def]
    """The serializer is a TypeSerializer with sane length/immutability and a snapshot."""
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
