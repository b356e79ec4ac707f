"""Running checks against one subject: ``CheckContext``, the memoizing ``Runner``, and
``check_serializer``.

One runner serves every kind of subject: a ``Subject`` (a serializer) is certified by every
family but ``table``, a ``TableSubject`` by the ``table`` family. Either way the run has a
seed (random unless given, always recorded), a hypothesis profile, expected failures and
the same prerequisite rule: a check runs after every check it requires, and is skipped,
saying which, when one of them failed or was itself skipped for a failed prerequisite.
"""

from __future__ import annotations

import functools
import os
import random
import shutil
import time
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from .config import DEFAULT_BACKENDS, RunConfig, from_keywords
from .golden import GoldenOverwriteError
from .property import for_all
from .providers import Provided, Provider
from .registry import (
    Check,
    NotApplicable,
    Violation,
    checks_for,
    current_id,
    family_declaration,
    get_check,
    known_ids,
    select,
)
from .report import CheckResult, Report, RunOptions
from .scratch import scratch_parent
from .subject import as_subject, declared_families, subject_kind, subject_name

__all__ = ["CheckContext", "Runner", "check_serializer", "library_versions", "DEFAULT_BACKENDS",
           "TABLE_EXAMPLES", "TABLE_STEPS", "TABLE_CERTIFY_EXAMPLES"]

T = TypeVar("T")

#: A table certification's default budget: state machine runs per check, steps per run; the
#: ``certify`` profile runs ``TABLE_CERTIFY_EXAMPLES`` state machines per check instead (the
#: concurrent histories and fault runs, a multiple of them, grow alike).
TABLE_EXAMPLES, TABLE_STEPS = 30, 20
TABLE_CERTIFY_EXAMPLES = 150

#: A runner's scratch directory in the temporary directory is this prefix and its owner
#: (``reference.savepoint.owned_temp_name``).
WORK_PREFIX = "conformance-run-"


def _remove_owned_dir(path: str, owner: int) -> None:
    # Only by the process that made it: a forked child exiting must not remove its parent's.
    if os.getpid() == owner:
        shutil.rmtree(path, ignore_errors=True)


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


@functools.cache
def _packages_distributions() -> Mapping[str, list[str]]:
    """Top-level package -> distributions, read once per process: it scans every installed
    distribution's metadata (tens of milliseconds), and each subject's report asks."""
    from importlib import metadata

    return metadata.packages_distributions()


def subject_distribution(subject: Any) -> dict[str, str] | None:
    """The installed distribution that ships the subject's serializer (or table) class, with
    its version: what a certificate certifies. None for code that is not installed."""
    from importlib import metadata

    try:
        made = subject.make_serializer() if hasattr(subject, "make_serializer") else subject.table_factory
    except Exception:
        return None
    module = getattr(made, "__module__", None) or type(made).__module__
    top = module.split(".")[0]
    for name in _packages_distributions().get(top, []):
        try:
            return {"name": name, "version": metadata.version(name)}
        except metadata.PackageNotFoundError:
            continue
    return None


