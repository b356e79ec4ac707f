"""Real Flink savepoints for the tests: SavepointJob.java (beside this module) writes canonical
savepoints with Flink 2.3 in a local MiniCluster, says in ``expected.json`` what every state
holds, and restores savepoints with given state descriptors, reporting what Flink read back or
why it refused.

The Java sources (SavepointJob.java and its user types SavepointPojo.java, SavepointColor.java,
SavepointOpaque.java) are compiled once against the flink-dist jar of the ``flink`` extra and the
classes cached under ``$XDG_CACHE_HOME/state-conformance/flink-classes/<hash>`` (default
``~/.cache/...``); the hash covers the sources, the jar's path, size and mtime, and the javac
used, so a change to any of them compiles afresh.

Cases
-----
``CASES`` (the one list of them) maps a case name to its job configuration: ``backend``
(``hashmap`` | ``rocksdb``), ``storage`` (``jobmanager``: every state inline in ``_metadata``;
``files``: filesystem checkpoint storage with ``execution.checkpointing.data-inline-threshold``
0, so each subtask's state is a file of its own beside ``_metadata``), ``compression``
(``execution.checkpointing.snapshot-compression``), ``maxp`` (max parallelism; above 128 the
key-group prefix takes two bytes), ``p`` (parallelism of every operator but the source) and
``key`` (``string`` | ``long`` | ``tuple``: the keyed-states operator's key type, ``tuple`` being
``Tuple2<String, Long>``); ``bulk`` (optional, for benchmarks such as
bench/bench_flink_export.py: N more keys ``bulk-<i>`` (a long key: 2**50 + i) with a ``count``
value and one ``amounts`` entry each, so 2N more keyed entries, none of them listed in
expected.json, which then says ``"bulk": N`` and ``"bulk_state"`` in its ``config``; with
``bulkstate="pojo"`` each bulk key gets a ``pojo`` value only, ``SavepointPojo("bulk-<i>", i,
i / 4.0, i % 1000)``, for bench/bench_flink_migrate.py). Every case runs the same job:

- ``source`` (parallelism 1): operator list state ``emitted`` (long: records emitted);
- ``opstate``: operator list state ``seen-split`` (string) and union list state ``seen-union``
  (long);
- ``keyed-states``, keyed by the case's key, VoidNamespace: ``count`` value<long>; ``pojo``
  value<SavepointPojo> (fields name: String, total: long, ratio: double, tag: Integer);
  ``tuple`` value<Tuple2<String, Long>>; ``row`` value<Row(String, Long, Double)> (a positional
  flink-core Row); ``color`` value<SavepointColor> (an enum); ``opaque`` value<SavepointOpaque>
  (not a POJO: Kryo); ``names`` list<string>; ``amounts`` map<string, long> (with a null value
  for some keys in the RocksDB cases); ``fresh`` value<long> with a TTL of one day; ``sum``
  reducing<long>; ``avg`` aggregating (long in, accumulator Tuple2<Long, Long> of sum and
  count, which is also its result); event-time timers and
  processing-time timers (``_timer_state/event_user-timers``,
  ``_timer_state/processing_user-timers``), registered and never fired;
- ``window``, keyed by String: one-hour tumbling event-time windows reducing Tuple2<String, Long>
  (``window-contents`` in TimeWindow namespaces, one event-time timer per window at its end - 1
  in ``_timer_state/event_window-timers``; ``_timer_state/processing_window-timers`` stays empty).

Not covered: an Avro GenericRecord state (apache-flink-libraries ships no Avro; expected.json
says so under ``skipped``), and a null map value with the heap backend (Flink 2.3's heap backend
fails a canonical savepoint holding one, with a NullPointerException in
HeapKeyValueStateIterator).

expected.json
-------------
``{"format": 1, "case", "flink_version", "config": {"backend", "storage", "compression",
"max_parallelism", "parallelism", "key_type"}, "savepoint": <directory name beside
expected.json>, "skipped": {what: why}, "operators": {uid: {"name", "parallelism",
"max_parallelism", "keyed", "key_type", "states": {state name: {"kind", "type", "namespace",
"ttl_ms", "entries"}}}}}``

- An operator's ``name`` is the one ``_metadata`` gives it beside its uid (the uid with the
  operators here, but ``Source: source`` for the source).
- ``kind``: ``value`` | ``list`` | ``map`` | ``reducing`` | ``aggregating`` | ``timer`` |
  ``operator_list`` | ``operator_union_list``; ``type`` names the stored value type (``long``,
  ``int``, ``double``, ``string``, ``pojo``, ``tuple2<string,long>``, ``tuple2<long,long>``,
  ``row<string,long,double>`` (any field list), ``enum``, ``kryo``; ``timer`` for timers; the
  element type for lists, the value type for maps, whose user keys are strings);
  ``namespace``: ``void`` | ``time_window`` (null for operator state); ``ttl_ms``: the TTL, or
  null.
- A keyed entry is ``{"key", "key_group", "namespace", "value"}``; map states add
  ``"user_key"`` (one entry per user key); a list state's value is the list of its elements in
  order; TTL states add ``"ttl_last_access": [min, max]`` (the wall clock read just before and
  just after the write: Flink's stored timestamp lies within); timers have ``"timestamp"`` and
  no value. ``key_group`` is Flink's KeyGroupRangeAssignment of the key.
- An operator-state entry is ``{"subtask", "value"}``, one per element, in list order.
- The order of entries carries no meaning (compare as sets); the order of a list's elements
  does.

Values (keys and namespaces alike): long/int/short/byte -> JSON number; String -> JSON string;
boolean -> bool; null -> null; double -> ``{"f64": 16 hex digits of the IEEE 754 bits}``;
float -> ``{"f32": 8 hex digits}``; byte[] -> ``{"bytes": hex}``; enum -> the constant's name;
Tuple -> list by position; Row -> ``{"row_kind": "INSERT" | "UPDATE_BEFORE" | "UPDATE_AFTER" |
"DELETE", "fields": [...]}``; POJO -> ``{field name: value}`` (its public fields); TimeWindow
-> ``{"start", "end"}``; VoidNamespace -> null; a Kryo value -> ``{"opaque": true, "class":
name, "bytes": hex of Flink's KryoSerializer output for it}``.

Restore
-------
``remigrate`` is Flink's own migration, for benchmarks: one savepoint restored with new types
and a new savepoint taken at once (SavepointJob's remigrate mode), timed inside the JVM.

``restore_savepoints`` restores many savepoints in one JVM run. A ``RestoreRequest`` names the
savepoint, the job configuration (backend, maxp, p, key) and the new state descriptors:
``state_types`` (keyed state name -> a type as above, e.g. ``row<string,long>`` or ``string``;
the user classes may be replaced by other versions compiled into a directory put first on the
classpath with ``classpath_first``), ``ttl`` (state name -> TTL on or off) and ``skip``
(keyed states the restored job does not declare: Flink keeps their data without judging or
reading them, so one run can restore requests that each change another user class). The restored job
reads every keyed state of every key the writing job used, lets every event-time timer and
window fire (the source ends, so the watermark reaches the end of time) and reports the restored
operator state. Each read comes back as an entry of the same form as in expected.json plus
``"uid"`` and ``"state"`` (operator state as ``{"subtask", "value"}``; the union list from
subtask 0 only, which gets the whole of it; processing-time timers do not fire and are not
reported; TTL values without ``ttl_last_access``). The verdict is ``restored``, or ``failed``
with ``error = {"state_migration_exception": bool, "chain": [{"class", "message"}, ...]}``
(the exception chain, outermost first).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SOURCES = ("SavepointJob.java", "SavepointPojo.java", "SavepointColor.java", "SavepointOpaque.java")
METADATA_MAGIC = 0x4960672D

CASES: dict[str, dict[str, Any]] = {
    "hashmap_inline_string": dict(backend="hashmap", storage="jobmanager", compression=False, maxp=128, p=2, key="string"),
    "rocksdb_inline_string": dict(backend="rocksdb", storage="jobmanager", compression=False, maxp=128, p=2, key="string"),
    "hashmap_files_long": dict(backend="hashmap", storage="files", compression=False, maxp=256, p=2, key="long"),
    "rocksdb_files_tuple": dict(backend="rocksdb", storage="files", compression=False, maxp=256, p=1, key="tuple"),
    "hashmap_compressed_tuple": dict(backend="hashmap", storage="files", compression=True, maxp=128, p=1, key="tuple"),
    "rocksdb_compressed_long": dict(backend="rocksdb", storage="jobmanager", compression=True, maxp=200, p=2, key="long"),
    "hashmap_compressed_string_max": dict(
        backend="hashmap", storage="jobmanager", compression=True, maxp=32768, p=2, key="string"),
}


@dataclasses.dataclass(frozen=True)
class FlinkJava:
    """How to run the compiled SavepointJob: the java binary, the flink-dist jar, the classes."""

    java: str
    javac: str
    jar: str
    classes: Path

    def command(self, *args: str, classpath_first: Iterable[os.PathLike | str] = ()) -> list[str]:
        classpath = [str(p) for p in classpath_first] + [str(self.classes), self.jar]
        return [self.java, "-Xmx1g", "-cp", os.pathsep.join(classpath), "SavepointJob", *args]


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "state-conformance" / "flink-classes"


def compile_cached(sources: Iterable[Path], classpath: str, javac: str, marker: str) -> Path:
    """The classes of ``sources`` compiled against ``classpath``, from the cache when the same
    sources, classpath jars and javac compiled them before; ``marker`` is a class file the
    compiled directory must hold."""
    sources = list(sources)
    digest = hashlib.sha256()
    for source in sources:
        digest.update(source.name.encode() + b"\0" + source.read_bytes() + b"\0")
    for jar in classpath.split(os.pathsep):
        stat = os.stat(jar)
        digest.update(f"{os.path.abspath(jar)}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    digest.update(javac.encode())
    root = _cache_root()
    target = root / digest.hexdigest()[:24]
    if not (target / marker).is_file():
        root.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix="compiling-", dir=root))
        compiled = subprocess.run(
            [javac, "-nowarn", "-encoding", "UTF-8", "-cp", classpath, "-d", str(scratch),
             *(str(source) for source in sources)],
            capture_output=True, text=True, timeout=600,
        )
        if compiled.returncode != 0:
            shutil.rmtree(scratch, ignore_errors=True)
            names = ", ".join(source.name for source in sources)
            raise RuntimeError(f"javac failed on {names} against {classpath}: {compiled.stderr}")
        try:
            scratch.rename(target)  # atomic: a concurrent session either wins or finds it done
        except OSError:
            shutil.rmtree(scratch, ignore_errors=True)
            if not (target / marker).is_file():
                raise
    return target


def compile_job(jar: str, javac: str, java: str) -> FlinkJava:
    """SavepointJob compiled against ``jar``, from the cache when the same sources, jar and javac
    compiled it before."""
    classes = compile_cached((HERE / name for name in SOURCES), jar, javac, "SavepointJob.class")
    return FlinkJava(java=java, javac=javac, jar=jar, classes=classes)


def compile_user_classes(flink: FlinkJava, sources: Mapping[str, str], directory: Path) -> Path:
    """Java sources (file name -> text), e.g. another version of SavepointPojo, compiled into
    ``directory`` for ``restore_savepoints(..., classpath_first=[directory])``."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in sources.items():
        (directory / name).write_text(text, encoding="utf-8")
    compiled = subprocess.run(
        [flink.javac, "-nowarn", "-encoding", "UTF-8", "-cp", os.pathsep.join([str(flink.classes), flink.jar]),
         "-d", str(directory), *(str(directory / name) for name in sources)],
        capture_output=True, text=True, timeout=600,
    )
    if compiled.returncode != 0:
        raise RuntimeError(f"javac failed on {sorted(sources)}: {compiled.stderr}")
    return directory


