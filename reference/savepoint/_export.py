"""Keyed state as Parquet datasets, typed by the savepoint's serializer snapshots
(``conformance savepoint export``; docs/flink-savepoints.md, "Export").

``plan_export(path, uid=None, state=None)`` reads a savepoint's metadata (a Flink canonical
savepoint, or this project's own, told apart by their files) and gives one ``ExportState`` per
keyed state: where its dataset goes (``<uid>/<state name>``, names percent-quoted so that a ``/``
stays inside one directory; an operator without a uid is named by its operator id; this project's
savepoints have no operators: ``<state name>``), its Arrow schema (``_arrow_types.arrow_form``,
the one rule) and its work units (Flink: runs of consecutive key groups; this project: Parquet
row groups). ``export_groups`` says which states are exported together (a Flink operator's, in
one walk of its key groups, as Flink interleaves its states there); ``write_units(path, states,
units, files)`` streams the entries of those units into one Parquet file per state (bounded
memory: ``BATCH_ROWS`` rows per state at a time). ``export_savepoint`` runs every unit in this
process; ``conformance.spark`` runs them in executors, one part file per state and unit.

Columns: ``key_group`` (int32), ``key``, ``namespace`` (absent for the void namespace),
``user_key`` (map state only), ``value``, and ``ttl_last_access`` (int64, epoch ms) when the
state's value carries a time-to-live (value, reducing, aggregating and map states; a list state's
elements each carry their own: ``value`` is then a list of structs ``value``,
``ttl_last_access``). A list state is one row per key and namespace; a map state one row per user
key; timers one row per timer (``value``: its timestamp).

Committing: the datasets are written into a temporary sibling of ``DIR`` renamed into place last
(``atomic_directory``), with ``_export.json`` (what was exported: every dataset and its rows)
written just before: after a failure nothing at ``DIR`` looks complete.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import pyarrow as pa
import pyarrow.parquet as pq

from .. import StateError
from ._arrow_types import _BINARY, ArrowForm, arrow_form, list_form
from ._flink_metadata import is_flink_savepoint
from ._format import METADATA_FILE, SavepointFormatError, atomic_directory

__all__ = ["BATCH_ROWS", "EXPORT_MANIFEST", "ExportState", "ExportReport", "plan_export", "write_units",
           "export_groups", "export_datasets",
           "export_savepoint", "savepoint_kind", "commit_export", "KEY_GROUPS_PER_UNIT", "inspect_savepoint",
           "format_inspection"]

#: Rows buffered before they are written (one Parquet row group at most this large).
BATCH_ROWS = 8192
#: Consecutive key groups per work unit of a Flink savepoint.
KEY_GROUPS_PER_UNIT = 8
#: The manifest written last into an export.
EXPORT_MANIFEST = "_export.json"


def savepoint_kind(path: Any) -> str:
    """``"flink"`` (a ``_metadata`` Flink wrote), ``"state-conformance"`` (this project's
    ``_metadata.json``); anything else is a ``SavepointFormatError`` saying what to give."""
    from ._storage import locate

    where = locate(path)
    if not where.remote and not os.path.exists(where.path):
        raise SavepointFormatError(f"{where.uri!r} does not exist; give the savepoint's directory")
    if where.child(METADATA_FILE).exists():
        return "state-conformance"
    if is_flink_savepoint(path):
        return "flink"
    raise SavepointFormatError(
        f"{where.uri!r} is not a savepoint: it holds neither Flink's _metadata nor this project's "
        f"{METADATA_FILE}; give the savepoint's directory (e.g. .../savepoint-1a2b3c-4d5e6f7a8b9c)")


@dataclass(frozen=True)
class ExportState:
    """One keyed state to export (picklable: shipped to Spark executors)."""

    path: str                      # the dataset's directory relative to the export's root
    operator: str | None           # uid or operator id (Flink), None (this project)
    name: str
    kind: str
    schema: pa.Schema
    units: tuple[Any, ...]         # Flink: tuples of key groups; this project: (file, row group)
    ttl_column: bool = False
    forms: dict[str, ArrowForm] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class ExportReport:
    """What an export wrote: per dataset, its path and rows."""

    source: str
    out: str
    format: str
    datasets: list[dict[str, Any]]

    def format_text(self) -> str:
        lines = [f"exported {len(self.datasets)} keyed states of {self.source} ({self.format}) to {self.out}:"]
        lines += [f"  {d['path']}: {d['rows']} rows ({d['kind']})" for d in self.datasets]
        return "\n".join(lines)


def _quoted(name: str) -> str:
    return quote(name, safe=" -_.,+@")


def _columns(forms: dict[str, ArrowForm], ttl: bool) -> pa.Schema:
    fields = [pa.field("key_group", pa.int32(), nullable=False), pa.field("key", forms["key"].type)]
    for column in ("namespace", "user_key", "value"):
        if column in forms:
            fields.append(pa.field(column, forms[column].type))
    if ttl:
        fields.append(pa.field("ttl_last_access", pa.int64()))
    return pa.schema(fields)


def _flink_forms(state: Any) -> tuple[dict[str, ArrowForm], bool]:
    from ..serializers import MapSerializerSnapshot, VoidNamespaceSerializerSnapshot
    from ..serializers._flink_runtime import TtlSerializerSnapshot

    forms = {"key": arrow_form(state.key_serializer)}
    if state.namespace_serializer is not None and not isinstance(state.namespace_serializer,
                                                                 VoidNamespaceSerializerSnapshot):
        forms["namespace"] = arrow_form(state.namespace_serializer)
    value = state.value_serializer
    if state.kind == "timers":
        forms["value"] = ArrowForm(pa.int64(), lambda v: v)
        return forms, False
    if state.kind == "map":
        nested = list(getattr(value, "nested_snapshots", None) or []) if isinstance(value, MapSerializerSnapshot) else []
        forms["user_key"] = arrow_form(nested[0]) if nested else _BINARY
        value = nested[1] if nested else None
    ttl = state.kind != "list" and isinstance(value, TtlSerializerSnapshot)
    if ttl:
        value = value.nested_snapshots[1]
    forms["value"] = arrow_form(value) if value is not None else _BINARY
    return forms, ttl


def _restored(data: bytes | None) -> tuple[ArrowForm, Any]:
    """This project's savepoint: a snapshot's form and serializer, or binary and None when the
    snapshot cannot be read or its serializer restored here (its values are exported as bytes)."""
    from .. import snapshot_from_bytes

    if data is None:
        return _BINARY, None
    try:
        snapshot = snapshot_from_bytes(data)
        return arrow_form(snapshot), snapshot.restore_serializer()
    except StateError:
        return _BINARY, None


def plan_export(path: Any, uid: str | None = None, state: str | None = None) -> tuple[str, list[ExportState]]:
    """(format, states to export) of the savepoint at ``path``, only operator ``uid`` and state
    ``state`` when given; an unknown uid or state is a ``KeyError`` whose message names those
    there are."""
    kind = savepoint_kind(path)
    states: list[ExportState] = []
    if kind == "flink":
        from ._flink_keyed import read_flink_savepoint

        savepoint = read_flink_savepoint(path)
        operators = [savepoint.operator(uid)] if uid is not None else list(savepoint.operators)
        for op in operators:
            name = op.uid or op.operator_id
            if state is not None and uid is None:  # every operator holding a state of that name
                chosen = [k for k in op.keyed_states if k.name == state]
            else:
                chosen = [op.keyed_state(state)] if state is not None else list(op.keyed_states)
            for keyed in chosen:
                forms, ttl = _flink_forms(keyed)
                groups = list(keyed.key_groups)
                units = tuple(tuple(groups[i:i + KEY_GROUPS_PER_UNIT]) for i in range(0, len(groups), KEY_GROUPS_PER_UNIT))
                states.append(ExportState(f"{_quoted(name)}/{_quoted(keyed.name)}", name, keyed.name, keyed.kind,
                                          _columns(forms, ttl), units, ttl, forms))
        if state is not None and not states:
            held = sorted({k.name for op in savepoint.operators for k in op.keyed_states})
            raise KeyError(f"no keyed state {state!r} in the savepoint (it has {held})")
        return kind, states
    from ._format import read_savepoint_metadata, state_row_groups

    if uid is not None:
        raise KeyError(f"--uid {uid!r}: this project's savepoints have no operators; leave --uid out")
    metadata = read_savepoint_metadata(path)
    if state is not None and state not in [s.name for s in metadata.states]:
        raise KeyError(f"no state {state!r} in the savepoint (it has {[s.name for s in metadata.states]})")
    chosen_states = [metadata.state(state)] if state is not None else list(metadata.states)
    key_form, _ = _restored(metadata.key_serializer_snapshot)
    for meta in chosen_states:
        forms = {"key": key_form}
        if meta.namespace_serializer_snapshot is not None:
            forms["namespace"] = _restored(meta.namespace_serializer_snapshot)[0]
        if meta.kind == "map":
            forms["user_key"] = _restored(meta.user_key_serializer_snapshot)[0]
        value_form, _ = _restored(meta.value_serializer_snapshot)
        forms["value"] = list_form(value_form) if meta.kind == "list" else value_form
        row_groups: tuple[Any, ...] = tuple(
            (file, group) for file, groups in state_row_groups(os.fspath(path), meta) for group in range(groups))
        states.append(ExportState(_quoted(meta.name), None, meta.name, meta.kind, _columns(forms, False),
                                  row_groups, False, forms))
    return kind, states


@functools.lru_cache(maxsize=2)
def _flink_savepoint(path: str) -> Any:
    """The savepoint read once per process for all the units a process exports."""
    from ._flink_keyed import read_flink_savepoint

    return read_flink_savepoint(path)


def _flink_row(state: ExportState, entry: Any) -> dict[str, Any]:
    forms = state.forms
    row = {"key_group": entry.key_group, "key": forms["key"].convert(entry.key)}
    if "namespace" in forms:
        row["namespace"] = forms["namespace"].convert(entry.namespace)
    if "user_key" in forms:
        row["user_key"] = forms["user_key"].convert(entry.user_key)
    stored = entry.value
    if state.ttl_column:
        row["ttl_last_access"] = None if stored is None else stored.last_access
        stored = None if stored is None else stored.value
    row["value"] = forms["value"].convert(stored)
    return row


def _flink_rows(path: str, states: Sequence[ExportState], units: Sequence[Any]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(index into ``states``, row) of the entries of ``units``: one walk of the operator's key
    groups for all its states (Flink interleaves them within each key group)."""
    operator = _flink_savepoint(path).operator(states[0].operator or "")
    index = {state.name: i for i, state in enumerate(states)}
    groups = [kg for unit in units for kg in unit]
    for name, entry in operator.all_entries(key_groups=groups):
        i = index.get(name)
        if i is not None:
            yield i, _flink_row(states[i], entry)


