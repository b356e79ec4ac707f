"""Savepoints in an object store: both backends write and restore at s3:// URIs against an S3
server on loopback (a separate process speaking S3 over HTTP); a URI is never taken for a local
path; the manifest is the only list readers trust; a killed writer leaves nothing a reader takes
for a savepoint, and the next attempt succeeds; the store's failures are named."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
from storage_support import BACKENDS, content, expected, fill, objects

from reference.savepoint import METADATA_FILE, SavepointFormatError, StorageError, read_savepoint_metadata
from reference.serializers import StringSerializer

HERE = os.path.dirname(os.path.abspath(__file__))


def _unused_port() -> int:
    """A loopback port nothing listens on."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("writer", sorted(BACKENDS))
@pytest.mark.parametrize("reader", sorted(BACKENDS))
def test_savepoint_and_restore_at_an_s3_uri(s3_bucket, tmp_path, monkeypatch, writer, reader):
    monkeypatch.chdir(tmp_path)
    uri = f"{s3_bucket}/jobs/in"
    with fill(BACKENDS[writer](StringSerializer())) as backend:
        got = backend.savepoint(uri)
    assert got == uri, f"got {got!r}, should be the URI {uri!r}"
    assert os.listdir(tmp_path) == [], f"got local entries {os.listdir(tmp_path)}, should be none (a URL is not a local path)"
    keys = objects(s3_bucket, "jobs/in/")
    assert "jobs/in/_metadata.json" in keys, f"got objects {sorted(keys)}, should hold the metadata"
    assert len(keys) == 4, f"got objects {sorted(keys)}, should be the metadata and one file per state"
    with BACKENDS[reader].restore(uri, StringSerializer()) as restored:
        assert content(restored) == expected(), f"got other content restoring {writer}'s savepoint with {reader}"


def test_a_url_is_never_taken_for_a_local_path(tmp_path, monkeypatch):
    """An unreachable store is an error naming the endpoint; nothing appears on the local disk."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{_unused_port()}")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "loopback-key-id")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "do-not-print-this-secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    for backend_class in BACKENDS.values():
        with fill(backend_class(StringSerializer()), keys=3) as backend, pytest.raises(StorageError) as info:
            backend.savepoint("s3://bucket/in")
        message = str(info.value)
        assert "cannot be reached" in message and "AWS_ENDPOINT_URL" in message, f"got {message!r}, should say the endpoint is unreachable"
        assert "do-not-print-this-secret" not in message, f"got the secret in {message!r}, should never print it"
        with pytest.raises(StorageError):
            backend_class.restore("s3://bucket/in", StringSerializer())
    assert os.listdir(tmp_path) == [], f"got local entries {os.listdir(tmp_path)}, should be none (no 's3:' folder)"


def test_store_errors_say_what_to_do(s3_bucket, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with fill(BACKENDS["bytes"](StringSerializer()), keys=3) as backend:
        with pytest.raises(StorageError, match="bucket 'no-such-bucket-x' does not exist.*create it first"):
            backend.savepoint("s3://no-such-bucket-x/sp")
        with pytest.raises(StorageError, match="scheme 'nosuch' is not supported"):
            backend.savepoint("nosuch://somewhere/sp")
        with pytest.raises(StorageError) as info:
            backend.savepoint(f"{s3_bucket}/sp?secret_key=hunter22")
        assert "hunter22" not in str(info.value) and "environment" in str(info.value), f"got {info.value}"
        with pytest.raises(StorageError) as info:
            backend.savepoint("s3://someone:hunter22@bucket/sp")
        assert "hunter22" not in str(info.value), f"got the secret in {info.value}, should never print it"
    with pytest.raises(SavepointFormatError, match="not a savepoint"):
        read_savepoint_metadata(f"{s3_bucket}/nothing-here")
    assert os.listdir(tmp_path) == [], f"got local entries {os.listdir(tmp_path)}, should be none"


def test_readers_trust_only_the_manifest(s3_bucket):
    import boto3

    uri = f"{s3_bucket}/sp"
    with fill(BACKENDS["heap"](StringSerializer())) as backend:
        backend.savepoint(uri)
    client = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"])
    bucket = s3_bucket.removeprefix("s3://")
    listed = [k for k in objects(s3_bucket, "sp/state-0001/")]
    # An extra data file (e.g. of an abandoned attempt) is not read.
    body = client.get_object(Bucket=bucket, Key=listed[0])["Body"].read()
    client.put_object(Bucket=bucket, Key="sp/state-0001/part-00001.stray.parquet", Body=body)
    with BACKENDS["heap"].restore(uri, StringSerializer()) as restored:
        assert content(restored) == expected(), "got other content, should ignore a file the manifest does not list"
    # A listed file that is short, or missing, is a clear error.
    client.put_object(Bucket=bucket, Key=listed[0], Body=body[: len(body) // 2])
    with pytest.raises(SavepointFormatError, match=r"state 'names'.*manifest says"):
        BACKENDS["heap"].restore(uri, StringSerializer())
    client.delete_object(Bucket=bucket, Key=listed[0])
    with pytest.raises(SavepointFormatError, match=r"state 'names' is missing"):
        BACKENDS["bytes"].restore(uri, StringSerializer())


def test_an_existing_savepoint_or_foreign_objects_are_never_overwritten(s3_bucket):
    import boto3

    with fill(BACKENDS["bytes"](StringSerializer()), keys=3) as backend:
        backend.savepoint(f"{s3_bucket}/sp")
        before = objects(s3_bucket)
        with pytest.raises(SavepointFormatError, match="already"):
            backend.savepoint(f"{s3_bucket}/sp")
        client = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"])
        client.put_object(Bucket=s3_bucket.removeprefix("s3://"), Key="data/report.csv", Body=b"x")
        with pytest.raises(SavepointFormatError, match="report.csv"):
            backend.savepoint(f"{s3_bucket}/data")
    after = objects(s3_bucket)
    assert after == {**before, "data/report.csv": 1}, f"got {sorted(after)}, should be unchanged but for the test's object"


WRITER = r"""
import sys, time
sys.path.insert(0, sys.argv[2])
from storage_support import BACKENDS, fill
from reference.serializers import StringSerializer
import reference.savepoint._format as savepoint_format

