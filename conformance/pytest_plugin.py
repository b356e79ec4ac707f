"""pytest plugin (``pytest11`` entry point): options, and a terminal summary of per-check
conformance results that also works under pytest-xdist. Imports nothing heavy until used."""

from __future__ import annotations

from typing import Any


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("conformance", "serializer conformance harness")
    group.addoption("--conformance-examples", type=int, default=None, metavar="N",
                    help="hypothesis examples per conformance check (default: the profile's)")
    group.addoption("--conformance-profile", choices=("dev", "ci", "certify"), default=None,
                    help="hypothesis profile for conformance checks (default: HYPOTHESIS_PROFILE or dev)")
    group.addoption("--conformance-seed", type=int, default=None, metavar="N",
                    help="hypothesis seed for conformance checks (default: derived from the subject)")
    group.addoption("--conformance-backend", default="heap,bytes", metavar="heap,bytes",
                    help="state backends for the backends family")
    group.addoption("--conformance-spark", default="off", metavar="MASTER|off",
                    help="run the spark family on this master")


def pytest_runtest_logreport(report: Any) -> None:
    # Runs on the xdist controller too (reports carry user_properties across), so the summary
    # sees every worker's results.
    props = dict(getattr(report, "user_properties", ()) or ())
    if "conformance_check" not in props:
        return
    if report.when != "call" and not (report.when == "setup" and report.skipped):
        return
    status = props.get("conformance_status", report.outcome)
    if status == "failed" and "conformance_expected_failure" in props:
        status = "xfailed"
    _STORE.append((props.get("conformance_subject", "?"), props["conformance_check"], status,
                   props.get("conformance_message", "")))


_STORE: list[tuple[str, str, str, str]] = []


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: Any) -> None:
    if not _STORE:
        return
    tr = terminalreporter
    tr.section("conformance")
    subjects: dict[str, list[tuple[str, str, str]]] = {}
    for subject, check_id, status, message in _STORE:
        subjects.setdefault(subject, []).append((check_id, status, message))
    for subject, rows in subjects.items():
        counts = {s: sum(1 for r in rows if r[1] == s) for s in ("passed", "failed", "skipped", "xfailed")}
        verdict = "certified" if counts["failed"] == 0 else "NOT certified"
        tr.write_line(f"{subject}: {verdict} ({counts['passed']} passed, {counts['failed']} failed, "
                      f"{counts['skipped']} skipped, {counts['xfailed']} expected failures)")
        for check_id, status, message in sorted(rows):
            if status == "failed":
                tr.write_line(f"  {check_id}: failed: {message}")
    _STORE.clear()
