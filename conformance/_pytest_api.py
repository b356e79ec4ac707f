"""pytest entry points: ``parametrize_checks`` (one test per check) and the
``SerializerConformance`` / ``TableConformance`` base classes. Loaded only when used, so
``import conformance`` does not import pytest.

The checks a test run covers are chosen by the harness's one selection rule
(``conformance._engine.registry.select``), the same as ``conformance certify --check``; an unknown
check or expected-failure id is an error at collection.
"""

from __future__ import annotations

import functools
import inspect
import zlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pytest

from ._engine.config import DEFAULT_BACKENDS, RunConfig
from ._engine.golden import GoldenOverwriteError, example_line
from ._engine.registry import checks_for, current_keys, known_ids, select
from ._engine.report import CheckResult
from ._engine.runner import Runner
from ._engine.subject import Subject, as_subject, module_attribute, subject_kind, subject_name

__all__ = ["parametrize_checks", "SerializerConformance", "TableConformance", "check_ids", "run_check", "run_config"]

_RUNNERS: dict[tuple[Any, ...], tuple[Any, Runner]] = {}


def _option(config: Any, name: str, default: Any = None) -> Any:
    try:
        value = config.getoption(name)
    except (ValueError, AttributeError):
        return default
    return default if value is None else value


def check_ids(config: Any = None, wanted: Iterable[str] | None = None, kind: str = "serializer") -> list[str]:
    """Ids of the checks a test run covers (spark only with ``--conformance-spark MASTER``)."""
    spark = _option(config, "conformance_spark", "off") if config is not None else "off"
    return [c.id for c in select(checks_for(kind, spark=spark != "off"), wanted, kind=kind)]


def _check_expected(expected_failures: Mapping[str, str], kind: str) -> dict[str, str]:
    """``expected_failures`` by current id (an old id told with a DeprecationWarning), all known."""
    current = current_keys(expected_failures)
    known_ids(checks_for(kind, spark=True), current, kind=kind)
    return current


def _quiet(sentence: str) -> None:
    """Old ids were told about at collection; running each test does not tell again."""


def run_config(config: Any, subject: Any) -> RunConfig:
    """The ``RunConfig`` of a pytest run's ``--conformance-*`` options for ``subject`` (its seed,
    unless given, derived from the subject's name: stable across xdist workers and reruns)."""
    seed = _option(config, "conformance_seed")
    if seed is None:
        seed = zlib.crc32(subject_name(subject).encode("utf-8", "replace"))
    return RunConfig(examples=_option(config, "conformance_examples"), profile=_option(config, "conformance_profile"),
                     backends=_option(config, "conformance_backend", DEFAULT_BACKENDS),
                     spark=_option(config, "conformance_spark", "off"), seed=seed,
                     update_golden=bool(_option(config, "conformance_update_golden", False)),
                     force=bool(_option(config, "conformance_force", False)))


def _runner(config: Any, subject: Subject) -> Runner:
    run = run_config(config, subject)
    key = (id(subject), run)
    cached = _RUNNERS.get(key)
    if cached is None or cached[0] is not subject:
        runner = Runner(subject, run)
        _RUNNERS[key] = (subject, runner)  # keeps the subject alive, so its id stays unique
        return runner
    return cached[1]


def close_runners() -> list[str]:
    """Close the runners the session's tests shared (their scratch directories, open
    backends); called by the plugin when the session ends. A subject with a failed check keeps
    nothing its run recorded (``--conformance-update-golden``): returns what was undone."""
    undone = []
    while _RUNNERS:
        _, (_, runner) = _RUNNERS.popitem()
        undone += [f"{runner.name}: {said}" for _, said in runner.finish()]
        runner.close()
    return undone


def run_check(config: Any, subject: Any, check_id: str, record_property: Callable[[str, Any], None] | None,
              expected_failures: Mapping[str, str] | None = None) -> CheckResult:
    """Run one check (its prerequisites once per subject) and turn its result into the test
    outcome: failure, xfail (expected), skip, or pass. JUnit properties are recorded."""
    if subject_kind(subject) == "serializer":
        subject = as_subject(subject)
    runner = _runner(config, subject)
    try:
        result = runner.result(check_id)
    except GoldenOverwriteError as exc:  # the recording was refused: no verdict on the subject
        pytest.fail(f"{check_id}: {exc}", pytrace=False)
    check_id = result.id
    expected = current_keys(expected_failures or {}, report=_quiet).get(result.id)
    if record_property is not None:
        # Named as the CLI names it: its name, else where it is defined, not the serializer's repr.
        named = subject_name(subject) if getattr(subject, "name", None) or getattr(subject, "locator", None) else None
        record_property("conformance_subject", named or module_attribute(subject) or subject_name(subject))
        record_property("conformance_check", check_id)
        record_property("conformance_family", result.family)
        record_property("conformance_status", result.status)
        record_property("conformance_seed", runner.seed)
        if result.message:
            record_property("conformance_message", result.message)
        if result.example is not None:
            record_property("conformance_example", result.example)
        if expected is not None:
            record_property("conformance_expected_failure", expected)
    if result.failed:
        if expected is not None:
            pytest.xfail(f"{check_id}: expected failure ({expected}): {result.message}")
        text = f"{check_id} [{result.family}]: {result.message}"
        if result.example is not None:
            text += f"\n{example_line(result.example)}"
        text += "".join(f"\n  at {frame}" for frame in result.trace)
        text += f"\n(reproduce with --conformance-seed {runner.seed})"
        pytest.fail(text, pytrace=False)
    if result.status == "skipped":
        pytest.skip(f"{check_id}: {result.message}")
    return result