def case_argument(name: str, config: Mapping[str, Any]) -> str:
    """One case as SavepointJob's write mode takes it: ``name:key=value,...``."""
    options = ",".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in config.items())
    return f"{name}:{options}"


def write_savepoints(
    flink: FlinkJava, out: Path, cases: Mapping[str, Mapping[str, Any]] = CASES, timeout: float = 1800,
) -> tuple[dict[str, tuple[Path, dict]], float]:
    """Runs one JVM writing a savepoint per case into ``out/<case>/``; returns {case: (savepoint
    directory, expected.json)} and the seconds the run took."""
    started = time.monotonic()
    ran = subprocess.run(
        flink.command("write", str(out), *(case_argument(n, c) for n, c in cases.items())),
        capture_output=True, text=True, timeout=timeout,
    )
    seconds = time.monotonic() - started
    if ran.returncode != 0:
        raise RuntimeError(
            f"SavepointJob write failed (exit {ran.returncode}) after {seconds:.0f} s:\n"
            f"{ran.stdout[-3000:]}\n{ran.stderr[-6000:]}"
        )
    result = {}
    for name in cases:
        expected = json.loads((out / name / "expected.json").read_text(encoding="utf-8"))
        result[name] = (out / name / expected["savepoint"], expected)
    return result, seconds