def _own_rows(path: str, state: ExportState, units: Sequence[Any]) -> Iterator[dict[str, Any]]:
    from .. import DataInputView
    from ._format import decode_list_value, read_savepoint_metadata
    from ._storage import locate

    metadata = read_savepoint_metadata(path)
    meta = metadata.state(state.name)
    serializers = {"key": _restored(metadata.key_serializer_snapshot)[1],
                   "namespace": _restored(meta.namespace_serializer_snapshot)[1],
                   "user_key": _restored(meta.user_key_serializer_snapshot)[1],
                   "value": _restored(meta.value_serializer_snapshot)[1]}

    def decoded(column: str, data: bytes) -> Any:
        serializer = serializers[column]
        if serializer is None:
            return data
        src = DataInputView(data)
        out = serializer.deserialize(src)
        if src.available():
            raise SavepointFormatError(f"state {state.name!r}: {src.available()} bytes left after a {column}")
        return out

    forms = state.forms
    for file, group in units:
        where = locate(file)
        with where.guard("reading"):
            table = pq.ParquetFile(where.open_input()).read_row_group(group)
        for kg, k, ns, uk, v in zip(*(table.column(c).to_pylist() for c in
                                      ("key_group", "key", "namespace", "user_key", "value")), strict=True):
            row = {"key_group": kg, "key": forms["key"].convert(decoded("key", k))}
            if "namespace" in forms:
                row["namespace"] = forms["namespace"].convert(decoded("namespace", ns))
            if "user_key" in forms:
                row["user_key"] = forms["user_key"].convert(decoded("user_key", uk))
            if v is None:
                value = None
            elif state.kind == "list":
                if serializers["value"] is None:
                    value = [v]
                else:
                    value = [decoded("value", e) for e in decode_list_value(v, serializers["value"])]
            else:
                value = decoded("value", v)
            row["value"] = forms["value"].convert(value)
            yield row


