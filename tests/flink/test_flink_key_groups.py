"""Flink's key-group assignment of new keys (``reference.savepoint.flink_key_group``, Java's
``hashCode`` by ``java_hash_code``) against Flink itself: KeyGroups.java (beside this file) prints
``key.hashCode()`` and ``KeyGroupRangeAssignment.assignToKeyGroup(key, maxParallelism)`` for every
key of one batch (one JVM run, no MiniCluster), and each is compared with the reference's."""

from __future__ import annotations

import math
import random
import struct
import subprocess

import pytest

from reference import StateError
from reference import serializers as s
from reference.savepoint import flink_key_group, java_hash_code

pytestmark = [pytest.mark.flink, pytest.mark.xdist_group("flink")]

MAX_PARALLELISMS = (1, 7, 128, 129, 200, 4096, 32768)


def _units(text: str) -> str:
    return text.encode("utf-16-be", "surrogatepass").hex()


def _double_bits(value: float) -> int:
    return struct.unpack(">Q", struct.pack(">d", value))[0]


def _float_bits(value: float) -> int:
    return struct.unpack(">I", struct.pack(">f", value))[0]


def _term(value, serializer) -> str:
    """The key as KeyGroups.java reads it."""
    if value is None:
        return "N"
    if isinstance(serializer, s.NullableSerializer):
        return _term(value, serializer.inner)
    if isinstance(serializer, s.TupleSerializer):
        return "T[" + ";".join(_term(v, f) for v, f in zip(value, serializer.fields, strict=True)) + "]"
    if isinstance(serializer, str):  # "char"
        return "C" + _units(value)
    return {
        s.StringSerializer: lambda v: "S" + _units(v),
        s.IntSerializer: lambda v: f"I{v}",
        s.LongSerializer: lambda v: f"L{v}",
        s.ShortSerializer: lambda v: f"H{v}",
        s.ByteSerializer: lambda v: f"B{v}",
        s.BooleanSerializer: lambda v: "Z1" if v else "Z0",
        s.DoubleSerializer: lambda v: f"D{_double_bits(v):016x}",
        s.FloatSerializer: lambda v: f"F{_float_bits(v):08x}",
    }[type(serializer)](value)


def _strings(rng: random.Random) -> list[str]:
    fixed = ["", "a", "alpha", "\u00e9\u20ac\U0001d11e", "\ud834", "\udd1e\ud834", "\U0010ffff" * 3,
             "a longer key with spaces", "\x00", "\uffff\u0080\u07ff\u0800", "k" * 1000]
    pools = ["abc", "\u00e9\u00fc\u4e2d\u6587", "\U0001f600\U00010000", "\ud800\udfff\udc00"]
    for _ in range(300):
        pool = rng.choice(pools + ["".join(pools)])
        fixed.append("".join(rng.choice(pool) for _ in range(rng.randrange(0, 40))))
    return fixed


def _doubles(rng: random.Random) -> list[float]:
    fixed = [0.0, -0.0, 1.0, -1.5, math.inf, -math.inf, math.nan, 5e-324, 1.7976931348623157e308]
    fixed.append(struct.unpack(">d", struct.pack(">Q", 0x7FF0000000000001))[0])  # another NaN
    fixed.append(struct.unpack(">d", struct.pack(">Q", 0xFFF8000000000123))[0])  # a negative NaN
    return fixed + [struct.unpack(">d", rng.getrandbits(64).to_bytes(8, "big"))[0] for _ in range(200)]


def _floats(rng: random.Random) -> list[float]:
    fixed = [0.0, -0.0, 1.0, -2.5, math.inf, -math.inf, math.nan, 1.401298464324817e-45]
    fixed.append(struct.unpack(">f", struct.pack(">I", 0x7F800001))[0])
    return fixed + [struct.unpack(">f", rng.getrandbits(32).to_bytes(4, "big"))[0] for _ in range(200)]


