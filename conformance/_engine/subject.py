"""``Subject`` and ``Evolution``: what gets certified, validated up front with fix-it messages."""

from __future__ import annotations

import functools
import inspect
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from reference import TypeSerializer, Verdict

from .errors import ConformanceError

__all__ = ["Subject", "Evolution", "SubjectError", "KINDS", "subject_kind", "subject_name", "declared_families"]

#: The verdicts an evolution may expect (``reference.Verdict``'s members).
KINDS = tuple(Verdict)


class SubjectError(ConformanceError, ValueError):
    """A subject or evolution that cannot be certified as given; the message says how to fix it."""


def _resolve_serializer(what: str, given: Any) -> tuple[TypeSerializer[Any] | None, Callable[[], Any] | None]:
    """(instance, factory): exactly one is set. A factory is called once here to validate it."""
    if isinstance(given, TypeSerializer):
        return given, None
    if given is None:
        raise SubjectError(
            f"{what} is missing: pass a serializer instance (MySerializer()) or a "
            "zero-argument factory (MySerializer, or lambda: MySerializer(config))"
        )
    if not callable(given):
        raise SubjectError(
            f"{what} must be a reference.TypeSerializer instance or a zero-argument factory; "
            f"got {type(given).__name__} {given!r}"
        )
    try:
        made = given()
    except TypeError as exc:
        if _takes_no_arguments(given):  # the factory's own code raised it
            raise SubjectError(
                f"{what}: the factory {getattr(given, '__name__', given)!r} raised TypeError: {exc}; "
                "it must build the serializer when called without arguments"
            ) from None
        raise SubjectError(
            f"{what}: calling {getattr(given, '__name__', given)!r} without arguments failed "
            f"({exc}); pass an instance instead, or a zero-argument factory such as "
            "lambda: MySerializer(config)"
        ) from None
    if not isinstance(made, TypeSerializer):
        raise SubjectError(
            f"{what}: the factory {getattr(given, '__name__', given)!r} returned "
            f"{type(made).__name__}, not a reference.TypeSerializer; subclass "
            "reference.TypeSerializer (serialize, deserialize, snapshot_configuration, ...)"
        )
    return None, given


def _takes_no_arguments(given: Callable[..., Any]) -> bool:
    """Whether ``given`` may be called without arguments (its signature says so; unknown: no)."""
    import inspect

    try:
        inspect.signature(given).bind()
    except (TypeError, ValueError):
        return False
    return True


def _is_strategy(obj: Any) -> bool:
    from hypothesis.strategies import SearchStrategy

    return isinstance(obj, SearchStrategy)


