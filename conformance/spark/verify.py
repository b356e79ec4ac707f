"""``verify_savepoint``: check every entry of a savepoint with the savepoint's own serializers,
as one Spark job, and optionally compare it with an expected savepoint (``compare_savepoints``).

Every entry is counted and decoded: key, namespace, user key and value (nothing may be left
over, every key must sit in its key group). Each executor task reads its Parquet row groups
itself (``datasets.task_job``: the JVM only schedules, no row passes through it); every
state's row groups are decoded in one job, since a job's fixed cost dominates for small
savepoints. The value bytes shared by several entries of a batch are decoded once for all of
them (serializers are deterministic: equal bytes decode to equal objects). A caller may also
judge each decoded entry in the same pass (``judges``: the harness compares every entry with
its oracle this way). The driver never collects state rows: only per-batch counts and a
bounded sample come back. ``batch_verifier`` is the executor side, usable on Arrow batches
without Spark; with ``master="off"`` the job runs it over every row group in this process
(no Spark session), giving the same report.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from reference import TypeSerializer
from reference.backends import pickle_allowed
from reference.savepoint import (
    StateMetadata,
    decode_list_value,
    key_groups_for,
    locate,
    read_savepoint_metadata,
    state_row_groups,
)

from . import datasets
from ._common import refuse_unpickling, restored_serializer, run_job, short, without_spark
from .compare import compare_savepoints

__all__ = [
    "EntryJudge",
    "BatchSummary",
    "StateVerification",
    "VerificationReport",
    "batch_verifier",
    "verify_savepoint",
]

#: An executor-side check of one decoded entry: (key, namespace, map key or None, value, or
#: the list of elements, or None for a null map value) as objects -> a problem or None.
EntryJudge = Callable[[Any, Any, Any, Any], str | None]


@dataclass
class StateVerification:
    """One state's verification: its entries, those that do not decode (``bad_entries``),
    those that differ from the expected savepoint (``mismatches``, with ``expect``) and those
    the caller's judge rejected (``rejected``, with ``judges``), with samples."""

    name: str
    kind: str
    entries: int = 0
    bad_entries: int = 0
    mismatches: int = 0
    samples: list[str] = field(default_factory=list)
    rejected: int = 0
    rejected_samples: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.bad_entries == 0 and self.mismatches == 0 and self.rejected == 0


@dataclass
class VerificationReport:
    """What ``verify_savepoint`` found (``ok`` when nothing)."""

    savepoint: str
    expect: str | None
    states: list[StateVerification] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems and all(s.ok for s in self.states)

    @property
    def entries(self) -> int:
        return sum(s.entries for s in self.states)

    def format(self) -> str:
        verdict = "OK" if self.ok else "FAILED"
        against = f" against {self.expect}" if self.expect else ""
        lines = [f"verify {self.savepoint}{against}: {verdict}, {self.entries} entries"]
        lines += [f"  {p}" for p in self.problems]
        for s in self.states:
            rejected = f", {s.rejected} rejected" if s.rejected else ""
            lines.append(
                f"  {s.name!r} ({s.kind}): {s.entries} entries, {s.bad_entries} undecodable, "
                f"{s.mismatches} mismatching{rejected}"
            )
            lines += [f"    {sample}" for sample in s.samples + s.rejected_samples]
        return "\n".join(lines)


class BatchSummary(NamedTuple):
    """What ``batch_verifier`` reports per Arrow batch: its entries, the undecodable ones and up
    to ``sample`` messages saying why, the decodable ones the judge rejected and its messages."""

    entries: int
    bad: int
    samples: list[str]
    rejected: int
    rejected_samples: list[str]