def export_groups(states: Sequence[ExportState]) -> list[list[int]]:
    """The states exported together (indices into ``states``): a Flink operator's states share
    one walk of its key groups (and so the same units); this project's states go alone."""
    groups: dict[Any, list[int]] = {}
    for i, state in enumerate(states):
        groups.setdefault(state.operator if state.operator is not None else ("state", i), []).append(i)
    return list(groups.values())


def write_units(path: str, states: Sequence[ExportState], units: Sequence[Any], files: Sequence[str],
                flink: bool) -> list[int]:
    """Write the entries of ``units`` of ``states`` (one group of ``export_groups``) into the
    Parquet files ``files`` (one per state), streamed: at most ``BATCH_ROWS`` rows per state
    held at a time. Returns the rows written per state."""
    if flink:
        rows: Iterator[tuple[int, dict[str, Any]]] = _flink_rows(path, states, units)
    else:
        (state,) = states
        rows = ((0, row) for row in _own_rows(path, state, units))
    written = [0] * len(states)
    batches: list[list[dict[str, Any]]] = [[] for _ in states]
    writers = [pq.ParquetWriter(file, state.schema) for file, state in zip(files, states, strict=True)]
    try:
        for i, row in rows:
            batch = batches[i]
            batch.append(row)
            if len(batch) >= BATCH_ROWS:
                writers[i].write_table(pa.Table.from_pylist(batch, schema=states[i].schema))
                written[i] += len(batch)
                batches[i] = []
        for i, batch in enumerate(batches):
            if batch or not written[i]:
                writers[i].write_table(pa.Table.from_pylist(batch, schema=states[i].schema))
                written[i] += len(batch)
    finally:
        for writer in writers:
            writer.close()
    return written


