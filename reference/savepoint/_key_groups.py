"""Key groups: the unit in which keyed state is partitioned, as Flink defines it.

A key belongs to one of ``max_parallelism`` key groups (1..32768); a job running at
``parallelism`` subtasks gives each subtask one contiguous range of key groups
(``key_group_range``), the one Flink's ``KeyGroupRangeAssignment`` computes, so a savepoint can be
restored at any parallelism up to its max parallelism.

This project's savepoints assign a key to its group by the unsigned MurmurHash3_x86_32 (seed 0)
of the key's serialized bytes (``key_group_for``): stable in every process and engine.
"""

from __future__ import annotations

from ._format import SavepointFormatError
from ._murmur import murmur3_32, murmur3_32_many

__all__ = [
    "MAX_MAX_PARALLELISM",
    "check_parallelism",
    "key_group_for",
    "key_group_range",
    "key_groups_for",
    "subtask_for_key_group",
]

MAX_MAX_PARALLELISM = 32768


def key_group_for(key_bytes: bytes, max_parallelism: int) -> int:
    """The key group of a serialized key: unsigned MurmurHash3_x86_32 (seed 0) of the key
    bytes, modulo ``max_parallelism``."""
    if not 1 <= max_parallelism <= MAX_MAX_PARALLELISM:
        raise ValueError(f"max_parallelism must be in [1, {MAX_MAX_PARALLELISM}], got {max_parallelism}")
    return murmur3_32(key_bytes) % max_parallelism


def key_groups_for(keys: list[bytes], max_parallelism: int) -> list[int]:
    """``key_group_for`` of each serialized key of a batch (vectorized when it can be)."""
    if not 1 <= max_parallelism <= MAX_MAX_PARALLELISM:
        raise ValueError(f"max_parallelism must be in [1, {MAX_MAX_PARALLELISM}], got {max_parallelism}")
    return [h % max_parallelism for h in murmur3_32_many(keys)]


def key_group_range(max_parallelism: int, parallelism: int, subtask: int) -> range:
    """The key groups owned by ``subtask`` of ``parallelism`` (Flink's
    ``KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex``)."""
    check_parallelism(max_parallelism, parallelism)
    if not 0 <= subtask < parallelism:
        raise ValueError(f"subtask {subtask} outside [0, {parallelism})")
    start = (subtask * max_parallelism + parallelism - 1) // parallelism
    end = ((subtask + 1) * max_parallelism - 1) // parallelism
    return range(start, end + 1)


def subtask_for_key_group(max_parallelism: int, parallelism: int, key_group: int) -> int:
    """The subtask that owns ``key_group`` (Flink's ``computeOperatorIndexForKeyGroup``)."""
    return key_group * parallelism // max_parallelism


def check_parallelism(max_parallelism: int, parallelism: int) -> None:
    """Refuse a parallelism a savepoint of ``max_parallelism`` key groups cannot run at."""
    if not 1 <= parallelism <= max_parallelism:
        raise SavepointFormatError(
            f"parallelism {parallelism} is not in [1, max_parallelism={max_parallelism}]; a "
            "savepoint can be restored at most at its max parallelism (its number of key groups)"
        )
