"""Placeholder: being written (see the open issues)."""

from __future__ import annotations

from typing import Any

from .._serializer import TypeSerializer
from .._snapshot import SimpleTypeSerializerSnapshot


class AvroSerializer(TypeSerializer[Any]):  # pragma: no cover - placeholder
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("AvroSerializer is not written yet")

    def serialize(self, value: Any, target: Any) -> None: ...
    def deserialize(self, source: Any) -> Any: ...
    def snapshot_configuration(self) -> Any: ...


class AvroSerializerSnapshot(SimpleTypeSerializerSnapshot[Any]):  # pragma: no cover - placeholder
    def __init__(self) -> None:
        super().__init__(AvroSerializer)
