"""The manifest on local disks and read compatibility: a savepoint lists its data files with
their sizes; one written before the listing existed restores locally as it always did and is
refused in an object store; file:// URIs are local paths; a URI's secrets never reach a message."""

from __future__ import annotations

import json
import os

import pytest
from storage_support import BACKENDS, content, expected, fill

from reference.savepoint import METADATA_FILE, SavepointFormatError, read_savepoint_metadata
from reference.serializers import StringSerializer


def _strip_listing(text: str) -> str:
    doc = json.loads(text)
    for state in doc["states"]:
        del state["files"]
    return json.dumps(doc)


@pytest.mark.parametrize("kind", sorted(BACKENDS))
def test_a_local_savepoint_lists_its_files_with_their_sizes(tmp_path, kind):
    with fill(BACKENDS[kind](StringSerializer()), keys=50) as backend:
        path = backend.savepoint(tmp_path / "sp")
    doc = json.loads((tmp_path / "sp" / METADATA_FILE).read_text())
    for state in doc["states"]:
        directory = tmp_path / "sp" / state["data"]
        on_disk = [{"name": n, "size": (directory / n).stat().st_size} for n in sorted(os.listdir(directory))]
        assert state["files"] == on_disk, f"got listing {state['files']}, should be {on_disk} [{state['name']}]"
    assert path == str(tmp_path / "sp"), f"got {path}, should be the absolute path"


@pytest.mark.parametrize("kind", sorted(BACKENDS))
def test_a_savepoint_without_a_listing_restores_locally(tmp_path, kind):
    with fill(BACKENDS["bytes"](StringSerializer()), keys=50) as backend:
        backend.savepoint(tmp_path / "sp")
    file = tmp_path / "sp" / METADATA_FILE
    file.write_text(_strip_listing(file.read_text()))
    assert all(s.files is None for s in read_savepoint_metadata(tmp_path / "sp").states), "got a listing, should be none"
    with BACKENDS[kind].restore(f"file://{tmp_path / 'sp'}", StringSerializer()) as restored:
        assert content(restored, 50) == expected(50), "got other content from a savepoint without a listing"


def test_a_savepoint_without_a_listing_is_refused_in_an_object_store(s3_bucket):
    import boto3

    with fill(BACKENDS["bytes"](StringSerializer()), keys=5) as backend:
        backend.savepoint(f"{s3_bucket}/sp")
    client = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"])
    bucket, key = s3_bucket.removeprefix("s3://"), f"sp/{METADATA_FILE}"
    text = client.get_object(Bucket=bucket, Key=key)["Body"].read().decode()
    client.put_object(Bucket=bucket, Key=key, Body=_strip_listing(text).encode())
    with pytest.raises(SavepointFormatError, match="does not list its data files.*local copy"):
        BACKENDS["heap"].restore(f"{s3_bucket}/sp", StringSerializer())


def test_the_cli_never_prints_a_secret_of_a_uri(capsys):
    from conformance.cli import main

    for argv in (["verify", "s3://someone:hunter22@bucket/sp"],
                 ["verify", "s3://bucket/sp?secret_key=hunter22"]):
        status = main(argv)
        err = capsys.readouterr().err
        assert status == 2, f"got exit {status}, should be 2 (unusable input) [{argv}]"
        assert "hunter22" not in err and "environment" in err, f"got {err!r}, should refuse without the secret [{argv}]"


def test_file_tree_reads_a_savepoint_at_a_uri_as_on_disk(s3_bucket, tmp_path):
    from reference.savepoint import file_tree

    with fill(BACKENDS["bytes"](StringSerializer()), keys=20) as backend:
        backend.savepoint(f"{s3_bucket}/sp")
        backend.savepoint(tmp_path / "sp")
    remote, local = file_tree(f"{s3_bucket}/sp"), file_tree(tmp_path / "sp")
    assert len(remote) == len(local) == 4, f"got {sorted(remote)} and {sorted(local)}, should be 4 files each"
    data = [sorted(v for k, v in tree.items() if k.endswith(".parquet")) for tree in (remote, local)]
    assert len(data[0]) == 3 and data[0] == data[1], "got other data files at the URI, should be the same bytes"
