"""strategies.amplified: any drawn value grown at its text, bytes and containers across the
length boundaries of the formats, its ints set to every varint width's edge."""

from __future__ import annotations

import dataclasses

from reference.serializers import Row, RowKind
from strategies import amplified, richest_values, varint_edges
from strategies._amplify import COUNT_SIZES, HUGE_COUNTS, TEXT_SIZES, Amplified, grown, growth_sites


@dataclasses.dataclass
class Order:
    id: int
    tags: list[str]
    labels: dict[str, bytes]


def _units(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def test_sites_are_found_inside_dataclasses_tuples_rows_and_dict_keys():
    value = (Order(7, ["a"], {"k": b"\x01"}), Row(("x", {3}), RowKind.DELETE))
    kinds = [kind for kind, _ in growth_sites(value)]
    assert kinds == ["int", "list", "text", "dict", "text", "bytes", "text", "set", "int"], f"got {kinds}"
    wheres = [where for _, where in growth_sites(value)]
    assert "value[0].tags[0]" in wheres and "value[1][1]" in wheres, f"got {wheres}"


def test_grown_parts_have_exactly_the_size_asked_and_keep_their_type():
    value = (Order(7, ["é🙂"], {"k": b"\x01\x02"}), Row(("x", {3}), RowKind.DELETE))
    sites = growth_sites(value)
    for i, (kind, where) in enumerate(sites):
        for size in (0, 127, 128, 16_384):
            got = grown(value, i, size)
            assert type(got[1]) is Row and got[1].kind is RowKind.DELETE, f"got {got[1]!r} for {where}, should keep the row"
            if kind == "int":
                continue
            found = [p for p in _parts(got) if type(p).__name__ == {"text": "str", "bytes": "bytes", "list": "list",
                                                                     "dict": "dict", "set": "set"}[kind]]
            sizes = [_units(p) if kind == "text" else len(p) for p in found]
            assert size in sizes, f"got sizes {sizes} for {where} grown to {size}, should hold one of {size}"


def _parts(value):
    yield value
    if isinstance(value, (list, tuple, set, frozenset)):
        for v in value:
            yield from _parts(v)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _parts(k)
            yield from _parts(v)
    elif dataclasses.is_dataclass(value):
        for f in dataclasses.fields(value):
            yield from _parts(getattr(value, f.name))


def test_varint_edges_hold_every_width_and_the_limits():
    edges = set(varint_edges())
    for k in range(1, 10):
        assert {2 ** (7 * k) - 1, 2 ** (7 * k)} <= edges | {2**63}, f"got no edge at 2**{7 * k}"
        assert {-(2 ** (7 * k - 1)), -(2 ** (7 * k - 1)) - 1} <= edges, f"got no zig-zag edge at -2**{7 * k - 1}"
    assert {-(2**31), 2**31 - 1, -(2**63), 2**63 - 1} <= edges, "got no int32/int64 limits"
    assert set(varint_edges(-128, 127)) == {e for e in edges if -128 <= e <= 127} | {-128}, "got edges out of range"


def test_variants_try_every_size_of_one_text_and_one_container():
    drawn = Amplified(["ab", "c"], 1, 0, False, False)
    whats = [what for _, what, _ in drawn.variants()]
    assert len(whats) == len(TEXT_SIZES) + len(COUNT_SIZES), f"got {whats}"
    huge = Amplified(["ab"], 0, 0, False, True)
    sizes = sorted(len(v[0]) if kind == "text" else len(v) for kind, _, v in huge.variants())
    assert sizes == sorted([*HUGE_COUNTS, 255, 256, 32_767, 32_768, 65_535, 65_536,
                            2_097_150, 2_097_151, 2_097_152]), f"got {sizes}"
    assert all(ord(c) < 128 for _, _, v in huge.variants() for c in v[0][:64]), "got non-ASCII huge text"


def test_amplified_is_a_strategy_of_amplified_values():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    seen = []

    @settings(max_examples=10, database=None)
    @given(amplified(st.lists(st.text(max_size=3), max_size=2)))
    def collect(drawn):
        seen.append(drawn)

    collect()
    assert seen and all(isinstance(d, Amplified) for d in seen), f"got {seen[:3]}"


def test_richest_values_are_those_with_the_most_parts_to_grow():
    drawn = [(1, None), (2, "a"), (3, ["x", "y"]), (3, ["x", "y"]), (4, "b")]
    got = richest_values(drawn, huge=True, at_most=3)
    assert got == [(3, ["x", "y"]), (2, "a"), (4, "b")], (
        f"got {got}, should be the list's value (a text, a list and its two texts), then the texts' in draw order, "
        "each once")
    assert richest_values([(1, None), (2, None)], huge=True) == [], "got values, should be none (no part grows)"
    assert richest_values([(7, None)], huge=False) == [(7, None)], "got none, should count the int (it grows when not huge)"
