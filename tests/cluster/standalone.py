"""A Spark standalone cluster on loopback for tests: a Master and Workers started from the
installed pyspark's own ``bin/spark-class`` (``org.apache.spark.deploy.master.Master`` and
``org.apache.spark.deploy.worker.Worker``, the jars under pyspark's ``jars/``).

Everything binds to 127.0.0.1 on ports found free at start. Each daemon runs in a process group
of its own (its executors and their Python workers inherit it); ``stop`` ends every process of
those groups by their ids (SIGTERM, then SIGKILL after a grace period) and ``running_processes``
tells what, if anything, is still alive. All files the daemons write (logs, Spark's local
directories, the workers' work directories, the JVMs' temporary files, a configuration
directory of their own so that no user ``spark-defaults.conf`` applies) live under one
directory given by the caller.

Workers and their executors run the driver's interpreter (``PYSPARK_PYTHON = sys.executable``)
with the driver's ``PYTHONPATH``: a cluster's workers need the package installed for the same
Python, and this is the loopback equivalent.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"


class ClusterError(RuntimeError):
    """The cluster did not come up (or did not go down) as asked."""


def pyspark_home() -> Path:
    """The installed pyspark package's folder (it holds ``bin/spark-class`` and ``jars/``)."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise ClusterError(f"pyspark is not installed in {sys.executable}: pip install 'state-conformance[spark]'")
    home = Path(spec.origin).parent
    if not (home / "bin" / "spark-class").is_file() or not (home / "jars").is_dir():
        raise ClusterError(f"got no bin/spark-class or jars/ in {home}, should be a pip-installed pyspark")
    return home


def free_port() -> int:
    """A TCP port nobody listens on at 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _process_table() -> dict[int, tuple[int, int, str]]:
    """pid -> (parent pid, process group, state) of every process (from /proc)."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue  # gone meanwhile
        # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses
        fields = stat[stat.rindex(")") + 2:].split()
        table[int(entry)] = (int(fields[1]), int(fields[2]), fields[0])
    return table


class StandaloneCluster:
    """``StandaloneCluster(base).start()`` ... ``stop()``; ``master_url`` is ``spark://127.0.0.1:PORT``."""

    def __init__(self, base: str | os.PathLike[str], *, workers: int = 2, worker_cores: int = 1,
                 worker_memory: str = "1g", daemon_memory: str = "512m") -> None:
        self.base = Path(base)
        self.workers = workers
        self.worker_cores = worker_cores
        self.worker_memory = worker_memory
        self.daemon_memory = daemon_memory
        self.home = pyspark_home()
        self.master_port = free_port()
        self.web_port = free_port()
        self.master_url = f"spark://127.0.0.1:{self.master_port}"
        self.processes: list[subprocess.Popen[bytes]] = []
        self.logs: list[Path] = []
        #: every process seen in the cluster's process groups (daemons, executors, Python workers)
        self.seen: set[int] = set()

    # -- start ---------------------------------------------------------------------------------
    def environment(self) -> dict[str, str]:
        conf = self.base / "conf"
        local = self.base / "local"
        tmp = self.base / "tmp"
        for folder in (conf, local, tmp):
            folder.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        for name in [n for n in env if n.startswith(("SPARK_", "PYSPARK_"))]:
            del env[name]  # nothing from the caller's Spark set-up applies
        env.update({
            "SPARK_HOME": str(self.home),
            "SPARK_CONF_DIR": str(conf),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_LOCAL_DIRS": str(local),
            "SPARK_LOG_DIR": str(self.base / "logs"),
            "SPARK_DAEMON_MEMORY": self.daemon_memory,
            "SPARK_DAEMON_JAVA_OPTS": f"-Djava.io.tmpdir={tmp}",
            "PYSPARK_PYTHON": sys.executable,
            "PYSPARK_DRIVER_PYTHON": sys.executable,
        })
        return env

    def _launch(self, name: str, arguments: list[str], env: dict[str, str]) -> None:
        log = self.base / f"{name}.log"
        self.logs.append(log)
        with open(log, "wb") as out:
            process = subprocess.Popen(
                [str(self.home / "bin" / "spark-class"), *arguments], env=env, cwd=self.base,
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            )
        self.processes.append(process)

    def start(self, timeout: float = 180.0) -> StandaloneCluster:
        """Start the Master and the Workers; return once every Worker is registered (ALIVE in
        the Master's JSON status). On failure everything started is stopped again."""
        env = self.environment()
        try:
            self._launch("master", [MASTER_CLASS, "--host", "127.0.0.1", "--port", str(self.master_port),
                                    "--webui-port", str(self.web_port)], env)
            for i in range(self.workers):
                work = self.base / f"work-{i}"
                work.mkdir(exist_ok=True)
                self._launch(f"worker-{i}", [
                    WORKER_CLASS, self.master_url, "--host", "127.0.0.1", "--port", str(free_port()),
                    "--webui-port", str(free_port()), "--cores", str(self.worker_cores),
                    "--memory", self.worker_memory, "--work-dir", str(work),
                ], env)
            self._wait_for_workers(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def status(self) -> dict | None:
        """The Master's JSON status page, or None while it does not answer."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.web_port}/json/", timeout=5) as reply:
                return json.load(reply)
        except (OSError, ValueError):
            return None

    def alive_workers(self) -> int:
        status = self.status() or {}
        return sum(1 for w in status.get("workers", []) if w.get("state") == "ALIVE")

    def _wait_for_workers(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for process, log in zip(self.processes, self.logs, strict=True):
                if process.poll() is not None:
                    raise ClusterError(f"got {log.stem} exited with status {process.returncode}, should run; "
                                       f"its log ends:\n{self.log_tail(log)}")
            if self.alive_workers() == self.workers:
                self.remember()
                return
            time.sleep(0.5)
        raise ClusterError(f"got {self.alive_workers()} workers registered after {timeout:.0f} s, should be "
                           f"{self.workers}; the master's log ends:\n{self.log_tail(self.logs[0])}")

    @staticmethod
    def log_tail(log: Path, lines: int = 30) -> str:
        try:
            return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
        except OSError as exc:
            return f"(no log: {exc})"

    # -- processes -----------------------------------------------------------------------------
    def groups(self) -> set[int]:
        return {p.pid for p in self.processes}  # each daemon leads its own group

    def remember(self) -> set[int]:
        """Record every live process of the cluster's groups and their descendants (executors
        and Python workers appear while an application runs); returns the live ones."""
        table = _process_table()
        live = {pid for pid, (_, group, state) in table.items() if group in self.groups() and state != "Z"}
        frontier = set(live)
        while frontier:
            frontier = {pid for pid, (parent, _, state) in table.items()
                        if parent in frontier and state != "Z"} - live
            live |= frontier
        self.seen |= live
        return live

    def running_processes(self) -> set[int]:
        """Processes of the cluster still alive: anything ever seen or in its groups."""
        table = _process_table()
        return {pid for pid, (_, group, state) in table.items()
                if state != "Z" and (pid in self.seen or group in self.groups())}

    def stop(self, grace: float = 30.0) -> None:
        """End every process of the cluster by its process group: SIGTERM, then SIGKILL."""
        self.remember()
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for group in self.groups():
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(group, sig)
            for pid in self.seen - self.groups():  # a descendant that left its group
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
            deadline = time.monotonic() + grace
            while time.monotonic() < deadline:
                for process in self.processes:
                    process.poll()  # reap our own children
                if not self.running_processes():
                    break
                time.sleep(0.2)
            else:
                continue
            break
        for process in self.processes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5)
