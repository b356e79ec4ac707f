"""``conformance.RunConfig``: validated at construction with fix-it messages, the one
configuration of the library, the CLI and the pytest plugin; the keywords it replaces still
work for one release with a warning naming the field; the harness's errors share one root."""

from __future__ import annotations

import warnings

import pytest
from hypothesis import strategies as st

import conformance
from conformance import (
    ConformanceError,
    RunConfig,
    RunConfigError,
    Subject,
    SubjectError,
    TableSubjectError,
    UnknownCheckError,
    certify,
    check_serializer,
)
from conformance._engine.runner import Runner
from conformance.cli import UsageError, main
from reference.serializers import LongSerializer

pytest_plugins = ["pytester"]

LONGS = Subject(LongSerializer(), st.integers(-(2**63), 2**63 - 1), name="longs")


@pytest.mark.parametrize("given, words", [
    ({"examples": 0}, ["examples=0", ">= 1"]),
    ({"examples": True}, ["examples=True", ">= 1"]),
    ({"seed": "7"}, ["seed='7'", "an int"]),
    ({"profile": "certfy"}, ["profile='certfy'", "did you mean 'certify'", "dev, ci, certify"]),
    ({"backends": ("heap", "disk")}, ["backends=", "'disk'", "heap and/or bytes"]),
    ({"backends": "hep"}, ["did you mean 'heap'"]),
    ({"backends": ()}, ["no backend given"]),
    ({"spark": 1}, ["spark=1", "local[*]"]),
    ({"spark_entries": -3}, ["spark_entries=-3", ">= 1"]),
    ({"steps": 0}, ["steps=0"]),
    ({"jobs": 0}, ["jobs=0"]),
    ({"strict": "yes"}, ["strict='yes'", "True or False"]),
    ({"exitfirst": 1}, ["exitfirst=1", "True or False"]),
    ({"checks": "roundtrip"}, ["checks=('roundtrip',)"]),
    ({"checks": ("roundtrip", 3)}, ["3 is not a check id"]),
    ({"expected_failures": ["roundtrip.bit_exact"]}, ["expected_failures=", "should map check ids"]),
    ({"options": {"steps": 4}}, ["steps is a field of its own", "RunConfig(steps=4)"]),
])
def test_a_config_out_of_range_is_refused_saying_which_field_and_what_to_give(given, words):
    with pytest.raises(RunConfigError) as caught:
        RunConfig(**given)
    text = str(caught.value)
    assert all(w in text for w in words), f"got {text!r}, should mention {words}"
    assert isinstance(caught.value, ValueError), "got a RunConfigError that is not a ValueError, should be both"


def test_a_config_normalizes_what_it_is_given_and_is_frozen():
    config = RunConfig(backends="bytes, heap", spark="", checks=["roundtrip"], expected_failures={"a.b": 3})
    got = (config.backends, config.spark, config.checks, config.expected_failures)
    assert got == (("bytes", "heap"), "off", ("roundtrip",), {"a.b": "3"}), f"got {got}"
    with pytest.raises(AttributeError):
        config.examples = 3  # type: ignore[misc]
    assert config.replace(examples=3).examples == 3 and config.examples is None, "replace should copy, not change"
    with pytest.raises(RunConfigError):
        config.replace(examples=0)
    assert hash(config) == hash(RunConfig(backends=("bytes", "heap"), checks=("roundtrip",))), (
        "got different hashes for equal run options, should hash by its plain fields")


def test_the_config_reaches_the_runner_and_the_report():
    report = check_serializer(LONGS, RunConfig(examples=7, seed=11, profile="ci", backends=("heap",), strict=False,
                                               checks=("roundtrip.bit_exact",)))
    got = ([r.id for r in report], report.seed, report.profile, report.examples, report.options.backends,
           report.strict)
    assert got == (["roundtrip.bit_exact"], 11, "ci", 7, ("heap",), False), f"got {got}"


def test_certify_takes_the_config_and_one_seed_for_every_subject():
    reports = certify([LONGS, LONGS], RunConfig(examples=3, checks=("roundtrip.bit_exact",), jobs=1))
    seeds = {r.seed for r in reports}
    assert len(reports) == 2 and len(seeds) == 1 and None not in seeds, f"got seeds {seeds}, should share one"


@pytest.mark.parametrize("call", ["check_serializer", "certify", "Runner"])
def test_the_keywords_before_runconfig_still_work_and_warn_naming_the_fields(call):
    keywords = {"examples": 4, "seed": 5, "checks": ("roundtrip.bit_exact",), "options": {"spark_entries": 9}}
    with pytest.warns(DeprecationWarning) as caught:
        if call == "check_serializer":
            got = check_serializer(LONGS, **keywords)
        elif call == "certify":
            got = certify([LONGS], **keywords)[0]
        else:
            runner = Runner(LONGS, **keywords)
            try:
                got = runner.run()
            finally:
                runner.close()
    text = str(caught[0].message)
    for field in ("examples=", "seed=", "checks=", "spark_entries=", "RunConfig("):
        assert field in text, f"got warning {text!r}, should name {field}"
    assert caught[0].filename == __file__, f"got the warning attributed to {caught[0].filename}, should be the caller"
    assert (got.seed, got.examples, got.options.spark_entries, [r.id for r in got]) == (
        5, 4, 9, ["roundtrip.bit_exact"]), f"got {got.seed, got.examples, got.options}, should follow the keywords"