class Evolution:
    """A newer version of the subject's serializer and what restoring old state with it must do.

    ``expect`` is the verdict the new serializer's snapshot must give on the old snapshot (one of
    ``compatible_as_is``, ``compatible_after_migration``,
    ``compatible_with_reconfigured_serializer``, ``incompatible``); ``migrate`` maps an old value
    to the value the new serializer must read back (identity when omitted for as-is and
    reconfigured, and for a recorded release's expectation; required for an after-migration
    evolution to another serializer); it is the oracle, so it must be written independently of
    the code it judges (``Subject`` refuses one that is, or calls, the new serializer's or its
    snapshot's methods or the functions their migration calls). ``reason_contains`` (incompatible only) is a
    word the incompatibility reason must mention, such as the field name; ``reason_where``
    (incompatible only) words it must mention in that order, saying where the change is (the
    containers and fields on the way to it: ``("items", "element", "price")``); each is found as
    text in the reason, case aside, after the one before it. ``schemas`` (old,
    new) are the ``reference.types`` schemas of both versions when their classes were generated
    from schemas (``strategies``): the harness makes the new classes current while the new
    serializer works, and the old ones again afterwards. ``classes`` (old, new) does the same
    for classes of your own whose versions keep their module and qualified name (a dataclass
    with a field more, registered under the old one's name): two sequences of classes,
    registered in turn with ``reference.register_type``.
    """

    def __init__(
        self,
        to: Any = None,
        expect: str | None = None,
        migrate: Callable[[Any], Any] | None = None,
        *,
        reason_contains: str | None = None,
        reason_where: Sequence[str] = (),
        name: str | None = None,
        schemas: tuple[Any, Any] | None = None,
        classes: tuple[Sequence[type], Sequence[type]] | None = None,
    ) -> None:
        if classes is not None and (not isinstance(classes, tuple) or len(classes) != 2
                                    or not all(isinstance(c, type) for side in classes for c in side)):
            raise SubjectError(
                f"Evolution(classes=...) must be the pair (old_classes, new_classes), each a list of classes; "
                f"got {classes!r}")
        self.classes = None if classes is None else (tuple(classes[0]), tuple(classes[1]))
        if to is None:  # a recorded release's expectation: judged against the subject itself
            self._instance, self._factory = None, None
        else:
            try:
                self._instance, self._factory = _resolve_serializer("Evolution(to=...)", to)
            finally:
                self.restore_classes()
        if expect is None:
            raise SubjectError(
                "Evolution(expect=...) is missing: the verdict the new serializer's snapshot must "
                f"give on the old one, one of {', '.join(k.value for k in KINDS)}"
            )
        if expect not in KINDS:
            hint = ""
            for kind in KINDS:
                if isinstance(expect, str) and expect.lower().replace("-", "_") in kind:
                    hint = f" (did you mean {kind.value!r}?)"
                    break
            raise SubjectError(
                f"Evolution(expect={expect!r}) is not a verdict; use one of "
                f"{', '.join(k.value for k in KINDS)}{hint}"
            )
        expect = Verdict(expect)
        if schemas is not None and (not isinstance(schemas, tuple) or len(schemas) != 2):
            raise SubjectError(
                f"Evolution(schemas=...) must be the pair (old_schema, new_schema); got {schemas!r}"
            )
        if migrate is not None and not callable(migrate):
            raise SubjectError(
                f"Evolution(migrate=...) must be a function old_value -> new_value; got {type(migrate).__name__}"
            )
        if expect is Verdict.COMPATIBLE_AFTER_MIGRATION and migrate is None and to is not None:
            raise SubjectError(
                "Evolution(expect='compatible_after_migration') needs migrate=: a function that "
                "maps an old value to the value the new serializer must read after migration "
                "(lambda old: old if the value does not change)"
            )
        if expect is Verdict.INCOMPATIBLE and migrate is not None:
            raise SubjectError(
                "Evolution(expect='incompatible', migrate=...) contradicts itself: incompatible "
                "state is never migrated; drop migrate= or change expect="
            )
        if reason_contains is not None and expect is not Verdict.INCOMPATIBLE:
            raise SubjectError(
                "Evolution(reason_contains=...) only applies to expect='incompatible' (it is a "
                "word the incompatibility reason must mention)"
            )
        self.to = to
        self.expect = expect
        self.migrate = migrate
        words = None if isinstance(reason_where, str) or not isinstance(reason_where, Iterable) else tuple(reason_where)
        if words is None or not all(isinstance(w, str) and w for w in words):
            raise SubjectError(
                f"Evolution(reason_where=...) must be a sequence of words (the places on the way to the "
                f"change, in order: ('items', 'element', 'price')); got {reason_where!r}")
        if words and expect is not Verdict.INCOMPATIBLE:
            raise SubjectError(
                "Evolution(reason_where=...) only applies to expect='incompatible' (it is what the "
                "incompatibility reason must mention, in order, to say where the change is)")
        self.reason_contains = reason_contains
        self.reason_where = words
        self.name = name
        self.schemas = schemas

    @property
    def has_target(self) -> bool:
        return self._instance is not None or self._factory is not None

    def serializer(self) -> TypeSerializer[Any]:
        """A serializer of the new version (a fresh one each call when given a factory)."""
        if not self.has_target:
            raise SubjectError("this Evolution names no serializer (to=...): it only declares what a "
                               "recorded release must give (Subject(releases={...}))")
        if self._factory is not None:
            try:
                return self._factory()
            finally:  # building it registered the new classes: the old ones stay current
                self.restore_classes()
        assert self._instance is not None  # one of the two, checked when made
        return self._instance

    def restore_classes(self) -> None:
        """Make the old ``classes`` current again (building a serializer registers its classes)."""
        if self.classes is not None:
            from reference import register_type

            for cls in self.classes[0]:
                register_type(cls)

    def expected_value(self, old_value: Any) -> Any:
        return old_value if self.migrate is None else self.migrate(old_value)

    def label(self, index: int) -> str:
        if self.name:
            return self.name
        if not self.has_target:
            return f"release {index} ({self.expect.value})"
        return f"evolution {index} (to {self.serializer()!r}, {self.expect.value})"

    def __repr__(self) -> str:
        return f"Evolution(to={self.to!r}, expect={self.expect.value!r})"


