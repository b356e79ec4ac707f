"""Helpers of the object-storage tests: the objects of a bucket as the server lists them
(through boto3, independently of the code under test) and a small keyed state to save."""

from __future__ import annotations

import os
from typing import Any

from reference.backends import (
    BytesStateBackend,
    HeapStateBackend,
    ListStateDescriptor,
    MapStateDescriptor,
    ValueStateDescriptor,
)
from reference.serializers import IntSerializer, LongSerializer, StringSerializer

BACKENDS = {"heap": HeapStateBackend, "bytes": BytesStateBackend}


def objects(bucket_uri: str, prefix: str = "", markers: bool = False) -> dict[str, int]:
    """Every object of the bucket under ``prefix``: key -> size, listed by the server; without
    ``markers``, not the empty ``dir/`` keys that pyarrow leaves when it deletes a directory's
    last file (directory markers, not files)."""
    import boto3

    bucket = bucket_uri.removeprefix("s3://").split("/", 1)[0]
    client = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"])
    found = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for item in page.get("Contents", []):
            if markers or not (item["Key"].endswith("/") and item["Size"] == 0):
                found[item["Key"]] = item["Size"]
    return found


def descriptors() -> list[Any]:
    return [ValueStateDescriptor("count", LongSerializer()),
            ListStateDescriptor("names", StringSerializer()),
            MapStateDescriptor("scores", StringSerializer(), IntSerializer())]


def fill(backend: Any, keys: int = 300) -> Any:
    value = backend.get_value_state(descriptors()[0])
    names = backend.get_list_state(descriptors()[1])
    scores = backend.get_map_state(descriptors()[2])
    for key in range(keys):
        backend.set_current_key(f"key-{key}")
        value.update(key * 7)
        names.update([f"n{key}-{i}" for i in range(key % 4)])
        scores.put_all({f"s{i}": key + i for i in range(key % 3)})
    return backend


def content(backend: Any, keys: int = 300) -> dict[str, Any]:
    """What ``fill`` stored, read back through the backend's state API."""
    value = backend.get_value_state(descriptors()[0])
    names = backend.get_list_state(descriptors()[1])
    scores = backend.get_map_state(descriptors()[2])
    found = {}
    for key in range(keys):
        backend.set_current_key(f"key-{key}")
        found[key] = (value.value(), list(names.get() or []), dict(scores.items()))
    return found


def expected(keys: int = 300) -> dict[str, Any]:
    return {key: (key * 7, [f"n{key}-{i}" for i in range(key % 4)], {f"s{i}": key + i for i in range(key % 3)})
            for key in range(keys)}


def relist(path: Any) -> None:
    """Rewrite a savepoint's manifest for the data files as they are now (the sizes of files a
    test replaced on purpose), so that what the test forged reaches the readers' deeper checks."""
    import dataclasses

    from reference.savepoint import METADATA_FILE, DataFile, read_savepoint_metadata, state_data_files

    metadata = read_savepoint_metadata(path)
    states = tuple(
        dataclasses.replace(state, files=tuple(
            DataFile(os.path.basename(f), os.path.getsize(f)) for f in state_data_files(path, state)))
        for state in metadata.states
    )
    with open(os.path.join(path, METADATA_FILE), "w", encoding="utf-8") as handle:
        handle.write(dataclasses.replace(metadata, states=states).to_json())