class CheckContext:
    """What a check sees: the subject, hypothesis settings and seed, the run's options
    (``examples``, ``backends``, ``spark`` master or "off", ``update_golden`` and ``force``, ``work_dir``,
    ``options``), and the values other checks provide (``get``/``put``/``has``/``take`` of a
    ``conformance._engine.providers.Provider``)."""

    def __init__(self, runner: Runner) -> None:
        self._runner = runner
        self.subject: Any = runner.subject
        self.settings = runner.settings
        self.seed: int = runner.seed
        self.examples: int = runner.examples
        self.backends: tuple[str, ...] = runner.backends
        self.spark: str = runner.spark
        self.update_golden: bool = runner.update_golden
        self.force: bool = runner.force
        self.options: dict[str, Any] = runner.options
        self.notes: list[str] = []

    @property
    def work_dir(self) -> str:
        return self._runner.work_dir()

    def serializer(self) -> Any:
        """A serializer under test (fresh per call when the subject has a factory)."""
        return self.subject.make_serializer()

    def get(self, wanted: Provider[T]) -> T:
        """The value of ``wanted`` for this subject (computed on first use when it can be)."""
        return self._runner.provided.get(wanted, self)

    def put(self, wanted: Provider[T], value: T) -> None:
        self._runner.provided.put(wanted, value)

    def has(self, wanted: Provider[Any]) -> bool:
        return self._runner.provided.has(wanted)

    def take(self, wanted: Provider[T]) -> T | None:
        return self._runner.provided.take(wanted)

    def for_all(self, strategy: Any, body: Callable[[Any], None], *, max_examples: int | None = None,
                display: Callable[[Any], str] | None = None) -> None:
        """Run ``body`` over values of ``strategy``; a Violation carries the shrunk example."""
        kwargs: dict[str, Any] = {"max_examples": max_examples}
        if display is not None:
            kwargs["display"] = display
        for_all(self.settings, self.seed, strategy, body, **kwargs)

    def not_applicable(self, reason: str) -> None:
        raise NotApplicable(reason)

    def note(self, text: str) -> None:
        """Something the user should read even when the check passes (e.g. what
        ``--update-golden`` recorded): it becomes the passed result's message."""
        self.notes.append(text)

    def undo_unless_certified(self, check_id: str, undo: Callable[[], str]) -> None:
        """Have ``undo`` run when the run ends NOT CERTIFIED (e.g. a release ``--update-golden``
        recorded); what it returns replaces ``check_id``'s message."""
        self._runner.undos.append((check_id, undo))

    def result(self, check_id: str) -> CheckResult:
        """The result of another check (run first if needed)."""
        return self._runner.result(check_id)