#: Packages whose functions are not the code under test: the reference implementation (its
#: default migrations are tested by its own suite), the oracles' library, the Python runtime.
_NOT_UNDER_TEST = ("reference", "strategies", "hypothesis", "builtins", "functools", "dataclasses", "typing")


def _user_function(obj: Any) -> Any:
    """The plain function behind ``obj`` (a function, method, static or class method, or
    partial), or None when it is none of these or lives in a library."""
    while True:
        if isinstance(obj, (staticmethod, classmethod)) or inspect.ismethod(obj):
            obj = obj.__func__
        elif isinstance(obj, functools.partial):
            obj = obj.func
        else:
            break
    if not inspect.isfunction(obj):
        return None
    return None if (obj.__module__ or "").split(".")[0] in _NOT_UNDER_TEST else obj


def _reachable(start: Any) -> dict[Any, Any]:
    """Every user function ``start`` calls by a module-level name (``helper(...)``,
    ``module.helper(...)``, ``Class.method(...)``) or holds in a closure, transitively:
    function -> the function it was reached from (``start`` maps to itself)."""
    found = {start: start}
    todo = [start]
    while todo:
        func = todo.pop()
        codes, names = [func.__code__], set()
        while codes:
            code = codes.pop()
            names.update(code.co_names)
            codes += [c for c in code.co_consts if inspect.iscode(c)]
        values = [cell.cell_contents for cell in (func.__closure__ or ()) if _filled(cell)]
        for name in names:
            value = func.__globals__.get(name)
            if inspect.ismodule(value) or inspect.isclass(value):
                values += [_attribute(value, other) for other in names]
            else:
                values.append(value)
        for value in values:
            reached = _user_function(value)
            if reached is not None and reached not in found:
                found[reached] = func
                todo.append(reached)
    return found


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018
    except ValueError:
        return False
    return True


def _attribute(owner: Any, name: str) -> Any:
    """``owner.name`` without running descriptors or ``__getattr__`` (None when absent)."""
    try:
        return inspect.getattr_static(owner, name)
    except AttributeError:
        return None


def _code_under_test(serializer: Any) -> dict[Any, str]:
    """The functions an evolution's new serializer migrates with: the methods of its class and
    of its snapshot's class, and the functions their ``migrate_element`` / ``migrate_state``
    reach; each with where it is used, for the message."""
    classes = [type(serializer)]
    try:
        classes.append(type(serializer.snapshot_configuration()))
    except Exception:  # a broken snapshot is for the checks to report, not for this guard
        pass
    found: dict[Any, str] = {}
    for cls in classes:
        for klass in cls.__mro__:
            for name, member in vars(klass).items():
                func = _user_function(member)
                if func is None or func in found:
                    continue
                found[func] = f"{klass.__qualname__}.{name}"
    for cls in classes:
        for method in ("migrate_element", "migrate_state"):
            entry = _user_function(_attribute(cls, method))
            if entry is None:
                continue
            for func in _reachable(entry):
                found.setdefault(func, f"{func.__qualname__}, which {cls.__qualname__}.{method} calls")
    return found


