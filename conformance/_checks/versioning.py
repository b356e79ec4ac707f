"""versioning: the golden files of earlier releases are there, the current code upgrades them,
and the pre-1.7 snapshot form is refused unless allowed.

A subject that declares a golden directory (``Subject(golden=...)``) must have at least one
release recorded there (``--update-golden`` records the current one); a missing or empty
directory is a failure, never a silent skip, and so is a release named in
``Subject(releases=...)`` that was never recorded.

- ``versioning.golden``: the declared golden directory holds the recorded releases, including
  every release ``Subject(releases=...)`` names (with ``--update-golden``, after recording the
  current one). A past release named there but missing is to be restored from version control
  (``--update-golden`` records only the current release), and is reported before anything is
  recorded.

The release-upgrade path (``versioning.upgrade_*``): in production the NEW code reads what the OLD
release wrote; these checks do exactly that with every release recorded in the golden directory,
using the current classes (the same class identities). For each recorded release:

- ``versioning.upgrade_snapshot``: the current snapshot class reads the recorded snapshot
  (``read_snapshot(read_version, source)`` with the version that release wrote), consuming it
  exactly; a class without a zero-argument constructor cannot even be created for it.
- ``versioning.upgrade_restore``: ``restore_serializer()`` of that snapshot reads the recorded
  records exactly, and reads the values that release wrote (field by field: a later release may
  add fields, never change one an earlier release wrote).
- ``versioning.upgrade_verdict``: the current serializer's snapshot judges the recorded one as the
  subject declares (``Subject(releases={"1.0.0": Evolution(expect=..., migrate=...)})``; a
  release not named must read as is).
- ``versioning.upgrade_records``: the records migrate (``migrate_state`` over the bytes, and
  ``migrate_element`` in either FLIP-527 form) to the declared values, or, when nothing needs
  migration, the current serializer reads them as they were recorded.
- ``versioning.upgrade_backends``: a savepoint holding the recorded values, written by the
  restored serializer, restores with the current serializer on the heap and bytes backends.
- ``versioning.upgrade_keys``: for a key serializer (``Subject(key=True)``), the release
  restores as a key and its keys keep their bytes. Flink refuses to restore keyed state whose
  key serializer judges the recorded one compatible after migration or incompatible ("The new
  key serializer must be compatible."); and the serializer the backend then writes keys with
  (the current one, or the reconfigured one) must write each recorded key to the bytes that
  release wrote: RocksDB finds a key's state by its serialized bytes (and this project picks
  key groups from them), so a key written differently after the upgrade finds nothing, and its
  state is lost without an error. A new release that reads the old format but writes another
  for the same key (a per-record version byte, another length encoding) fails here.

And:

- ``versioning.legacy_form``: a golden file in the pre-1.7 form (``<golden>/pre-1.7/
  snapshot.bin``: the pickled serializer instead of a snapshot) is refused by
  ``snapshot_from_bytes`` and ``read_serializer_snapshot`` by default (unpickling savepoint bytes
  runs code from them), and read only when the caller allows it, giving back a serializer equal
  to the subject's; and the serializers of the subject's declared evolutions judge it as they
  judge the current snapshot (a job started before 1.7 evolves by the same rules).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from reference import (
    DataInputView,
    DataOutputView,
    SnapshotFormatError,
    StateError,
    Verdict,
    migrated_element,
    read_serializer_snapshot,
    resolve_compatibility,
    snapshot_from_bytes,
)

from .._engine.canonical import show, tree_difference, value_tree
from .._engine.golden import (
    GoldenRelease,
    current_release,
    record_release,
    recorded_example,
    recorded_releases,
)
from .._engine.property import guarded
from .._engine.providers import Provider, provider
from .._engine.registry import NotApplicable, Violation, check
from ._support import SNAPSHOT_VERSION_HINT, expect_equal, hexdump, write
from .migration import Step, declared_steps, expect_verdict

if TYPE_CHECKING:
    from .._engine.runner import CheckContext

__all__ = ["RELEASES", "releases"]


def _collect_values(ctx: Any, count: int) -> list[Any]:
    drawn: list[Any] = []

    def body(value: Any) -> None:
        drawn.append(value)

    ctx.for_all(ctx.subject.values, body, max_examples=count)
    return drawn[:count]


def _read_releases(ctx: Any) -> list[GoldenRelease]:
    try:
        return recorded_releases(ctx.subject.golden)
    except (OSError, ValueError, json.JSONDecodeError) as exc:
        raise Violation(f"the golden directory {ctx.subject.golden} cannot be read ({exc}); "
                        "restore it from version control or record it again with --update-golden") from None


#: Every release recorded in the subject's golden directory, oldest first.
RELEASES: Provider[list[GoldenRelease]] = provider("golden_releases", _read_releases)


def releases(ctx: Any) -> list[GoldenRelease]:
    """The recorded releases (NotApplicable when the subject declares no golden directory)."""
    if ctx.subject.golden is None:
        raise NotApplicable(
            "no golden directory (Subject(golden='golden/<name>'); record one with "
            "conformance certify --update-golden)"
        )
    return ctx.get(RELEASES)


#: Why the checks of recorded files skip a subject that declares no golden directory.
NO_GOLDEN_DIRECTORY = ("no golden directory (Subject(golden='golden/<name>'); record one with "
                       "conformance certify --update-golden)")


@check(id="versioning.golden", family="versioning", requires=("snapshot.exact_read", "roundtrip.bit_exact"))
def golden(ctx: CheckContext) -> None:
    """The declared golden directory holds the recorded releases (--update-golden records the
    current one), including every release Subject(releases=...) names."""
    directory = ctx.subject.golden
    if directory is None:
        raise NotApplicable(NO_GOLDEN_DIRECTORY)
    named = set(ctx.subject.releases or ()) - {r.release for r in releases(ctx)}
    current = current_release(ctx.subject, ctx.serializer()) if named or ctx.update_golden else None
    # Past releases cannot be recorded again: their code is gone, their files are history.
    # Checked before recording, so a run that must fail writes nothing.
    past = sorted(named - {current})
    if past:
        found = releases(ctx)
        where = (f"no recorded release at {directory}, but Subject(releases=...) names past releases {past}"
                 if not found else f"Subject(releases=...) names past releases {past}, but {directory} holds "
                 f"only {[r.release for r in found]}")
        raise Violation(f"{where}; restore {directory} from version control (git checkout, or a clone "
                        f"that has it): --update-golden records only the current release ({current}); "
                        "or fix the names")
    recorded_now = None
    if ctx.update_golden:
        serializer = ctx.serializer()
        values = _collect_values(ctx, min(ctx.examples, 50))
        assert current is not None
        recording = record_release(directory, current, serializer, values, {"seed": ctx.seed}, force=ctx.force)
        recorded_now = recording.describe()
        ctx.undo_unless_certified("versioning.golden", recording.roll_back)
        ctx.take(RELEASES)  # read again, with the new recording
    found = releases(ctx)
    if not found:
        raise Violation(f"no recorded release at {directory}; run with --update-golden to record the "
                        "current release (and keep the directory in version control)")
    missing = sorted(set(ctx.subject.releases) - {r.release for r in found})
    if missing:  # only the current release can be missing here: record it
        raise Violation(f"Subject(releases=...) names {missing}, but {directory} holds only "
                        f"{[r.release for r in found]}; record them with --update-golden or fix the names")
    if recorded_now is not None:
        ctx.note(recorded_now)


GOLDEN = ("versioning.golden",)


def _where(rel: GoldenRelease) -> str:
    return f"release {rel.release} ({rel.path})"


def _read_snapshots(ctx: Any) -> dict[str, Any]:
    found = {}
    for rel in releases(ctx):
        try:
            found[rel.release] = snapshot_from_bytes(rel.snapshot, allow_pickle=True)  # the subject's own
        except StateError as exc:
            if "pre-1.7" in str(exc):
                raise Violation(f"{_where(rel)}: the recorded snapshot is the non-conforming pre-1.7 pickled "
                                "form (a pickled serializer); record the release again with a snapshot "
                                "class") from None
            hint = ("its snapshot class needs a public zero-argument constructor (restores create it "
                    "before reading)" if "argument" in str(exc) or "constructor" in str(exc) else
                    SNAPSHOT_VERSION_HINT)
            raise Violation(f"{_where(rel)}: the current code cannot read the recorded snapshot ({exc}); {hint}",
                            ) from None
        except Exception as exc:
            raise Violation(
                f"{_where(rel)}: reading the recorded snapshot raised {type(exc).__name__}: {exc}; the "
                "current snapshot class must read every version it ever wrote (branch on read_version) "
                "and have a public zero-argument constructor") from exc
    return found


#: release -> its recorded snapshot, read by the current classes.
OLD_SNAPSHOTS: Provider[dict[str, Any]] = provider("upgrade_old_snapshots", _read_snapshots)


def _recorded(rel: GoldenRelease, index: int) -> str | None:
    """Record ``index`` as the release recorded it (the example a failure shows)."""
    return recorded_example(rel, index)


@contextlib.contextmanager
def _showing(rel: GoldenRelease, index: int) -> Iterator[None]:
    """A Violation raised inside shows record ``index`` as recorded as its example."""
    try:
        yield
    except Violation as exc:
        if exc.example is None:
            exc.example = _recorded(rel, index)
        raise


def _records(rel: GoldenRelease, reader: Any, what: str, who: str) -> tuple[list[Any], list[bytes]]:
    """The recorded records read by ``reader`` (``who`` in messages): (values, each record's
    bytes). A record that fails to read after an earlier one read as another value than
    recorded is reported at the earlier one, where the reading went wrong."""
    count = int(rel.manifest.get("records", 0))
    source = DataInputView(rel.data)
    values, records = [], []
    for i in range(count):
        start = source.position
        try:
            values.append(reader.deserialize(source))
        except Exception as exc:
            earlier = _first_difference(rel, values, who)
            if earlier is not None:
                index, message = earlier
                raise Violation(f"{message}; record {i} then failed to read ({type(exc).__name__}: {exc})",
                                example=_recorded(rel, index)) from exc
            raise Violation(
                f"{_where(rel)}: {what} failed on record {i} of {count} ({type(exc).__name__}: {exc})",
                example=_recorded(rel, i)) from exc
        records.append(rel.data[start:source.position])
    if source.available():
        raise Violation(
            f"{_where(rel)}: {what} left {source.available()} of {len(rel.data)} bytes after the "
            f"{count} recorded records, should read them exactly")
    return values, records


def _restored(ctx: Any) -> dict[str, tuple[Any, list[Any], list[bytes]]]:
    """release -> (restored serializer, the values it reads, each record's bytes)."""
    found = {}
    snapshots = ctx.get(OLD_SNAPSHOTS)
    for rel in releases(ctx):
        prior = guarded(f"{_where(rel)}: restore_serializer()", snapshots[rel.release].restore_serializer)
        values, records = _records(
            rel, prior, "restore_serializer() of the recorded snapshot (it must return a serializer "
            "for the RECORDED configuration that reads the recorded release's format: a changed format "
            "needs a new snapshot version, and the serializer restored from the old version must still "
            "read the old format)", "restore_serializer()")
        found[rel.release] = (prior, values, records)
    return found


#: release -> (restored serializer, values it reads from the recorded records, record bytes).
RESTORED: Provider[dict[str, tuple[Any, list[Any], list[bytes]]]] = provider("upgrade_restored", _restored)


def _resolved(ctx: Any) -> dict[str, Any]:
    """release -> the current serializer's snapshot judging the recorded one."""
    snapshots = ctx.get(OLD_SNAPSHOTS)
    current = ctx.serializer().snapshot_configuration()
    return {rel.release: guarded(f"{_where(rel)}: resolve_schema_compatibility", resolve_compatibility, current,
                                 snapshots[rel.release])
            for rel in releases(ctx)}


#: release -> the verdict of the current snapshot on the recorded one (``upgrade_verdict``'s).
RESOLVED: Provider[dict[str, Any]] = provider("upgrade_resolved", _resolved)


def _restoring(result: Any, current: Any) -> Any:
    """The serializer a restore reads and writes with after ``result``: the reconfigured one, or
    the current one."""
    return result.get_reconfigured_serializer() if result.is_compatible_with_reconfigured_serializer() else current


def _declared(ctx: Any, rel: GoldenRelease) -> Any:
    return ctx.subject.releases.get(rel.release)


def _expected_verdict(ctx: Any, rel: GoldenRelease) -> Verdict:
    declared = _declared(ctx, rel)
    return Verdict.COMPATIBLE_AS_IS if declared is None else declared.expect


def _step(ctx: Any, rel: GoldenRelease, prior: Any) -> Step:
    declared = _declared(ctx, rel)
    return Step(_where(rel), prior, ctx.serializer(), _expected_verdict(ctx, rel),
                None if declared is None else declared.migrate)


@check(id="versioning.upgrade_snapshot", family="versioning", requires=GOLDEN)
def upgrade_snapshot(ctx: CheckContext) -> None:
    """The current snapshot class reads every recorded release's snapshot exactly (it branches
    on read_version and has a zero-argument constructor)."""
    ctx.get(OLD_SNAPSHOTS)


@check(id="versioning.upgrade_restore", family="versioning", requires=("versioning.upgrade_snapshot",))
def upgrade_restore(ctx: CheckContext) -> None:
    """restore_serializer() of each recorded snapshot reads that release's records exactly, as
    the values it recorded (field by field)."""
    restored = ctx.get(RESTORED)
    for rel in releases(ctx):
        _, values, _ = restored[rel.release]
        found = _first_difference(rel, values, "restore_serializer()")
        if found is not None:
            index, message = found
            raise Violation(message, example=_recorded(rel, index))


def _first_difference(rel: GoldenRelease, values: list[Any], who: str) -> tuple[int, str] | None:
    """The first of ``values`` (read by ``who`` from ``rel``'s records, in order) that is not
    the value the release recorded: (its index, what differs), or None."""
    trees = rel.trees
    for i, value in enumerate(values):
        if trees is not None:
            # Compared with the rule that wrote the manifest (older ones: times and decimals by repr).
            where = tree_difference(trees[i], value_tree(value, rel.tree_form))
            if where:
                return i, (f"{_where(rel)}: record {i} read by {who} differs at {where} "
                           f"({who} must read what that release wrote: its recorded fields by "
                           "name, in its byte format; a format change needs a new snapshot version that "
                           "read_snapshot branches on)")
        elif i < len(rel.values) and rel.text(value) != rel.values[i]:
            return i, (f"{_where(rel)}: record {i} read by {who} is {rel.text(value)}, should "
                       f"be {rel.values[i]} as recorded")
    return None


@check(id="versioning.upgrade_verdict", family="versioning", requires=("versioning.upgrade_snapshot",))
def upgrade_verdict(ctx: CheckContext) -> None:
    """The current serializer's snapshot judges each recorded release's snapshot as declared
    (Subject(releases={...}); undeclared: as is)."""
    resolved = ctx.get(RESOLVED)
    for rel in releases(ctx):
        result = resolved[rel.release]
        expected = _expected_verdict(ctx, rel)
        if result.kind != expected:
            why = f" ({result.reason})" if result.reason else ""
            declared = _declared(ctx, rel) is not None
            hint = ("declared in Subject(releases=...)" if declared else
                    f"not declared, so it must read as is; if this release changed the format on purpose, "
                    f"declare releases={{{rel.release!r}: Evolution(expect={result.kind.value!r}, "
                    "migrate=...)}")
            raise Violation(f"{_where(rel)}: the current snapshot judged the recorded one {result.kind.value}"
                            f"{why}, should be {expected.value} ({hint})")


@check(id="versioning.upgrade_records", family="versioning", requires=("versioning.upgrade_restore", "versioning.upgrade_verdict"))
def upgrade_records(ctx: CheckContext) -> None:
    """Each release's records read with the current serializer as they were recorded, or,
    when the release needs migration, migrate (migrate_state and migrate_element) to the
    declared values."""
    restored = ctx.get(RESTORED)
    resolved = ctx.get(RESOLVED)
    current = ctx.serializer()
    current_snapshot = current.snapshot_configuration()
    for rel in releases(ctx):
        prior, olds, records = restored[rel.release]
        step = _step(ctx, rel, prior)
        result = resolved[rel.release]
        if not result.is_compatible_after_migration():
            reader = _restoring(result, current)
            got, _ = _records(rel, reader, "the current serializer reading the recorded records as is",
                              "the current serializer")
            for i, (g, old) in enumerate(zip(got, olds, strict=True)):
                with _showing(rel, i):
                    expect_equal(g, old, f"{_where(rel)} read as is ({result.kind.value}): record {i} (the "
                                 "byte format changed without a new snapshot version? bump "
                                 "get_current_version() and branch on read_version)")
            continue
        source, target = DataInputView(b"".join(records)), DataOutputView()
        for i in range(len(records)):
            guarded(f"{_where(rel)}: migrate_state on record {i}", current_snapshot.migrate_state, prior,
                    current, source, target)
        migrated_source = DataInputView(target.getvalue())
        for i, old in enumerate(olds):
            expected = step.expected(old)
            got = guarded(f"{_where(rel)}: the current serializer reading migrated record {i}",
                          current.deserialize, migrated_source)
            with _showing(rel, i):
                expect_equal(got, expected, f"{_where(rel)}: record {i} after migrate_state (from {show(old)})")
                element = guarded(f"{_where(rel)}: migrate_element on record {i}", migrated_element,
                                  current_snapshot, prior, current, old)
                expect_equal(element, expected, f"{_where(rel)}: record {i} after migrate_element (from {show(old)})")
        if migrated_source.available():
            raise Violation(f"{_where(rel)}: migrate_state wrote {migrated_source.available()} bytes more "
                            "than the migrated records, should write exactly one record per record")


@check(id="versioning.upgrade_backends", family="versioning", requires=("versioning.upgrade_records", "backends.history"))
def upgrade_backends(ctx: CheckContext) -> None:
    """A savepoint of each release's recorded values, written by the restored serializer,
    restores with the current serializer on every backend to the declared values."""
    from .backends import _close, _fresh_dir, backend_kinds, new_backend, restore_with, write_history

    kinds = backend_kinds(ctx)
    if not kinds:
        ctx.not_applicable("no backend selected (--backend heap,bytes)")
    restored = ctx.get(RESTORED)
    for rel in releases(ctx):
        prior, olds, _ = restored[rel.release]
        values = [v for v in olds if v is not None]
        if not values:
            continue
        points = {}
        for kind in kinds:
            backend = new_backend(ctx, kind)
            try:
                write_history(backend, prior, values)
                points[kind] = backend.savepoint(_fresh_dir(ctx, "release"))
            finally:
                _close(backend)
        restore_with(ctx, _step(ctx, rel, prior), kinds, values, points)


@check(id="versioning.upgrade_keys", family="versioning", requires=("versioning.upgrade_records",))
def upgrade_keys(ctx: CheckContext) -> None:
    """For a key serializer: each recorded release restores as a key (no migration), and the
    serializer keys are then written with writes each recorded key to the recorded bytes."""
    recorded = releases(ctx)
    if not ctx.subject.key:
        raise NotApplicable("not a key serializer (Subject(key=True) enables this check)")
    restored = ctx.get(RESTORED)
    resolved = ctx.get(RESOLVED)
    current = ctx.serializer()
    for rel in recorded:
        _, olds, records = restored[rel.release]
        result = resolved[rel.release]
        if not (result.is_compatible_as_is() or result.is_compatible_with_reconfigured_serializer()):
            raise Violation(
                f"{_where(rel)}: the current key serializer judges the recorded one {result.kind.value}; "
                "Flink refuses to restore keyed state whose key serializer needs migration or is "
                "incompatible (StateMigrationException: \"The new key serializer must be compatible.\"): "
                "a key's format cannot change across a restore; keep reading and writing the "
                "release's key format, or move the state to a new key type with a job of its own")
        writer = _restoring(result, current)
        who = "the reconfigured serializer" if writer is not current else "the current serializer"
        for i, (old, data) in enumerate(zip(olds, records, strict=True)):
            got = guarded(f"{_where(rel)}: {who} writing recorded key {i}", write, writer, old)
            if got != data:
                raise Violation(
                    f"{_where(rel)}: key {i} {show(old)} was recorded as {hexdump(data)}, and {who} "
                    f"writes it as {hexdump(got)}, should write the recorded bytes: after the upgrade "
                    "a state backend looks the key up by its new bytes (RocksDB; key groups are picked "
                    "from them too) and finds nothing, losing its state without an error. Write every "
                    "key exactly as the release did (reading the old format is not enough for keys)",
                    example=_recorded(rel, i))


LEGACY = os.path.join("pre-1.7", "snapshot.bin")


@check(id="versioning.legacy_form", family="versioning", requires=("snapshot.exact_read",))
def legacy_form(ctx: CheckContext) -> None:
    """A recorded pre-1.7 (pickled serializer) snapshot is refused by default, read only when allowed."""
    directory = ctx.subject.golden
    if directory is None:
        raise NotApplicable(NO_GOLDEN_DIRECTORY)  # one skip line with versioning.golden's
    path = os.path.join(directory, LEGACY)
    if not os.path.isfile(path):
        raise NotApplicable(f"no golden file in the pre-1.7 form (<golden>/{LEGACY})")
    with open(path, "rb") as fh:
        data = fh.read()
    # Both public readers of savepoint snapshot bytes, each with its defaults.
    for reader, read in (("snapshot_from_bytes", lambda: snapshot_from_bytes(data)),
                         ("read_serializer_snapshot", lambda: read_serializer_snapshot(DataInputView(data)))):
        try:
            snapshot = read()
        except SnapshotFormatError as exc:
            if "pre-1.7" not in str(exc):
                raise Violation(f"{path}: {reader} refused it with {exc!r}, should say it is the pre-1.7 form") from None
        except Exception as exc:
            raise Violation(f"{path}: {reader} raised {type(exc).__name__}: {exc}, should raise "
                            "SnapshotFormatError naming the pre-1.7 form") from None
        else:
            raise Violation(
                f"{path}: {reader} read the pre-1.7 pickled form by default (got {show(snapshot)}), "
                "should refuse it unless allow_pickled_serializer=True (unpickling runs savepoint code)")
    allowed = _read_allowed(data, path)
    restored = guarded("restore_serializer of the pre-1.7 snapshot", allowed.restore_serializer)
    if restored != ctx.serializer():
        raise Violation(f"{path}: the pre-1.7 snapshot restores {show(restored)}, should restore "
                        f"{show(ctx.serializer())}")
    for step in declared_steps(ctx):
        with step.active():
            result = guarded(f"{step.label}: resolving compatibility with the pre-1.7 snapshot",
                             resolve_compatibility, step.new, allowed)
        expect_verdict(step, result, f"the pre-1.7 snapshot {path}")


def _read_allowed(data: bytes, path: str) -> Any:
    try:
        return snapshot_from_bytes(data, allow_pickled_serializer=True)
    except Exception as exc:
        raise Violation(f"{path}: with allow_pickled_serializer=True reading raised {type(exc).__name__}: "
                        f"{exc}, should read the pickled serializer") from None
