"""The conformance harness: certify any serializer or table (CLI, pytest plugin, library).

>>> from conformance import Subject, check_serializer
>>> report = check_serializer(Subject(MySerializer(), values=st.integers()))
>>> report.certified, [r for r in report if r.failed]

``certify(subjects, ...)`` certifies several subjects with one seed (as ``conformance certify``
does); ``check_serializer`` and ``certify`` take a ``TableSubject`` as well.

Importing ``conformance`` does not import pytest; ``SerializerConformance``,
``TableConformance`` and ``parametrize_checks`` load it when first used.
"""

from __future__ import annotations

from typing import Any

from ._registry import NotApplicable, UnknownCheckError, Violation, check
from ._report import CheckResult, Report
from ._runner import CheckContext, check_serializer
from ._schedule import certify
from ._subject import Evolution, Subject, SubjectError

__all__ = [
    "CheckContext",
    "CheckResult",
    "Evolution",
    "NotApplicable",
    "Report",
    "SerializerConformance",
    "Subject",
    "SubjectError",
    "TableConformance",
    "TableSubject",
    "UnknownCheckError",
    "Violation",
    "certify",
    "certify_table",
    "check",
    "check_serializer",
    "parametrize_checks",
]


def __getattr__(name: str) -> Any:
    if name in ("SerializerConformance", "TableConformance", "parametrize_checks"):
        from . import _pytest_api

        return getattr(_pytest_api, name)
    if name in ("TableSubject", "certify_table"):
        from . import _table

        return getattr(_table, name)
    raise AttributeError(f"module 'conformance' has no attribute {name!r}")