def shared_oracle(migrate: Any, serializer: Any) -> str | None:
    """What ``migrate`` (an evolution's expected-value oracle) shares with the code it is to
    judge, or None: a method of the new serializer or of its snapshot (bound or not), or a
    function their migration calls, used directly or called by ``migrate``. An oracle built on
    the code under test agrees with it whatever it does."""
    bound_to = getattr(migrate, "__self__", None)
    if bound_to is not None and not inspect.ismodule(bound_to):
        snapshot_class = None
        try:
            snapshot_class = type(serializer.snapshot_configuration())
        except Exception:
            pass
        if isinstance(bound_to, type(serializer)) or (snapshot_class and isinstance(bound_to, snapshot_class)):
            return f"a method bound to the new release's {type(bound_to).__qualname__}"
    oracle = _user_function(migrate)
    if oracle is None:
        return None
    under_test = _code_under_test(serializer)
    if oracle in under_test:
        return f"the function {under_test[oracle]}"
    for func, caller in _reachable(oracle).items():
        if func in under_test:
            via = "" if caller is oracle else f" (through {caller.__qualname__})"
            return f"built on {under_test[func]}{via}"
    return None


def _independent_oracle(evolution: Evolution, serializer: Any, where: str) -> None:
    """SubjectError when ``evolution``'s ``migrate=`` is (built on) the code it is to judge."""
    if evolution.migrate is None:
        return
    shared = shared_oracle(evolution.migrate, serializer)
    if shared is not None:
        raise SubjectError(
            f"{where}: Evolution(migrate=...) is {shared}: an oracle built on the migration under "
            "test agrees with it whatever it does, so it proves nothing; write migrate= "
            "independently, from what the new release must read (e.g. a lambda building the new "
            "value from the old one's fields, with an added field at its default), without calling "
            "the serializer's or its snapshot's code"
        )


def _golden_path(golden: str | os.PathLike[str] | None, caller: Any) -> str | None:
    """``golden`` as an absolute path: a relative one is taken relative to the file of the
    module that creates the Subject (so it does not depend on where the command runs)."""
    if golden is None:
        return None
    path = os.fspath(golden)
    if os.path.isabs(path):
        return path
    module_file = caller.f_globals.get("__file__") if caller is not None else None
    base = os.path.dirname(os.path.abspath(module_file)) if module_file else os.getcwd()
    return os.path.normpath(os.path.join(base, path))


