"""Built-in serializers' own evolution through the backends: Enum reconfiguration (old
ordinals kept), Pojo field addition (migration), composites carrying a nested evolution."""

import dataclasses
import enum

from backend_support import (
    STEP,
    EvolvingSerializer,
    make_backend,
    restore_backend,
)

from reference import register_type, snapshot_from_bytes
from reference.backends import ListStateDescriptor, MapStateDescriptor, ValueStateDescriptor
from reference.savepoint import read_savepoint_metadata
from reference.serializers import (
    EnumSerializer,
    ListSerializer,
    LongSerializer,
    MapSerializer,
    NullableSerializer,
    PojoSerializer,
    StringSerializer,
    TupleSerializer,
)

KEY = StringSerializer()


class Color(enum.Enum):
    RED = 1
    GREEN = 2
    BLUE = 3


def test_enum_reorder_is_reconfigured_and_keeps_old_ordinals(tmp_path, backend_kind):
    old = EnumSerializer(Color, symbols=["BLUE", "GREEN", "RED"])
    backend = make_backend(backend_kind, KEY)
    try:
        state = backend.get_list_state(ListStateDescriptor("colors", old))
        backend.set_current_key("k")
        state.add_all([Color.RED, Color.BLUE])
        sp1 = backend.savepoint(tmp_path / "sp1")
    finally:
        backend.close()
    restored = restore_backend(backend_kind, sp1, KEY)
    try:
        state = restored.get_list_state(ListStateDescriptor("colors", EnumSerializer(Color)))
        restored.set_current_key("k")
        assert state.get() == [Color.RED, Color.BLUE], f"got {state.get()}, should be [RED, BLUE]"
        state.add(Color.GREEN)
        sp2 = restored.savepoint(tmp_path / "sp2")
    finally:
        restored.close()
    snapshot = snapshot_from_bytes(read_savepoint_metadata(sp2).state("colors").value_serializer_snapshot)
    symbols = list(snapshot.restore_serializer().symbols)
    assert symbols == ["BLUE", "GREEN", "RED"], f"got symbols {symbols}, should keep the old order"
    again = restore_backend(backend_kind, sp2, KEY)
    try:
        state = again.get_list_state(ListStateDescriptor("colors", old))
        again.set_current_key("k")
        want = [Color.RED, Color.BLUE, Color.GREEN]
        assert state.get() == want, f"got {state.get()}, should be {want}"
    finally:
        again.close()


@dataclasses.dataclass
class Account:
    owner: str
    balance: int


def test_pojo_field_addition_migrates(tmp_path, backend_kind):
    backend = make_backend(backend_kind, KEY)
    try:
        state = backend.get_value_state(ValueStateDescriptor("account", PojoSerializer(Account)))
        for key, balance in (("a", 5), ("b", -7)):
            backend.set_current_key(key)
            state.update(Account(owner=key.upper(), balance=balance))
        sp1 = backend.savepoint(tmp_path / "sp1")
    finally:
        backend.close()

    # A new version of the class under the same module:qualname, with an added field.
    @dataclasses.dataclass
    class Account2:
        owner: str
        balance: int
        currency: str = "EUR"

    Account2.__qualname__ = Account.__qualname__
    Account2.__name__ = Account.__name__
    register_type(Account2)
    try:
        restored = restore_backend(backend_kind, sp1, KEY)
        try:
            state = restored.get_value_state(ValueStateDescriptor("account", PojoSerializer(Account2)))
            for key, balance in (("a", 5), ("b", -7)):
                restored.set_current_key(key)
                got = state.value()
                want = Account2(owner=key.upper(), balance=balance, currency="EUR")
                assert got == want, f"got {got!r}, should be {want!r} (key {key})"
        finally:
            restored.close()
    finally:
        register_type(Account)


def test_nested_evolution_inside_composites_migrates(tmp_path, backend_kind):
    def serializer(version):
        return TupleSerializer(
            LongSerializer(),
            ListSerializer(EvolvingSerializer(version)),
            MapSerializer(StringSerializer(), NullableSerializer(EvolvingSerializer(version))),
        )

    value = (1, [10, 20], {"x": 30, "y": None})
    backend = make_backend(backend_kind, KEY)
    try:
        state = backend.get_map_state(MapStateDescriptor("m", StringSerializer(), serializer(1)))
        backend.set_current_key("k")
        state.put("v", value)
        sp1 = backend.savepoint(tmp_path / "sp1")
    finally:
        backend.close()
    restored = restore_backend(backend_kind, sp1, KEY)
    try:
        state = restored.get_map_state(MapStateDescriptor("m", StringSerializer(), serializer(2)))
        restored.set_current_key("k")
        want = (1, [10 + STEP, 20 + STEP], {"x": 30 + STEP, "y": None})
        assert state.get("v") == want, f"got {state.get('v')!r}, should be {want!r}"
    finally:
        restored.close()
