"""``held``: the one walk of what a serializer holds, which finds the serializers a duplicate
shares (``roundtrip.concurrent``) and the modules a fresh process imports
(``backends.fresh_process``)."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

from conformance._checks._support import HELD_LIMIT, held, nested_serializers
from conformance._checks.backends import _modules_for
from reference import TypeSerializer, TypeSerializerSnapshot
from reference.serializers import IntSerializer, LongSerializer, StringSerializer


class _NeverWrites(TypeSerializer[Any]):
    __slots__ = ()

    def serialize(self, value: Any, target: Any) -> None:
        raise NotImplementedError

    def deserialize(self, source: Any) -> Any:
        raise NotImplementedError

    def snapshot_configuration(self) -> Any:
        raise NotImplementedError


class Holder(_NeverWrites):
    """Holds whatever it is given, as attributes; never serializes."""

    def __init__(self, **held_attributes: Any) -> None:
        self.__dict__.update(held_attributes)


class SlotHolder(_NeverWrites):
    __slots__ = ("inner", "unset")

    def __init__(self, inner: Any) -> None:
        self.inner = inner


class Box:
    """A plain object (not a serializer): the walk does not enter it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner


class Colour(enum.Enum):
    RED = 1


def _paths(found: list[tuple[str, Any]]) -> dict[str, Any]:
    return dict(found)


def test_serializers_in_attributes_and_containers_are_found_with_where():
    a, b, c, d = IntSerializer(), LongSerializer(), StringSerializer(), IntSerializer()
    root = Holder(first=a, fields=[("x", b)], by_name={"y": c}, nested=Holder(inner=d))
    found = _paths(held(root, (TypeSerializer,)))
    should = {"first": a, "fields[0][1]": b, "by_name['y']": c, "nested": root.nested, "nested.inner": d}
    assert {p: id(s) for p, s in found.items()} == {p: id(s) for p, s in should.items()}, (
        f"got {sorted(found)}, should be {sorted(should)}")


def test_each_object_once_root_left_out_and_cycles_end():
    shared = IntSerializer()
    root = Holder(a=shared, b=shared)
    inner = Holder(back=root, again=shared)
    root.inner = inner
    found = held(root, (TypeSerializer,))
    ids = [id(s) for _, s in found]
    assert len(ids) == len(set(ids)), f"got {[p for p, _ in found]}, should name each object once"
    assert id(root) not in ids, f"got the root among {[p for p, _ in found]}, should leave it out"
    assert [p for p, _ in found] == ["a", "inner"], f"got {[p for p, _ in found]}, should be ['a', 'inner']"


def test_slots_are_read_and_an_unset_slot_is_skipped():
    inner = LongSerializer()
    found = _paths(held(SlotHolder(inner), (TypeSerializer,)))
    assert list(found) == ["inner"] and found["inner"] is inner, f"got {found}, should be the slot 'inner' only"


def test_classes_are_reported_and_not_entered_plain_objects_are_neither():
    hidden = IntSerializer()
    root = Holder(kind=Colour, subclasses=(Box, Colour), box=Box(hidden))
    found = held(root, (TypeSerializer,))
    assert [(p, o) for p, o in found] == [("kind", Colour), ("subclasses[0]", Box)], (
        f"got {found}, should be Colour once and Box, never the serializer inside a Box")


def test_containers_are_entered_three_deep_only():
    deep, deeper = IntSerializer(), LongSerializer()
    root = Holder(three=[[[deep]]], four=[[[[deeper]]]])
    found = _paths(held(root, (TypeSerializer,)))
    assert list(found) == ["three[0][0][0]"], f"got {list(found)}, should find only the one 3 containers deep"


def test_through_decides_what_is_entered():
    class Snap(TypeSerializerSnapshot[Any]):
        def __init__(self, nested: Any) -> None:
            self.nested = nested

        get_current_version = read_snapshot = restore_serializer = write_snapshot = _NeverWrites.serialize

    inside = StringSerializer()
    root = Holder(snapshot=Snap(inside))
    only_serializers = [p for p, _ in held(root, (TypeSerializer,))]
    both = [p for p, _ in held(root, (TypeSerializer, TypeSerializerSnapshot))]
    assert only_serializers == [], f"got {only_serializers}, should not enter a snapshot"
    assert both == ["snapshot", "snapshot.nested"], f"got {both}, should enter the snapshot"


def test_the_walk_stops_at_its_limit():
    root = Holder(many=[Holder(items=[IntSerializer() for _ in range(100)]) for _ in range(10)])
    found = held(root, (TypeSerializer,))
    assert len(found) == HELD_LIMIT, f"got {len(found)} objects, should stop at {HELD_LIMIT}"


def test_nested_serializers_are_the_serializers_held():
    a = IntSerializer()
    root = Holder(kind=Colour, inner=a)
    assert nested_serializers(root) == [("inner", a)], f"got {nested_serializers(root)}, should leave classes out"


@dataclasses.dataclass
class Reading:
    colour: Colour = Colour.RED
    note: str = ""


def test_modules_for_names_the_modules_of_the_classes_a_pojo_holds():
    from reference.serializers import PojoSerializer

    serializer = PojoSerializer(Reading)
    mods = _modules_for(serializer)
    should = sorted({__name__, "reference.serializers"} | {type(serializer.snapshot_configuration()).__module__})
    assert mods == should, f"got {mods}, should be {should} (the dataclass's and enum's module, the serializers')"