def test_no_warning_with_a_config_and_no_mixing_of_config_and_keywords():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        check_serializer(LONGS, RunConfig(examples=2, seed=1, checks=("roundtrip.bit_exact",)))
    with pytest.raises(TypeError, match="not both"):
        check_serializer(LONGS, RunConfig(), examples=2)
    with pytest.raises(TypeError, match="did you mean 'examples'"):
        check_serializer(LONGS, exampels=2)


def test_the_harness_errors_share_one_root_and_keep_their_bases():
    for error in (UnknownCheckError, SubjectError, TableSubjectError, RunConfigError, UsageError):
        assert issubclass(error, ConformanceError), f"got {error.__name__} outside ConformanceError"
    for error in (UnknownCheckError, SubjectError, TableSubjectError, RunConfigError):
        assert issubclass(error, ValueError), f"got {error.__name__} no longer a ValueError"
    assert "ConformanceError" in conformance.__all__ and "RunConfig" in conformance.__all__
    with pytest.raises(ConformanceError):
        check_serializer(LONGS, RunConfig(checks=("roundtrip.bit_exct",)))
    with pytest.raises(ConformanceError):
        Subject(LongSerializer(), values=None)
    with pytest.raises(ConformanceError, match="no subject given"):
        certify([], RunConfig())


def test_the_cli_reports_a_bad_profile_or_backend_as_usage(capsys):
    assert main(["certify", "--builtins", "--profile", "certfy"]) == 2
    assert main(["certify", "--builtins", "--backend", "hep"]) == 2
    err = capsys.readouterr().err
    assert "did you mean 'certify'" in err and "did you mean 'heap'" in err, f"got {err!r}"


@pytest.mark.parametrize("option, value, words", [
    ("--conformance-profile", "certfy", "did you mean 'certify'"),
    ("--conformance-backend", "heap,disk", "unknown backend(s) 'disk'"),
])
def test_the_plugin_rejects_a_bad_profile_or_backend_as_a_usage_error(pytester, option, value, words):
    pytester.makepyfile(test_nothing="def test_x():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", option, value)
    text = result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, f"got exit {result.ret}, should be a usage error\n{text}"
    assert option in text and words in text, f"got:\n{text}\nshould name {option} and say {words!r}"


def test_the_plugin_runs_with_its_options_as_a_runconfig(pytester):
    pytester.makepyfile(test_longs='''
import conformance
from hypothesis import strategies as st
from conformance import Subject
from reference.serializers import LongSerializer

@conformance.parametrize_checks(Subject(LongSerializer(), st.integers(0, 9)), checks=("roundtrip.bit_exact",))
def test_longs(conformance_result):
    assert conformance_result.status == "passed", conformance_result
''')
    result = pytester.runpytest("-p", "no:cacheprovider", "-W", "error::DeprecationWarning",
                                "--conformance-examples", "3", "--conformance-backend", "heap",
                                "--conformance-profile", "ci")
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize("given", ["00000002", b"", 2])
def test_flink_snapshot_must_be_bytes(given):
    with pytest.raises(SubjectError) as caught:
        Subject(LongSerializer(), st.integers(0, 9), flink_snapshot=given)
    assert "Subject(flink_snapshot=...) must be the bytes" in str(caught.value), str(caught.value)
    assert "bytes.fromhex" in str(caught.value), f"got {caught.value}, should say how to give hex"


def test_a_flink_form_other_than_the_declared_bytes_fails_naming_the_option():
    """A long serializer declared with the bytes Flink writes for an int serializer: its Flink
    form (LongSerializer's snapshot) is not those bytes."""
    from conformance._builtins.subjects import flink_snapshot

    subject = Subject(LongSerializer(), st.integers(0, 9), flink_snapshot=flink_snapshot("int"))
    result = check_serializer(subject, RunConfig(seed=1, examples=5, checks=("snapshot",)))["snapshot.flink_dialect"]
    assert result.failed, f"got {result.status}, should fail"
    for words in ("Subject(flink_snapshot=...)", "should be 88", "first at byte"):
        assert words in result.message, f"got {result.message!r}, should say {words!r}"
    right = Subject(LongSerializer(), st.integers(0, 9), flink_snapshot=flink_snapshot("long"))
    result = check_serializer(right, RunConfig(seed=1, examples=5, checks=("snapshot",)))["snapshot.flink_dialect"]
    assert result.passed, f"got {result.status} ({result.message}), should pass with Flink's own bytes"
