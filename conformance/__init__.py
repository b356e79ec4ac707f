"""The conformance harness: certify any serializer (CLI, pytest plugin, library).

>>> from conformance import Subject, check_serializer
>>> report = check_serializer(Subject(MySerializer(), values=st.integers()))
>>> report.certified, [r for r in report if r.failed]

Importing ``conformance`` does not import pytest; ``SerializerConformance`` and
``parametrize_checks`` load it when first used.
"""

from __future__ import annotations

from typing import Any

from ._registry import NotApplicable, Violation, check
from ._report import CheckResult, Report
from ._runner import CheckContext, UnknownCheckWarning, check_serializer
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
    "UnknownCheckWarning",
    "Violation",
    "check",
    "check_serializer",
    "parametrize_checks",
]


def __getattr__(name: str) -> Any:
    if name in ("SerializerConformance", "parametrize_checks"):
        from . import _pytest_api

        return getattr(_pytest_api, name)
    if name in ("TableSubject", "certify_table"):
        from . import _table

        return getattr(_table, name)
    raise AttributeError(f"module 'conformance' has no attribute {name!r}")
