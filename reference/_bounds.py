"""The limits that keep reading untrusted bytes bounded (docs/savepoint-format.md, "Limits").

Everything read from a savepoint, a snapshot or a record is untrusted. Readers check these
limits *before* they recurse or allocate, and report a violation as a ``StateError`` naming what
was being read:

- ``MAX_SNAPSHOT_DEPTH``: nested serializer snapshots (a List of a Map of a Row ...) deeper than
  this are refused while reading, so no later step (restoring serializers, resolving
  compatibility, reading records) can recurse without bound either.
- ``MAX_JSON_DEPTH``: JSON text read from untrusted bytes (``_metadata.json``, an Avro schema in a
  snapshot) nesting arrays and objects deeper than this is refused before it is parsed.
- The element budget of one record: a record of ``n`` bytes decodes at most
  ``n + ZERO_WIDTH_ALLOWANCE`` collection elements in total, over every nesting level (list and
  map entries, Avro array items and map entries of empty types). Elements that take bytes are
  bounded by ``n`` anyway; the allowance is what elements written as no bytes at all (an empty
  tuple or row, an Avro null or fixed(0)) may add, for the whole record rather than per level.
- Flink savepoints (docs/flink-savepoints.md): a ``_metadata`` file is read whole only up to
  ``MAX_FLINK_METADATA_BYTES``; a keyed-state file's header (its serializer snapshots) up to
  ``MAX_FLINK_HEADER_BYTES``; an entry's key or value length is checked against the bytes left
  in the file (times ``MAX_SNAPPY_EXPANSION`` when key groups are Snappy-compressed) before
  anything is read for it.
"""

from __future__ import annotations

import re

__all__ = [
    "MAX_SNAPSHOT_DEPTH",
    "MAX_JSON_DEPTH",
    "ZERO_WIDTH_ALLOWANCE",
    "MAX_FLINK_METADATA_BYTES",
    "MAX_FLINK_HEADER_BYTES",
    "MAX_SNAPPY_EXPANSION",
    "json_depth_exceeds",
    "pickle_length_problem",
]

#: Deepest nesting of serializer snapshots read from bytes (a snapshot inside a snapshot ...).
MAX_SNAPSHOT_DEPTH = 100
#: Deepest nesting of JSON arrays and objects read from untrusted text. An Avro schema of
#: ``MAX_SCHEMA_DEPTH`` (100) levels nests up to four JSON levels per schema level.
MAX_JSON_DEPTH = 512
#: Collection elements one record may decode beyond one per byte of the record.
ZERO_WIDTH_ALLOWANCE = 1 << 12
#: Largest Flink ``_metadata`` file read (it is read whole; state inlined into it counts).
MAX_FLINK_METADATA_BYTES = 1 << 30
#: Largest header (key serializer and state meta data) of a Flink keyed-state file.
MAX_FLINK_HEADER_BYTES = 64 << 20
#: Most bytes Snappy decompresses from one stored byte (a 3-byte copy writes 64 bytes: 21.3).
MAX_SNAPPY_EXPANSION = 22

_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")


def json_depth_exceeds(text: str, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether JSON ``text`` nests arrays and objects deeper than ``limit`` (checked without
    recursion, before ``json.loads`` would recurse; brackets inside strings do not count)."""
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for char in _NOT_BRACKETS.sub("", _STRINGS.sub("", text)):
        if char in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


# Pickle opcodes whose C implementation allocates their declared length before reading it
# (BINBYTES, BINBYTES8, BYTEARRAY8): a corrupt length would allocate up to 2**63 bytes.
_ALLOCATING_OPCODES = (b"B", b"\x8e", b"\x96")


def pickle_length_problem(payload: bytes) -> str | None:
    """Why ``payload`` must not be given to ``pickle.loads`` (a length beyond its own size or
    a malformed opcode stream), or None. Only payloads holding an allocating opcode byte are
    walked, with ``pickletools`` (which reads lengths without allocating them)."""
    if not any(op in payload for op in _ALLOCATING_OPCODES):
        return None
    import pickletools

    try:
        for _ in pickletools.genops(payload):
            pass
    except Exception as exc:  # genops raises ValueError on truncated or unknown opcodes
        return f"{type(exc).__name__}: {exc}"
    return None
