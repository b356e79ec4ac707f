"""Pickle serializer: the Kryo analogue. Works for any picklable value, never evolves.

This is the only place in ``reference`` that unpickles, and only state DATA that this
serializer wrote; snapshots never hold pickle. Its snapshot is a simple one, so any change that
turns it into another serializer (also inside a List, Map, Row...) is incompatible.
"""

from __future__ import annotations

import pickle
from typing import Any

from .._bounds import pickle_length_problem
from .._errors import PickleNotAllowedError, SerializationError
from .._io import DataInputView, DataOutputView
from .._serializer import TypeSerializer
from .._snapshot import (
    PickledSerializerSnapshot,
    SimpleTypeSerializerSnapshot,
    TypeSerializerSnapshot,
    reading_allows_pickle,
)

__all__ = ["PickleSerializer", "PickleSerializerSnapshot", "PICKLE_PROTOCOL", "snapshot_unpickles"]

#: Fixed so that equal values give equal bytes on every supported Python (3.8+ reads it).
PICKLE_PROTOCOL = 5


class PickleSerializer(TypeSerializer[Any]):
    """int length, then ``pickle.dumps(value, protocol=5)``. Unpickling runs code named by the
    data: use it only for state you wrote yourself.

    One restored from a snapshot read from bytes without ``allow_pickle=True`` refuses to
    unpickle (``PickleNotAllowedError``; ``copy_serialized`` still copies the bytes): the
    snapshot's bytes are no opt-in. One the caller constructs unpickles."""

    __module__ = "reference.serializers"  # stable identity in savepoints

    #: True on a serializer restored from untrusted snapshot bytes (see the class docstring).
    _refuses_unpickling = False

    @classmethod
    def _restored(cls, allow_pickle: bool) -> PickleSerializer:
        serializer = cls()
        if not allow_pickle:
            serializer._refuses_unpickling = True
        return serializer

    def serialize(self, value: Any, target: DataOutputView) -> None:
        try:
            payload = pickle.dumps(value, protocol=PICKLE_PROTOCOL)
        except Exception as exc:
            raise SerializationError(
                f"PickleSerializer cannot pickle {type(value).__name__} {value!r:.80}: "
                f"{type(exc).__name__}: {exc}; use a picklable value or a dedicated serializer"
            ) from None
        target.write_int(len(payload))
        target.write(payload)

    def _payload(self, source: DataInputView) -> bytes:
        size = source.read_int()
        if size < 0 or size > source.available():
            raise SerializationError(
                f"PickleSerializer: payload length {size} with {source.available()} bytes left; "
                "the data is truncated or corrupt"
            )
        return source.read_fully(size)

    def deserialize(self, source: DataInputView) -> Any:
        if self._refuses_unpickling:
            raise PickleNotAllowedError(
                "this PickleSerializer was restored from a snapshot read from bytes, and "
                "unpickling a record runs code chosen by the data; read the snapshot with "
                "allow_pickle=True (snapshot_from_bytes, read_serializer_snapshot, "
                "read_versioned_snapshot) for data you trust, or restore a backend with "
                "allow_pickle={'<state name>'}. Nothing was unpickled"
            )
        payload = self._payload(source)
        problem = pickle_length_problem(payload)
        if problem is not None:
            raise SerializationError(
                f"PickleSerializer: the {len(payload)}-byte payload is not a well-formed pickle "
                f"({problem}); the data is corrupt"
            )
        try:
            return pickle.loads(payload)
        except Exception as exc:
            # A damaged pickle can fail in any way (unknown opcode, missing global, a bad
            # constructor call...): all of them mean the same thing to the caller.
            raise SerializationError(
                f"PickleSerializer: cannot unpickle a {len(payload)}-byte payload "
                f"({type(exc).__name__}: {exc}); the data is corrupt or needs a class that is "
                "not importable here"
            ) from None

    def copy_serialized(self, source: DataInputView, target: DataOutputView) -> None:
        payload = self._payload(source)
        target.write_int(len(payload))
        target.write(payload)

    def copy(self, value: Any) -> Any:
        # Through pickle itself: deep, and right for exactly the values this serializer takes.
        try:
            return pickle.loads(pickle.dumps(value, protocol=PICKLE_PROTOCOL))
        except Exception as exc:
            raise SerializationError(
                f"PickleSerializer cannot copy {type(value).__name__}: {exc}"
            ) from None

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self).__qualname__)

    def __repr__(self) -> str:
        return "PickleSerializer()"

    def snapshot_configuration(self) -> PickleSerializerSnapshot:
        return PickleSerializerSnapshot()


class PickleSerializerSnapshot(SimpleTypeSerializerSnapshot[Any]):
    __module__ = "reference.serializers"  # stable identity in savepoints

    def __init__(self) -> None:
        super().__init__(PickleSerializer)
        #: Whether the serializer it restores may unpickle: True for a serializer's own
        #: snapshot, the reader's ``allow_pickle`` for one read from bytes.
        self._allows_unpickling = True

    def read_snapshot(self, read_version: int, source: DataInputView) -> None:
        super().read_snapshot(read_version, source)
        self._allows_unpickling = reading_allows_pickle()

    def restore_serializer(self) -> PickleSerializer:
        return PickleSerializer._restored(self.__dict__.get("_allows_unpickling", True))


def snapshot_unpickles(snapshot: TypeSerializerSnapshot[Any] | None) -> bool:
    """Whether reading data with the serializer this snapshot restores would unpickle: the
    snapshot or one nested in it (``nested_snapshots``, at any depth) is Pickle's or the pre-1.7
    pickled form. Nothing is restored to find out."""
    stack = [] if snapshot is None else [snapshot]
    while stack:
        current = stack.pop()
        if isinstance(current, (PickleSerializerSnapshot, PickledSerializerSnapshot)):
            return True
        stack.extend(getattr(current, "nested_snapshots", ()) or ())
    return False
