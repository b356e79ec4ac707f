"""One Spark session per process: local mode by default, any master URL on request.

Spark is imported here, lazily, and only when a session is asked for; importing ``conformance``
or ``reference`` never imports pyspark. Before the JVM starts we check Java ourselves, because
Spark's own failure ("Java gateway process exited before sending its port number") does not
say that Java is missing or too old.

Scratch space: a session keeps everything Spark and its JVM write to temporary storage
(Spark's local directories: shuffle and block-manager files, PySpark's driver temp files;
``java.io.tmpdir``: native libraries, artifacts) in one directory of its own,
``<system temp>/state-conformance-spark/<host>-<pid>-<random>``, removed when the session
stops or the process exits. On a cluster (any master but ``local``/``local-cluster``) that holds
the driver's files only: executors run on the workers' machines and use the directories their
workers give them (``SPARK_LOCAL_DIRS``, ``SPARK_WORKER_DIR`` of each worker).

Logging: a session's JVM logs with this package's log4j 2 configuration (``LOG_CONFIG``,
``log4j2.properties`` next to this module): errors only, on stderr, so that Spark's start-up
warnings, which nobody can act on, do not reach the terminal; the log level of the running
session is ``ERROR`` too. A caller's own ``-Dlog4j.configurationFile`` in
``spark.driver.extraJavaOptions`` wins. The JVM itself prints one line of its own that no
logging configuration reaches ("WARNING: Using incubator modules", from the module options
Spark's launcher always passes): the driver's JVM is started with its stderr through a pipe
that this process copies to its own stderr (file descriptor 2) line by line, leaving out the
lines of ``JVM_NOISE`` (so everything else, a failure to start included, still shows, and
the executors' Python workers, which inherit that stderr, are shown as before).

Clusters: with ``spark://host:port`` (or any other cluster manager) every worker machine needs
this package and its dependencies installed for a Python at the same path as the driver's
(``sys.executable``, which the executors are told to run), and must reach the savepoints' storage
itself. A killed process leaves its directory behind; the next session on
the same host removes every such directory whose process is gone
(``reference.savepoint.remove_abandoned``).
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from typing import Any

from reference import StateError

from .._engine.errors import ConformanceError

__all__ = [
    "DEFAULT_MASTER",
    "SUPPORTED_JAVA",
    "SparkSessionError",
    "SparkUnavailableError",
    "JavaNotFoundError",
    "JavaVersionError",
    "java_version",
    "get_session",
    "stop_session",
    "start_in_background",
    "HARNESS_CONFIG",
    "running",
    "scratch_directory",
    "SCRATCH_PARENT",
    "LOG_CONFIG",
]

DEFAULT_MASTER = "local[*]"
#: The harness's session (the spark family): its jobs are many and short, so the JVM's
#: optimising JIT and parallel GC threads cost more CPU than they save. C1 only and the serial
#: GC halved the JVM's CPU time for five 100k-entry histories (21 s -> 11 s) on 2 cores.
#: Sessions started for ``conformance migrate``/``verify`` keep the JVM's defaults.
HARNESS_CONFIG = {"spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"}
#: The log4j 2 configuration of every session started here (the driver's JVM, and in local
#: mode the executors'): errors only. Spark's default profile prints its start-up warnings
#: (no native Hadoop library, the hostname resolving to loopback, "Using Spark's default log4j
#: profile", the default log level) on every start; errors still show.
LOG_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2.properties")
#: Java major versions PySpark 4 runs on.
SUPPORTED_JAVA = (17, 21)

_lock = threading.Lock()
_session: Any = None
_master: str | None = None
_scratch: str | None = None
#: Name of the folder under the system temp directory that holds the sessions' scratch space.
SCRATCH_PARENT = "state-conformance-spark"


class SparkSessionError(StateError, ConformanceError):
    """A Spark session could not be started or is not the one asked for."""


class SparkUnavailableError(SparkSessionError):
    """PySpark is not installed in this interpreter."""


class JavaNotFoundError(SparkSessionError):
    """No ``java`` executable was found (JAVA_HOME or PATH)."""


class JavaVersionError(SparkSessionError):
    """The Java found is a version Spark does not run on."""


def _java_executable() -> tuple[str | None, str]:
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = os.path.join(home, "bin", "java")
        return (candidate if os.access(candidate, os.X_OK) else None), f"JAVA_HOME={home}"
    return shutil.which("java"), "PATH"


def java_version() -> tuple[str, int]:
    """(path of the java executable, its major version) as Spark would use it.

    Raises ``JavaNotFoundError`` or ``JavaVersionError`` with what to do."""
    java, where = _java_executable()
    if java is None:
        raise JavaNotFoundError(
            f"Java not found (looked in {where}): Spark needs Java "
            f"{' or '.join(map(str, SUPPORTED_JAVA))}; install a JDK 17 and put it on PATH or "
            "set JAVA_HOME, or run the suite with --spark off"
        )
    try:
        proc = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        raise JavaNotFoundError(f"Java at {java} (from {where}) does not run: {exc}") from None
    text = proc.stderr + proc.stdout
    match = re.search(r'version "(\d+)(?:\.(\d+))?', text)
    if proc.returncode != 0 or not match:
        raise JavaNotFoundError(
            f"Java at {java} (from {where}) did not report a version (exit {proc.returncode}): "
            f"{text.strip()[:200]!r}; Spark needs Java 17"
        )
    major = int(match.group(1))
    if major == 1 and match.group(2):  # "1.8.0_..." is Java 8
        major = int(match.group(2))
    if major not in SUPPORTED_JAVA:
        raise JavaVersionError(
            f"Java {major} at {java} (from {where}) cannot run Spark 4: it needs Java "
            f"{' or '.join(map(str, SUPPORTED_JAVA))}; point JAVA_HOME at a JDK 17"
        )
    return java, major


def _java_option(name: str, path: str) -> str:
    """``-Dname=path`` as one item of Spark's ``extraJavaOptions`` (split on white space, with
    quotes honoured)."""
    return f'-D{name}="{path}"' if any(c.isspace() for c in path) else f"-D{name}={path}"


def _is_local(master: str) -> bool:
    return master == "local" or master.startswith("local[") or master.startswith("local-cluster")


def require_pyspark() -> None:
    """Raise ``SparkUnavailableError`` (what to install, or to run without Spark) unless PySpark
    can be imported here."""
    try:
        import pyspark  # noqa: F401
    except ImportError as exc:
        raise SparkUnavailableError(
            f"PySpark is not installed in {sys.executable} ({exc}); install the spark extra "
            "(pip install 'state-conformance[spark]'), or run without Spark (--spark off)"
        ) from None


def get_session(master: str | None = None, *, config: dict[str, str] | None = None) -> Any:
    """The process's SparkSession, started on first use and reused afterwards.

    ``master`` defaults to ``local[*]``. Workers run this very interpreter
    (``spark.pyspark.python = sys.executable``) so that they see the same packages. Asking for
    a different master than the running session's is an error: Spark allows one session per
    process, and silently reusing another master would run jobs somewhere unexpected.
    """
    global _session, _master
    wanted = master or DEFAULT_MASTER
    if wanted == "off":
        raise SparkSessionError(
            "master 'off' means without Spark: there is no session for it; run the job with "
            "master='off' (migrate_savepoint, verify_savepoint, compare_savepoints) instead"
        )
    with _lock:
        if _session is not None and _session_alive(_session):
            if master is not None and master != _master:
                raise SparkSessionError(
                    f"a Spark session with master {_master!r} is already running in this "
                    f"process; cannot start one with {wanted!r} (one session per process: "
                    "stop_session() first or use the same --spark value)"
                )
            return _session
        java_version()
        require_pyspark()
        from pyspark.sql import SparkSession
        # The Python side reads PYSPARK_PYTHON, the JVM side spark.pyspark.python: set both so
        # driver and workers run this interpreter (a worker with another Python cannot unpickle
        # the serializers we ship).
        os.environ["PYSPARK_PYTHON"] = sys.executable
        os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
        scratch = _new_scratch()
        # Spark's local directories through the environment (the JVM and its Python workers
        # inherit it): the spark.local.dir setting would make Spark warn on every start.
        os.environ["SPARK_LOCAL_DIRS"] = scratch
        cores = os.cpu_count() or 2
        settings = {
            "spark.app.name": "state-conformance",
            "spark.pyspark.python": sys.executable,
            "spark.pyspark.driver.python": sys.executable,
            "spark.executorEnv.PYSPARK_PYTHON": sys.executable,
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.sql.shuffle.partitions": str(max(2, 2 * cores) if _is_local(wanted) else 200),
            "spark.sql.execution.arrow.pyspark.enabled": "true",
            "spark.python.worker.reuse": "true",
            "spark.sql.adaptive.enabled": "false",
        }
        settings.update(config or {})
        # The JVM's own temporary files go to the scratch directory too, and its log4j
        # configuration is ours (LOG_CONFIG), both appended to any options the caller gives (a
        # caller's own log4j.configurationFile is kept). A cluster's executors run on other
        # machines, where these files do not exist: they keep their workers' directories and
        # logging.
        jvms = ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions") if _is_local(wanted) \
            else ("spark.driver.extraJavaOptions",)
        for key in jvms:
            options = [settings.get(key, ""), _java_option("java.io.tmpdir", scratch)]
            if "log4j.configurationFile" not in options[0]:
                options.append(_java_option("log4j.configurationFile", LOG_CONFIG))
            settings[key] = " ".join(o for o in options if o)
        builder = SparkSession.builder.master(wanted)
        for key, value in settings.items():
            builder = builder.config(key, value)
        try:
            _start_context(wanted, settings)
            session = builder.getOrCreate()
        except Exception as exc:  # the JVM failed to start: say what we know
            _remove_scratch()
            raise SparkSessionError(
                f"Spark could not start with master {wanted!r}: {type(exc).__name__}: "
                f"{str(exc).strip()[:500]}"
            ) from exc
        session.sparkContext.setLogLevel("ERROR")
        _session, _master = session, wanted
        return session


#: Lines the driver's JVM prints to stderr that nobody can act on (matched at a line's start).
JVM_NOISE = (b"WARNING: Using incubator modules:",)


def _copy_stderr(read_end: int) -> None:
    """Copy the JVM's stderr (the pipe's ``read_end``) to file descriptor 2, line by line,
    without the ``JVM_NOISE`` lines, until every writer has closed it."""
    with os.fdopen(read_end, "rb", buffering=0) as pipe:
        for line in iter(pipe.readline, b""):
            if line.startswith(JVM_NOISE):
                continue
            view = memoryview(line)
            while view:
                view = view[os.write(2, view):]


def _start_context(master: str, settings: dict[str, str]) -> None:
    """Start the SparkContext the session builder then takes, its JVM's stderr filtered
    (``_copy_stderr``). Nothing to do when this process has a JVM already (a context stopped
    and started again reuses it) or the JVM was started by someone else
    (``PYSPARK_GATEWAY_PORT``: spark-submit, a notebook)."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None or "PYSPARK_GATEWAY_PORT" in os.environ:
        return
    conf = SparkConf().setMaster(master).setAll(list(settings.items()))
    read_end, write_end = os.pipe()
    threading.Thread(target=_copy_stderr, args=(read_end,), name="spark-jvm-stderr", daemon=True).start()
    try:
        gateway = launch_gateway(conf, popen_kwargs={"stderr": write_end})
    finally:
        os.close(write_end)
    SparkContext(conf=conf, gateway=gateway)