@dataclasses.dataclass(frozen=True)
class RestoreRequest:
    """One restore: the savepoint, the job's configuration and the new state descriptors."""

    name: str
    savepoint: Path
    backend: str
    maxp: int
    p: int
    key: str
    state_types: Mapping[str, str] = dataclasses.field(default_factory=dict)
    ttl: Mapping[str, bool] = dataclasses.field(default_factory=dict)
    skip: tuple[str, ...] = ()

    @classmethod
    def of(cls, name: str, savepoint: Path, expected: Mapping[str, Any], **changes: Any) -> RestoreRequest:
        """A request restoring a savepoint of SavepointJob with the configuration it was written
        with (from its expected.json), ``changes`` applied."""
        config = expected["config"]
        fields: dict[str, Any] = dict(
            backend=config["backend"], maxp=config["max_parallelism"], p=config["parallelism"],
            key={"tuple2<string,long>": "tuple"}.get(config["key_type"], config["key_type"]),
        )
        fields.update(changes)
        return cls(name=name, savepoint=savepoint, **fields)

    def line(self) -> str:
        for text in (self.name, str(self.savepoint), *self.state_types.values(), *self.skip):
            if not text or any(c.isspace() for c in text):
                raise ValueError(f"restore request {self.name!r}: {text!r} is empty or has white space; "
                                 "SavepointJob reads space-separated fields")
        parts = [self.name, str(self.savepoint), f"backend={self.backend}", f"maxp={self.maxp}",
                 f"p={self.p}", f"key={self.key}"]
        parts += [f"state.{k}={v}" for k, v in self.state_types.items()]
        parts += [f"ttl.{k}={'on' if v else 'off'}" for k, v in self.ttl.items()]
        parts += [f"skip.{k}=on" for k in self.skip]
        return " ".join(parts)


