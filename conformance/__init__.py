"""The conformance harness: certify any serializer or table (CLI, pytest plugin, library).

>>> from conformance import RunConfig, Subject, check_serializer
>>> report = check_serializer(Subject(MySerializer(), values=st.integers()), RunConfig(seed=7))
>>> report.certified, [r for r in report if r.failed]

``certify(subjects, config)`` certifies several subjects with one seed (as ``conformance
certify`` does); ``check_serializer`` and ``certify`` take a ``TableSubject`` as well. A
``RunConfig`` says what a run does (examples, seed, profile, backends, Spark, ...), the same
for the library, the CLI and the pytest plugin. The harness's own errors (an unknown check, a
subject or configuration built wrong) derive from ``ConformanceError``.

Importing ``conformance`` does not import pytest; ``SerializerConformance``,
``TableConformance`` and ``parametrize_checks`` load it when first used.
"""

from __future__ import annotations

from typing import Any

from ._engine.config import RunConfig, RunConfigError
from ._engine.errors import ConformanceError
from ._engine.registry import NotApplicable, UnknownCheckError, Violation, check
from ._engine.report import CheckResult, Report
from ._engine.subject import Evolution, Subject, SubjectError

__all__ = [
    "CheckContext",
    "CheckResult",
    "ConformanceError",
    "Evolution",
    "GoldenOverwriteError",
    "NotApplicable",
    "Report",
    "RunConfig",
    "RunConfigError",
    "SerializerConformance",
    "Subject",
    "SubjectError",
    "TableConformance",
    "TableSubject",
    "TableSubjectError",
    "UnknownCheckError",
    "Violation",
    "certify",
    "certify_table",
    "check",
    "check_serializer",
    "parametrize_checks",
]


#: Names loaded when first used (PEP 562), so that importing ``conformance`` stays light:
#: the runner imports hypothesis, and the fresh-process restore's child imports this package.
_LAZY = {
    "CheckContext": "_engine.runner", "check_serializer": "_engine.runner", "certify": "_engine.schedule",
    "SerializerConformance": "_pytest_api", "TableConformance": "_pytest_api", "parametrize_checks": "_pytest_api",
    "TableSubject": "_table", "TableSubjectError": "_table", "certify_table": "_table",
    "GoldenOverwriteError": "_engine.golden",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'conformance' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