class Subject:
    """What gets certified: a serializer, the values it must handle, and optionally its evolutions.

    ``serializer`` is an instance or a zero-argument factory; ``values`` a hypothesis strategy;
    ``evolutions`` newer versions each judged against this serializer; ``chains`` sequences of
    versions each judged against the one before; ``key=True`` adds the key-determinism check;
    ``golden`` a directory of golden files (snapshot + data of earlier releases) kept in your
    repository: absolute, or relative to the file of the module that creates the Subject (the
    current directory when there is no such file); ``release`` the name recorded by
    ``--update-golden``; ``releases`` maps a recorded release to what the current serializer
    must do with it, an ``Evolution`` without ``to=`` (``Evolution(expect=..., migrate=...)``:
    the verdict its snapshot gives on that release's snapshot, and the value each recorded
    value must migrate to; a release not named reads as is, values equal); ``schema`` a
    ``reference.types`` type of the values (any serializer whose values are such a type's may
    have one): values are drawn from it when ``values`` is omitted, and it adds values outside
    the domain (``roundtrip.domain_refused``, ``backends.state_untouched``), growth that follows
    it (``roundtrip.size_boundaries``), the zero ``create_instance`` must return, and generated
    evolutions; ``invalid_configurations`` maps a description ("a negative width") to a
    zero-argument function building the serializer from that invalid configuration, which must
    refuse it at construction (``roundtrip.invalid_configuration``); ``flink_snapshot`` the
    bytes of the serializer snapshot Flink writes for the Flink serializer this one stands for
    (``TypeSerializerSnapshotSerializationUtil.writeSerializerSnapshot``), which its form in
    Flink's dialect must equal (``snapshot.flink_dialect``); ``locator`` (``module:attr``) lets
    the harness rebuild the subject in a fresh process.
    """

    def __init__(
        self,
        serializer: Any,
        values: Any = None,
        evolutions: Sequence[Evolution] = (),
        key: bool = False,
        *,
        golden: str | os.PathLike[str] | None = None,
        release: str | None = None,
        chains: Sequence[Sequence[Evolution]] = (),
        schema: Any = None,
        name: str | None = None,
        locator: str | None = None,
        releases: Mapping[str, Evolution] | None = None,
        invalid_configurations: Mapping[str, Callable[[], Any]] | None = None,
        flink_snapshot: bytes | None = None,
    ) -> None:
        self._instance, self._factory = _resolve_serializer("Subject(serializer=...)", serializer)
        invalid_configurations = dict(invalid_configurations or {})
        for what, build in invalid_configurations.items():
            if type(what) is not str or not what or not callable(build):
                raise SubjectError(
                    f"Subject(invalid_configurations={{{what!r}: {build!r}}}) must map a description to a "
                    "zero-argument function building the serializer from that configuration, e.g. "
                    "{'a negative width': lambda: MySerializer(width=-1)}")
        golden = _golden_path(golden, sys._getframe(1))
        #: The module that made the subject (where ``module_attribute`` looks for its name).
        self.defined_in: str | None = sys._getframe(1).f_globals.get("__name__")
        if schema is not None:
            import strategies

            try:
                strategies.check_schema(schema)
            except TypeError as exc:
                raise SubjectError(f"Subject(schema=...): {exc}") from None
        if values is None and schema is not None:
            values = strategies.values(schema)
        if values is None:
            raise SubjectError(
                "Subject(values=...) is missing: pass a hypothesis strategy of the values the "
                "serializer must handle, e.g. values=st.integers(-2**63, 2**63 - 1)"
            )
        if not _is_strategy(values):
            fix = "st.sampled_from([...])" if isinstance(values, (list, tuple, set)) else "a hypothesis strategy"
            raise SubjectError(
                f"Subject(values=...) must be a hypothesis strategy; got {type(values).__name__}; "
                f"use {fix}"
            )
        if isinstance(evolutions, Evolution):
            evolutions = [evolutions]
        for i, evo in enumerate(evolutions):
            if not isinstance(evo, Evolution):
                raise SubjectError(
                    f"Subject(evolutions=[...]) item {i} is a {type(evo).__name__}; wrap it: "
                    "Evolution(to=NewSerializer(), expect='compatible_after_migration', migrate=...)"
                )
            if not evo.has_target:
                raise SubjectError(
                    f"Subject(evolutions=[...]) item {i} names no serializer: give "
                    "Evolution(to=NewSerializer(), ...) (an Evolution without to= belongs in releases=)"
                )
        releases = dict(releases or {})
        for name_, evo in releases.items():
            if not isinstance(evo, Evolution) or evo.has_target:
                raise SubjectError(
                    f"Subject(releases={{{name_!r}: ...}}) must be Evolution(expect=..., migrate=...) "
                    "without to=: a recorded release is judged against the subject's own serializer"
                )
            if evo.expect is Verdict.INCOMPATIBLE:
                raise SubjectError(
                    f"Subject(releases={{{name_!r}: ...}}): a recorded release must stay restorable; "
                    "record an incompatible format in a new golden directory instead"
                )
        if releases and golden is None:
            raise SubjectError("Subject(releases=...) describes recorded releases; give golden='dir' too")
        for c, chain in enumerate(chains):
            if isinstance(chain, Evolution) or len(chain) < 1:
                raise SubjectError(
                    f"Subject(chains=...) item {c} must be a list of Evolution steps (v1->v2->v3), "
                    "each judged against the step before"
                )
            for i, evo in enumerate(chain):
                if not isinstance(evo, Evolution) or not evo.has_target:
                    raise SubjectError(f"Subject(chains=...) chain {c} step {i} is not an Evolution(to=...)")
            if any(e.expect is Verdict.INCOMPATIBLE for e in chain[:-1]):
                raise SubjectError(
                    f"Subject(chains=...) chain {c}: only the last step may be incompatible "
                    "(nothing can be restored after an incompatible step)"
                )
        if not isinstance(key, bool):
            raise SubjectError(f"Subject(key=...) must be True or False; got {key!r}")
        if release is not None and golden is None:
            raise SubjectError(
                "Subject(release=...) names the release recorded into golden files; give "
                "golden='path/to/golden/dir' too"
            )
        for i, evo in enumerate(evolutions):
            _independent_oracle(evo, evo.serializer(), f"Subject(evolutions=[...]) item {i}")
        for c, chain in enumerate(chains):
            for i, evo in enumerate(chain):
                _independent_oracle(evo, evo.serializer(), f"Subject(chains=...) chain {c} step {i}")
        if releases:
            current = self._instance if self._factory is None else self._factory()
            for name_, evo in releases.items():
                _independent_oracle(evo, current, f"Subject(releases={{{name_!r}: ...}})")
        if flink_snapshot is not None and (type(flink_snapshot) not in (bytes, bytearray) or not flink_snapshot):
            raise SubjectError(
                f"Subject(flink_snapshot=...) must be the bytes of the snapshot Flink writes, got "
                f"{type(flink_snapshot).__name__} {flink_snapshot!r:.60}; e.g. bytes.fromhex('00000002...')")
        if locator is not None and (":" not in locator or locator.startswith(":")):
            raise SubjectError(f"Subject(locator={locator!r}) must be 'module:attribute'")
        self.serializer = serializer
        self.values = values
        self.evolutions = list(evolutions)
        self.chains = [list(c) for c in chains]
        self.key = key
        self.golden = golden
        self.release = release
        self.releases = releases
        self.schema = schema
        self.locator = locator
        self.name = name
        self.invalid_configurations = invalid_configurations
        self.flink_snapshot = None if flink_snapshot is None else bytes(flink_snapshot)

    def make_serializer(self) -> TypeSerializer[Any]:
        """The serializer under test (a fresh one each call when given a factory)."""
        if self._factory is not None:
            return self._factory()
        assert self._instance is not None  # one of the two, checked when made
        return self._instance

    @property
    def display_name(self) -> str:
        if self.name:
            return self.name
        if self.locator:
            return self.locator
        return repr(self.make_serializer())

    def __repr__(self) -> str:
        return f"Subject({self.display_name})"