class Runner:
    """Runs checks for one subject, each at most once, prerequisites first, as ``config`` (a
    ``conformance.RunConfig``) asks. ``should_stop`` is asked before each check (a run of
    several subjects stopping at another's failure). Unknown ``expected_failures`` ids raise
    ``UnknownCheckError``. The keywords taken before ``RunConfig`` are deprecated (see
    ``conformance._engine.config.from_keywords``).
    """

    def __init__(self, subject: Any, config: RunConfig | None = None, *,
                 should_stop: Callable[[], bool] | None = None, **deprecated: Any) -> None:
        from .profiles import default_profile, harness_settings

        config = from_keywords(config, deprecated, "Runner")
        self.config = config
        self.subject = subject
        self.kind = subject_kind(subject)
        self.profile = config.profile or default_profile()
        self.options = dict(config.options)
        if config.spark_entries is not None:
            self.options["spark_entries"] = config.spark_entries
        self.seed = config.seed if config.seed is not None else random.SystemRandom().randrange(2**32)
        if self.kind == "table":
            from .._table._runmachine import machine_settings

            if config.examples is not None:
                self.examples = config.examples
            else:
                self.examples = TABLE_CERTIFY_EXAMPLES if self.profile == "certify" else TABLE_EXAMPLES
            self.options["steps"] = config.steps if config.steps is not None else TABLE_STEPS
            self.settings = machine_settings(self.examples, int(self.options["steps"]), config.derandomize)
        else:
            self.settings = harness_settings(self.profile, config.examples)
            self.examples = self.settings.max_examples
        self.derandomize = config.derandomize
        self.exitfirst = config.exitfirst
        self.should_stop = should_stop
        self.interrupted = False
        self.backends = config.backends
        self.spark = config.spark
        self.update_golden = config.update_golden
        self.force = config.force
        self.strict = bool(strict_by_default(self.profile) if config.strict is None else config.strict)
        self.provided = Provided()
        self.undos: list[tuple[str, Callable[[], str]]] = []
        self._results: dict[str, CheckResult] = {}
        self._work_dir: str | None = None
        self._remove_work_dir: weakref.finalize | None = None
        self.available = checks_for(self.kind, spark=self.spark != "off")
        self.expected_failures = dict(config.expected_failures)
        known_ids(self.available, self.expected_failures, kind=self.kind)

    @property
    def name(self) -> str:
        return subject_name(self.subject)

    def work_dir(self) -> str:
        """The runner's scratch directory (made on first use, removed by ``close``) in
        ``scratch_parent()``, named ``WORK_PREFIX`` + its owner (host, pid): a runner never
        closed has it removed when it is garbage collected or its process exits, and one whose
        process was killed by the next runner that makes a scratch directory there."""
        if self._work_dir is None:
            from reference.savepoint import new_owned_directory

            path = self._work_dir = new_owned_directory(WORK_PREFIX, scratch_parent())
            self._remove_work_dir = weakref.finalize(self, _remove_owned_dir, path, os.getpid())
        return self._work_dir

    def put(self, wanted: Provider[T], value: T) -> None:
        """Provide a value computed elsewhere (e.g. by another process of the same run)."""
        self.provided.put(wanted, value)

    def has(self, wanted: Provider[Any]) -> bool:
        return self.provided.has(wanted)

    def close(self) -> None:
        self.provided.close()
        if self._remove_work_dir is not None:
            self._remove_work_dir()
            self._remove_work_dir = self._work_dir = None

    def checks(self, wanted: Iterable[str] | None = None) -> list[Check]:
        """The checks a run selects: all that apply to the subject (spark only with a
        master), or those whose id, family or id prefix is in ``wanted`` (default: the
        config's ``checks``; an old id or prefix, with a DeprecationWarning: ``registry.RENAMED``);
        an unknown word raises ``UnknownCheckError``."""
        return select(self.available, self.config.checks if wanted is None else wanted, kind=self.kind)

    def preload(self, results: Iterable[CheckResult]) -> None:
        """Take results of checks run elsewhere (another process, same subject and seed) as
        this runner's own: checks that require them will not run them again."""
        for result in results:
            self._results[result.id] = result

    def result(self, check_id: str) -> CheckResult:
        check_id = current_id(check_id)
        cached = self._results.get(check_id)
        if cached is not None:
            return cached
        result = self._run(get_check(check_id))
        self._results[check_id] = result
        return result

    def _run(self, check: Check) -> CheckResult:
        expected = self.expected_failures.get(check.id)
        for prerequisite in check.requires:
            pre = self.result(prerequisite)
            if pre.status in ("failed", "xfailed") or pre.blocked:
                # A prerequisite skipped for its own failed prerequisite: name the one that failed.
                why = pre.message if pre.blocked else f"prerequisite {prerequisite} did not pass"
                return CheckResult(check.id, check.family, "skipped", why, None, expected, blocked=True)
        started = time.perf_counter()
        context = CheckContext(self)
        try:
            check.func(context)
        except NotApplicable as exc:
            result = CheckResult(check.id, check.family, "skipped", str(exc), None, expected)
        except GoldenOverwriteError:
            raise  # a refused run, not a finding about the subject
        except Violation as exc:
            example = None if exc.example is None else exc.example if isinstance(exc.example, str) else str(exc.example)
            result = CheckResult(check.id, check.family, "xfailed" if expected is not None else "failed",
                                 exc.message, example, expected, trace=user_frames(exc))
        except Exception as exc:  # a crash outside a property: still the subject's finding
            result = CheckResult(check.id, check.family, "xfailed" if expected is not None else "failed",
                                 f"raised {type(exc).__name__}: {exc}", None, expected, trace=user_frames(exc))
        else:
            message = "; ".join(context.notes)
            if expected is not None:
                message = (f"passed although listed as an expected failure ({expected}); "
                           "remove it from the expected failures")
            result = CheckResult(check.id, check.family, "passed", message, None, expected)
        result.seconds = time.perf_counter() - started
        return result

    def run(self, wanted: Iterable[str] | None = None) -> Report:
        """Run the selected checks (see ``checks``) and report them."""
        return self.run_checks(self.checks(wanted))

    def run_checks(self, checks: Sequence[Check]) -> Report:
        """Run exactly ``checks`` (already selected) and report them."""
        if any(c.family == "backends" for c in checks) and self.backends:
            from .warmup import warm_up_in_background

            warm_up_in_background()  # backends' one-time import and first-write costs overlap the early checks
        if any(family_declaration(c.family).lane == "spark" for c in checks):
            from ..spark.session import HARNESS_CONFIG, start_in_background

            start_in_background(self.spark, config=HARNESS_CONFIG)  # Spark's start-up overlaps the checks before it
        results = []
        for c in checks:
            if self.should_stop is not None and self.should_stop():
                self.interrupted = True
                break
            results.append(self.result(c.id))
            failed = [r for r in self._results.values() if r.failed] if self.exitfirst else []
            if failed:  # a prerequisite that failed for this check is reported too
                results += [r for r in failed if all(r is not done for done in results)]
                break
        report = self.report(results)
        for check_id, said in self.finish(report.certified):
            for r in results:
                if r.id == check_id:
                    r.message = said
        return report

    def finish(self, certified: bool | None = None) -> list[tuple[str, str]]:
        """End the run's recordings: kept when ``certified`` (by default: no check run so far
        failed), else undone; returns (check id, what was undone) for each undone one."""
        if certified is None:
            certified = not any(r.failed for r in self._results.values())
        undone = [] if certified else [(check_id, undo()) for check_id, undo in self.undos]
        self.undos.clear()
        return [(check_id, said) for check_id, said in undone if said]

    def report(self, results: list[CheckResult]) -> Report:
        return Report(self.name, results, self.seed, self.profile, self.examples, library_versions(),
                      kind=self.kind, options=self.run_options(), strict=self.strict,
                      declared=declared_families(self.subject), distribution=subject_distribution(self.subject))

    def run_options(self) -> RunOptions:
        return RunOptions(backends=self.backends if self.kind == "serializer" else (),
                          spark=self.spark if self.kind == "serializer" else "off",
                          spark_entries=self.config.spark_entries,
                          steps=self.options.get("steps") if self.kind == "table" else None,
                          derandomize=self.derandomize, allow_all_skipped=self.config.allow_all_skipped)