def parametrize_checks(
    subject_or_fixture: Any,
    expected_failures: Mapping[str, str] | None = None,
    *,
    checks: Iterable[str] | None = None,
    kind: str | None = None,
) -> Callable[[Callable[..., Any]], Any]:
    """Decorate a test function to run once per check, with ids like ``[roundtrip.bit_exact]``.

    ``subject_or_fixture`` is a ``Subject`` (or serializer with values), a ``TableSubject``,
    or the name of a fixture giving one (``kind="table"`` for a fixture giving a table). The
    check runs before the test body; the body may take ``conformance_result``.
    ``expected_failures`` maps check ids to reasons (those tests xfail); an unknown id is an
    error.
    """
    if kind is None:
        kind = "serializer" if isinstance(subject_or_fixture, str) else subject_kind(subject_or_fixture)
    expected = _check_expected(expected_failures or {}, kind)
    ids = check_ids(None, checks, kind)

    def decorate(func: Callable[..., Any]) -> Any:
        signature = inspect.signature(func)
        wants_result = "conformance_result" in signature.parameters
        user_params = [p for name, p in signature.parameters.items() if name != "conformance_result"]
        extra = [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY)
                 for n in ("conformance_check_id", "request", "record_property")
                 if n not in signature.parameters]

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            check_id = kwargs.pop("conformance_check_id") if "conformance_check_id" not in signature.parameters else kwargs["conformance_check_id"]
            request = kwargs["request"] if "request" in signature.parameters else kwargs.pop("request")
            record = kwargs["record_property"] if "record_property" in signature.parameters else kwargs.pop("record_property")
            subject = (request.getfixturevalue(subject_or_fixture) if isinstance(subject_or_fixture, str)
                       else subject_or_fixture)
            result = run_check(request.config, subject, check_id, record, expected)
            if wants_result:
                kwargs["conformance_result"] = result
            return func(*args, **kwargs)

        del wrapper.__wrapped__  # pytest must see the wrapper's own signature
        wrapper.__signature__ = signature.replace(parameters=user_params + extra)  # type: ignore[attr-defined]
        return pytest.mark.parametrize("conformance_check_id", ids, ids=ids)(wrapper)

    return decorate


class SerializerConformance:
    """Base class: subclasses give ``subject`` (a ``conformance.Subject`` attribute or a fixture
    named ``subject``) and get one test per check, ``test_conformance[<check id>]``.

    ``expected_failures = {check_id: reason}`` marks known failures (they xfail);
    ``conformance_checks = ("roundtrip", ...)`` restricts the checks.
    """

    expected_failures: Mapping[str, str] = {}
    conformance_checks: Iterable[str] | None = None
    conformance_kind = "serializer"

    def pytest_generate_tests(self, metafunc: Any) -> None:
        if "conformance_check_id" in metafunc.fixturenames:
            _check_expected(self.expected_failures, self.conformance_kind)
            ids = check_ids(metafunc.config, self.conformance_checks, self.conformance_kind)
            metafunc.parametrize("conformance_check_id", ids, ids=ids)

    def _conformance_subject(self, request: Any) -> Any:
        given = getattr(type(self), "subject", None)
        if isinstance(given, Subject) or subject_kind(given) == "table":
            return given
        return request.getfixturevalue("subject")

    def test_conformance(self, conformance_check_id: str, request: Any, record_property: Any) -> None:
        run_check(request.config, self._conformance_subject(request), conformance_check_id, record_property,
                  self.expected_failures)


class TableConformance(SerializerConformance):
    """Base class for a table: subclasses give ``subject`` (a ``conformance.TableSubject``
    attribute or a fixture named ``subject``) and get one test per ``table.*`` check."""

    conformance_kind = "table"