def _cases() -> list[tuple[object, object]]:
    rng = random.Random(20261126)
    cases: list[tuple[object, object]] = []
    cases += [(v, s.StringSerializer()) for v in _strings(rng)]
    cases += [(v, s.IntSerializer()) for v in [0, 1, -1, 2**31 - 1, -(2**31)] + [rng.randrange(-(2**31), 2**31) for _ in range(150)]]
    cases += [(v, s.LongSerializer()) for v in [0, 1, -1, 2**63 - 1, -(2**63), 1 << 40, -123456789012]
              + [rng.randrange(-(2**63), 2**63) for _ in range(150)]]
    cases += [(v, s.ShortSerializer()) for v in [0, -1, 32767, -32768] + [rng.randrange(-32768, 32768) for _ in range(40)]]
    cases += [(v, s.ByteSerializer()) for v in range(-128, 128)]
    cases += [(True, s.BooleanSerializer()), (False, s.BooleanSerializer())]
    cases += [(v, s.DoubleSerializer()) for v in _doubles(rng)]
    cases += [(v, s.FloatSerializer()) for v in _floats(rng)]
    cases += [(c, "char") for c in ["a", "\x00", "\uffff", "\ud834", "\u00e9"]]
    t2 = s.TupleSerializer(s.StringSerializer(), s.LongSerializer())
    cases += [((st, lo), t2) for st, lo in zip(_strings(rng)[:120], [rng.randrange(-(2**63), 2**63) for _ in range(120)], strict=True)]
    cases += [(("alpha", 0), t2), (("", -1), t2), (("\u00e9\u20ac\U0001d11e", -(2**63)), t2)]
    t3 = s.TupleSerializer(s.IntSerializer(), s.NullableSerializer(s.StringSerializer()), s.DoubleSerializer())
    cases += [((1, None, math.nan), t3), ((-7, "x", -0.0), t3), ((2**31 - 1, "\ud834", 1e300), t3)]
    nested = s.TupleSerializer(t2, s.TupleSerializer(s.BooleanSerializer()), s.TupleSerializer())
    cases += [((("k", 5), (True,), ()), nested), ((("", -5), (False,), ()), nested)]
    t1 = s.TupleSerializer(s.FloatSerializer())
    cases += [((v,), t1) for v in (0.0, -0.0, math.nan, 3.25)]
    return cases


@pytest.fixture(scope="module")
def flink_key_groups(key_groups_java, tmp_path_factory) -> list[tuple[object, object, int, int, int]]:
    """(key, serializer, max parallelism, Flink's hashCode, Flink's key group) for every case,
    from one JVM run."""
    rng = random.Random(7)
    rows = [(key, ser, rng.choice(MAX_PARALLELISMS)) for key, ser in _cases()]
    rows += [(key, ser, maxp) for key, ser in _cases()[:40] for maxp in MAX_PARALLELISMS]
    work = tmp_path_factory.mktemp("key-groups")
    (work / "in.txt").write_text("".join(f"{maxp} {_term(key, ser)}\n" for key, ser, maxp in rows), encoding="utf-8")
    ran = subprocess.run([*key_groups_java, str(work / "in.txt"), str(work / "out.txt")],
                         capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, f"KeyGroups.java failed: {ran.stderr[-4000:]}"
    lines = (work / "out.txt").read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(rows), f"KeyGroups.java answered {len(lines)} lines for {len(rows)} keys"
    return [(key, ser, maxp, int(line.split()[0]), int(line.split()[1]))
            for (key, ser, maxp), line in zip(rows, lines, strict=True)]


def test_java_hash_code_is_flinks(flink_key_groups):
    wrong = [(key, ser, java, java_hash_code(key, ser)) for key, ser, _m, java, _kg in flink_key_groups
             if java_hash_code(key, ser) != java]
    assert not wrong, f"{len(wrong)} of {len(flink_key_groups)} hashCodes differ from Java's, e.g. " \
                      f"(key, serializer, Java, reference) {wrong[:5]}"


def test_key_group_is_flinks(flink_key_groups):
    checked = 0
    wrong = []
    for key, ser, maxp, _java, group in flink_key_groups:
        if isinstance(ser, str):
            continue
        checked += 1
        got = flink_key_group(key, ser, maxp)
        if got != group:
            wrong.append((key, ser, maxp, group, got))
    assert checked > 1000, f"only {checked} keys checked"
    assert not wrong, f"{len(wrong)} of {checked} key groups differ from Flink's, e.g. " \
                      f"(key, serializer, max parallelism, Flink, reference) {wrong[:5]}"
    spread = {g for k, ser, m, _j, g in flink_key_groups if m == 32768}
    assert len(spread) > 50, f"key groups at max parallelism 32768 should spread, got {sorted(spread)[:20]}"


@pytest.mark.parametrize("serializer", [
    s.BytesSerializer(), s.RowSerializer([("f0", s.StringSerializer(), True)]),
    s.ListSerializer(s.StringSerializer()), s.TupleSerializer(s.StringSerializer(), s.BytesSerializer()),
])
def test_a_key_type_without_a_java_hash_is_refused(serializer):
    key = (b"x",) if isinstance(serializer, s.RowSerializer) else ("a", b"x") if isinstance(serializer, s.TupleSerializer) \
        else [b"x"] if isinstance(serializer, s.ListSerializer) else b"x"
    with pytest.raises(StateError) as raised:
        flink_key_group(key, serializer, 128)
    message = str(raised.value)
    assert "hashCode" in message and "Key the job by one of those types" in message, f"got {message!r}"
