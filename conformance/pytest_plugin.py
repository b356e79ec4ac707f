"""pytest plugin (``pytest11`` entry point): options, and a terminal summary of per-check
conformance results that also works under pytest-xdist (each subject as ``conformance
certify`` shows it: skips one line per reason, each skipped check under pytest's ``-v``).
Imports nothing heavy until used.

The options are the fields of a ``conformance.RunConfig`` (examples, profile, seed, backends,
spark); a backend or profile name it does not know is a usage error, as on the CLI (both parse
them with the same functions, ``conformance.cli``'s ``--backend`` and ``--profile`` types).
"""

from __future__ import annotations

import sys
from typing import Any


def pytest_addoption(parser: Any) -> None:
    from conformance._engine.config import BACKENDS, DEFAULT_BACKENDS, PROFILES
    from conformance.cli._certify import backends_option, profile_option
    from conformance.cli._common import positive_int

    group = parser.getgroup("conformance", "serializer conformance harness")
    group.addoption("--conformance-examples", type=positive_int, default=None, metavar="N",
                    help="hypothesis examples per conformance check (default: the profile's)")
    group.addoption("--conformance-profile", type=profile_option, default=None, metavar="|".join(PROFILES),
                    help="hypothesis profile for conformance checks (default: HYPOTHESIS_PROFILE or dev)")
    group.addoption("--conformance-seed", type=int, default=None, metavar="N",
                    help="hypothesis seed for conformance checks (default: derived from the subject)")
    group.addoption("--conformance-backend", type=backends_option, default=None, metavar=",".join(BACKENDS),
                    help=f"state backends for the backends family (default {','.join(DEFAULT_BACKENDS)})")
    group.addoption("--conformance-spark", default="off", metavar="MASTER|off",
                    help="run the spark family on this master")
    group.addoption("--conformance-update-golden", action="store_true", default=False,
                    help="record the current release into each subject's golden directory (a release "
                         "already recorded with other bytes is refused)")
    group.addoption("--conformance-force", action="store_true", default=False,
                    help="with --conformance-update-golden: re-record a release already recorded, "
                         "replacing its files")


def pytest_runtest_logreport(report: Any) -> None:
    # Runs on the xdist controller too (reports carry user_properties across), so the summary
    # sees every worker's results.
    props = dict(getattr(report, "user_properties", ()) or ())
    if "conformance_check" not in props:
        return
    if report.when != "call" and not (report.when == "setup" and report.skipped):
        return
    _STORE.append(dict(props))


_STORE: list[dict[str, Any]] = []
#: What the session's end undid (a recording of a subject with a failed check), to print.
_UNDONE: list[str] = []


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    # The runners tests shared hold scratch directories and open backends until the end.
    api = sys.modules.get("conformance._pytest_api")
    if api is not None:
        _UNDONE.extend(api.close_runners())


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: Any) -> None:
    """One section, each subject rendered as ``conformance certify`` renders it: skips one
    line per reason, or one per check under pytest's ``-v``."""
    for said in _UNDONE:
        terminalreporter.write_line(f"conformance: {said}")
    _UNDONE.clear()
    if not _STORE:
        return
    from conformance._engine.render import render_report
    from conformance._engine.report import CheckResult, Report

    # One result per check and subject, as the CLI counts: a class and a decorator over the
    # same subject run each check once (the runner is shared) but report it once per test.
    subjects: dict[str, dict[str, CheckResult]] = {}
    for props in _STORE:
        status = props.get("conformance_status", "skipped")
        expected = props.get("conformance_expected_failure")
        if status == "failed" and expected is not None:
            status = "xfailed"
        subjects.setdefault(props.get("conformance_subject", "?"), {})[props["conformance_check"]] = CheckResult(
            props["conformance_check"], props.get("conformance_family", "?"), status,
            props.get("conformance_message", ""), props.get("conformance_example"), expected)
    verbose = (getattr(config.option, "verbose", 0) or 0) > 0
    terminalreporter.section("conformance")
    for subject, results in subjects.items():
        report = Report(subject, sorted(results.values(), key=lambda r: r.id))
        for line in render_report(report, verbose=verbose).splitlines():
            terminalreporter.write_line(line)
    _STORE.clear()
