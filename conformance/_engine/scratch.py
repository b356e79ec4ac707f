"""Where the checks' scratch directories are made: ``scratch_parent``."""

from __future__ import annotations

import os

__all__ = ["scratch_parent", "MEMORY_SCRATCH", "MEMORY_SCRATCH_FREE"]

#: Where a runner's scratch directory goes when the temporary directory is the system's
#: default: a memory-backed file system with at least ``MEMORY_SCRATCH_FREE`` bytes free. The
#: checks write thousands of small savepoints and RocksDB databases, each flushed to disk by
#: its writer (``atomic_directory``, RocksDB's manifest): in memory those flushes cost nothing,
#: and no check reads its scratch space after the run. ``TMPDIR`` (or ``tempfile.tempdir``)
#: set to another directory puts it there instead.
MEMORY_SCRATCH = "/dev/shm"
MEMORY_SCRATCH_FREE = 1 << 30
_SYSTEM_TEMP = "/tmp"


def scratch_parent() -> str:
    """The directory the checks' scratch directories are made in (a runner's, the warm-up's):
    ``MEMORY_SCRATCH`` when the temporary directory is the system default and that directory is
    writable with room, else the temporary directory."""
    import tempfile

    temp = tempfile.gettempdir()
    if temp != _SYSTEM_TEMP:
        return temp
    try:
        free = os.statvfs(MEMORY_SCRATCH)
    except (OSError, AttributeError):  # no such directory, or a platform without statvfs
        return temp
    room = free.f_bavail * free.f_frsize >= MEMORY_SCRATCH_FREE
    return MEMORY_SCRATCH if room and os.access(MEMORY_SCRATCH, os.W_OK | os.X_OK) else temp
