"""A recorded release is history: ``--update-golden`` (CLI), ``update_golden=True`` (library)
and ``--conformance-update-golden`` (pytest) never replace one whose files would differ, unless
forced; recording the same bytes again is not an error."""

from __future__ import annotations

import sys
import textwrap

import pytest

import conformance
from conformance.cli import main

pytest_plugins = ["pytester"]

TARGETS = textwrap.dedent('''
    from hypothesis import strategies as st
    from conformance import Subject
    from reference.serializers import IntSerializer, LongSerializer

    # release 1.0 as recorded, and the next release's code with release="1.0" left in place
    OLD = Subject(LongSerializer(), st.integers(-2**31, 2**31 - 1), golden="golden/n", release="1.0")
    NEW = Subject(IntSerializer(), st.integers(-2**31, 2**31 - 1), golden="golden/n", release="1.0")
    # release 1.1: as it should be (reads 1.0 as is), and broken (cannot read 1.0's records)
    NEXT = Subject(LongSerializer(), st.integers(-2**31, 2**31 - 1), golden="golden/n", release="1.1")
    NEXT_BROKEN = Subject(IntSerializer(), st.integers(-2**31, 2**31 - 1), golden="golden/n", release="1.1")


    class Unversioned(LongSerializer):  # its module (this one) has no version
        pass


    # no release= and a serializer whose package has no version: the release would be "unreleased"
    UNNAMED = Subject(Unversioned(), st.integers(-2**31, 2**31 - 1), golden="golden/u")
''')

FAST = ["--examples", "10", "--seed", "7", "--backend", "heap", "--check", "versioning"]