def commit_export(temp: str, report: ExportReport) -> None:
    """Write the manifest into the export's temporary directory (the last file written)."""
    with open(os.path.join(temp, EXPORT_MANIFEST), "w", encoding="utf-8") as out:
        json.dump({"source": report.source, "format": report.format, "datasets": report.datasets}, out, indent=1)


def export_savepoint(path: Any, out: str | os.PathLike[str], *, uid: str | None = None,
                     state: str | None = None) -> ExportReport:
    """Export every keyed state of the savepoint at ``path`` (``uid``/``state``: only those) to
    Parquet datasets under the local directory ``out`` (which must not exist), in this
    process."""
    source = os.fspath(path)
    kind, states = plan_export(source, uid, state)
    rows = [0] * len(states)
    with atomic_directory(out) as temp:
        for chosen in states:
            os.makedirs(os.path.join(temp, chosen.path))
        for group in export_groups(states):
            together = [states[i] for i in group]
            files = [os.path.join(temp, s.path, "part-00000.parquet") for s in together]
            for i, n in zip(group, write_units(source, together, together[0].units, files, kind == "flink"),
                            strict=True):
                rows[i] += n
        report = ExportReport(source, os.fspath(out), kind, export_datasets(states, rows))
        commit_export(temp, report)
    return report


def export_datasets(states: Sequence[ExportState], rows: Sequence[int]) -> list[dict[str, Any]]:
    """``_export.json``'s ``datasets``: per state its path, operator, name, kind and rows."""
    return [{"path": s.path, "operator": s.operator, "state": s.name, "kind": s.kind, "rows": n}
            for s, n in zip(states, rows, strict=True)]


# -- inspect ----------------------------------------------------------------------------------------
def _class_name(snapshot: Any) -> str | None:
    from .._snapshot import class_identity, java_snapshot_name
    from ._flink_keyed import UnreadSnapshot

    if snapshot is None:
        return None
    if isinstance(snapshot, UnreadSnapshot):
        return snapshot.java_class
    return java_snapshot_name(snapshot) or class_identity(type(snapshot))


def _row_types(**snapshots: Any) -> dict[str, str]:
    """``{role}_type`` for each RowData snapshot among ``snapshots`` (role -> snapshot): its row
    type as Flink's summary prints it (time attribute kinds included), what the job's
    descriptors must declare for the state to read as is."""
    from ..serializers import RowDataSerializerSnapshot

    return {f"{role}_type": snapshot.row_type.as_summary_string() for role, snapshot in snapshots.items()
            if isinstance(snapshot, RowDataSerializerSnapshot) and snapshot.row_type is not None}


def _snapshot_name(data: bytes | None) -> str | None:
    """This project's savepoint: the snapshot class a snapshot's bytes name (read, never
    imported; a class not defined here is named as written)."""
    from .. import snapshot_from_bytes

    if data is None:
        return None
    try:
        return _class_name(snapshot_from_bytes(data))
    except StateError:
        from .. import DataInputView

        src = DataInputView(data)
        try:
            src.read_int()
            return str(src.read_utf())
        except Exception:  # noqa: BLE001 - the name is only shown
            return "<unreadable snapshot>"


