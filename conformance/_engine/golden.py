"""Golden files: snapshot + data written by earlier releases of a serializer, kept in the user's
repository and read back by every later release (layout in docs/golden-files.md).

    <golden dir>/<release>/snapshot.bin   the top-level snapshot (reference.snapshot_to_bytes)
    <golden dir>/<release>/data.bin       the records, back to back
    <golden dir>/<release>/manifest.json  release, record count, each value as stable text and as
                                          a value tree (field by field), ...

A recorded release is history: ``record_release`` never replaces one whose files would differ
(``GoldenOverwriteError`` names the release, the directory and the ways out: bump ``release=``
or re-record deliberately with ``force=True`` / ``--force``; when the snapshot is the recorded
one and only the records drawn with another seed differ, there is nothing new to record: drop
``--update-golden`` or rerun with the recorded seed); recording the same bytes again changes
nothing. A release named ``unreleased`` (no ``release=`` and no package version) is not
recorded unless forced (``UnnamedReleaseError``): later releases could not name it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from dataclasses import dataclass
from typing import Any

from reference import DataInputView, DataOutputView, snapshot_to_bytes

from .canonical import legacy_text, printable, stable_text, value_tree
from .errors import ConformanceError

__all__ = ["BYTES_EXAMPLE", "example_line", "GoldenRelease", "GoldenOverwriteError", "UnnamedReleaseError", "UNRELEASED",
           "Recording", "record_release", "recorded_releases",
           "current_release", "recorded_example", "RECORDED_EXAMPLE", "FORMAT"]

#: 2 adds ``trees`` (each value's ``value_tree``); format 1 manifests have only ``values``;
#: 3 writes trees and text by the exact rule for decimals, dates, times and durations
#: (``reference.TREE_FORM`` 3). A manifest is compared with the rule that wrote it
#: (``GoldenRelease.tree_form``, ``GoldenRelease.text_rule``).
FORMAT = 3
SNAPSHOT, DATA, MANIFEST = "snapshot.bin", "data.bin", "manifest.json"


class GoldenOverwriteError(ConformanceError):
    """Recording would replace a release already recorded with different files (or, as
    ``UnnamedReleaseError``, record a release named ``unreleased``). Not a finding about the
    serializer: the run is refused (``conformance certify`` exits 2)."""


class UnnamedReleaseError(GoldenOverwriteError):
    """The release to record has no name of its own (``UNRELEASED``): refused unless forced."""


#: The release name when neither ``Subject(release=...)`` nor the serializer's package says one.
UNRELEASED = "unreleased"


@dataclass
class Recording:
    """What ``record_release`` did: ``replaced`` names the files a forced re-record changed;
    ``unchanged`` is true when the release was recorded already with the same bytes."""

    release: str
    path: str
    records: int
    replaced: tuple[str, ...] = ()
    unchanged: bool = False
    #: Each file written, with what it held before (None: it did not exist), for ``roll_back``.
    previous: tuple[tuple[str, bytes | None], ...] = ()
    made_directory: bool = False

    def roll_back(self) -> str:
        """Put the golden directory back as it was before this recording; says what it did."""
        for name, content in self.previous:
            target = os.path.join(self.path, name)
            if content is None:
                with contextlib.suppress(FileNotFoundError):
                    os.remove(target)
            else:
                with open(target, "wb") as fh:
                    fh.write(content)
        if self.made_directory:
            with contextlib.suppress(OSError):
                os.rmdir(self.path)
        if not self.previous:  # nothing was written (the same bytes were recorded already)
            return ""
        undone = "the earlier recording restored" if self.replaced else "nothing recorded"
        return (f"release {self.release} not recorded at {self.path} ({undone}): the run is NOT CERTIFIED, "
                "and a recording holds what the code writes, so it would keep what the failing code "
                "wrote; fix the failures and record again with --update-golden")

    def describe(self) -> str:
        if self.unchanged:
            return f"release {self.release} already recorded at {self.path} with the same bytes; left as it was"
        text = f"recorded release {self.release} ({self.records} records) at {self.path}"
        if self.replaced:
            text += f" (--force: replaced {', '.join(self.replaced)} of the earlier recording)"
        return text


@dataclass
class GoldenRelease:
    release: str
    path: str
    snapshot: bytes
    data: bytes
    manifest: dict[str, Any]

    @property
    def values(self) -> list[str]:
        return list(self.manifest.get("values", []))

    @property
    def data_path(self) -> str:
        return os.path.join(self.path, DATA)

    @property
    def trees(self) -> list[Any] | None:
        """Each recorded value's ``value_tree`` (None in manifests of format 1)."""
        trees = self.manifest.get("trees")
        return None if trees is None else list(trees)

    @property
    def format(self) -> int:
        """The manifest's format (1 when it does not say: the first manifests had no field)."""
        found = self.manifest.get("format", 1)
        return found if type(found) is int else 1

    @property
    def tree_form(self) -> int:
        """The ``value_tree`` form ``trees`` were written in: 2 up to manifest format 2 (times
        and decimals as their repr), the manifest's own form from format 3 on."""
        return 2 if self.format <= 2 else 3

    def text(self, value: Any) -> str:
        """``value`` as the text rule of this manifest's ``values`` renders it (format 1 and 2:
        ``legacy_text``; 3: ``stable_text``)."""
        return legacy_text(value) if self.format <= 2 else stable_text(value)