def running() -> bool:
    """Whether this process has started (or is starting) a Spark session."""
    return _session is not None or _warming is not None


def _session_alive(session: Any) -> bool:
    try:
        return session.sparkContext._jsc is not None
    except Exception:  # pragma: no cover - a torn-down gateway
        return False


def stop_session() -> None:
    """Stop the process's session (a later ``get_session`` starts a new one)."""
    global _session, _master
    with _lock:
        if _session is not None:
            _session.stop()
        _session, _master = None, None
        _remove_scratch()


def _new_scratch() -> str:
    """A new scratch directory for this process's session (abandoned ones of dead processes
    on this host are removed first)."""
    global _scratch
    from reference.savepoint import new_owned_directory

    _remove_scratch()
    parent = os.path.join(tempfile.gettempdir(), SCRATCH_PARENT)
    os.makedirs(parent, exist_ok=True)
    path = _scratch = new_owned_directory("", parent)
    return path


def _remove_scratch() -> None:
    global _scratch
    if _scratch is not None:
        shutil.rmtree(_scratch, ignore_errors=True)
        _scratch = None


def scratch_directory() -> str | None:
    """The running session's scratch directory (None without a session)."""
    return _scratch


@atexit.register
def _stop_at_exit() -> None:
    # Spark's own shutdown hook runs in the JVM; the scratch directory is ours to remove.
    if _session is not None:
        try:
            _session.stop()
        except Exception:  # pragma: no cover - a torn-down gateway at interpreter exit
            pass
    _remove_scratch()


