"""``TypeSerializer``: Flink's serializer contract, spelled the Python way."""

from __future__ import annotations

import abc
import copy as _copy
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ._errors import SerializationError
from ._io import DataInputView, DataOutputView

if TYPE_CHECKING:
    from ._snapshot import TypeSerializerSnapshot

T = TypeVar("T")

__all__ = ["TypeSerializer"]


class TypeSerializer(abc.ABC, Generic[T]):
    """Writes and reads values of one type, and snapshots its own configuration.

    Subclasses implement ``serialize``, ``deserialize`` and ``snapshot_configuration``; the other
    members have defaults that are correct for a serializer keeping no state between calls
    (``copy`` deep-copies unless ``is_immutable_type``, ``duplicate`` returns ``self``; the table
    in docs/semantics.md says when to override each). ``is_immutable_type`` and ``length`` are
    read-only properties, read and never called: override them with ``@property``.
    Equality is by class and configuration: by default the instance ``__dict__`` (entries whose
    name starts with ``_cache`` are ignored), so a serializer whose configuration lives in plain
    attributes gets a correct ``__eq__`` for free.
    """

    @abc.abstractmethod
    def serialize(self, value: T, target: DataOutputView) -> None: ...

    @abc.abstractmethod
    def deserialize(self, source: DataInputView) -> T: ...

    @abc.abstractmethod
    def snapshot_configuration(self) -> TypeSerializerSnapshot[T]: ...

    def copy(self, value: T) -> T:
        return value if self.is_immutable_type else _copy.deepcopy(value)

    def copy_serialized(self, source: DataInputView, target: DataOutputView) -> None:
        """Copy exactly one serialized record from ``source`` to ``target``."""
        self.serialize(self.deserialize(source), target)

    def duplicate(self) -> TypeSerializer[T]:
        return self

    def create_instance(self) -> T:
        return None  # type: ignore[return-value]

    @property
    def is_immutable_type(self) -> bool:
        return False

    @property
    def length(self) -> int:
        return -1

    # -- helpers every serializer gets -------------------------------------------------------
    def to_bytes(self, value: T) -> bytes:
        out = DataOutputView()
        self.serialize(value, out)
        return out.getvalue()

    def from_bytes(self, data: bytes) -> T:
        """Read one value; bytes left over are an error (they mean a greedy or short read)."""
        source = DataInputView(data)
        value = self.deserialize(source)
        if source.available():
            raise SerializationError(
                f"{self!r} left {source.available()} of {len(data)} bytes unread after one "
                "value; the bytes were not written by this serializer or are corrupt"
            )
        return value

    def _configuration(self) -> dict[str, Any]:
        return {k: v for k, v in vars(self).items() if not k.startswith("_cache")}

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return type(other) is type(self) and other._configuration() == self._configuration()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(type(self).__qualname__)

    def __repr__(self) -> str:
        config = ", ".join(f"{k}={v!r}" for k, v in self._configuration().items())
        return f"{type(self).__name__}({config})"