#: How a failure's example begins when it is a recorded record, not a drawn and shrunk value.
RECORDED_EXAMPLE = "recorded example"
#: How a failure's example begins when it is the bytes that failed (a damaged record or
#: snapshot, a record as written), not a drawn and shrunk value.
BYTES_EXAMPLE = "failing bytes"


def example_line(example: str) -> str:
    """A failure's example as it reads: a drawn value is hypothesis' shrunk one; a golden file's
    record is labelled as recorded and failing bytes as bytes (neither was shrunk)."""
    if example.startswith((RECORDED_EXAMPLE, BYTES_EXAMPLE)):
        return example
    return f"smallest failing example: {example}"


def recorded_example(rel: GoldenRelease, index: int) -> str | None:
    """Record ``index`` of ``rel`` as the release recorded it, labelled as what it is: a
    record of a golden file (never shrunk), not hypothesis' smallest failing example."""
    if index >= len(rel.values):
        return None
    return f"{RECORDED_EXAMPLE} (golden file {rel.data_path}, record {index}): {printable(rel.values[index])}"


def _release_key(name: str) -> tuple[Any, ...]:
    # Numbers before words in each part, so any two names compare (1.10 after 1.9, "pre-1.7").
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"[.\-]", name))


def recorded_releases(golden_dir: str) -> list[GoldenRelease]:
    """Every release recorded under ``golden_dir``, oldest first."""
    if not os.path.isdir(golden_dir):
        return []
    found = []
    for name in sorted(os.listdir(golden_dir), key=_release_key):
        path = os.path.join(golden_dir, name)
        if not os.path.isfile(os.path.join(path, MANIFEST)):
            continue
        with open(os.path.join(path, MANIFEST), encoding="utf-8") as fh:
            manifest = json.load(fh)
        with open(os.path.join(path, SNAPSHOT), "rb") as fh:
            snapshot = fh.read()
        with open(os.path.join(path, DATA), "rb") as fh:
            data = fh.read()
        found.append(GoldenRelease(name, path, snapshot, data, manifest))
    return found


def current_release(subject: Any, serializer: Any) -> str:
    """The subject's ``release``, else its package's version, else ``unreleased``."""
    if subject.release:
        return str(subject.release)
    top = type(serializer).__module__.split(".")[0]
    try:
        from importlib import metadata

        return metadata.version(top)
    except Exception:
        module = __import__(top)
        return str(getattr(module, "__version__", UNRELEASED))


