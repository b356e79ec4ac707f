"""The public state interfaces; both backends' state objects are registered as them."""

from __future__ import annotations

import abc

from ._bytes import BytesListState, BytesMapState, BytesValueState
from ._heap import HeapListState, HeapMapState, HeapValueState

__all__ = ["State", "ValueState", "ListState", "MapState"]


class State(abc.ABC):  # noqa: B024 - a marker: implementations are registered
    """A keyed state object: reads and writes the backend's current key, in the namespace set
    by ``set_current_namespace(ns)`` (the default namespace when the descriptor has no
    namespace serializer)."""


class ValueState(State):
    """``value()`` (None when empty), ``update(v)`` (None clears), ``clear()``."""


class ListState(State):
    """``get()`` ([] when empty), ``add(x)``, ``add_all(xs)``, ``update(xs)`` ([] clears),
    ``clear()``; None elements are refused."""


class MapState(State):
    """``put(k, v)``, ``put_all(d)``, ``get(k)``, ``contains(k)``, ``remove(k)``, ``items()``,
    ``keys()``, ``values()`` (in user-key byte order), ``is_empty()``, ``clear()``; a value may
    be None (a null map value), a user key may not."""


ValueState.register(HeapValueState)
ValueState.register(BytesValueState)
ListState.register(HeapListState)
ListState.register(BytesListState)
MapState.register(HeapMapState)
MapState.register(BytesMapState)