def batch_verifier(
    state: StateMetadata, max_parallelism: int, key_serializer: TypeSerializer[Any],
    ns_serializer: TypeSerializer[Any] | None, uk_serializer: TypeSerializer[Any] | None,
    value_serializer: TypeSerializer[Any], sample: int, judge: EntryJudge | None = None,
) -> Callable[[Iterable[Any]], Iterator[BatchSummary]]:
    """The executor side of ``verify_savepoint`` for one state (``state``, in a savepoint of
    ``max_parallelism`` key groups, read with the serializers given): a function of an
    iterable of Arrow record batches with the savepoint columns, yielding per batch its
    ``BatchSummary`` (entries, undecodable entries, up to ``sample`` messages, and the same
    for ``judge`` over the entries that decode). Runs without Spark, on any batches. Each entry
    is decoded once, for both; an entry's problem is the first of: a null key, a key in another
    key group, a key, namespace, map key or value that does not decode (or is null where it
    may not be).

    Column by column: keys one by one (each entry has its own), namespaces, map keys and values
    once per distinct bytes of a batch (serializers are deterministic: equal bytes decode to
    equal objects), then the judge over the entries that decoded."""
    kind = state.kind

    def read_value(data: bytes) -> Any:
        if kind == "list":
            return [value_serializer.from_bytes(e) for e in decode_list_value(data, value_serializer)]
        return value_serializer.from_bytes(data)

    def column(data: list[Any], what: str, serializer: TypeSerializer[Any] | None,
               read: Callable[[bytes], Any] | None, null: str | None, problems: dict[int, str]) -> list[Any]:
        """The decoded column; each entry whose ``data`` does not decode gets its problem in
        ``problems`` (unless an earlier column gave it one). ``null``: the problem of a null
        (None: a null decodes to None)."""
        decoded: dict[Any, Any] = {}
        bad: dict[Any, str] = {}
        for distinct in set(data):
            if distinct is None:
                if null is None:
                    decoded[None] = None
                else:
                    bad[None] = null
            elif serializer is None:
                if distinct == b"":
                    decoded[distinct] = None
                else:
                    bad[distinct] = f"{what} {short(distinct)} present where the state has none"
            else:
                try:
                    decoded[distinct] = (read or serializer.from_bytes)(distinct)
                except Exception as exc:
                    bad[distinct] = f"{what} {short(distinct)} does not decode: {type(exc).__name__}: {exc}"
        if bad:
            for row, item in enumerate(data):
                if item in bad:
                    problems.setdefault(row, bad[item])
            return [decoded.get(item) for item in data]
        return [decoded[item] for item in data]

    def run(batches: Iterable[Any]) -> Iterator[BatchSummary]:
        for batch in batches:
            key_groups, keys, namespaces, user_keys, values = (batch.column(i).to_pylist() for i in range(5))
            problems: dict[int, str] = {}  # row -> its first problem, columns taken in order
            if None in keys:  # a corrupt file
                problems.update((row, "key is null") for row, key in enumerate(keys) if key is None)
                groups = [-1 if key is None else key_groups_for([key], max_parallelism)[0] for key in keys]
            else:
                groups = key_groups_for(keys, max_parallelism)  # batched: a fifth of the cost
            if key_groups != groups:
                for row, (found, expected) in enumerate(zip(key_groups, groups, strict=True)):
                    if found != expected:
                        problems.setdefault(row, f"key group {found}, should be {expected}")
            decoded_keys: list[Any] = []
            for row, key in enumerate(keys):
                try:
                    decoded_keys.append(None if key is None else key_serializer.from_bytes(key))
                except Exception as exc:
                    decoded_keys.append(None)
                    problems.setdefault(row, f"key {short(key)} does not decode: {type(exc).__name__}: {exc}")
            decoded = zip(
                decoded_keys,
                column(namespaces, "namespace", ns_serializer, None, "namespace is null" if ns_serializer else None,
                       problems),
                column(user_keys, "map key", uk_serializer, None, "map key is null" if uk_serializer else None,
                       problems),
                column(values, "value", value_serializer, read_value,
                       None if kind == "map" else f"null value in {kind} state", problems),
                strict=True,
            )
            samples = [f"key {short(keys[row])}: {problems[row]}" for row in sorted(problems)[:sample]]
            rejected = 0
            rejected_samples: list[str] = []
            if judge is not None:
                for row, entry in enumerate(decoded):
                    if problems and row in problems:
                        continue
                    try:
                        verdict = judge(*entry)
                    except Exception as exc:
                        verdict = f"judging it raised {type(exc).__name__}: {exc}"
                    if verdict is not None:
                        rejected += 1
                        if len(rejected_samples) < sample:
                            rejected_samples.append(verdict)
            yield BatchSummary(batch.num_rows, len(problems), samples, rejected, rejected_samples)

    return run


