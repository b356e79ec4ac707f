"""Damaged bytes: truncated or bit-flipped records and snapshots of every built-in serializer
give a ``StateError`` (or, by chance, a valid decoding), never IndexError, struct.error,
MemoryError, UnicodeError or a hang."""

from __future__ import annotations

import dataclasses
import enum
import warnings
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference import StateError, resolve_compatibility, snapshot_from_bytes, snapshot_to_bytes
from reference import serializers as s


class Suit(enum.Enum):
    CLUBS = 1
    HEARTS = 2
    SPADES = 3


@dataclasses.dataclass
class Item:
    name: str = ""
    count: int = 0
    tags: list[str] = dataclasses.field(default_factory=list)


def _cases():
    cases = [
        ("boolean", s.BooleanSerializer(), [True, False]),
        ("byte", s.ByteSerializer(), [-5, 127]),
        ("short", s.ShortSerializer(), [-300]),
        ("int", s.IntSerializer(), [2**31 - 1]),
        ("long", s.LongSerializer(), [-(2**63)]),
        ("float", s.FloatSerializer(), [1.5, float("nan")]),
        ("double", s.DoubleSerializer(), [-0.0, 1e300]),
        ("string", s.StringSerializer(), ["", "My string.", "h\u00e9llo \U0001F600\x00", None]),
        ("bytes", s.BytesSerializer(), [b"", b"\x00\xff" * 5]),
        ("pickle", s.PickleSerializer(), [{"a": [1, 2.5, "x"]}, (1, None), Suit.HEARTS]),
        ("enum", s.EnumSerializer(Suit, symbols=["SPADES", "CLUBS", "HEARTS"]), list(Suit)),
        ("nullable", s.NullableSerializer(s.LongSerializer(), padded=True), [None, 7]),
        ("list", s.ListSerializer(s.StringSerializer()), [["a", None, "bc"], []]),
        ("map", s.MapSerializer(s.StringSerializer(), s.ListSerializer(s.IntSerializer())), [{"k": [1, 2], "n": None}]),
        ("tuple", s.TupleSerializer(s.IntSerializer(), s.StringSerializer(), s.NullableSerializer(s.DoubleSerializer())),
         [(1, "x", None), (2, "yy", 0.5)]),
    ]
    optional = [
        ("row", lambda: s.RowSerializer([("id", s.LongSerializer(), False), ("name", s.StringSerializer(), True),
                                         ("tags", s.ListSerializer(s.StringSerializer()), True)]),
         [(1, "a", ["t"]), (2, None, None)]),
        ("pojo", lambda: s.PojoSerializer(Item), [Item("x", 3, ["a"]), Item()]),
        ("avro", lambda: s.AvroSerializer({"type": "record", "name": "R", "fields": [
            {"name": "a", "type": "long"}, {"name": "b", "type": ["null", "string"]}]}),
         [{"a": 1, "b": None}, {"a": -2, "b": "zz"}]),
    ]
    for name, factory, values in optional:
        try:
            cases.append((name, factory(), values))
        except NotImplementedError:
            pass  # a family still being written
    return cases


CASES = _cases()
IDS = [c[0] for c in CASES]

_FORBIDDEN = (IndexError, KeyError, MemoryError, UnicodeError, OverflowError, RecursionError)


def _encodings(serializer, values):
    return [serializer.to_bytes(v) for v in values]


def _mutate(data: bytes, draw) -> bytes:
    """Truncate, or flip 1-3 bytes, or both."""
    mutated = bytearray(data)
    if mutated and draw(st.booleans(), label="flip"):
        for _ in range(draw(st.integers(1, 3), label="flips")):
            pos = draw(st.integers(0, len(mutated) - 1), label="pos")
            mutated[pos] ^= draw(st.integers(1, 255), label="xor")
    cut = draw(st.integers(0, len(mutated)), label="keep")
    return bytes(mutated[:cut])


def _decode_only_state_errors(call, what):
    try:
        call()
    except StateError:
        pass
    except _FORBIDDEN as exc:
        pytest.fail(f"got {type(exc).__name__}: {exc} from {what}, should be a StateError")
    except Exception as exc:  # any other leak is just as wrong
        pytest.fail(f"got {type(exc).__name__}: {exc} from {what}, should be a StateError")


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
@settings(deadline=timedelta(seconds=5))
@given(data=st.data())
def test_damaged_records_give_state_errors(index, data):
    name, serializer, values = CASES[index]
    original = data.draw(st.sampled_from(_encodings(serializer, values)), label="record")
    damaged = _mutate(original, data.draw)
    _decode_only_state_errors(lambda: serializer.from_bytes(damaged), f"{name}.from_bytes({damaged.hex()})")


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
def test_every_truncation_of_a_record_is_a_state_error(index):
    name, serializer, values = CASES[index]
    for encoded in _encodings(serializer, values):
        for cut in range(len(encoded)):
            with pytest.raises(StateError):
                serializer.from_bytes(encoded[:cut])


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
def test_every_truncation_of_a_snapshot_is_a_state_error(index):
    name, serializer, _ = CASES[index]
    encoded = snapshot_to_bytes(serializer.snapshot_configuration())
    for cut in range(len(encoded)):
        with pytest.raises(StateError):
            snapshot_from_bytes(encoded[:cut])


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
@settings(deadline=timedelta(seconds=5))
@given(data=st.data())
def test_damaged_snapshots_give_state_errors(index, data):
    name, serializer, values = CASES[index]
    original = snapshot_to_bytes(serializer.snapshot_configuration())
    damaged = _mutate(original, data.draw)

    def read_restore_and_resolve():
        snapshot = snapshot_from_bytes(damaged)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            resolve_compatibility(serializer, snapshot)
        restored = snapshot.restore_serializer()
        for encoded in _encodings(serializer, values):
            try:
                restored.from_bytes(encoded)
            except StateError:
                pass

    _decode_only_state_errors(read_restore_and_resolve, f"snapshot of {name} damaged to {damaged.hex()}")
