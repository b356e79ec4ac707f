"""State descriptors: a state's name, kind and serializers (Flink's ``StateDescriptor``)."""

from __future__ import annotations

from typing import Any

from .._serializer import TypeSerializer

__all__ = ["StateDescriptor", "ValueStateDescriptor", "ListStateDescriptor", "MapStateDescriptor"]


def _check(what: str, serializer: object, name: str) -> None:
    if not isinstance(serializer, TypeSerializer):
        raise TypeError(
            f"state {name!r}: the {what} must be a reference.TypeSerializer, got "
            f"{type(serializer).__name__}"
        )


class StateDescriptor:
    """Base of the three descriptors. ``namespace_serializer`` (optional) enables Flink-style
    namespaces (windows) through ``state.set_current_namespace(ns)``; without it the state has
    the single default namespace."""

    kind: str = ""

    def __init__(self, name: str, namespace_serializer: TypeSerializer[Any] | None = None) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"a state name must be a non-empty string, got {name!r}")
        if namespace_serializer is not None:
            _check("namespace serializer", namespace_serializer, name)
        self.name = name
        self.namespace_serializer = namespace_serializer

    @property
    def value_serializer(self) -> TypeSerializer[Any]:
        raise NotImplementedError

    @property
    def user_key_serializer(self) -> TypeSerializer[Any] | None:
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class ValueStateDescriptor(StateDescriptor):
    """One value per key (and namespace)."""

    kind = "value"

    def __init__(
        self, name: str, serializer: TypeSerializer[Any], namespace_serializer: TypeSerializer[Any] | None = None
    ) -> None:
        super().__init__(name, namespace_serializer)
        _check("value serializer", serializer, name)
        self.serializer = serializer

    @property
    def value_serializer(self) -> TypeSerializer[Any]:
        return self.serializer


class ListStateDescriptor(StateDescriptor):
    """A list of elements per key (and namespace); elements are serialized one by one."""

    kind = "list"

    def __init__(
        self,
        name: str,
        element_serializer: TypeSerializer[Any],
        namespace_serializer: TypeSerializer[Any] | None = None,
    ) -> None:
        super().__init__(name, namespace_serializer)
        _check("element serializer", element_serializer, name)
        self.element_serializer = element_serializer

    @property
    def value_serializer(self) -> TypeSerializer[Any]:
        return self.element_serializer


class MapStateDescriptor(StateDescriptor):
    """A map of user keys to values per key (and namespace)."""

    kind = "map"

    def __init__(
        self,
        name: str,
        key_serializer: TypeSerializer[Any],
        value_serializer: TypeSerializer[Any],
        namespace_serializer: TypeSerializer[Any] | None = None,
    ) -> None:
        super().__init__(name, namespace_serializer)
        _check("map key serializer", key_serializer, name)
        _check("map value serializer", value_serializer, name)
        self.key_serializer = key_serializer
        self._value_serializer = value_serializer

    @property
    def value_serializer(self) -> TypeSerializer[Any]:
        return self._value_serializer

    @property
    def user_key_serializer(self) -> TypeSerializer[Any]:
        return self.key_serializer
