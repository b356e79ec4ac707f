"""backends.fresh_process: restore a savepoint in a process that never saw the writing one's
state, and print, per key, the bytes the restored serializer writes for what it read (JSON on
stdout).

The restoring process is a child of a zygote: a Python interpreter started once per harness
process (``python -m conformance._fresh.restore --zygote``) that imports the reference library
and nothing else, then forks one child per restore. Each child is what a new interpreter is
after importing the reference library: it has the zygote's state only, never the writer's, and
imports the subject's modules itself (after taking the writer's ``sys.path``, environment and
working directory). Forking saves each restore an interpreter start and the library's imports
(about 0.2 s of CPU). Where ``os.fork`` is missing, each restore is a new interpreter
(``python -m conformance._fresh.restore SPEC``).

The process is foreign as another machine's would be (``conformance._fresh.foreign``): another
time zone, locale and hash seed. It prints, per key, the bytes the restored serializer writes
and the values it read (``reference.value_tree``), and which differences it ran with.

The harness's side is ``conformance._fresh.process`` (which never imports this module). Zygote
protocol, one JSON object per line: a request ``{"spec", "path", "env", "cwd", "stdout",
"stderr"}`` on its standard input; the replies ``{"pid": n}`` once the child runs, then
``{"exit": code}`` when it ends. A restore's output goes to the files named in the request.
The zygote ends when its standard input closes (its parent ended).
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from typing import Any


def main(spec_text: str) -> int:
    spec = json.loads(spec_text)
    from .foreign import apply_locale, describe

    taken_locale = apply_locale(os.environ)
    for module in spec["modules"]:
        importlib.import_module(module)
    from reference import snapshot_from_bytes
    from reference.backends import HeapStateBackend
    from reference.savepoint import read_savepoint_metadata
    from reference.serializers import LongSerializer

    from .layout import descriptors, state_trees

    serializer = None
    if spec.get("locator"):
        from ..cli import load_serializer

        serializer = load_serializer(spec["locator"])
    if serializer is None:
        metadata = read_savepoint_metadata(spec["savepoint"])
        serializer = snapshot_from_bytes(metadata.state("value").value_serializer_snapshot,
                                         allow_pickle=True).restore_serializer()
    # the harness's own savepoint, written from the subject's values
    backend = HeapStateBackend.restore(spec["savepoint"], key_serializer=LongSerializer(), allow_pickle=True)
    value_d, list_d, map_d = descriptors(serializer)
    vs, ls, ms = backend.get_value_state(value_d), backend.get_list_state(list_d), backend.get_map_state(map_d)
    keys = []
    for key in range(spec["keys"]):
        backend.set_current_key(key)
        value, elements, entries = vs.value(), ls.get(), dict(ms.items())
        keys.append({
            "bytes": [serializer.to_bytes(value).hex(), [serializer.to_bytes(e).hex() for e in elements],
                      {k: serializer.to_bytes(e).hex() for k, e in entries.items()}],
            "values": state_trees(value, elements, entries),
        })
    json.dump({"foreign": describe(os.environ, taken_locale), "keys": keys}, sys.stdout)
    return 0


# -- the zygote ---------------------------------------------------------------------------------
def _preload() -> None:
    """What every restore imports first: the reference library and its Parquet reader."""
    import pyarrow.parquet  # noqa: F401

    import conformance._fresh.layout  # noqa: F401
    import reference.backends  # noqa: F401
    import reference.serializers  # noqa: F401


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
    os.environ.update(request["env"])  # the writer's, made foreign (.foreign)
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


if __name__ == "__main__":
    sys.exit(serve() if sys.argv[1:] == ["--zygote"] else main(sys.argv[1]))