# The kill lands mid-write, every time: the commit of sp-1 stops before its metadata is written
# (its data files are written by then), says so and waits to be killed.
metadata_writer = savepoint_format.write_savepoint_metadata

def pausing_before_sp_1_metadata(directory, metadata):
    if str(getattr(directory, "uri", directory)).rstrip("/").endswith("/sp-1"):
        print("MID", flush=True)
        time.sleep(3600)
    return metadata_writer(directory, metadata)

savepoint_format.write_savepoint_metadata = pausing_before_sp_1_metadata
backend = fill(BACKENDS["bytes"](StringSerializer()), keys=3000)
print("READY", flush=True)
i = 0
while True:
    backend.savepoint(f"{sys.argv[1]}/sp-{i}")
    print("DONE", i, flush=True)
    i += 1
"""


def test_a_writer_killed_mid_write_leaves_no_savepoint_and_the_next_attempt_succeeds(s3_bucket):
    process = subprocess.Popen([sys.executable, "-c", WRITER, s3_bucket, HERE],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        assert line.strip() == "READY", f"got {line!r} {process.stderr.read()[:2000]}, should be READY"
        line = process.stdout.readline()
        assert line.startswith("DONE 0"), f"got {line!r}, should be DONE 0"
        line = process.stdout.readline()
        assert line.strip() == "MID", f"got {line!r}, should be MID (sp-1's data files written, not its metadata)"
        process.send_signal(signal.SIGKILL)
        process.wait()
    finally:
        process.kill()
        process.wait()
    left = objects(s3_bucket, "sp-1/")
    assert left and "sp-1/_metadata.json" not in left, f"got {sorted(left)}, should be data files without metadata (killed mid-write)"
    with pytest.raises(SavepointFormatError, match="not a savepoint"):
        read_savepoint_metadata(f"{s3_bucket}/sp-1")
    with BACKENDS["heap"].restore(f"{s3_bucket}/sp-0", StringSerializer()) as restored:
        assert content(restored, 3000) == expected(3000), "got other content in the savepoint completed before the kill"
    # The next attempt removes what the dead writer left and commits.
    with fill(BACKENDS["heap"](StringSerializer()), keys=3000) as backend:
        backend.savepoint(f"{s3_bucket}/sp-1")
    now = objects(s3_bucket, "sp-1/")
    assert not set(left) & set(now), f"got {sorted(set(left) & set(now))} still there, should be removed (owner dead)"
    metadata = json.loads(open_object(s3_bucket, "sp-1/" + METADATA_FILE))
    listed = {f"sp-1/{s['data']}/{f['name']}" for s in metadata["states"] for f in s["files"]}
    assert set(now) == listed | {"sp-1/_metadata.json"}, f"got {sorted(now)}, should be the manifest and what it lists"
    with BACKENDS["bytes"].restore(f"{s3_bucket}/sp-1", StringSerializer()) as restored:
        assert content(restored, 3000) == expected(3000), "got other content after the retried write"


def open_object(bucket_uri: str, key: str) -> bytes:
    import boto3

    client = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"])
    return client.get_object(Bucket=bucket_uri.removeprefix("s3://"), Key=key)["Body"].read()


@pytest.mark.parametrize("typed, meant", [("s3:/bucket/x", "s3://bucket/x"), ("gs:/bucket/x", "gs://bucket/x"),
                                          ("hdfs:/nn/x", "hdfs://nn/x"), ("file:tmp/x", "file:///tmp/x"),
                                          ("S3:bucket/x", "s3://bucket/x")])
def test_a_uri_missing_a_slash_is_refused_not_written_as_a_local_folder(tmp_path, monkeypatch, typed, meant):
    from reference.savepoint import locate

    monkeypatch.chdir(tmp_path)
    with fill(BACKENDS["bytes"](StringSerializer()), keys=3) as backend, pytest.raises(StorageError) as info:
        backend.savepoint(typed)
    message = str(info.value)
    assert f"did you mean {meant!r}" in message, f"got {message!r}, should suggest {meant!r}"
    assert f"'./{typed}'" in message, f"got {message!r}, should say how to write such a local path"
    assert os.listdir(tmp_path) == [], f"got local entries {os.listdir(tmp_path)}, should be none"
    for local in (f"./{typed}", "C:\\x", "c:/x", "plain"):
        assert not locate(local).remote, f"got {local!r} as a URI, should be a local path"
    assert locate("file:///tmp/x").path == os.path.abspath("/tmp/x"), "got another path for file:///tmp/x"


def test_flink_s_file_uri_with_one_slash_is_the_local_path(tmp_path):
    """Flink prints a local savepoint as file:/PATH (RFC 8089's form without an authority)."""
    from reference.savepoint import locate, read_savepoint_metadata

    target = tmp_path / "sp one"
    with fill(BACKENDS["bytes"](StringSerializer()), keys=3) as backend:
        backend.savepoint(f"file:{target}".replace(" ", "%20"))
    assert read_savepoint_metadata(str(target)).states, f"got nothing at {target}, should be the savepoint"
    for typed in (f"file:{target}", f"FILE:{target}"):
        got = locate(typed)
        assert not got.remote and got.path == str(target), f"got {got}, should be the local path {target}"


def test_an_upper_case_scheme_is_the_same_uri(s3_bucket):
    upper = "S3://" + s3_bucket.removeprefix("s3://") + "/Upper/sp"
    with fill(BACKENDS["bytes"](StringSerializer()), keys=3) as backend:
        got = backend.savepoint(upper)
    assert got == f"{s3_bucket}/Upper/sp", f"got {got!r}, should be the URI with its scheme in lower case"
    with BACKENDS["heap"].restore(upper, StringSerializer()) as restored:
        assert content(restored, keys=3) == expected(keys=3), "got other content restoring through S3://"


def test_a_bucket_without_a_prefix_is_refused_with_the_form_of_a_savepoint_uri(s3_bucket):
    for uri in (s3_bucket, s3_bucket + "/"):
        with pytest.raises(StorageError, match=r"no prefix after the bucket; a savepoint URI is s3://BUCKET/PREFIX"):
            read_savepoint_metadata(uri)


def test_reading_from_a_missing_bucket_names_the_bucket(s3_bucket):
    from conformance.cli import main

    for read in (read_savepoint_metadata, lambda uri: BACKENDS["bytes"].restore(uri, StringSerializer())):
        with pytest.raises(StorageError, match="bucket 'no-such-bucket-y' does not exist"):
            read("s3://no-such-bucket-y/sp1")
    status = main(["verify", "s3://no-such-bucket-y/sp1"])
    assert status == 2, f"got exit {status}, should be 2 (unusable input)"


def test_store_messages_hide_the_endpoints_user_info_and_hint_at_the_scheme(s3_server, tmp_path, monkeypatch):
    from conformance.cli import main

    monkeypatch.chdir(tmp_path)
    host = s3_server.removeprefix("http://")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "loopback-key-id")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "loopback-secret-value")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://admin:pw-not-shown@127.0.0.1:{_unused_port()}")
    with pytest.raises(StorageError) as info:
        read_savepoint_metadata("s3://bucket/sp")
    message = str(info.value)
    assert "pw-not-shown" not in message and "http://<user-info>@127.0.0.1:" in message, (
        f"got {message!r}, should show the endpoint without its user info")
    # an http server reached without a scheme: https is assumed, and the TLS handshake fails
    monkeypatch.setenv("AWS_ENDPOINT_URL", host)
    with pytest.raises(StorageError) as info:
        read_savepoint_metadata("s3://bucket/sp")
    assert "AWS_ENDPOINT_URL has no http:// or https://" in str(info.value), f"got {info.value}, should hint at the scheme"
    assert main(["verify", "s3://bucket/sp"]) == 2, "got another exit status, should be 2 (unusable input)"


def test_a_uri_missing_a_slash_never_shows_its_user_info():
    from reference.savepoint import locate

    for typed in ("s3:/me:hunter22@bucket/x", "s3:me:hunter22@bucket/x"):
        with pytest.raises(StorageError) as info:
            locate(typed)
        assert "hunter22" not in str(info.value) and "<user-info>@bucket/x" in str(info.value), (
            f"got {info.value}, should refuse without the secret [{typed}]")


def test_access_denied_names_every_credential_source():
    from reference.savepoint import locate
    from reference.savepoint._storage import _explain

    denied = OSError("When reading information for key 'sp/_metadata.json' in bucket 'b': AWS Error "
                     "ACCESS_DENIED during HeadObject operation: No response body.")
    message = _explain(locate("file:///tmp/sp"), "reading", denied)
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        assert name in message, f"got {message!r}, should name {name}"
