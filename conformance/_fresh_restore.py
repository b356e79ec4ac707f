"""backends.fresh_process: restore a savepoint in a process that never saw the writing one's
state, and print, per key, the bytes the restored serializer writes for what it read (JSON on
stdout).

The restoring process is a child of a zygote: a Python interpreter started once per harness
process (``python -m conformance._fresh_restore --zygote``) that imports the reference library
and nothing else, then forks one child per restore. Each child is what a new interpreter is
after importing the reference library: it has the zygote's state only, never the writer's, and
imports the subject's modules itself (after taking the writer's ``sys.path``, environment and
working directory). Forking saves each restore an interpreter start and the library's imports
(about 0.2 s of CPU). Where ``os.fork`` is missing, each restore is a new interpreter
(``python -m conformance._fresh_restore SPEC``).

Zygote protocol, one JSON object per line: a request ``{"spec", "path", "env", "cwd", "stdout",
"stderr"}`` on its standard input; the replies ``{"pid": n}`` once the child runs, then
``{"exit": code}`` when it ends. A restore's output goes to the files named in the request.
The zygote ends when its standard input closes (its parent ended).
"""

from __future__ import annotations

import importlib
import json
import os
import select
import subprocess
import sys
import threading
import time
from typing import Any


def main(spec_text: str) -> int:
    spec = json.loads(spec_text)
    for module in spec["modules"]:
        importlib.import_module(module)
    from reference import snapshot_from_bytes
    from reference.backends import HeapStateBackend, read_savepoint_metadata
    from reference.serializers import LongSerializer

    from ._state_layout import descriptors

    serializer = None
    if spec.get("locator"):
        from .cli import load_serializer

        serializer = load_serializer(spec["locator"])
    if serializer is None:
        metadata = read_savepoint_metadata(spec["savepoint"])
        serializer = snapshot_from_bytes(metadata.state("value").value_serializer_snapshot).restore_serializer()
    # the harness's own savepoint, written from the subject's values
    backend = HeapStateBackend.restore(spec["savepoint"], key_serializer=LongSerializer(), allow_pickle=True)
    value_d, list_d, map_d = descriptors(serializer)
    vs, ls, ms = backend.get_value_state(value_d), backend.get_list_state(list_d), backend.get_map_state(map_d)
    out = []
    for key in range(spec["keys"]):
        backend.set_current_key(key)
        out.append([
            serializer.to_bytes(vs.value()).hex(),
            [serializer.to_bytes(e).hex() for e in ls.get()],
            {k: serializer.to_bytes(e).hex() for k, e in ms.items()},
        ])
    json.dump(out, sys.stdout)
    return 0


# -- the zygote ---------------------------------------------------------------------------------
def _preload() -> None:
    """What every restore imports first: the reference library and its Parquet reader."""
    import pyarrow.parquet  # noqa: F401

    import reference.backends  # noqa: F401
    import reference.serializers  # noqa: F401

    from . import _state_layout  # noqa: F401


def _child(request: dict[str, Any]) -> int:
    """In the forked child: take the writer's path, environment and directory, send output to
    the request's files, restore. Returns the exit code."""
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)  # the zygote's requests are not the child's to read
    for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(target, fd)
        os.close(target)
    os.chdir(request["cwd"])
    sys.path[:] = request["path"]
    os.environ.clear()
    os.environ.update(request["env"])
    try:
        return main(json.dumps(request["spec"]))
    except SystemExit as exc:
        return 0 if exc.code is None else exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
        return 1


def serve() -> int:
    _preload()
    replies = sys.stdout
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = _child(request)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        replies.write(json.dumps({"pid": pid}) + "\n")
        replies.flush()
        _, status = os.waitpid(pid, 0)
        replies.write(json.dumps({"exit": os.waitstatus_to_exitcode(status)}) + "\n")
        replies.flush()
    return 0


# -- the harness's side -------------------------------------------------------------------------
class _Zygote:
    """This process's zygote and its reply stream (one restore at a time)."""

    def __init__(self) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        self.owner = os.getpid()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "conformance._fresh_restore", "--zygote"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
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
        request = {"spec": spec, "path": [p for p in sys.path if p], "env": dict(os.environ), "cwd": os.getcwd(),
                   "stdout": stem + ".out", "stderr": stem + ".err"}
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(request) + "\n").encode())
        self.proc.stdin.flush()
        pid = self.reply(time.monotonic() + 60)["pid"]
        self.current = Restore(self, pid, stem)
        return self.current


class Restore:
    """A restore running in a child of the zygote, used as the ``subprocess.Popen`` it replaces:
    ``communicate(timeout)`` -> (stdout, stderr), ``returncode``, ``kill()``."""

    def __init__(self, zygote: _Zygote, pid: int, stem: str) -> None:
        self.zygote, self.pid, self.stem = zygote, pid, stem
        self.returncode: int | None = None
        self.output: tuple[str, str] = ("", "")

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        if self.returncode is None:
            deadline = None if timeout is None else time.monotonic() + timeout
            self.returncode = int(self.zygote.reply(deadline)["exit"])
            self.zygote.current = None
            self.output = tuple(_read_and_remove(self.stem + suffix) for suffix in (".out", ".err"))  # type: ignore[assignment]
        return self.output

    def kill(self) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, 9)
            except ProcessLookupError:
                pass


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
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return subprocess.Popen([sys.executable, "-m", "conformance._fresh_restore", json.dumps(spec)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


if __name__ == "__main__":
    sys.exit(serve() if sys.argv[1:] == ["--zygote"] else main(sys.argv[1]))
