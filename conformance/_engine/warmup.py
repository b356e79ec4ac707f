"""Pay the backends' one-time costs (importing pyarrow and rocksdict, pyarrow's first Parquet
write and read) in a background thread while the early, CPU-bound checks run."""

from __future__ import annotations

import os
import shutil
import threading

__all__ = ["warm_up_in_background", "import_before_threads"]

_STARTED = threading.Event()
#: The warm-up's scratch directory, where runners make theirs (``scratch.scratch_parent``): this
#: prefix and its owner.
WARMUP_PREFIX = "conformance-warmup-"


def _warm_up() -> None:
    try:
        import rocksdict  # noqa: F401

        from reference.savepoint import StateMetadata, new_owned_directory, read_state_rows, write_state_rows

        from .scratch import scratch_parent

        # Named by its owner, beside the runners' scratch directories: a killed process's is
        # removed by the next warm-up on the host.
        directory = new_owned_directory(WARMUP_PREFIX, scratch_parent())
        try:
            write_state_rows(os.path.join(directory, "data"), [(0, b"k", b"", None, b"v")])
            state = StateMetadata(name="w", kind="value", value_serializer_snapshot=b"",
                                  namespace_serializer_snapshot=None, user_key_serializer_snapshot=None,
                                  data="data", rows=1)
            list(read_state_rows(directory, state))
        finally:
            shutil.rmtree(directory, ignore_errors=True)
    except Exception:
        pass  # only an optimisation: the checks will pay the cost themselves


def import_before_threads() -> None:
    """Import numpy (when installed) in the calling thread, before a background thread imports
    pyarrow or pyspark, which import it. Hypothesis looks numpy up in ``sys.modules`` while
    it draws; a module that another thread is still initializing is already there, half
    built ("partially initialized module 'numpy' has no attribute 'ndarray'"). Cheap: ~0.1 s."""
    try:
        import numpy  # noqa: F401
    except ImportError:
        pass


def warm_up_in_background() -> None:
    if _STARTED.is_set() or os.environ.get("CONFORMANCE_NO_WARMUP"):
        return
    _STARTED.set()
    import_before_threads()
    threading.Thread(target=_warm_up, name="conformance-warmup", daemon=True).start()