def inspect_savepoint(path: Any) -> dict[str, Any]:
    """What the savepoint at ``path`` holds, as ``conformance savepoint inspect --json`` writes
    it: operators, their keyed states (kind, serializer snapshot classes, TTL, entries counted in
    one streamed walk) and operator states. This project's savepoints: ``format``
    ``"state-conformance"``, one operator with no uid, name or id holding every state."""
    source = os.fspath(path) if isinstance(path, os.PathLike) else path
    if savepoint_kind(source) == "flink":
        from ._flink_keyed import read_flink_savepoint

        savepoint = read_flink_savepoint(source)
        operators = []
        for op in savepoint.operators:
            counts = op.count_entries()
            operators.append({
                "uid": op.uid, "name": op.name, "operator_id": op.operator_id, "parallelism": op.parallelism,
                "max_parallelism": op.max_parallelism,
                "keyed_states": [{
                    "name": s.name, "kind": s.kind, "key_serializer": _class_name(s.key_serializer),
                    "namespace_serializer": _class_name(s.namespace_serializer),
                    "value_serializer": _class_name(s.value_serializer),
                    "user_key_serializer": _class_name(s.user_key_serializer), "ttl": s.ttl,
                    "entries": counts[s.name],
                    **_row_types(key=s.key_serializer, value=s.value_serializer, user_key=s.user_key_serializer),
                } for s in op.keyed_states],
                "operator_states": [{"name": s.name, "mode": s.mode, "entries": sum(1 for _ in s.values())}
                                    for s in op.operator_states],
            })
        return {"format": "flink", "metadata_version": savepoint.metadata_version,
                "checkpoint_id": savepoint.checkpoint_id, "operators": operators}
    from ._format import read_savepoint_metadata

    metadata = read_savepoint_metadata(source)
    return {"format": "state-conformance", "metadata_version": metadata.format_version, "checkpoint_id": None,
            "operators": [{
                "uid": None, "name": None, "operator_id": None, "parallelism": None,
                "max_parallelism": metadata.max_parallelism,
                "keyed_states": [{
                    "name": s.name, "kind": s.kind,
                    "key_serializer": _snapshot_name(metadata.key_serializer_snapshot),
                    "namespace_serializer": _snapshot_name(s.namespace_serializer_snapshot),
                    "value_serializer": _snapshot_name(s.value_serializer_snapshot),
                    "user_key_serializer": _snapshot_name(s.user_key_serializer_snapshot),
                    "ttl": False, "entries": s.rows} for s in metadata.states],
                "operator_states": []}]}


def format_inspection(doc: dict[str, Any]) -> str:
    """``inspect_savepoint``'s result as a table for the terminal."""
    def short(name: str | None) -> str:
        if name is None:
            return "-"
        name = name.rsplit(".", 1)[-1].rsplit(":", 1)[-1].split("$")[-1]
        return name.removesuffix("Snapshot").removesuffix("Serializer") or name

    lines = [f"{doc['format']} savepoint, metadata version {doc['metadata_version']}"
             + (f", checkpoint {doc['checkpoint_id']}" if doc["checkpoint_id"] is not None else "")]
    for op in doc["operators"]:
        label = op["uid"] or op["operator_id"] or "(states)"
        lines.append("")
        lines.append(f"operator {label}" + (f" ({op['name']})" if op["name"] and op["name"] != op["uid"] else "")
                     + (f"  id {op['operator_id']}" if op["operator_id"] else "")
                     + (f"  parallelism {op['parallelism']}" if op["parallelism"] is not None else "")
                     + f"  max parallelism {op['max_parallelism']}")
        rows = [("state", "kind", "entries", "key", "namespace", "value", "ttl")]
        for s in op["keyed_states"]:
            value = short(s["value_serializer"])
            if s["user_key_serializer"]:
                value = f"{value} ({short(s['user_key_serializer'])} keys)"
            rows.append((s["name"], s["kind"], str(s["entries"]), short(s["key_serializer"]),
                         short(s["namespace_serializer"]), value, "yes" if s["ttl"] else ""))
        for s in op["operator_states"]:
            rows.append((s["name"], f"operator {s['mode']}", str(s["entries"]), "", "", "", ""))
        if len(rows) == 1:
            lines.append("  (no state)")
            continue
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for r in rows:
            lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
        for s in op["keyed_states"]:
            for role in ("key", "value", "user_key"):
                if f"{role}_type" in s:
                    lines.append(f"  {s['name']} {role.replace('_', ' ')}: {s[f'{role}_type']}")
    return "\n".join(lines)
