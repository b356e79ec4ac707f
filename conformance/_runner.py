"""Running checks against a subject: ``CheckContext``, the memoizing ``Runner``, and
``check_serializer``."""

from __future__ import annotations

import random
import shutil
import tempfile
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ._property import for_all
from ._registry import Check, NotApplicable, Violation, all_checks, get_check, load_families, selected
from ._report import CheckResult, Report
from ._subject import Subject, as_subject

__all__ = ["CheckContext", "Runner", "check_serializer", "library_versions", "UnknownCheckWarning"]

DEFAULT_BACKENDS = ("heap", "bytes")


class UnknownCheckWarning(UserWarning):
    """An expected-failure id names no registered check (a typo, or a check that was renamed)."""


def library_versions() -> dict[str, str]:
    import platform
    from importlib import metadata

    versions = {"python": platform.python_version()}
    for dist in ("state-conformance", "hypothesis", "pyarrow", "fastavro", "rocksdict", "pyspark"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    return versions


class CheckContext:
    """What a check sees: the subject, hypothesis settings and seed, and the run's options
    (``examples``, ``backends``, ``spark`` master or "off", ``update_golden``, ``work_dir``).
    ``cache`` is shared by the checks of one subject (e.g. snapshot bytes)."""

    def __init__(self, runner: Runner) -> None:
        self._runner = runner
        self.subject: Subject = runner.subject
        self.settings = runner.settings
        self.seed: int = runner.seed
        self.examples: int = runner.examples
        self.backends: tuple[str, ...] = runner.backends
        self.spark: str = runner.spark
        self.update_golden: bool = runner.update_golden
        self.options: dict[str, Any] = runner.options
        self.cache: dict[str, Any] = runner.cache

    @property
    def work_dir(self) -> str:
        return self._runner.work_dir()

    def serializer(self) -> Any:
        """A serializer under test (fresh per call when the subject has a factory)."""
        return self.subject.make_serializer()

    def for_all(self, strategy: Any, body: Callable[[Any], None], *, max_examples: int | None = None,
                display: Callable[[Any], str] | None = None) -> None:
        """Run ``body`` over values of ``strategy``; a Violation carries the shrunk example."""
        kwargs: dict[str, Any] = {"max_examples": max_examples}
        if display is not None:
            kwargs["display"] = display
        for_all(self.settings, self.seed, strategy, body, **kwargs)

    def not_applicable(self, reason: str) -> None:
        raise NotApplicable(reason)

    def result(self, check_id: str) -> CheckResult:
        """The result of another check (run first if needed)."""
        return self._runner.result(check_id)


class Runner:
    """Runs checks for one subject, each at most once, prerequisites first."""

    def __init__(
        self,
        subject: Subject,
        *,
        examples: int | None = None,
        backends: Sequence[str] = DEFAULT_BACKENDS,
        spark: str = "off",
        seed: int | None = None,
        profile: str | None = None,
        update_golden: bool = False,
        expected_failures: Mapping[str, str] | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        from ._profiles import default_profile, harness_settings

        self.subject = subject
        self.profile = profile or default_profile()
        self.settings = harness_settings(self.profile, examples)
        self.examples = self.settings.max_examples
        self.seed = seed if seed is not None else random.SystemRandom().randrange(2**32)
        unknown_backends = [b for b in backends if b not in DEFAULT_BACKENDS]
        if unknown_backends:
            raise ValueError(f"unknown backend(s) {unknown_backends}; use heap and/or bytes")
        self.backends = tuple(backends)
        self.spark = spark or "off"
        self.update_golden = update_golden
        self.options = dict(options or {})
        self.cache: dict[str, Any] = {}
        self._results: dict[str, CheckResult] = {}
        self._work_dir: str | None = None
        load_families(spark=self.spark != "off")
        known = {c.id for c in all_checks()}
        self.expected_failures = dict(expected_failures or {})
        for check_id in self.expected_failures:
            if check_id not in known:
                warnings.warn(
                    f"expected failure {check_id!r} names no check; known checks: "
                    f"{', '.join(sorted(known))}",
                    UnknownCheckWarning,
                    stacklevel=3,
                )

    def work_dir(self) -> str:
        if self._work_dir is None:
            self._work_dir = tempfile.mkdtemp(prefix="conformance-")
        return self._work_dir

    def close(self) -> None:
        proc = self.cache.pop("fresh_process", None)
        if proc is not None:  # started by backends.history, never collected
            proc.kill()
            proc.communicate()
        if self._work_dir is not None:
            shutil.rmtree(self._work_dir, ignore_errors=True)
            self._work_dir = None

    def checks(self, select: Iterable[str] | None = None) -> list[Check]:
        """Checks to run: all (spark only when enabled), or those whose id or family is in
        ``select``."""
        checks = [c for c in all_checks() if c.family != "table"]
        if self.spark == "off":
            checks = [c for c in checks if c.family != "spark"]
        return selected(checks, select)

    def preload(self, results: Iterable[CheckResult]) -> None:
        """Take results of checks run elsewhere (another process, same subject and seed) as
        this runner's own: checks that require them will not run them again."""
        for result in results:
            self._results[result.id] = result

    def result(self, check_id: str) -> CheckResult:
        cached = self._results.get(check_id)
        if cached is not None:
            return cached
        check = get_check(check_id)
        result = self._run(check)
        self._results[check_id] = result
        return result

    def _run(self, check: Check) -> CheckResult:
        for prerequisite in check.requires:
            pre = self.result(prerequisite)
            if pre.failed or (pre.status == "skipped" and pre.message.startswith("prerequisite")):
                return CheckResult(check.id, check.family, "skipped",
                                   f"prerequisite {prerequisite} did not pass", None,
                                   self.expected_failures.get(check.id))
        expected = self.expected_failures.get(check.id)
        started = time.perf_counter()
        try:
            check.func(CheckContext(self))
        except NotApplicable as exc:
            result = CheckResult(check.id, check.family, "skipped", str(exc))
        except Violation as exc:
            message = exc.message
            if expected is not None:
                message = f"expected failure ({expected}): {message}"
            result = CheckResult(check.id, check.family, "failed", message,
                                 None if exc.example is None else str(exc.example), expected)
        except Exception as exc:  # a crash outside a property: still the subject's finding
            message = f"raised {type(exc).__name__}: {exc}"
            if expected is not None:
                message = f"expected failure ({expected}): {message}"
            result = CheckResult(check.id, check.family, "failed", message, None, expected)
        else:
            message = ""
            if expected is not None:
                message = (f"passed although listed as an expected failure ({expected}); "
                           "remove it from expected_failures")
            result = CheckResult(check.id, check.family, "passed", message, None, expected)
        result.seconds = time.perf_counter() - started
        return result

    def run(self, select: Iterable[str] | None = None) -> Report:
        checks = self.checks(select)
        if any(c.family == "backends" for c in checks) and self.backends:
            from ._warmup import warm_up_in_background

            warm_up_in_background()  # backends' one-time import and first-write costs overlap the early checks
        if any(c.family == "spark" for c in checks):
            from ._spark.session import HARNESS_CONFIG, start_in_background

            start_in_background(self.spark, config=HARNESS_CONFIG)  # Spark's start-up overlaps the checks before it
        results = [self.result(c.id) for c in checks]
        return Report(self.subject.display_name, results, self.seed, self.profile,
                      self.examples, library_versions())


def check_serializer(
    subject: Any,
    *,
    examples: int | None = None,
    backends: Sequence[str] = DEFAULT_BACKENDS,
    spark: str = "off",
    seed: int | None = None,
    profile: str | None = None,
    expected_failures: Mapping[str, str] | None = None,
    checks: Iterable[str] | None = None,
    update_golden: bool = False,
    values: Any = None,
    options: Mapping[str, Any] | None = None,
) -> Report:
    """Run every check (or those whose id/family is in ``checks``) against ``subject`` and
    return a ``Report`` of per-check results; never raises for a broken serializer.

    ``subject`` is a ``conformance.Subject`` (or a serializer plus ``values=``). ``examples``
    is hypothesis' max_examples per check; ``seed`` makes the run reproducible (a random one is
    chosen and recorded otherwise). ``options`` go to the checks (e.g. ``{"spark_entries": N}``,
    the size of the spark family's history).
    """
    runner = Runner(
        as_subject(subject, values), examples=examples, backends=backends, spark=spark,
        seed=seed, profile=profile, update_golden=update_golden,
        expected_failures=expected_failures, options=options,
    )
    try:
        return runner.run(checks)
    finally:
        runner.close()