_warming: threading.Thread | None = None


def _warm_up(master: str | None, config: dict[str, str] | None) -> None:
    try:
        warm_workers(get_session(master, config=config))
    except Exception:
        pass  # only an optimisation: the first check that needs Spark reports any problem


def warm_workers(session: Any, modules: tuple[str, ...] = ()) -> None:
    """Start ``session``'s Python workers with their imports (pyarrow, the reference and
    ``modules``): one tiny job over as many tasks as cores, whose workers worker reuse then
    keeps for the real jobs. The workers get the store variables the jobs forward
    (``forward_store_environment``) first: Spark keeps a pool of workers per environment, so
    workers started with another one would sit idle while the first job starts its own."""
    from .datasets import forward_store_environment, task_job

    forward_store_environment(session)

    def import_in_worker(task_ids: Any) -> Any:  # nested: shipped by value
        import importlib

        for module in ("pyarrow.parquet", "reference.backends", "reference.savepoint", *modules):
            importlib.import_module(module)
        yield from task_ids

    task_job(session, max(1, session.sparkContext.defaultParallelism), import_in_worker).collect()


def start_in_background(master: str | None = None, *, config: dict[str, str] | None = None) -> None:
    """Start the process's session and its Python workers in a background thread (once), so
    that Spark's start-up overlaps the checks that run before the first Spark job; a later
    ``get_session`` waits for it. Failures are left for that call to report."""
    global _warming
    from .._engine.warmup import import_before_threads

    with _lock:
        if _warming is not None or _session is not None or os.environ.get("CONFORMANCE_NO_WARMUP"):
            return
        import_before_threads()
        _warming = threading.Thread(target=_warm_up, args=(master, config), name="conformance-spark-start", daemon=True)
    _warming.start()