@dataclasses.dataclass
class RestoreResult:
    """What Flink did with one request: the verdict, the error, and everything it read."""

    name: str
    verdict: str
    error: dict | None
    reads: list[dict]
    millis: int


def restore_savepoints(
    flink: FlinkJava, requests: Iterable[RestoreRequest], classpath_first: Iterable[os.PathLike | str] = (),
    timeout: float = 1800,
) -> tuple[dict[str, RestoreResult], float]:
    """Runs one JVM restoring every request in turn; returns {request name: result} and the
    seconds the run took."""
    requests = list(requests)
    with tempfile.TemporaryDirectory(prefix="savepoint-restore-") as scratch:
        spec = Path(scratch) / "requests.txt"
        results = Path(scratch) / "results.jsonl"
        spec.write_text("".join(r.line() + "\n" for r in requests), encoding="utf-8")
        started = time.monotonic()
        ran = subprocess.run(
            flink.command("restore", str(spec), str(results), classpath_first=classpath_first),
            capture_output=True, text=True, timeout=timeout,
        )
        seconds = time.monotonic() - started
        if ran.returncode != 0:
            raise RuntimeError(
                f"SavepointJob restore failed (exit {ran.returncode}) after {seconds:.0f} s:\n"
                f"{ran.stdout[-3000:]}\n{ran.stderr[-6000:]}"
            )
        lines = [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines() if line]
    out: dict[str, RestoreResult] = {}
    reads: dict[str, list[dict]] = {r.name: [] for r in requests}
    for line in lines:
        name = line.pop("request")
        if "verdict" in line:
            out[name] = RestoreResult(name, line["verdict"], line.get("error"), reads[name], line["millis"])
        else:
            reads[name].append(line)
    missing = [r.name for r in requests if r.name not in out]
    if missing:
        raise RuntimeError(f"SavepointJob restore gave no verdict for {missing}; stderr:\n{ran.stderr[-6000:]}")
    return out, seconds