def package_folder(package: Any) -> str:
    """The folder of ``package`` (a package module, or a folder's path), real path, ending in a
    separator: what ``in_package`` tells frames apart by."""
    import os

    folder = package if isinstance(package, str) else os.path.dirname(os.path.abspath(package.__file__ or ""))
    return os.path.join(os.path.realpath(folder), "")


def _library_folders() -> tuple[str, ...]:
    import os
    import sysconfig

    import hypothesis

    import reference
    import strategies

    folders = [package_folder(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))]  # conformance
    folders += [package_folder(m) for m in (reference, strategies, hypothesis)]
    folders += [package_folder(sysconfig.get_paths()[k]) for k in ("stdlib", "platstdlib")]
    return tuple(folders)


def in_package(filename: str, folders: tuple[str, ...] | str) -> bool:
    """Whether the file of a traceback frame lies in one of ``folders`` (``package_folder``s):
    the one rule for telling the library's frames from the user's."""
    import os

    return os.path.realpath(filename).startswith(folders)


def is_library_file(filename: str) -> bool:
    """A frame's file is the library's (this project's packages, hypothesis, the standard
    library), not the user's."""
    return in_package(filename, _library_folders())


def user_frames(exc: BaseException, limit: int = 4) -> list[str]:
    """``file:line in function`` of the frames in the user's code that ``exc`` (or the
    exceptions it was raised from) passed through, innermost last: where to look."""
    import traceback

    chain: list[BaseException] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append(current)
        current = current.__cause__ or current.__context__
    for error in reversed(chain):  # the innermost cause knows the user's frames best
        frames = [f for f in traceback.extract_tb(error.__traceback__) if not is_library_file(f.filename)]
        if frames:
            return [f"{f.filename}:{f.lineno} in {f.name}" for f in frames[-limit:]]
    return []


def strict_by_default(profile: str) -> bool:
    """``--strict`` is on in the ``certify`` profile: a certification that counts must not
    pass by skipping what the subject declared."""
    return profile == "certify"


def check_serializer(subject: Any, config: RunConfig | None = None, *, values: Any = None,
                     **deprecated: Any) -> Report:
    """Run every check (or the config's ``checks``) against ``subject`` as ``config`` (a
    ``conformance.RunConfig``; default ``RunConfig()``) asks, and return a ``Report`` of
    per-check results; never raises for a broken serializer.

    ``subject`` is a ``conformance.Subject`` (or a serializer plus ``values=``, a hypothesis
    strategy of its values), or a ``conformance.TableSubject``. A random seed is chosen and
    recorded unless the config gives one. An unknown check or expected-failure id raises
    ``conformance.UnknownCheckError``. With the config's ``update_golden``, a release already
    recorded with other bytes raises ``conformance.GoldenOverwriteError`` unless ``force``. The
    keywords taken before ``RunConfig`` (``examples=``, ``seed=``, ...) still work for one
    release, with a ``DeprecationWarning``.
    """
    config = from_keywords(config, deprecated, "check_serializer")
    target = subject if subject_kind(subject) == "table" else as_subject(subject, values)
    runner = Runner(target, config)
    try:
        return runner.run()
    finally:
        runner.close()
