"""versioning: golden files of earlier releases are restored and read by the current code."""

from __future__ import annotations

from typing import Any

from reference import (
    DataInputView,
    SnapshotFormatError,
    StateError,
    resolve_compatibility,
    snapshot_from_bytes,
)

from .._canonical import stable_text
from .._golden import current_release, record_release, recorded_releases
from .._property import guarded
from .._registry import NotApplicable, Violation, check
from ._migration import Step, migrated_bytes


def _collect_values(ctx: Any, count: int) -> list[Any]:
    drawn: list[Any] = []

    def body(value: Any) -> None:
        drawn.append(value)

    ctx.for_all(ctx.subject.values, body, max_examples=count)
    return drawn[:count]


@check(id="versioning.golden", family="versioning", requires=("snapshot.exact_read", "roundtrip.bit_exact"))
def golden(ctx) -> None:  # type: ignore[no-untyped-def]
    """Snapshot and data recorded by every earlier release restore and read back exactly."""
    directory = ctx.subject.golden
    if directory is None:
        raise NotApplicable(
            "no golden directory (Subject(golden='tests/golden/<name>'); record one with "
            "conformance certify --update-golden)"
        )
    serializer = ctx.serializer()
    if ctx.update_golden:
        release = current_release(ctx.subject, serializer)
        values = _collect_values(ctx, min(ctx.examples, 50))
        record_release(directory, release, serializer, values, {"seed": ctx.seed})
    releases = recorded_releases(directory)
    if not releases:
        raise NotApplicable(f"golden directory {directory} holds no recorded release; run with --update-golden")
    for rel in releases:
        where = f"golden release {rel.release} ({rel.path})"
        try:
            old_snapshot = snapshot_from_bytes(rel.snapshot)
        except SnapshotFormatError as exc:
            legacy = "pre-1.7" in str(exc)
            raise Violation(
                f"{where}: the snapshot " + ("is the non-conforming pre-1.7 pickled form" if legacy else
                                             f"cannot be read ({exc})")
                + ", should restore with the current code", example=where) from None
        except StateError as exc:
            raise Violation(f"{where}: the snapshot cannot be read ({exc}), should restore", example=where) from None
        prior = guarded(f"{where}: restore_serializer", old_snapshot.restore_serializer)
        source = DataInputView(rel.data)
        read = []
        for i in range(int(rel.manifest.get("records", 0))):
            read.append(guarded(f"{where}: reading record {i}", prior.deserialize, source))
        if source.available():
            raise Violation(
                f"{where}: {source.available()} of {len(rel.data)} data bytes were left after "
                f"{len(read)} records, should read them exactly (the byte format changed without a "
                "new snapshot version)", example=where)
        for i, (value, text) in enumerate(zip(read, rel.values, strict=False)):
            got = stable_text(value)
            if got != text:
                raise Violation(
                    f"{where}: record {i} reads as {got}, should be {text} as recorded (the byte "
                    "format changed without a new snapshot version)", example=text)
        result = guarded(f"{where}: resolve_schema_compatibility", resolve_compatibility,
                         serializer.snapshot_configuration(), old_snapshot)
        if result.is_incompatible():
            raise Violation(
                f"{where}: the current serializer judges the recorded snapshot incompatible "
                f"({result.reason}), should restore it (or record the break in a new golden directory)",
                example=where)
        if result.is_compatible_as_is() or result.is_compatible_with_reconfigured_serializer():
            # Unchanged format: the current serializer itself must read the old bytes.
            reader = result.get_reconfigured_serializer() if result.is_compatible_with_reconfigured_serializer() else serializer
            source = DataInputView(rel.data)
            for i, text in enumerate(rel.values):
                got = stable_text(guarded(f"{where}: the current serializer reading record {i}", reader.deserialize, source))
                if got != text:
                    raise Violation(f"{where}: the current serializer reads record {i} as {got}, should be {text}",
                                    example=text)
        else:
            step = Step(where, prior, serializer, result.kind, None)
            records = []
            source = DataInputView(rel.data)
            for _ in read:
                start = source.position
                prior.deserialize(source)
                records.append(rel.data[start:source.position])
            migrated_bytes(step, records)
