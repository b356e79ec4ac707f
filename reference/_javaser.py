"""The subset of Java's object serialization stream (the public "Object Serialization Stream
Protocol", version 5) that Flink writes for ``LogicalType`` objects in serializer snapshots:
read into plain Python values and written back, never by loading a class or running anything.

Grammar read and written: the stream magic and version; ``TC_OBJECT`` with a class description
(``TC_CLASSDESC``: name, serialVersionUID, flags, fields, an empty annotation, a superclass
description or ``TC_NULL``) and its class data, top superclass first (primitive fields ``Z``,
``B``, ``S``, ``I``, ``J``, object fields ``L``), and after the fields of a class whose flags say
it has a ``writeObject`` method, its annotation (``TC_BLOCKDATA`` and objects up to
``TC_ENDBLOCKDATA``); ``TC_ENUM``; ``TC_STRING``; ``TC_NULL``; ``TC_ARRAY`` of objects
(:class:`JavaArray`: what Flink's serializers of collections hold); ``TC_CLASS``
(:class:`JavaClass`, a ``Class`` object, whose class may be a non-serializable one without
fields: the capturing class of a serialized lambda); ``TC_REFERENCE`` to any of them. Anything
else (primitive arrays, proxies, externalizable classes, long strings, exceptions, resets) is
refused as outside the subset. Reading is bounded: by the bytes given, by ``MAX_DEPTH`` levels of
nested objects, by ``MAX_HANDLES`` handles, and an array's length by the bytes left.
:func:`graph_difference` compares two values as Java values (the trees they unfold to, whatever
objects they share), without recursion.

Values: :class:`JavaObject` (its class description and per class of its hierarchy the field
values and the annotation), :class:`JavaEnum`, :class:`JavaClassDesc`, ``str``, ``None`` and
``int``/``bool`` for primitive fields. A back reference reads as the same Python object, so
identity is what the stream shares. Writing gives an object one handle per identity, an enum
constant, a class description and a ``Class`` object one per name, a string marked *shared* one
per value (as Java's interned strings: field type signatures, enum constant names, the names in
a serialized lambda), and every other string a handle of its own (as the distinct ``String``
objects of field names parsed from SQL text). Identity is the caller's model of Java's: one
Python object written twice is one Java object (a singleton serializer, a cached ``Integer``).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from ._errors import SnapshotFormatError

__all__ = ["JavaArray", "JavaClass", "JavaClassDesc", "JavaObject", "JavaEnum", "SharedString", "graph_difference",
           "read_java_object", "write_java_object", "MAX_DEPTH", "MAX_HANDLES"]

MAGIC = 0xACED
VERSION = 5
TC_NULL, TC_REFERENCE, TC_CLASSDESC, TC_OBJECT, TC_STRING, TC_ARRAY, TC_CLASS = 0x70, 0x71, 0x72, 0x73, 0x74, 0x75, 0x76
TC_BLOCKDATA, TC_ENDBLOCKDATA, TC_ENUM = 0x77, 0x78, 0x7E
BASE_HANDLE = 0x7E0000
SC_WRITE_METHOD, SC_SERIALIZABLE, SC_ENUM = 0x01, 0x02, 0x10
#: Deepest nesting of objects read (a row type of rows of rows ... takes about 3 per level).
MAX_DEPTH = 400
#: Most handles (objects, class descriptions, strings) one stream may assign.
MAX_HANDLES = 1 << 16
_PRIMITIVES = {"Z": 1, "B": 1, "S": 2, "I": 4, "J": 8, "C": 2, "F": 4, "D": 8}


class SharedString(str):
    """A string Java shares by value (an interned one: a field's type signature, an enum
    constant's name): written once per stream, then referenced."""

    __slots__ = ()


@dataclass(eq=False)
class JavaClassDesc:
    name: str
    suid: int
    flags: int
    #: (type code, field name, class name of an object field or None)
    fields: tuple[tuple[str, str, str | None], ...]
    superclass: JavaClassDesc | None

    def hierarchy(self) -> list[JavaClassDesc]:
        """This class and its superclasses, top superclass first (the order of class data)."""
        chain: list[JavaClassDesc] = []
        desc: JavaClassDesc | None = self
        while desc is not None:
            chain.append(desc)
            desc = desc.superclass
        return chain[::-1]


@dataclass(eq=False)
class JavaObject:
    desc: JavaClassDesc
    #: per class name of the hierarchy: field name -> value
    values: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: per class name with a writeObject method: its annotation (bytes of block data and values)
    annotations: dict[str, list[Any]] = field(default_factory=dict)

    def get(self, name: str) -> Any:
        """The value of field ``name`` (the most derived class declaring it)."""
        for desc in reversed(self.desc.hierarchy()):
            fields = self.values.get(desc.name, {})
            if name in fields:
                return fields[name]
        raise KeyError(name)


@dataclass(eq=False)
class JavaEnum:
    desc: JavaClassDesc
    name: str


@dataclass(eq=False)
class JavaArray:
    """An array of objects: its class description (``[L...;``) and items."""

    desc: JavaClassDesc
    items: list[Any]


@dataclass(eq=False)
class JavaClass:
    """A ``java.lang.Class`` object, one per class name in a stream."""

    desc: JavaClassDesc


def _corrupt(what: str) -> SnapshotFormatError:
    return SnapshotFormatError(f"Java object stream: {what}; the snapshot is corrupt or holds an object "
                               "outside the subset Flink writes for logical types")


_U2 = struct.Struct(">H")


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0
        self.handles: list[Any] = []

    def take(self, n: int) -> bytes:
        pos = self.pos
        if n < 0 or pos + n > len(self.data):
            raise _corrupt(f"{n} bytes needed at offset {pos} of {len(self.data)}")
        self.pos = pos + n
        return self.data[pos:pos + n]

    def u1(self) -> int:
        pos = self.pos
        if pos >= len(self.data):
            raise _corrupt(f"1 bytes needed at offset {pos} of {len(self.data)}")
        self.pos = pos + 1
        return self.data[pos]

    def u2(self) -> int:
        pos = self.pos
        if pos + 2 > len(self.data):
            raise _corrupt(f"2 bytes needed at offset {pos} of {len(self.data)}")
        self.pos = pos + 2
        return int(_U2.unpack_from(self.data, pos)[0])

    def utf(self) -> str:
        raw = self.take(self.u2())
        try:
            return raw.replace(b"\xc0\x80", b"\x00").decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            raise _corrupt(f"string bytes {raw[:32]!r} are not modified UTF-8") from None

    def new_handle(self, value: Any) -> int:
        if len(self.handles) >= MAX_HANDLES:
            raise _corrupt(f"more than {MAX_HANDLES} handles")
        self.handles.append(value)
        return len(self.handles) - 1

    def reference(self) -> Any:
        handle = int(struct.unpack(">i", self.take(4))[0]) - BASE_HANDLE
        if not 0 <= handle < len(self.handles) or self.handles[handle] is None:
            raise _corrupt(f"a reference to handle {handle + BASE_HANDLE:#x}, which is not assigned")
        return self.handles[handle]

    def string(self, tc: int) -> str:
        if tc == TC_STRING:
            text = self.utf()
            self.new_handle(text)
            return text
        if tc == TC_REFERENCE:
            value = self.reference()
            if not isinstance(value, str):
                raise _corrupt(f"a reference to a {type(value).__name__} where a string belongs")
            return value
        raise _corrupt(f"type code {tc:#x} where a string belongs")

    def class_desc(self, depth: int) -> JavaClassDesc | None:
        tc = self.u1()
        if tc == TC_NULL:
            return None
        if tc == TC_REFERENCE:
            value = self.reference()
            if not isinstance(value, JavaClassDesc):
                raise _corrupt(f"a reference to a {type(value).__name__} where a class description belongs")
            return value
        if tc != TC_CLASSDESC:
            raise _corrupt(f"type code {tc:#x} where a class description belongs (proxies are not read)")
        if depth > MAX_DEPTH:
            raise _corrupt(f"class descriptions nested deeper than {MAX_DEPTH}")
        name = self.utf()
        suid = int(struct.unpack(">q", self.take(8))[0])
        desc = JavaClassDesc(name, suid, 0, (), None)
        self.new_handle(desc)
        desc.flags = self.u1()
        count = self.u2()
        # a class that is not Serializable is described (flags 0, no fields) only as a Class object
        if desc.flags & ~(SC_WRITE_METHOD | SC_SERIALIZABLE | SC_ENUM) or not (
                desc.flags & SC_SERIALIZABLE or (desc.flags == 0 and count == 0)):
            raise _corrupt(f"class {name} has flags {desc.flags:#x} (only Serializable classes are read)")
        fields: list[tuple[str, str, str | None]] = []
        for _ in range(count):
            code = chr(self.u1())
            fname = self.utf()
            if code in _PRIMITIVES:
                fields.append((code, fname, None))
            elif code in ("L", "["):
                fields.append((code, fname, SharedString(self.string(self.u1()))))
            else:
                raise _corrupt(f"field {fname} of {name} has type code {code!r}")
        desc.fields = tuple(fields)
        if self.u1() != TC_ENDBLOCKDATA:
            raise _corrupt(f"class {name} has a class annotation")
        desc.superclass = self.class_desc(depth + 1)
        return desc

    def content(self, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise _corrupt(f"objects nested deeper than {MAX_DEPTH}")
        tc = self.u1()
        if tc == TC_NULL:
            return None
        if tc == TC_REFERENCE:
            return self.reference()
        if tc == TC_STRING:
            return self.string(tc)
        if tc == TC_ENUM:
            desc = self.class_desc(depth + 1)
            if desc is None:
                raise _corrupt("an enum without a class")
            enum = JavaEnum(desc, "")
            self.new_handle(enum)
            enum.name = SharedString(self.string(self.u1()))
            return enum
        if tc == TC_CLASS:
            desc = self.class_desc(depth + 1)
            if desc is None:
                raise _corrupt("a Class object without a class description")
            klass = JavaClass(desc)
            self.new_handle(klass)
            return klass
        if tc == TC_ARRAY:
            desc = self.class_desc(depth + 1)
            if desc is None or not desc.name.startswith(("[L", "[[")) or desc.fields or not desc.flags & SC_SERIALIZABLE:
                raise _corrupt(f"an array of class {getattr(desc, 'name', None)!r} (only arrays of objects are read)")
            array = JavaArray(desc, [])
            self.new_handle(array)
            length = int(struct.unpack(">i", self.take(4))[0])
            if not 0 <= length <= len(self.data) - self.pos:  # each item takes a byte at least
                raise _corrupt(f"an array of {length} items with {len(self.data) - self.pos} bytes left")
            for _ in range(length):
                array.items.append(self.content(depth + 1))
            return array
        if tc == TC_OBJECT:
            desc = self.class_desc(depth + 1)
            if desc is None:
                raise _corrupt("an object without a class")
            if not all(level.flags & SC_SERIALIZABLE for level in desc.hierarchy()):
                raise _corrupt(f"an object of class {desc.name}, which is not Serializable")
            obj = JavaObject(desc)
            self.new_handle(obj)
            for cls in desc.hierarchy():
                values: dict[str, Any] = {}
                for code, fname, _ in cls.fields:
                    values[fname] = self.primitive(code) if code in _PRIMITIVES else self.content(depth + 1)
                obj.values[cls.name] = values
                if cls.flags & SC_WRITE_METHOD:
                    obj.annotations[cls.name] = self.annotation(depth + 1)
            return obj
        raise _corrupt(f"type code {tc:#x} at offset {self.pos - 1} is outside the subset read")

    def primitive(self, code: str) -> Any:
        raw = self.take(_PRIMITIVES[code])
        if code == "Z":
            return raw != b"\x00"
        if code in "FD":
            raise _corrupt("float fields are outside the subset read")
        return int.from_bytes(raw, "big", signed=code != "C")

    def annotation(self, depth: int) -> list[Any]:
        items: list[Any] = []
        while True:
            tc = self.data[self.pos] if self.pos < len(self.data) else None
            if tc is None:
                raise _corrupt("an object annotation without its end")
            if tc == TC_ENDBLOCKDATA:
                self.pos += 1
                return items
            if tc == TC_BLOCKDATA:
                self.pos += 1
                items.append(bytes(self.take(self.u1())))
            else:
                items.append(self.content(depth))


def graph_difference(a: Any, b: Any, limit: int = 1 << 20) -> str | None:
    """Where values ``a`` and ``b`` (read or built) differ as Java values: the trees they unfold
    to, whatever objects each shares (a back reference and a copy are alike); ``None`` when they
    do not. Pairs already compared are not compared again; past ``limit`` pairs, they differ."""
    seen: set[tuple[int, int]] = set()
    stack: list[tuple[Any, Any, str]] = [(a, b, "")]
    while stack:
        x, y, path = stack.pop()
        if isinstance(x, str) or isinstance(y, str):
            if not (isinstance(x, str) and isinstance(y, str) and str(x) == str(y)):
                return f"{path or 'the value'}: {x!r} and {y!r}"
            continue
        if x is None or y is None or isinstance(x, (bool, int)) or isinstance(y, (bool, int)):
            if not (type(x) is type(y) and x == y):
                return f"{path or 'the value'}: {x!r} and {y!r}"
            continue
        if type(x) is not type(y):
            return f"{path or 'the value'}: a {type(x).__name__} and a {type(y).__name__}"
        if (id(x), id(y)) in seen:
            continue
        seen.add((id(x), id(y)))
        if len(seen) > limit:
            return f"{path or 'the value'}: more than {limit} objects compared"
        if isinstance(x, JavaClassDesc):
            if (x.name, x.suid, x.flags, x.fields) != (y.name, y.suid, y.flags, y.fields):
                return f"{path or 'the value'}: class {x.name} ({x.suid}, {x.flags:#x}) and {y.name} ({y.suid}, {y.flags:#x})"
            stack.append((x.superclass, y.superclass, f"{path}<super of {x.name}>"))
        elif isinstance(x, (JavaClass, JavaEnum)):
            stack.append((x.desc, y.desc, path))
            if isinstance(x, JavaEnum):
                stack.append((x.name, y.name, f"{path}.name()"))
        elif isinstance(x, JavaArray):
            if len(x.items) != len(y.items):
                return f"{path or 'the value'}: arrays of {len(x.items)} and {len(y.items)} items"
            stack.append((x.desc, y.desc, path))
            stack += [(i, j, f"{path}[{k}]") for k, (i, j) in enumerate(zip(x.items, y.items, strict=True))]
        elif isinstance(x, JavaObject):
            stack.append((x.desc, y.desc, path))
            for cls in x.values.keys() | y.values.keys():  # a class without fields may be left out
                fields, other = x.values.get(cls, {}), y.values.get(cls, {})
                if fields.keys() != other.keys():
                    return f"{path or 'the value'}: {cls} has fields {sorted(fields)} and {sorted(other)}"
                stack += [(v, other[k], f"{path}.{k}") for k, v in fields.items()]
            for cls in x.annotations.keys() | y.annotations.keys():
                parts, other_parts = x.annotations.get(cls, []), y.annotations.get(cls, [])
                if len(parts) != len(other_parts):
                    return f"{path or 'the value'}: {cls} writes {len(parts)} and {len(other_parts)} parts"
                for k, (i, j) in enumerate(zip(parts, other_parts, strict=True)):
                    if isinstance(i, bytes) or isinstance(j, bytes):
                        if i != j:
                            return f"{path}<{cls} data {k}>: {i!r} and {j!r}"
                    else:
                        stack.append((i, j, f"{path}<{cls} object {k}>"))
        else:
            return f"{path or 'the value'}: a {type(x).__name__}, which is no Java value"
    return None


def read_java_object(data: bytes, pos: int = 0) -> tuple[Any, int]:
    """One object stream (magic, version, one object) at ``data[pos:]``: (the object, the
    offset after it)."""
    reader = _Reader(data)
    reader.pos = pos
    if struct.unpack(">HH", reader.take(4)) != (MAGIC, VERSION):
        raise _corrupt(f"no stream header (0xACED 0005) at offset {pos}")
    return reader.content(0), reader.pos


class _Writer:
    def __init__(self) -> None:
        self.out = bytearray(struct.pack(">HH", MAGIC, VERSION))
        self.handles: dict[Any, int] = {}

    def utf(self, text: str) -> None:
        raw = text.encode("utf-8", "surrogatepass").replace(b"\x00", b"\xc0\x80")
        self.out += struct.pack(">H", len(raw)) + raw

    def handle_of(self, key: Any) -> int | None:
        return self.handles.get(key)

    def assign(self, key: Any) -> None:
        self.handles[key] = len(self.handles)

    def ref(self, handle: int) -> None:
        self.out += bytes([TC_REFERENCE]) + struct.pack(">i", BASE_HANDLE + handle)

    def string(self, text: str) -> None:
        if isinstance(text, SharedString):
            key: tuple[str, Any] = ("s", str(text))
            handle = self.handle_of(key)
            if handle is not None:
                self.ref(handle)
                return
        else:  # a string of its own (a field name parsed from SQL text): never shared
            key = ("o", len(self.handles))
        self.out.append(TC_STRING)
        self.assign(key)
        self.utf(text)

    def class_desc(self, desc: JavaClassDesc | None) -> None:
        if desc is None:
            self.out.append(TC_NULL)
            return
        key = ("c", desc.name)
        handle = self.handle_of(key)
        if handle is not None:
            self.ref(handle)
            return
        self.out.append(TC_CLASSDESC)
        self.utf(desc.name)
        self.out += struct.pack(">q", desc.suid)
        self.assign(key)
        self.out.append(desc.flags)
        self.out += struct.pack(">H", len(desc.fields))
        for code, fname, cname in desc.fields:
            self.out.append(ord(code))
            self.utf(fname)
            if cname is not None:
                self.string(SharedString(cname))
        self.out.append(TC_ENDBLOCKDATA)
        self.class_desc(desc.superclass)

    def _begin(self, key: tuple[Any, ...], tag: int, desc: Any) -> bool:
        """A back reference to what ``key`` names if it was written already (True); else its
        tag and class descriptor, and the next handle given to it (False)."""
        handle = self.handle_of(key)
        if handle is not None:
            self.ref(handle)
            return True
        self.out.append(tag)
        self.class_desc(desc)
        self.assign(key)
        return False

    def content(self, value: Any) -> None:
        if value is None:
            self.out.append(TC_NULL)
        elif isinstance(value, str):
            self.string(value)
        elif isinstance(value, JavaEnum):
            if not self._begin(("e", value.desc.name, value.name), TC_ENUM, value.desc):
                self.string(SharedString(value.name))
        elif isinstance(value, JavaClass):
            self._begin(("C", value.desc.name), TC_CLASS, value.desc)
        elif isinstance(value, JavaArray):
            if self._begin(("o", id(value)), TC_ARRAY, value.desc):
                return
            self.out += struct.pack(">i", len(value.items))
            for item in value.items:
                self.content(item)
        elif isinstance(value, JavaObject):
            if self._begin(("o", id(value)), TC_OBJECT, value.desc):
                return
            for cls in value.desc.hierarchy():
                values = value.values.get(cls.name, {})
                for code, fname, _ in cls.fields:
                    item = values[fname]
                    if code in _PRIMITIVES:
                        size = _PRIMITIVES[code]
                        self.out += int(item).to_bytes(size, "big", signed=code != "C")
                    else:
                        self.content(item)
                if cls.flags & SC_WRITE_METHOD:
                    for part in value.annotations.get(cls.name, []):
                        if isinstance(part, bytes):
                            self.out += bytes([TC_BLOCKDATA, len(part)]) + part
                        else:
                            self.content(part)
                    self.out.append(TC_ENDBLOCKDATA)
        else:
            raise TypeError(f"write_java_object: cannot write a {type(value).__name__} ({value!r})")


def write_java_object(value: Any) -> bytes:
    """One object stream (magic, version, the object), as Java's ``ObjectOutputStream`` writes
    it (see the module docstring for what is shared)."""
    writer = _Writer()
    writer.content(value)
    return bytes(writer.out)
