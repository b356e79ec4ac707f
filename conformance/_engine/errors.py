"""The harness's own errors: one root, ``ConformanceError``, and the one "did you mean" hint.

A ``ConformanceError`` says the harness was asked something it cannot do: a check id that
names nothing (``UnknownCheckError``), a ``Subject`` or ``TableSubject`` built wrong
(``SubjectError``, ``TableSubjectError``), a run configuration out of range
(``RunConfigError``), a command line that cannot be used (the CLI's ``UsageError``), a Spark
engine that cannot start or whose job failed (``conformance.spark``'s ``SparkSessionError``,
``SparkJobError``, ``SerializerShippingError``, which are ``reference.StateError``s too). It is
never a finding about the subject under test: those are check results. Every message says
what was wrong and what to do instead. The classes that were ``ValueError``s keep that base,
so ``except ValueError`` still catches them.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["ConformanceError", "did_you_mean"]


class ConformanceError(Exception):
    """Root of the harness's own errors (see the module docstring): catch it to tell a run
    the harness could not start from a subject that failed its checks."""


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` naming the closest of ``choices`` to ``word``, or ``""``."""
    close = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
