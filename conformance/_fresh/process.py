"""The harness's side of backends.fresh_process: start a restore in a fresh, foreign process
(``conformance._fresh.restore``, whose docstring says how: a child of a zygote, or a new
interpreter where ``os.fork`` is missing; ``conformance._fresh.foreign`` says how it is foreign)
and collect what it printed; ``restore_with`` runs one with only some differences, to say which
one mattered."""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
import threading
import time
from typing import Any

from .foreign import DIFFERENCES, foreign_environment

__all__ = ["Restore", "start_restore", "restore_with"]


class _Zygote:
    """This process's zygote and its reply stream (one restore at a time)."""

    def __init__(self) -> None:
        self.owner = os.getpid()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "conformance._fresh.restore", "--zygote"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=foreign_environment(_environment()),  # its hash seed is every child's
        )
        self.buffer = b""
        self.current: Restore | None = None

    def alive(self) -> bool:
        return self.owner == os.getpid() and self.proc.poll() is None

    def reply(self, deadline: float | None) -> dict[str, Any]:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buffer:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([fd], [], [], wait)
            if not ready:
                raise subprocess.TimeoutExpired("fresh-process restore", wait or 0.0)
            chunk = os.read(fd, 4096)
            if not chunk:
                raise OSError("the fresh-process zygote exited")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)  # type: ignore[no-any-return]

    def start(self, spec: dict[str, Any], directory: str) -> Restore:
        if self.current is not None:  # an earlier restore nobody collected: end it first
            self.current.kill()
            self.current.communicate()
        stem = os.path.join(directory, f"fresh-restore-{time.monotonic_ns()}")
        request = {"spec": spec, "path": [p for p in sys.path if p], "env": foreign_environment(os.environ),
                   "cwd": os.getcwd(),
                   "stdout": stem + ".out", "stderr": stem + ".err"}
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(request) + "\n").encode())
        self.proc.stdin.flush()
        pid = self.reply(time.monotonic() + 60)["pid"]
        self.current = Restore(self, pid, stem, spec)
        return self.current


class Restore:
    """A restore running in a child of the zygote, used as the ``subprocess.Popen`` it replaces:
    ``communicate(timeout)`` -> (stdout, stderr), ``returncode``, ``kill()``. Should the zygote
    itself end while the restore runs (killed from outside), the restore runs again in a new
    interpreter: what it reports is the subject's, never the zygote's."""

    def __init__(self, zygote: _Zygote, pid: int, stem: str, spec: dict[str, Any]) -> None:
        self.zygote, self.pid, self.stem, self.spec = zygote, pid, stem, spec
        self.returncode: int | None = None
        self.output: tuple[str, str] = ("", "")
        self.fallback: subprocess.Popen[str] | None = None

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        if self.returncode is not None:
            return self.output
        deadline = None if timeout is None else time.monotonic() + timeout
        if self.fallback is None:
            try:
                code = int(self.zygote.reply(deadline)["exit"])
            except OSError:  # the zygote ended: its child's outcome is unknown
                self.zygote.current = None
                for suffix in (".out", ".err"):  # a child killed before it opened them left none
                    with contextlib.suppress(FileNotFoundError):
                        _read_and_remove(self.stem + suffix)
                self.fallback = _new_interpreter(self.spec)
            else:
                self.zygote.current = None
                self.returncode = code
                self.output = (_read_and_remove(self.stem + ".out"), _read_and_remove(self.stem + ".err"))
                return self.output
        out, err = self.fallback.communicate(timeout=None if deadline is None else max(0.0, deadline - time.monotonic()))
        self.returncode, self.output = self.fallback.returncode, (out, err)
        return self.output

    def kill(self) -> None:
        if self.returncode is not None:
            return
        if self.fallback is not None:
            self.fallback.kill()
            return
        try:
            os.kill(self.pid, 9)
        except ProcessLookupError:
            pass


def _environment() -> dict[str, str]:
    """This process's environment, with its ``sys.path`` as the new interpreter's PYTHONPATH."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return env


def _new_interpreter(spec: dict[str, Any], differences: tuple[str, ...] = DIFFERENCES) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "conformance._fresh.restore", json.dumps(spec)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=foreign_environment(_environment(), differences))


def restore_with(spec: dict[str, Any], differences: tuple[str, ...], timeout: float) -> tuple[int, str, str]:
    """Restore per ``spec`` in a new interpreter that differs from this process only by
    ``differences`` (and what any new interpreter differs by): (exit code, stdout, stderr)."""
    proc = _new_interpreter(spec, differences)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return -9, "", f"did not finish in {timeout:.0f} s"
    return proc.returncode, out, err


def _read_and_remove(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            return file.read()
    finally:
        try:
            os.remove(path)
        except OSError:
            pass


_lock = threading.Lock()
_zygote: _Zygote | None = None


def start_restore(spec: dict[str, Any], directory: str) -> Any:
    """Start restoring per ``spec`` in a fresh process; returns its ``subprocess.Popen`` or a
    ``Restore`` (the same use). Output files go to ``directory``."""
    global _zygote
    if hasattr(os, "fork"):
        with _lock:
            try:
                if _zygote is None or not _zygote.alive():
                    _zygote = _Zygote()
                return _zygote.start(spec, directory)
            except (OSError, ValueError, KeyError, subprocess.TimeoutExpired):
                _zygote = None  # a zygote that cannot serve: a new interpreter reports what is wrong
    return _new_interpreter(spec)