def remigrate(flink: FlinkJava, request: RestoreRequest, out: Path, classpath_first: Iterable[os.PathLike | str] = (),
              timeout: float = 3600) -> dict[str, Any]:
    """Flink's own migration of ``request.savepoint`` (SavepointJob's remigrate mode: restored
    with the request's types, a new canonical savepoint taken at once, state in files under
    ``out``); returns {"millis": from submitting the job to the savepoint's completion,
    "savepoint": its directory}."""
    options = request.line().split(" ")[2:] + ["storage=files"]
    ran = subprocess.run(flink.command("remigrate", str(request.savepoint), str(out), *options,
                                       classpath_first=classpath_first),
                         capture_output=True, text=True, timeout=timeout)
    if ran.returncode != 0:
        raise RuntimeError(f"SavepointJob remigrate failed (exit {ran.returncode}):\n{ran.stdout[-3000:]}\n"
                           f"{ran.stderr[-6000:]}")
    return json.loads(ran.stdout.strip().splitlines()[-1])


def canonical(entry: Mapping[str, Any]) -> str:
    """An entry as a comparable string (the JSON of its items, sorted)."""
    return json.dumps(entry, sort_keys=True, ensure_ascii=False)


def restorable(expected: Mapping[str, Any]) -> list[str]:
    """What restoring a savepoint unchanged must read back, from its expected.json: every
    keyed entry (TTL bounds left out), the event-time timers and windows (they fire), the
    operator state (split lists without the subtask, which restoring may change; the union list
    once), each as ``canonical`` strings, sorted."""
    out = []
    for uid, operator in expected["operators"].items():
        for state, spec in operator["states"].items():
            if spec["kind"] == "timer" and "processing_" in state:
                continue
            for entry in spec["entries"]:
                entry = {k: v for k, v in entry.items() if k != "ttl_last_access"}
                if spec["kind"] == "operator_list":
                    entry.pop("subtask")
                elif spec["kind"] == "operator_union_list":
                    entry["subtask"] = 0
                out.append(canonical({"uid": uid, "state": state, **entry}))
    return sorted(out)


def read_back(result: RestoreResult) -> list[str]:
    """A restore's reads in the form of ``restorable``."""
    out = []
    for read in result.reads:
        read = dict(read)
        if read["uid"] in ("source", "opstate") and read["state"] != "seen-union":
            read.pop("subtask")
        out.append(canonical(read))
    return sorted(out)
