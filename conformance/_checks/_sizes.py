"""roundtrip.size_boundaries: text and bytes of every length class round-trip.

Lengths are written as varints (Flink's string length + 1: 1 byte up to 127 units, 2 up to
16,383, 3 up to 2,097,151, then 4) or as ints; a length on either side of each boundary is
where a wrong shift, mask or bound shows. The ordinary value draws reach the 2- and 3-byte
widths now and then; this check draws values of the subject's schema whose text and bytes are
all on a boundary (``strategies.large_values``), the 4-byte one included, on a few examples
(each holds megabytes): written back to back, each reads back exactly and ``copy_serialized``
copies exactly its bytes.
"""

from __future__ import annotations

from typing import Any

from reference import DataInputView, DataOutputView

from .._engine.property import guarded
from .._engine.registry import NotApplicable, Violation, check
from ._roundtrip import BIT_EXACT, expect_equal, write


@check(id="roundtrip.size_boundaries", family="roundtrip", requires=BIT_EXACT)
def size_boundaries(ctx) -> None:  # type: ignore[no-untyped-def]
    """Text and bytes on each varint length boundary (127/128 ... 2,097,152 units) round-trip."""
    schema = getattr(ctx.subject, "schema", None)
    if schema is None:
        raise NotApplicable("no schema (Subject(schema=...)): no boundary-sized values to draw")
    import strategies

    s = ctx.serializer()

    def body(value: Any) -> None:
        first = write(s, value)
        source = DataInputView(first + first)
        for i in range(2):
            got = guarded("deserialize", s.deserialize, source)
            if source.position != len(first) * (i + 1):
                raise Violation(f"reading record {i} of a boundary-sized value stopped at byte "
                                f"{source.position}, should stop at {len(first) * (i + 1)}")
            expect_equal(got, value, f"record {i} of a boundary-sized value written back to back")
        target = DataOutputView()
        source = DataInputView(first + first)
        guarded("copy_serialized", s.copy_serialized, source, target)
        if target.getvalue() != first or source.position != len(first):
            raise Violation(f"copy_serialized of a boundary-sized record copied {len(target.getvalue())} "
                            f"bytes and consumed {source.position}, should copy and consume {len(first)}")

    ctx.for_all(strategies.large_values(schema), body, max_examples=max(5, ctx.examples // 6))
