"""What happens when a state is accessed with a descriptor: compatibility of the descriptor's
serializers with the snapshots of the stored data, and the policy on the verdicts.

Both backends and the Spark jobs call ``plan_access``; it raises for every refused case and
otherwise says which serializers to use from now on and, when the stored values must be
migrated, the one ``MigrationPlan`` that migrates them (``reference.backends._plan``).
``SCHEMA_EVOLUTION_OPTION`` is the config key of the row-evolution policy and
``SCHEMA_EVOLUTION_ENABLED`` the config that turns it on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from .._compat import SchemaCompatibility
from .._errors import StateError, StateMigrationError
from .._serializer import TypeSerializer
from .._snapshot import TypeSerializerSnapshot, resolve_compatibility
from ..serializers._pickle import snapshot_unpickles
from ._descriptors import StateDescriptor
from ._plan import MigrationPlan, migration_plan

__all__ = [
    "SCHEMA_EVOLUTION_OPTION",
    "SCHEMA_EVOLUTION_ENABLED",
    "normalize_config",
    "AccessPlan",
    "plan_access",
    "resolve_key_serializer",
    "describe_snapshot",
    "snapshot_unpickles",
    "serializer_unpickles",
    "normalize_allow_pickle",
    "pickle_allowed",
    "descriptor_unpickles",
]

#: Config key: allow FLIP-527 row evolution (migration of row states). Default False.
SCHEMA_EVOLUTION_OPTION = "state.schema-evolution.enable"
_DEFAULTS: dict[str, Any] = {SCHEMA_EVOLUTION_OPTION: False}
#: The backend config that allows row schema evolution (read-only; pass it as ``config``).
SCHEMA_EVOLUTION_ENABLED: Mapping[str, Any] = MappingProxyType({SCHEMA_EVOLUTION_OPTION: True})


def normalize_config(config: Mapping[str, Any] | None) -> dict[str, Any]:
    """The backend configuration with defaults; unknown keys are refused (a typo would
    otherwise silently keep the default)."""
    result = dict(_DEFAULTS)
    for key, value in (config or {}).items():
        if key not in _DEFAULTS:
            raise StateError(
                f"unknown state backend config key {key!r}; known keys: {sorted(_DEFAULTS)}"
            )
        if key == SCHEMA_EVOLUTION_OPTION and not isinstance(value, bool):
            if isinstance(value, str) and value.lower() in ("true", "false"):
                value = value.lower() == "true"
            else:
                raise StateError(f"config {key!r} must be True or False, got {value!r}")
        result[key] = value
    return result


def serializer_unpickles(serializer: TypeSerializer[Any] | None) -> bool:
    """Whether ``serializer`` (a caller's choice, e.g. a descriptor's) reads through pickle."""
    return serializer is not None and snapshot_unpickles(serializer.snapshot_configuration())


def normalize_allow_pickle(allow_pickle: bool | Iterable[str] | None) -> bool | frozenset[str]:
    """``allow_pickle`` as the backends and the Spark jobs take it (True: every state; a
    collection of state names; False or None: none) checked and normalized."""
    if allow_pickle is True:
        return True
    if allow_pickle is None or allow_pickle is False:
        return frozenset()
    if isinstance(allow_pickle, str):
        raise TypeError(
            f"allow_pickle must be True or a collection of state names, got the string "
            f"{allow_pickle!r}; write allow_pickle={{{allow_pickle!r}}}"
        )
    names = frozenset(allow_pickle)
    if not all(isinstance(name, str) for name in names):
        raise TypeError(f"allow_pickle must hold state names (strings), got {sorted(map(repr, names))}")
    return names


def pickle_allowed(allow_pickle: bool | Iterable[str] | None, name: str) -> bool:
    """Whether ``allow_pickle`` (as ``normalize_allow_pickle`` takes it) opts in to reading
    state ``name`` through pickle: the one rule of the option."""
    allowed = normalize_allow_pickle(allow_pickle)
    return allowed is True or name in allowed  # type: ignore[operator]


def descriptor_unpickles(descriptor: StateDescriptor) -> bool:
    """Whether an access with ``descriptor`` is the caller's opt-in to unpickling the state's
    stored data: one of its serializers uses ``PickleSerializer``."""
    return any(serializer_unpickles(s) for s in (
        descriptor.value_serializer, descriptor.user_key_serializer, descriptor.namespace_serializer))


def describe_snapshot(snapshot: TypeSerializerSnapshot[Any] | None) -> str:
    """The serializer a snapshot restores, for messages (never raises)."""
    if snapshot is None:
        return "no serializer (default namespace)"
    try:
        return repr(snapshot.restore_serializer())
    except Exception:  # a broken snapshot must not hide the error being reported
        return f"serializer of {type(snapshot).__name__}"


@dataclass
class AccessPlan:
    """The outcome of ``plan_access`` for a permitted access."""

    value_serializer: TypeSerializer[Any]
    namespace_serializer: TypeSerializer[Any] | None
    user_key_serializer: TypeSerializer[Any] | None
    #: True: every stored value must be migrated from ``prior_value_serializer`` to
    #: ``value_serializer`` through ``new_value_snapshot``.
    migrate: bool
    prior_value_serializer: TypeSerializer[Any]
    new_value_snapshot: TypeSerializerSnapshot[Any]
    value_result: SchemaCompatibility[Any]
    #: How the stored values migrate (``migrate`` True) or are kept (False).
    migration: MigrationPlan


def _use(result: SchemaCompatibility[Any], new: TypeSerializer[Any]) -> TypeSerializer[Any]:
    return result.get_reconfigured_serializer() if result.is_compatible_with_reconfigured_serializer() else new


def plan_access(
    name: str,
    stored_kind: str,
    value_snapshot: TypeSerializerSnapshot[Any],
    namespace_snapshot: TypeSerializerSnapshot[Any] | None,
    user_key_snapshot: TypeSerializerSnapshot[Any] | None,
    descriptor: StateDescriptor,
    config: Mapping[str, Any],
) -> AccessPlan:
    """Judge ``descriptor`` against the snapshots of the stored state named ``name``."""
    if descriptor.kind != stored_kind:
        raise StateMigrationError(
            f"state {name!r} holds {stored_kind} state; it cannot be accessed as {descriptor.kind} "
            f"state ({descriptor!r}). Use a {stored_kind.capitalize()}StateDescriptor for it, or "
            "another state name"
        )

    # Namespaces never migrate.
    new_ns = descriptor.namespace_serializer
    if (new_ns is None) != (namespace_snapshot is None):
        raise StateMigrationError(
            f"state {name!r}: the new namespace serializer ({new_ns!r}) must be compatible with "
            f"the previous namespace serializer ({describe_snapshot(namespace_snapshot)}); a "
            "state with namespaces cannot become one without them or the reverse"
        )
    ns_serializer = None
    if new_ns is not None and namespace_snapshot is not None:
        ns_result = resolve_compatibility(new_ns, namespace_snapshot)
        if not (ns_result.is_compatible_as_is() or ns_result.is_compatible_with_reconfigured_serializer()):
            why = ns_result.reason or "it would need migration, and namespaces never migrate"
            raise StateMigrationError(
                f"state {name!r}: the new namespace serializer ({new_ns!r}) must be compatible "
                f"with the previous namespace serializer ({describe_snapshot(namespace_snapshot)}): "
                f"{why}. Use a namespace serializer that reads the old namespaces as is"
            )
        ns_serializer = _use(ns_result, new_ns)

    new_value = descriptor.value_serializer
    value_result = resolve_compatibility(new_value, value_snapshot)
    old_desc = describe_snapshot(value_snapshot)
    if value_result.is_incompatible():
        raise StateMigrationError(
            f"state {name!r}: the new state serializer ({new_value!r}) must not be incompatible "
            f"with the old state serializer ({old_desc}): {value_result.reason}. The stored "
            "state is untouched; restore with a compatible serializer"
        )

    uk_serializer = None
    new_uk = descriptor.user_key_serializer
    if stored_kind == "map":
        assert new_uk is not None and user_key_snapshot is not None
        uk_result = resolve_compatibility(new_uk, user_key_snapshot)
        if uk_result.is_incompatible():
            raise StateMigrationError(
                f"state {name!r}: the new state serializer (map key {new_uk!r}) must not be "
                f"incompatible with the old state serializer (map key "
                f"{describe_snapshot(user_key_snapshot)}): {uk_result.reason}"
            )
        needs_migration = value_result.is_compatible_after_migration() or uk_result.is_compatible_after_migration()
        if needs_migration and not uk_result.is_compatible_as_is():
            raise StateMigrationError(
                f"state {name!r}: the new serializer for a MapState requires state migration in "
                "order for the job to proceed, since the key schema has changed (map key "
                f"{describe_snapshot(user_key_snapshot)} -> {new_uk!r}: {uk_result.kind}). "
                "However, migration for MapState currently only allows value schema evolutions"
            )
        uk_serializer = _use(uk_result, new_uk)

    if value_result.is_compatible_after_migration() and value_result.row_paths and not config.get(
        SCHEMA_EVOLUTION_OPTION, False
    ):
        raise StateMigrationError(
            f"state {name!r} needs migration of row fields {', '.join(value_result.row_paths)} "
            f"({old_desc} -> {new_value!r}), but row schema evolution is disabled; set the config "
            f"option '{SCHEMA_EVOLUTION_OPTION}' to True to migrate it"
        )

    migration = migration_plan(value_snapshot, new_value, value_result)
    return AccessPlan(
        value_serializer=migration.reader,
        namespace_serializer=ns_serializer,
        user_key_serializer=uk_serializer,
        migrate=migration.needs_migration,
        prior_value_serializer=migration.prior,
        new_value_snapshot=migration.new_snapshot,
        value_result=value_result,
        migration=migration,
    )


def resolve_key_serializer(
    new: TypeSerializer[Any], old_snapshot: TypeSerializerSnapshot[Any]
) -> TypeSerializer[Any]:
    """The key serializer to use after a restore; keys never migrate."""
    result = resolve_compatibility(new, old_snapshot)
    if result.is_compatible_as_is():
        return new
    if result.is_compatible_with_reconfigured_serializer():
        return result.get_reconfigured_serializer()
    why = result.reason or "it would need migration, and keys never migrate"
    raise StateMigrationError(
        f"The new key serializer ({new!r}) must be compatible with the previous key serializer "
        f"({describe_snapshot(old_snapshot)}): {why}. Restore with a key serializer that reads "
        "the old keys as is"
    )
