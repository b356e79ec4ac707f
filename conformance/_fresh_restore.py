"""Child side of backends.fresh_process: restore a savepoint in a new interpreter and print,
per key, the bytes the restored serializer writes for what it read (JSON on stdout)."""

from __future__ import annotations

import importlib
import json
import sys


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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
