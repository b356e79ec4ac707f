"""Generated codecs: straight-line read, write and copy functions per serializer instance.

A composite serializer (Row, Tuple, Pojo, Avro) reads, writes and copies its records through three
functions generated for its own schema the first time it is used: Python source built by this
module from *fragments* that each serializer class provides in its own module, compiled with
``compile`` and cached on the instance (``_cache_read``, ``_cache_write``, ``_cache_copy``).
The generic methods of the classes (``_deserialize_generic``, ``_serialize_generic``,
``_copy_serialized_generic``) stay the reference: they define the format and every error.

Fragments. A serializer class takes part by defining, next to the methods they stand for,

- ``_gen_read(g, out)``: code that reads one value at ``pos`` from ``data`` into ``out``;
- ``_gen_write(g, value)``: code that appends ``value``'s encoding to ``buf``, or raises
  ``Bail`` for any value it does not write exactly as ``serialize`` would;
- ``_gen_skip(g)``: code that moves ``pos`` over one value without building it (the copy of
  an encoded value), or calls ``g.call_copy`` where the bytes must be re-encoded;
- optionally ``_gen_declines(kind)``: true where its fragments cannot match the generic method
  for its configuration (an Avro schema with logical types, say); that function is then the
  generic method, and a parent calls the serializer instead of inlining it.

The one rule where a fragment is used: ``Emitter.read`` / ``write`` / ``skip`` inline a field
serializer's fragment when its class provides one *and* the method the fragment stands for is
the one of the class that provides it (a subclass that overrides ``deserialize`` is called,
not inlined); everything else (user serializers, Pickle, Enum, Avro, nesting deeper than
``MAX_INLINE_DEPTH``, code past ``MAX_LINES``) is a call of the field serializer's own method.

Errors. Generated code checks what it reads only as far as it needs to stay on the fast path
(every length is bounded by the bytes available before it is used): on anything unusual
(corrupt or truncated bytes, an out-of-domain value, a NaN payload it cannot keep, a
non-ASCII string where it only inlines ASCII) it gives up (``Bail`` or any exception but a
``NameError``, which only a broken generator causes and which is raised), undoes
what it did (the input position and element budget, the bytes written) and runs the generic
method from the start, whose result or error is then the result. So the generated path fails
exactly where the generic one does, with the same ``StateError`` and the same input position.
A function that does not compile is left to the generic method only where a schema is past
Python's limits (``PAST_COMPILE_LIMITS``); an ``IndentationError``, which only a broken
generator writes, is raised on first use (``raise_generator_bug``).

Other functions. A serializer may compile further functions from the same fragments with an
``Emitter`` and ``Emitter.function``: ``RowSerializer.byte_migration`` (a row's records
rebuilt in an evolved row's layout on bytes, for ``reference.backends.migration_plan``) finds
each kept field's bytes with ``Emitter.skip``. Such a function has no generic method to fall
back on: it raises where a codec would run one, and its caller redoes the record (the plan, on
its object path).

Safety. The source is built only from templates in this package, generated local names and
integers: names from schemas or snapshots (field and class names) never appear in it; they
are constants the functions close over (``Emitter.const``). Compiled functions are never
pickled: serializers pickle their configuration only and generate again after unpickling.

Switch. ``REFERENCE_GENERATED_CODECS=0`` in the environment, or
``reference.serializers.set_generated_codecs(False)`` at run time, makes every serializer
use the generic methods (for debugging, and where ``compile`` of generated code is not
allowed); ``set_generated_codecs(True)`` turns generation back on. ``has_generated_codecs``
says whether a serializer has codecs the switch changes; ``uses_generic_methods`` whether
its slots hold the generic methods now (a switch re-installs every live serializer's slots).
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from .._io import DataInputView, DataOutputView

__all__ = ["Bail", "Emitter", "GeneratedCodec", "install", "PAST_COMPILE_LIMITS", "raise_generator_bug", "set_generated_codecs", "generated_codecs",
           "generated_codecs_enabled", "generated_source", "has_generated_codecs", "uses_generic_methods",
           "MAX_INLINE_DEPTH", "MAX_LINES", "ENVIRONMENT_VARIABLE"]

ENVIRONMENT_VARIABLE = "REFERENCE_GENERATED_CODECS"
#: Composite nesting inlined into one function; deeper values are read by a call.
MAX_INLINE_DEPTH = 6
#: Lines of one generated function past which further composites are called, not inlined.
MAX_LINES = 1500

_enabled = os.environ.get(ENVIRONMENT_VARIABLE, "1").strip().lower() not in ("0", "false", "no", "off")
#: Every serializer with codec slots, by id (a switch re-installs them all).
_installed: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()
_lock = threading.Lock()


class Bail(Exception):
    """Generated code leaves its fast path; the generic method decides."""


def generated_codecs_enabled() -> bool:
    """Whether serializers read and write through generated code (see the module docstring)."""
    return _enabled


def has_generated_codecs(serializer: Any) -> bool:
    """Whether ``serializer`` reads, writes or copies its records through generated code when
    codecs are on (its class takes part, and does not leave all three to its generic methods)."""
    return isinstance(serializer, GeneratedCodec) and not all(_declines(serializer, kind) for kind in _FRAMES)


def uses_generic_methods(serializer: Any) -> bool:
    """Whether ``serializer`` now reads, writes and copies through its generic methods alone
    (its codec slots hold them, as every serializer's do while codecs are off); true of a
    serializer without codec slots."""
    return all(getattr(serializer, slot, None) in (None, getattr(serializer, _FRAMES[kind][1], None))
               for kind, slot in _SLOTS.items())


def set_generated_codecs(enabled: bool) -> bool:
    """Turn generated codecs on or off for every serializer, now; returns the previous setting."""
    global _enabled
    previous, _enabled = _enabled, bool(enabled)
    if previous == _enabled:
        return previous
    with _lock:
        serializers = list(_installed.values())
    for serializer in serializers:
        install(serializer)
    return previous


@contextmanager
def generated_codecs(enabled: bool) -> Iterator[None]:
    """``set_generated_codecs(enabled)`` for the duration of a ``with`` block."""
    previous = set_generated_codecs(enabled)
    try:
        yield
    finally:
        set_generated_codecs(previous)


class Name(str):
    """A local name or expression made by the emitter (the only strings code is built from)."""

    __slots__ = ()


class Emitter:
    """Builds one function's source. Fragments emit lines through ``emit``, whose arguments
    must be ``Name`` (made here) or ``int``: nothing else reaches the source."""

    def __init__(self, kind: str, indent: int = 2) -> None:
        self.kind = kind  # "read", "write" or "copy"
        self.lines: list[str] = []
        self.constants: dict[str, Any] = {}
        self._by_id: dict[int, Name] = {}
        self._count = 0
        #: Nesting of the emitted lines in the function: 2 inside a frame's ``try``, 1 at the
        #: top of the function's body.
        self._indent = indent
        self.depth = 0
        #: How many ``call_copy`` calls the code makes (writes to ``target``).
        self.copies = 0

    # -- names ---------------------------------------------------------------------------
    def const(self, value: Any) -> Name:
        """A name the function closes over, bound to ``value``."""
        found = self._by_id.get(id(value))
        if found is not None and self.constants[found] is value:
            return found
        name = Name(f"k{len(self.constants)}")
        self.constants[name] = value
        self._by_id[id(value)] = name
        return name

    def var(self) -> Name:
        self._count += 1
        return Name(f"v{self._count}")

    def names(self, n: int) -> list[Name]:
        return [self.var() for _ in range(n)]

    @staticmethod
    def tuple_of(names: Sequence[Name]) -> Name:
        for name in names:
            if type(name) is not Name:
                raise TypeError(f"generated code is built from emitter names only, got {name!r}")
        return Name("(" + "".join(f"{n}, " for n in names) + ")")

    @staticmethod
    def dict_of(pairs: Sequence[tuple[Name, Name]]) -> Name:
        for pair in pairs:
            for name in pair:
                if type(name) is not Name:
                    raise TypeError(f"generated code is built from emitter names only, got {name!r}")
        return Name("{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}")

    # -- lines ---------------------------------------------------------------------------
    def emit(self, template: str, **names: Name | int) -> None:
        for key, value in names.items():
            if type(value) is not Name and type(value) is not int:
                raise TypeError(f"generated code is built from emitter names and ints only, got {key}={value!r}")
        self.lines.append("    " * self._indent + template.format(**names))

    @contextmanager
    def block(self, template: str, **names: Name | int) -> Iterator[None]:
        """``template`` (a line ending in ``:``) and the lines emitted inside the ``with``,
        indented; a ``pass`` only when nothing was emitted (a ``pass`` costs a NOP per pass
        through the block)."""
        self.emit(template, **names)
        self._indent += 1
        start = len(self.lines)
        try:
            yield
        finally:
            if len(self.lines) == start:
                self.emit("pass")
            self._indent -= 1

    # -- the one rule: inline a fragment or call the serializer's own method ----------------
    def _fragment(self, serializer: Any, fragment: str, method: str) -> Any:
        if self.depth >= MAX_INLINE_DEPTH or len(self.lines) > MAX_LINES:
            return None
        cls = type(serializer)
        for owner in cls.__mro__:
            if fragment in owner.__dict__:
                if getattr(cls, method) is getattr(owner, method) and not _declines(serializer, self.kind):
                    return getattr(serializer, fragment)
                return None
        return None

    @contextmanager
    def _nested(self) -> Iterator[None]:
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    def read(self, serializer: Any, out: Name) -> None:
        """Code that reads one value of ``serializer`` into ``out``."""
        fragment = self._fragment(serializer, "_gen_read", "deserialize")
        if fragment is None:
            self.call_read(serializer.deserialize, out)
            return
        with self._nested():
            fragment(self, out)

    def write(self, serializer: Any, value: Name) -> None:
        """Code that writes ``value`` with ``serializer``."""
        fragment = self._fragment(serializer, "_gen_write", "serialize")
        if fragment is None:
            self.emit("{f}({v}, target)", f=self.const(serializer.serialize), v=value)
            return
        with self._nested():
            fragment(self, value)

    def skip(self, serializer: Any) -> None:
        """Code that copies one encoded value of ``serializer`` (moves ``pos`` over it)."""
        fragment = self._fragment(serializer, "_gen_skip", "copy_serialized")
        if fragment is not None and self._fragment(serializer, "_gen_skip", "deserialize") is None:
            fragment = None
        if fragment is None:
            self.call_copy(serializer.copy_serialized)
            return
        with self._nested():
            fragment(self)

    # -- calls -----------------------------------------------------------------------------
    def call_read(self, method: Callable[[DataInputView], Any], out: Name) -> None:
        """``out = method(source)`` at ``pos``."""
        self.emit("source._pos = pos")
        self.emit("{out} = {f}(source)", out=out, f=self.const(method))
        self.emit("pos = source._pos")

    def call_skip(self, method: Callable[[DataInputView], Any]) -> None:
        """Move over one value by reading it with ``method`` (whose bytes are then copied as
        they are: only for a serializer whose copy is its bytes)."""
        self.emit("source._pos = pos")
        self.emit("{f}(source)", f=self.const(method))
        self.emit("pos = source._pos")

    def call_copy(self, method: Callable[[DataInputView, DataOutputView], None]) -> None:
        """Copy one value with ``method``: the bytes before it are written first."""
        if self.kind != "copy":
            raise TypeError("call_copy belongs in copy code")
        self.copies += 1
        self.emit("buf += data[seg:pos]")
        self.emit("source._pos = pos")
        self.emit("{f}(source, target)", f=self.const(method))
        self.emit("pos = seg = source._pos")

    # -- compilation -----------------------------------------------------------------------
    def function(self, name: str, parameters: str, head: Sequence[str], tail: Sequence[str]) -> Any:
        """Compile ``def name(parameters)`` with ``head`` + the emitted lines + ``tail``,
        closing over the constants."""
        body = "\n".join(["    " + line for line in head] + self.lines + ["    " + line for line in tail])
        arguments = ", ".join(self.constants)
        source = f"def _make({arguments}):\n  def {name}({parameters}):\n{_indent(body)}\n  return {name}\n"
        namespace: dict[str, Any] = {}
        exec(_compiled(source, self.kind), {"Bail": Bail}, namespace)  # noqa: S102
        function = namespace["_make"](*self.constants.values())
        function.__source__ = source
        return function


#: Compiled code by source text: serializers of one schema share it (only their constants differ).
_CODE: dict[str, Any] = {}
_CODE_LIMIT = 512


def _compiled(source: str, kind: str) -> Any:
    code = _CODE.get(source)
    if code is None:
        code = compile(source, f"<generated {kind} codec>", "exec")
        with _lock:
            if len(_CODE) >= _CODE_LIMIT:
                _CODE.clear()
            _CODE[source] = code
    return code


def _declines(serializer: Any, kind: str) -> bool:
    """Whether ``serializer`` leaves its ``kind`` function ("read", "write", "copy") to its
    generic method (``_gen_declines(kind)``: its fragments cannot match it for this schema)."""
    declines = getattr(serializer, "_gen_declines", None)
    return bool(declines is not None and declines(kind))


def _indent(body: str) -> str:
    return "\n".join("  " + line if line else line for line in body.split("\n"))


#: Per function: its parameters, the generic method it stands for, and the frame around the
#: emitted body (a fast path inside ``try``; on any exception, undo and run the generic method,
#: except a NameError: every name in generated code is generated, so one that is missing is a
#: bug of the generator, raised rather than hidden behind the generic method).
_FRAMES: dict[str, tuple[str, str, tuple[str, ...], tuple[str, ...]]] = {
    "read": ("source", "_deserialize_generic", (
        "if type(source) is not {view} or type(source._data) is not bytes:",
        "    return {generic}(source)",
        "data = source._data",
        "pos = start = source._pos",
        "end = source._end",
        "budget = source._elements",
        "try:",
    ), (
        "except NameError:",
        "    raise",
        "except Exception:",
        "    source._pos = start",
        "    source._elements = budget",
        "    return {generic}(source)",
        "source._pos = pos",
        "return {result}",
    )),
    "write": ("value, target", "_serialize_generic", (
        "if type(target) is not {out}:",
        "    return {generic}(value, target)",
        "buf = target._buf",
        "start = len(buf)",
        "try:",
    ), (
        "except NameError:",
        "    raise",
        "except Exception:",
        "    del buf[start:]",
        "    return {generic}(value, target)",
    )),
    "copy": ("source, target", "_copy_serialized_generic", (
        "if type(source) is not {view} or type(target) is not {out} or type(source._data) is not bytes:",
        "    return {generic}(source, target)",
        "data = source._data",
        "pos = start = seg = source._pos",
        "end = source._end",
        "budget = source._elements",
        "buf = target._buf",
        "written = len(buf)",
        "try:",
    ), (
        "    buf += data[seg:pos]",
        "except NameError:",
        "    raise",
        "except Exception:",
        "    del buf[written:]",
        "    source._pos = start",
        "    source._elements = budget",
        "    return {generic}(source, target)",
        "source._pos = pos",
    )),
}


def _generate(serializer: Any, kind: str) -> Any:
    """The ``kind`` function ("read", "write" or "copy") of ``serializer``, compiled."""
    parameters, generic, head, tail = _FRAMES[kind]
    g = Emitter(kind)
    result = g.var()
    if kind == "read":
        g.read(serializer, result)
    elif kind == "write":
        g.write(serializer, Name("value"))
    else:
        g.skip(serializer)
    names = {"view": g.const(DataInputView), "out": g.const(DataOutputView),
             "generic": g.const(getattr(serializer, generic)), "result": result}
    return g.function(kind, parameters, [line.format(**names) for line in head],
                      [line.format(**names) for line in tail])


class GeneratedCodec:
    """Base of a serializer whose records go through generated code: ``serialize``,
    ``deserialize`` and ``copy_serialized`` call the functions in the codec slots, which
    ``install`` fills. The class defines ``_serialize_generic``, ``_deserialize_generic`` and
    ``_copy_serialized_generic`` (the reference) and its fragments."""

    _cache_read: Callable[[DataInputView], Any]
    _cache_write: Callable[[Any, DataOutputView], None]
    _cache_copy: Callable[[DataInputView, DataOutputView], None]

    def serialize(self, value: Any, target: DataOutputView) -> None:
        self._cache_write(value, target)

    def deserialize(self, source: DataInputView) -> Any:
        return self._cache_read(source)

    def copy_serialized(self, source: DataInputView, target: DataOutputView) -> None:
        self._cache_copy(source, target)


#: The codec slot of each function and the generic method it stands for.
_SLOTS = {"read": "_cache_read", "write": "_cache_write", "copy": "_cache_copy"}


class _Lazy:
    """Stands in for the functions until each one's first use, then generates it."""

    __slots__ = ("serializer",)

    def __init__(self, serializer: Any) -> None:
        self.serializer = serializer

    def read(self, source: DataInputView) -> Any:
        return _build(self.serializer, "read")(source)

    def write(self, value: Any, target: DataOutputView) -> None:
        _build(self.serializer, "write")(value, target)

    def copy(self, source: DataInputView, target: DataOutputView) -> None:
        _build(self.serializer, "copy")(source, target)


def install(serializer: Any) -> None:
    """Give ``serializer`` its codec slots (generated on first use, or the generic methods
    when generation is off). Call from the serializer's cache set-up (``__init__`` and after
    unpickling)."""
    with _lock:
        _installed[id(serializer)] = serializer
    lazy = _Lazy(serializer) if _enabled else None
    for kind, slot in _SLOTS.items():
        method = getattr(lazy, kind) if lazy is not None else getattr(serializer, _FRAMES[kind][1])
        setattr(serializer, slot, method)


#: What compiling a function raises for a schema past Python's limits (blocks nested past 20,
#: an int literal of a huge row's mask past the digit limit, recursion in the compiler): the
#: generic method runs instead.
PAST_COMPILE_LIMITS = (SyntaxError, ValueError, RecursionError, MemoryError)


def raise_generator_bug(exc: BaseException) -> None:
    """Raise ``exc`` (one of ``PAST_COMPILE_LIMITS``) when no schema can cause it, only a broken
    generator: an IndentationError (the emitter alone indents). Hidden behind the generic
    method, it would leave every record to the generic path and the codecs untested."""
    if isinstance(exc, IndentationError):
        raise exc


def _build(serializer: Any, kind: str) -> Any:
    """Fill ``serializer``'s ``kind`` slot (generated, or its generic method where it
    declines or generation is off) and return what it holds."""
    function = getattr(serializer, _FRAMES[kind][1])
    if _enabled and not _declines(serializer, kind):
        try:
            function = _generate(serializer, kind)
        except PAST_COMPILE_LIMITS as exc:
            raise_generator_bug(exc)  # else a schema beyond what compiles: the generic method
    setattr(serializer, _SLOTS[kind], function)
    return function


def generated_source(serializer: Any) -> dict[str, str]:
    """The source generated for ``serializer`` (``read``, ``write``, ``copy``), for reading
    and debugging; the constants it names are not shown."""
    return {kind: _generate(serializer, kind).__source__ for kind in _FRAMES}