def as_subject(target: Any, values: Any = None, locator: str | None = None) -> Subject:
    """A ``Subject`` from a subject, a serializer instance or a zero-argument factory."""
    if isinstance(target, Subject):
        if locator and not target.locator:
            target.locator = locator
        return target
    if values is None:
        raise SubjectError(
            f"{target!r} is a serializer, not a Subject: pass the values it must handle "
            "(--values module:attribute naming a hypothesis strategy), or point at a "
            "conformance.Subject"
        )
    return Subject(target, values, locator=locator)


def subject_kind(subject: Any) -> str:
    """"table" for a ``conformance.TableSubject``, else "serializer" (each subject class says
    which it is, so a module imported twice, as pytester's in-process runs do, still tells)."""
    return str(getattr(subject, "conformance_kind", "serializer"))


def module_attribute(subject: Any) -> str | None:
    """``module:ATTRIBUTE`` when the module that made ``subject`` holds it under a public name
    (how ``conformance certify`` would name it), else None."""
    name = getattr(subject, "defined_in", None)
    module = sys.modules.get(name) if name else None
    if module is None:
        return None
    for attribute, value in vars(module).items():
        if value is subject and not attribute.startswith("_"):
            return f"{name}:{attribute}"
    return None


def subject_name(subject: Any) -> str:
    """How reports name the subject."""
    if isinstance(subject, Subject):
        return subject.display_name
    return str(getattr(subject, "name", None) or repr(subject))


def declared_families(subject: Any) -> dict[str, str]:
    """Family -> what the subject declares for it to check (``--strict`` fails a subject
    when such a family was skipped as a whole)."""
    if not isinstance(subject, Subject):
        return {}
    declared = {}
    if subject.evolutions or subject.chains:
        declared["migration"] = (f"{len(subject.evolutions)} evolution(s) and "
                                 f"{len(subject.chains)} chain(s)")
    elif subject.schema is not None:
        declared["migration"] = "a schema to generate evolutions from"
    if subject.golden is not None:
        declared["versioning"] = f"the golden directory {subject.golden}"
        if subject.releases:
            declared["versioning"] += f" and {len(subject.releases)} declared release(s)"
    return declared