def verify_savepoint(
    savepoint: str | os.PathLike[str],
    *,
    expect: str | os.PathLike[str] | None = None,
    sample: int = 5,
    master: str | None = None,
    spark: Any = None,
    allow_pickle: bool | Iterable[str] = (),
    judges: Callable[[StateMetadata, TypeSerializer[Any]], EntryJudge | None] | None = None,
) -> VerificationReport:
    """Check that every entry of ``savepoint`` decodes with the savepoint's own serializers,
    nothing left over, every key in its key group; with ``expect`` (another savepoint, e.g.
    the oracle's or a single-process backend's), also that both hold the same states with the
    same snapshots and byte-identical entries (``compare_savepoints``, after the decoding job).
    ``judges(state, its restored value serializer)``, called on the driver for each state,
    may give an ``EntryJudge`` that executors call on every entry that decodes, in the same
    pass (it must be picklable); what it rejects is counted in ``rejected``. Never raises for
    what it finds: the report says it (``report.ok``), with up to ``sample`` samples of each
    kind per state; raises ``SavepointFormatError`` for an unusable savepoint,
    ``PickleNotAllowedError`` (before Spark starts) for a state written with PickleSerializer
    that ``allow_pickle`` (state names, or True) does not name: decoding it would unpickle, and
    ``SparkJobError`` if a job fails. ``spark`` is a session to run on, else ``master``'s
    (``get_session``); ``master="off"`` runs the same executor side (``batch_verifier`` over
    every row group) in this process, without Spark: the same report, for savepoints one
    process reads quickly."""
    refuse_unpickling(savepoint, allow_pickle)
    if expect is not None:
        refuse_unpickling(expect, allow_pickle)
    source = locate(savepoint).uri
    metadata = read_savepoint_metadata(source)  # an unusable savepoint fails before Spark starts
    if expect is not None:
        read_savepoint_metadata(expect)
    local = without_spark(spark, master)
    if spark is None and not local:
        from .session import get_session

        spark = get_session(master)
    key_serializer = restored_serializer(metadata.key_serializer_snapshot, "the key serializer", allow_pickle is True)
    assert key_serializer is not None
    decoders, tasks = [], []
    for index, state in enumerate(metadata.states):
        where = f"state {state.name!r}"
        trusted = pickle_allowed(allow_pickle, state.name)
        value_serializer = restored_serializer(state.value_serializer_snapshot, where, trusted)
        assert value_serializer is not None
        decoders.append(batch_verifier(
            state, metadata.max_parallelism, key_serializer,
            restored_serializer(state.namespace_serializer_snapshot, where + " namespace", trusted),
            restored_serializer(state.user_key_serializer_snapshot, where + " map key", trusted),
            value_serializer, sample, None if judges is None else judges(state, value_serializer),
        ))
        # Footers and columns are checked here, where a damaged file can still be named with
        # its state.
        files = state_row_groups(source, state)
        tasks += [(index, file, group) for file, group in datasets.row_group_tasks(files)]
    report = VerificationReport(savepoint=source, expect=None if expect is None else locate(expect).uri)
    report.states = [StateVerification(state.name, state.kind) for state in metadata.states]
    if tasks:
        decode = _decode_row_groups(tasks, decoders)
        if local:
            collect: Callable[[], Any] = lambda: list(decode(range(len(tasks))))  # noqa: E731
        else:
            if locate(source).remote:
                datasets.forward_store_environment(spark)
            collect = datasets.task_job(spark, len(tasks), decode).collect
        for index, (entries, bad, samples, rejected, rejected_samples) in run_job(
            f"verifying {source}", collect, in_process=local
        ):
            total = report.states[index]
            total.entries += int(entries or 0)
            total.bad_entries += int(bad or 0)
            total.samples.extend((samples or [])[: max(0, sample - len(total.samples))])
            total.rejected += int(rejected or 0)
            total.rejected_samples.extend((rejected_samples or [])[: max(0, sample - len(total.rejected_samples))])
    if expect is not None:
        comparison = compare_savepoints(source, expect, sample=sample, spark=spark, master=master,
                                        allow_pickle=allow_pickle)
        report.problems += comparison.problems
        by_name = {s.name: s for s in report.states}
        for compared in comparison.states:
            report.problems += [f"state {compared.name!r}: {difference}" for difference in compared.differences]
            by_name[compared.name].mismatches += compared.mismatches
            by_name[compared.name].samples += compared.samples
    return report


def _decode_row_groups(
    tasks: list[tuple[int, str, int]], decoders: list[Callable[[Iterable[Any]], Iterator[BatchSummary]]]
) -> Callable[[Iterable[int]], Iterator[tuple[int, BatchSummary]]]:
    """Executor side of the decoding job: task ``t`` reads row group ``tasks[t][2]`` of data
    file ``tasks[t][1]`` itself and runs the decoder of state ``tasks[t][0]`` over it, each
    summary tagged with the state's index."""

    def run(task_ids: Iterable[int]) -> Iterator[tuple[int, BatchSummary]]:
        for task in task_ids:
            index, file, group = tasks[task]
            for summary in decoders[index](datasets.read_row_group(file, group)):
                yield index, summary

    return run
