"""The model a table is judged against: a dict plus ``apply_update``, and the outcome each
operation must have (value, error kind, or which entries of a bulk update fail)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from reference.table import UpdateContract

__all__ = ["Expected", "TableModel", "NO_VALUE"]

NO_VALUE = object()


@dataclass(frozen=True)
class Expected:
    """``kind`` is "ok" (with ``value`` for reads), "error" (with ``error``: not_found,
    update_failed, io, unsupported) or "batch" (``failures``: entry position → error kind)."""

    kind: str
    value: Any = NO_VALUE
    error: str = ""
    at_call: bool = False
    failures: dict[int, str] = field(default_factory=dict)

    def describe(self) -> str:
        from .._engine.canonical import show

        if self.kind == "ok":
            return "success" if self.value is NO_VALUE else f"result {show(self.value)}"
        if self.kind == "batch":
            return f"BatchWriteError with failed entries {self.failures}" if self.failures else "success"
        when = " raised when the method is called" if self.at_call else ""
        return f"{ERROR_KINDS.get(self.error, self.error)}{when}"


#: How each error kind of the model reads in a message ("should be <this>").
ERROR_KINDS = {
    "not_found": "a not_found error (RecordNotFoundError: the record is missing)",
    "update_failed": "an update_failed error (UpdateFailedError from the operator)",
    "io": "an io error (the store's failure, passed on)",
    "unsupported": "an unsupported error (UnsupportedTableOperationError)",
}


OK = Expected("ok")


def error(kind: str, at_call: bool = False) -> Expected:
    return Expected("error", error=kind, at_call=at_call)


class TableModel:
    """What a correct table does, one operation at a time, in the order they were issued."""

    def __init__(self, apply_update: Callable[[Any, Any], Any], supports_updates: bool) -> None:
        self.apply_update = apply_update
        self.supports_updates = supports_updates
        self.data: dict[Any, Any] = {}
        self.puts = 0
        self.updates = 0
        #: kind -> how many write calls of that kind go through before the next one fails
        #: (the failure is consumed once)
        self.fatal: dict[str, int] = {}

    def _fails(self, kind: str) -> bool:
        if kind not in self.fatal:
            return False
        if self.fatal[kind]:
            self.fatal[kind] -= 1
            return False
        del self.fatal[kind]
        return True

    def written(self, op: tuple[Any, ...]) -> list[tuple[Any, Any]]:
        """The (key, value-or-update; None for a delete) entries ``op`` sends to the write
        function when nothing fails, from the model's state before ``op``."""
        name, args = op[0], op[1:]
        if name == "put":
            return [(args[0], args[1])]
        if name in ("put_all", "update_all"):
            return [tuple(e) for e in args[0]]  # type: ignore[misc]
        if name == "delete":
            return [(args[0], None)]
        if name == "delete_all":
            return [(k, None) for k in args[0]]
        if name == "update":
            return [(args[0], args[1])] if self.supports_updates else []
        if name == "send":
            key, update, default, contract = args
            if not self.supports_updates:
                return []
            if key in self.data or default is None or contract is UpdateContract.UPDATE_ONLY:
                return [(key, update)]
            return [(key, update), (key, default), (key, update)]
        return []

    def _apply(self, key: Any, update: Any) -> None:
        self.data[key] = self.apply_update(self.data[key], copy.deepcopy(update))
        self.updates += 1

    def expect(self, op: tuple[Any, ...]) -> Expected:
        name = op[0]
        return getattr(self, "_" + name)(*op[1:])

    # one method per operation ------------------------------------------------------------
    def _get(self, key: Any) -> Expected:
        return Expected("ok", value=copy.deepcopy(self.data.get(key)))

    def _get_all(self, keys: list[Any]) -> Expected:
        return Expected("ok", value={k: copy.deepcopy(self.data[k]) for k in keys if k in self.data})

    def _put(self, key: Any, value: Any) -> Expected:
        if self._fails("put"):
            return error("io")
        if value is None:  # Samza: putting None deletes
            self.data.pop(key, None)
        else:
            self.store(key, value)
        return OK

    def _flush(self) -> Expected:
        return OK

    def _delete(self, key: Any) -> Expected:
        if self._fails("delete"):
            return error("io")
        self.data.pop(key, None)
        return OK

    def _delete_all(self, keys: list[Any]) -> Expected:
        for key in keys:
            self.data.pop(key, None)
        return OK

    def _put_all(self, entries: list[tuple[Any, Any]]) -> Expected:
        for key, value in entries:
            if value is None:
                self.data.pop(key, None)
            else:
                self.store(key, value)
        return OK

    def _update(self, key: Any, update: Any) -> Expected:
        if not self.supports_updates:
            return error("unsupported", at_call=True)
        if self._fails("update"):
            return error("io")
        if key not in self.data:
            return error("not_found")
        self._apply(key, update)
        return OK

    def _update_all(self, entries: list[tuple[Any, Any]]) -> Expected:
        if not self.supports_updates:
            return error("unsupported", at_call=True)
        failures: dict[int, str] = {}
        for i, (key, update) in enumerate(entries):
            if key in self.data:
                self._apply(key, update)
            else:
                failures[i] = "not_found"
        return Expected("batch", failures=failures)

    def _send(self, key: Any, update: Any, default: Any, contract: UpdateContract) -> Expected:
        if not self.supports_updates:
            return error("unsupported", at_call=True)
        if self._fails("update"):
            return error("update_failed")
        if key in self.data:
            self._apply(key, update)
            return OK
        if default is None or contract is UpdateContract.UPDATE_ONLY:
            return error("update_failed")
        if not self._fails("put"):
            self.store(key, default)
        # the update is tried even when the default's put failed
        if self._fails("update") or key not in self.data:
            return error("update_failed")
        self._apply(key, update)
        return OK

    def store(self, key: Any, value: Any) -> None:
        self.data[key] = copy.deepcopy(value)
        self.puts += 1