def record_release(golden_dir: str, release: str, serializer: Any, values: list[Any],
                   extra: dict[str, Any] | None = None, *, force: bool = False) -> Recording:
    """Write ``release``: snapshot, data and manifest. A release already recorded with other
    bytes raises ``GoldenOverwriteError`` unless ``force`` (then the files that differ are
    replaced and named in the result); the same bytes again leave the files untouched."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._\-+]*", release):
        raise ValueError(f"release name {release!r} cannot be a directory name; use e.g. '1.2.0'")
    if release == UNRELEASED and not force:
        raise UnnamedReleaseError(
            f"the release to record in {golden_dir} is named {UNRELEASED!r}: neither Subject(release=...) "
            f"nor the serializer's package gives a version, and later releases name the recorded ones in "
            f"Subject(releases={{...}}), so a recording needs the release's own name; set "
            f"Subject(release='1.0.0') (the release this code is) and record again, or pass --force to "
            f"record it as {UNRELEASED!r} anyway (pytest: --conformance-force; library: force=True)"
        )
    path = os.path.join(golden_dir, release)
    out = DataOutputView()
    for value in values:
        serializer.serialize(value, out)
    # The values as this release reads them back: equal to the ones written (the roundtrip
    # checks see to it), and what a later release of the same format reads too.
    source = DataInputView(out.getvalue())
    read = [serializer.deserialize(source) for _ in values]
    manifest = {
        "format": FORMAT,
        "release": release,
        "serializer": repr(serializer),
        "records": len(values),
        "values": [stable_text(v) for v in read],
        "trees": [value_tree(v) for v in read],
        **(extra or {}),
    }
    files = {
        SNAPSHOT: snapshot_to_bytes(serializer.snapshot_configuration()),
        DATA: out.getvalue(),
        MANIFEST: (json.dumps(manifest, indent=1) + "\n").encode("utf-8"),
    }
    differing = _differing(path, files)
    recorded = os.path.isfile(os.path.join(path, MANIFEST))
    if recorded and not differing:
        return Recording(release, path, len(values), unchanged=True)
    if recorded and not force:
        seed = _recorded_seed(path, manifest)
        head = (f"release {release} is already recorded at {path}{_seed_note(seed)}, and recording it again "
                f"would change {', '.join(differing)}: a recorded release is the history later releases must "
                f"read, so it is never overwritten silently; ")
        if SNAPSHOT not in differing and seed is not None:
            # Same serializer snapshot, another seed: only the drawn records differ, the code
            # has nothing new to record.
            raise GoldenOverwriteError(
                head + f"the serializer's snapshot is the one recorded and only the drawn records differ "
                f"(this run's seed is not the recorded --seed {seed}), so there is nothing new to record: "
                f"drop --update-golden (pytest: --conformance-update-golden) to verify against the recording, "
                f"or rerun with --seed {seed} (pytest: --conformance-seed {seed}) and the same number of "
                f"examples to reproduce it"
            )
        raise GoldenOverwriteError(
            head + f"if this is a new release, bump Subject(release=...) (now {release!r}) to its own name; "
            f"to re-record {release} on purpose, pass --force (pytest: --conformance-force; library: force=True)"
        )
    made_directory = not os.path.isdir(path)
    previous = tuple((name, _contents(os.path.join(path, name))) for name in files)
    os.makedirs(path, exist_ok=True)
    for name, content in files.items():
        with open(os.path.join(path, name), "wb") as fh:
            fh.write(content)
    return Recording(release, path, len(values), replaced=tuple(differing) if recorded else (),
                     previous=previous, made_directory=made_directory)


def _contents(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return None


def _recorded_seed(path: str, manifest: dict[str, Any]) -> Any:
    """The seed the recorded release was drawn with, when it is another than this run's (else None)."""
    try:
        with open(os.path.join(path, MANIFEST), encoding="utf-8") as fh:
            seed = json.load(fh).get("seed")
    except (OSError, ValueError, AttributeError):
        return None
    return None if seed is None or seed == manifest.get("seed") else seed


def _seed_note(seed: Any) -> str:
    return "" if seed is None else f" (recorded with --seed {seed})"


def _differing(path: str, files: dict[str, bytes]) -> list[str]:
    """The names among ``files`` whose content differs from (or is missing in) ``path``."""
    differing = []
    for name, content in files.items():
        try:
            with open(os.path.join(path, name), "rb") as fh:
                same = fh.read() == content
        except FileNotFoundError:
            same = False
        if not same:
            differing.append(name)
    return differing
