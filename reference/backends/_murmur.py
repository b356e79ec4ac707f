"""MurmurHash3 (x86, 32-bit), the stable hash that assigns keys to key groups.

Written from the published algorithm; the key group of a key must be the same in every process,
interpreter and engine (Python, Spark executors), which rules out Python's salted ``hash``.
"""

from __future__ import annotations

__all__ = ["murmur3_32"]

_C1 = 0xCC9E2D51
_C2 = 0x1B873593
_MASK = 0xFFFFFFFF


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """The unsigned 32-bit MurmurHash3_x86_32 of ``data``."""
    h = seed & _MASK
    n = len(data)
    body = n - (n & 3)
    from_bytes = int.from_bytes
    for i in range(0, body, 4):
        k = (from_bytes(data[i : i + 4], "little") * _C1) & _MASK
        k = ((k << 15) | (k >> 17)) & _MASK
        h ^= (k * _C2) & _MASK
        h = ((h << 13) | (h >> 19)) & _MASK
        h = (h * 5 + 0xE6546B64) & _MASK
    tail = n & 3
    if tail:
        k = from_bytes(data[body:], "little")
        k = (k * _C1) & _MASK
        k = ((k << 15) | (k >> 17)) & _MASK
        h ^= (k * _C2) & _MASK
    h ^= n
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK
    h ^= h >> 16
    return h