@pytest.fixture
def targets(tmp_path, monkeypatch):
    (tmp_path / "golden_targets.py").write_text(TARGETS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("golden_targets", None)
    yield tmp_path
    sys.modules.pop("golden_targets", None)


def _files(directory):
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_cli_refuses_to_overwrite_a_recorded_release_with_other_bytes(targets, capsys):
    assert main(["certify", "golden_targets:OLD", *FAST, "--update-golden"]) == 0
    release = targets / "golden" / "n" / "1.0"
    before = _files(release)
    capsys.readouterr()
    status = main(["certify", "golden_targets:NEW", *FAST, "--update-golden"])
    err = capsys.readouterr().err
    assert status == 2, f"got exit {status}, should be 2 (refused); stderr {err!r}"
    for words in ("release 1.0", str(release), "Subject(release=...)", "--force", "snapshot.bin", "data.bin"):
        assert words in err, f"got stderr {err!r}, should mention {words!r}"
    assert _files(release) == before, "the recorded release 1.0 was changed by a refused recording"


def test_cli_re_recording_the_same_bytes_is_not_an_error(targets, capsys):
    argv = ["certify", "golden_targets:OLD", *FAST, "--update-golden"]
    assert main(argv) == 0
    before = _files(targets / "golden" / "n" / "1.0")
    capsys.readouterr()
    status = main(argv)
    out = capsys.readouterr().out
    assert status == 0, f"got exit {status}, should be 0: the same release with the same bytes; {out}"
    assert "same bytes" in out, f"got {out!r}, should say the release was left as it was"
    assert _files(targets / "golden" / "n" / "1.0") == before


def test_cli_refusal_names_the_seed_a_release_was_recorded_with(targets, capsys):
    assert main(["certify", "golden_targets:OLD", *FAST, "--update-golden"]) == 0
    capsys.readouterr()
    other_seed = [*FAST[:2], "--seed", "8", *FAST[4:]]
    status = main(["certify", "golden_targets:OLD", *other_seed, "--update-golden"])
    err = capsys.readouterr().err
    assert status == 2 and "recorded with --seed 7" in err, f"got exit {status}, stderr {err!r}"
    # The same code with another seed: nothing new to record, so no advice to bump the release
    # or force a re-record, but the two ways that do make sense.
    assert "snapshot.bin" not in err.split("would change", 1)[1].split(":", 1)[0], err
    for words in ("nothing new to record", "drop --update-golden", "rerun with --seed 7"):
        assert words in err, f"got stderr {err!r}, should say {words!r}"
    for words in ("Subject(release=...)", "--force"):
        assert words not in err, f"got stderr {err!r}, should not advise {words!r} for an unchanged serializer"


def test_cli_force_re_records_and_names_what_it_replaced(targets, capsys):
    assert main(["certify", "golden_targets:OLD", *FAST, "--update-golden"]) == 0
    release = targets / "golden" / "n" / "1.0"
    before = _files(release)
    capsys.readouterr()
    assert main(["certify", "golden_targets:NEW", *FAST, "--update-golden", "--force"]) == 0
    out = capsys.readouterr().out
    after = _files(release)
    changed = sorted(name for name in before if before[name] != after[name])
    assert changed, "--force should have re-recorded release 1.0 with the new serializer's bytes"
    for name in changed:
        assert name in out, f"got {out!r}, should name the replaced file {name}"


def test_cli_refuses_to_record_a_release_named_unreleased_unless_forced(targets, capsys):
    status = main(["certify", "golden_targets:UNNAMED", *FAST, "--update-golden"])
    err = capsys.readouterr().err
    assert status == 2, f"got exit {status}, should be 2 (refused); stderr {err!r}"
    for words in ("'unreleased'", "Subject(release=", "--force"):
        assert words in err, f"got stderr {err!r}, should say {words!r}"
    assert not (targets / "golden" / "u").exists(), "got a recording, should write nothing when refused"
    assert main(["certify", "golden_targets:UNNAMED", *FAST, "--update-golden", "--force"]) == 0
    assert (targets / "golden" / "u" / "unreleased" / "manifest.json").is_file(), "--force should record it"


def test_cli_force_without_update_golden_is_a_usage_error(targets, capsys):
    status = main(["certify", "golden_targets:OLD", *FAST, "--force"])
    err = capsys.readouterr().err
    assert status == 2 and "--update-golden" in err, f"got exit {status}, stderr {err!r}"


def test_library_raises_golden_overwrite_error_unless_forced(targets):
    sys.path.insert(0, str(targets))
    import golden_targets

    run = {"examples": 10, "seed": 7, "checks": ("versioning",), "backends": ("heap",), "update_golden": True}
    assert conformance.check_serializer(golden_targets.OLD, **run).certified
    release = targets / "golden" / "n" / "1.0"
    before = _files(release)
    with pytest.raises(conformance.GoldenOverwriteError, match=r"release 1\.0 is already recorded"):
        conformance.check_serializer(golden_targets.NEW, **run)
    assert _files(release) == before
    forced = conformance.check_serializer(golden_targets.NEW, force=True, **run)
    message = {r.id: r.message for r in forced}["versioning.golden"]
    assert "replaced" in message and "data.bin" in message, f"got {message!r}"
    assert _files(release) != before


#: pytest's options for a recording run of the suites ``_suites`` writes.
PYTEST_RECORDING = ["-p", "no:cacheprovider", "--conformance-update-golden", "--conformance-seed", "7",
                    "--conformance-examples", "10"]


def _suites(pytester, checks, **modules):
    """``golden_targets`` and one test module per keyword: its name, and the subject of
    ``golden_targets`` it certifies with ``checks``."""
    pytester.makepyfile(golden_targets=TARGETS)
    pytester.makepyfile(**{name: f'''
        import conformance
        from golden_targets import {target}

        class TestSubject(conformance.SerializerConformance):
            subject = {target}
            conformance_checks = {tuple(checks)!r}
    ''' for name, target in modules.items()})


def test_pytest_option_refuses_to_overwrite(pytester):
    _suites(pytester, ["versioning.golden"], test_old="OLD", test_new="NEW")
    options = PYTEST_RECORDING
    pytester.runpytest_subprocess("test_old.py", *options).assert_outcomes(passed=1)
    before = _files(pytester.path / "golden" / "n" / "1.0")
    result = pytester.runpytest_subprocess("test_new.py", *options)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*release 1.0 is already recorded*--conformance-force*"])
    assert _files(pytester.path / "golden" / "n" / "1.0") == before
    pytester.runpytest_subprocess("test_new.py", *options, "--conformance-force").assert_outcomes(passed=1)
    assert _files(pytester.path / "golden" / "n" / "1.0") != before


def test_cli_a_run_that_is_not_certified_records_nothing(targets, capsys):
    """--update-golden in a run that ends NOT CERTIFIED leaves the golden directory as it was:
    the recording would hold what the failing code writes, and later releases must read it."""
    assert main(["certify", "golden_targets:OLD", *FAST, "--update-golden"]) == 0
    golden = targets / "golden" / "n"
    capsys.readouterr()
    assert main(["certify", "golden_targets:NEXT_BROKEN", *FAST, "--update-golden"]) == 1
    out = capsys.readouterr().out
    assert not (golden / "1.1").exists(), f"got {sorted(p.name for p in golden.iterdir())}, should hold 1.0 only"
    for words in ("release 1.1 not recorded", "NOT CERTIFIED", "--update-golden"):
        assert words in out, f"got {out!r}, should say {words!r}"
    # A forced re-record that fails puts the earlier recording back, byte for byte.
    assert main(["certify", "golden_targets:NEXT", *FAST, "--update-golden"]) == 0
    before = _files(golden / "1.1")
    capsys.readouterr()
    assert main(["certify", "golden_targets:NEXT_BROKEN", *FAST, "--update-golden", "--force"]) == 1
    out = capsys.readouterr().out
    assert _files(golden / "1.1") == before, "got 1.1 changed by a failed forced re-record, should be restored"
    assert "earlier recording restored" in out, f"got {out!r}, should say the earlier recording was restored"


def test_pytest_a_subject_with_a_failed_check_records_nothing(pytester):
    _suites(pytester, ["versioning"], test_old="OLD", test_broken="NEXT_BROKEN")
    options = PYTEST_RECORDING
    assert pytester.runpytest_subprocess("test_old.py", *options).ret == 0
    result = pytester.runpytest_subprocess("test_broken.py", *options)
    assert result.ret == 1, f"got exit {result.ret}, should fail: release 1.1 cannot read 1.0"
    result.stdout.fnmatch_lines(["*conformance: *release 1.1 not recorded*NOT CERTIFIED*"])
    golden = pytester.path / "golden" / "n"
    assert sorted(p.name for p in golden.iterdir()) == ["1.0"], "got 1.1 kept, should be undone"
