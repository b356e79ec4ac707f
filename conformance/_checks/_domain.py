"""domain: values outside the serializer's domain are refused cleanly.

For a subject with a schema (``Subject(schema=...)``, every built-in), ``strategies.
out_of_domain`` draws values of that schema with one part out of its domain: a wrong Python
type, a number out of range, a missing or extra field, None where the type is not nullable.

- ``domain.refused``: ``serialize`` raises ``reference.SerializationError`` whose message names
  the field that holds the bad part, and the target holds exactly what it held before (a
  refused record leaves no partial bytes behind for the next record to be read against).
- ``domain.state_untouched``: on the bytes state backend, ``update`` with such a value raises
  the same error and the state still holds its previous value.

Subjects without a schema give these checks nothing to draw from (not applicable).
"""

from __future__ import annotations

from typing import Any

from reference import DataOutputView, SerializationError

from .._engine.registry import NotApplicable, Violation, check
from ._roundtrip import expect_equal

_PREFIX = b"\x07before"


def _cases(ctx: Any) -> Any:
    schema = getattr(ctx.subject, "schema", None)
    if schema is None:
        raise NotApplicable("no schema (Subject(schema=...)): no out-of-domain values to draw")
    import strategies

    return strategies.out_of_domain(schema)


def _refusal(serializer: Any, case: Any, target: DataOutputView) -> SerializationError:
    """The SerializationError ``serialize`` raised for ``case``; a Violation otherwise."""
    try:
        serializer.serialize(case.value, target)
    except SerializationError as exc:
        return exc
    except Exception as exc:
        raise Violation(
            f"serialize raised {type(exc).__name__}: {exc} for {case.what}, should raise "
            "reference.SerializationError (callers catch that one error)", example=repr(case)) from None
    raise Violation(f"serialize accepted {case.what}, should refuse it with a SerializationError",
                    example=repr(case))


def _names_field(exc: Exception, case: Any) -> None:
    if case.field is not None and case.field not in str(exc):
        raise Violation(
            f"the refusal of {case.what} says {str(exc)!r}, should name the field {case.field!r}",
            example=repr(case))


@check(id="domain.refused", family="roundtrip", requires=("roundtrip.bit_exact",))
def refused(ctx) -> None:  # type: ignore[no-untyped-def]
    """Out-of-domain values raise SerializationError naming the field, and write nothing."""
    cases = _cases(ctx)
    s = ctx.serializer()

    def body(case: Any) -> None:
        target = DataOutputView()
        target.write(_PREFIX)
        exc = _refusal(s, case, target)
        _names_field(exc, case)
        left = target.getvalue()
        if left != _PREFIX:
            raise Violation(
                f"refusing {case.what}, serialize left {len(left) - len(_PREFIX)} bytes in the "
                "target, should leave it as it was (no partial record)", example=repr(case))

    ctx.for_all(cases, body)


@check(id="domain.state_untouched", family="backends", requires=("domain.refused", "backends.history"))
def state_untouched(ctx) -> None:  # type: ignore[no-untyped-def]
    """A refused update leaves the bytes backend's state as it was."""
    cases = _cases(ctx)
    from reference.backends import ValueStateDescriptor

    from ._backends import backend_kinds, new_backend

    kind = "bytes/memory"
    if kind not in backend_kinds(ctx):
        raise NotApplicable("the bytes backend is not selected (--backend)")
    s = ctx.serializer()
    drawn: list[Any] = []
    ctx.for_all(ctx.subject.values, drawn.append, max_examples=5)
    good = next((v for v in drawn if v is not None), None)
    if good is None:
        raise NotApplicable("the subject's values drew only None")

    descriptor = ValueStateDescriptor("domain", s)
    backend = new_backend(ctx, kind)
    try:
        state = backend.get_value_state(descriptor)
        backend.set_current_key(1)
        state.update(s.copy(good))

        def body(case: Any) -> None:
            if case.value is None:
                return  # update(None) clears a value state: None is in the state's domain
            try:
                state.update(case.value)
            except SerializationError:
                pass
            except Exception as exc:
                raise Violation(f"update raised {type(exc).__name__}: {exc} for {case.what}, should raise "
                                "reference.SerializationError", example=repr(case)) from None
            else:
                raise Violation(f"update accepted {case.what}, should refuse it", example=repr(case))
            expect_equal(state.value(), good, f"after a refused update of {case.what}, the state")

        ctx.for_all(cases, body, max_examples=max(5, ctx.examples // 5))
    finally:
        backend.close()
