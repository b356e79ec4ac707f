"""Where savepoints live: a local path or a file-system URI.

``locate(path)`` is the one place that decides. A string with a scheme (``s3://``, ``gs://``,
``hdfs://``, any scheme ``pyarrow.fs.FileSystem.from_uri`` accepts) is a URI and is never taken
for a local path; ``file://`` URIs and everything else are local paths (made absolute). Schemes are
case-insensitive (``S3://`` is ``s3://``). A string that starts like a URI but lacks the ``//``
(``s3:/bucket/x``, ``file:/x``: a scheme of two or more characters and a colon; ``C:\\`` is a
drive) is refused, never taken for a local folder named ``s3:``; such a local path is written
``./s3:/...``. Local
locations use ``os`` directly (the same calls, the same speed as before URIs existed); other
locations go through the pyarrow file system of their URI, created on first use in each process
(the driver's and every Spark executor's) and cached per URI root and environment.

Credentials and endpoints come only from the standard environment of each process (for S3:
``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``,
``AWS_DEFAULT_REGION``, or the SDK's other sources; for GCS and HDFS their usual ones). A URI
that carries credentials or an endpoint (``user:secret@``, ``?secret_key=``,
``?endpoint_override=``) is refused, since paths end up in logs, reports and certificates; no
message ever shows a secret (nor the user information of ``AWS_ENDPOINT_URL``). Reading where
no savepoint is, in a bucket that does not exist, says that the bucket is missing. Every failure of the store (unknown scheme, unreachable endpoint,
missing bucket, denied access) is a ``StorageError`` that says what failed and what to do.

pyarrow is imported on first use of a non-local location only.
"""

from __future__ import annotations

import contextlib
import filecmp
import os
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from .._errors import StateError

__all__ = ["StorageError", "Location", "locate", "is_uri", "same_bytes", "shown", "store_environment"]

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
#: A scheme of two or more characters and a colon (one letter and a colon is a Windows drive).
_SCHEME_LIKE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):")
#: Query parameters of a URI that would carry a secret or an endpoint (refused).
_REFUSED_QUERY = re.compile(r"key|secret|token|password|credential|endpoint|session", re.IGNORECASE)
#: Environment variables whose values never appear in a message.
_SECRET_ENV = ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ACCESS_KEY_ID",
               "GOOGLE_APPLICATION_CREDENTIALS")
#: Environment variables that select the store a URI reaches (part of the file-system cache key).
_STORE_ENV = re.compile(r"^(AWS_|GOOGLE_|GCS_|HADOOP_|ARROW_|LIBHDFS|CLASSPATH$|HADOOP_CONF)")
#: Schemes whose first path component is a bucket that a writer never creates.
_BUCKET_SCHEMES = ("s3", "gs", "gcs")


class StorageError(StateError):
    """A savepoint location cannot be used: an unsupported or unsafe URI, a store that cannot be
    reached, a bucket that does not exist, access denied, or a failed read or write."""


def is_uri(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a URI (``scheme://...``), not a local path."""
    return isinstance(path, str) and _SCHEME.match(path) is not None


def _redacted(uri: str) -> str:
    """``uri`` without user information and query values (for refusal messages)."""
    parts = urlsplit(uri)
    host = parts.netloc.rsplit("@", 1)[-1]
    query = "&".join(f"{k}=..." for k, _ in parse_qsl(parts.query, keep_blank_values=True))
    return f"{parts.scheme}://{'<user-info>@' if '@' in parts.netloc else ''}{host}{parts.path}" + (
        f"?{query}" if query else "")


def shown(path: str | os.PathLike[str]) -> str:
    """``path`` as a message may show it: a URI without user information and query values."""
    return _redacted(path) if is_uri(path) else os.fspath(path)  # type: ignore[arg-type]


def _shown_endpoint(endpoint: str) -> str:
    """An endpoint (``http://user:pw@host:port``, or without a scheme) without user information."""
    found = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*://)?([^/@]*@)?(.*)$", endpoint, re.DOTALL)
    assert found is not None
    return f"{found.group(1) or ''}{'<user-info>@' if found.group(2) else ''}{found.group(3)}"


def _scrub(text: str) -> str:
    """``text`` with the values of the secret environment variables blanked out."""
    for name in _SECRET_ENV:
        value = os.environ.get(name)
        if value and len(value) >= 4:
            text = text.replace(value, "***")
    return text


@dataclass(frozen=True)
class Location:
    """A file or directory of a savepoint: ``uri`` is what messages show (the absolute local
    path, or the URI), ``path`` what the file system is given (the absolute local path, or
    the URI's path, e.g. ``bucket/key``). Picklable: executors resolve the file system
    themselves, from their own environment."""

    uri: str
    path: str
    scheme: str = ""
    #: The URI the file system is created from ("" for a local location).
    root: str = ""

    @property
    def remote(self) -> bool:
        return bool(self.root)

    @property
    def name(self) -> str:
        return self.path.rstrip("/").rsplit("/", 1)[-1] if self.remote else os.path.basename(self.path)

    def child(self, *names: str) -> Location:
        if not self.remote:
            path = os.path.join(self.path, *names)
            return Location(path, path)
        suffix = "/".join(names)
        return Location(f"{self.uri.rstrip('/')}/{suffix}", f"{self.path.rstrip('/')}/{suffix}",
                        self.scheme, self.root)

    def __str__(self) -> str:
        return self.uri

    def __fspath__(self) -> str:
        if self.remote:
            raise StorageError(f"{self.uri} is not a local path; it is read through its file system")
        return self.path

    # -- the file system -------------------------------------------------------------------------
    def filesystem(self) -> Any:
        """The pyarrow file system of a remote location (created once per process)."""
        return _filesystem(self.root, self.scheme)

    @contextlib.contextmanager
    def guard(self, doing: str) -> Iterator[None]:
        """Report a failure of the store while ``doing`` something at this (remote) location as
        a ``StorageError`` that says what to check."""
        if not self.remote:  # local failures keep their own exceptions, as before URIs existed
            yield
            return
        try:
            yield
        except StateError:
            raise
        except Exception as exc:
            raise StorageError(_explain(self, doing, exc)) from None

    def info(self) -> Any:
        """pyarrow ``FileInfo`` of a remote location."""
        with self.guard("reading information of"):
            return self.filesystem().get_file_info(self.path)

    def exists(self) -> bool:
        if not self.remote:
            return os.path.lexists(self.path)
        from pyarrow.fs import FileType

        return self.info().type != FileType.NotFound

    def size(self) -> int | None:
        """The size of a file in bytes, None when there is none."""
        if not self.remote:
            try:
                return os.stat(self.path).st_size
            except FileNotFoundError:
                return None
            except (OSError, ValueError) as exc:  # a path under a file, too long, a NUL, denied
                raise StorageError(
                    f"reading the size of {self.uri!r} failed ({type(exc).__name__}: {exc}); "
                    "check that it is a file this process may read"
                ) from None
        from pyarrow.fs import FileType

        info = self.info()
        return info.size if info.type == FileType.File else None

    def files(self) -> list[tuple[str, int, float | None]]:
        """Every file under a remote directory: (path relative to it, size, mtime in seconds
        or None); [] when there is none."""
        from pyarrow.fs import FileSelector, FileType

        base = self.path.rstrip("/") + "/"
        with self.guard("listing"):
            infos = self.filesystem().get_file_info(FileSelector(base, recursive=True, allow_not_found=True))
        found = []
        for info in infos:
            if info.type == FileType.File:
                mtime = info.mtime.timestamp() if info.mtime is not None else None
                found.append((info.path[len(base):] if info.path.startswith(base) else info.path,
                              info.size, mtime))
        return found

    def read_bytes(self) -> bytes:
        if not self.remote:
            with open(self.path, "rb") as handle:
                return handle.read()
        with self.guard("reading"), self.filesystem().open_input_stream(self.path) as stream:
            return stream.read()

    def write_bytes(self, data: bytes) -> None:
        """Write a whole file (flushed to disk when local); one object PUT when remote."""
        if not self.remote:
            with open(self.path, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            return
        with self.guard("writing"), self.filesystem().open_output_stream(self.path) as stream:
            stream.write(data)

    def delete(self) -> None:
        """Remove a remote file (a missing one is fine)."""
        with self.guard("removing"), contextlib.suppress(FileNotFoundError):
            self.filesystem().delete_file(self.path)

    def open_input(self) -> Any:
        """What ``pyarrow.parquet.ParquetFile`` reads: the local path, or an open random-access
        file of the store."""
        if not self.remote:
            return self.path
        with self.guard("opening"):
            return self.filesystem().open_input_file(self.path)

    def open_output(self) -> Any:
        """What a Parquet writer writes to: the local path, or an output stream of the store
        (the object appears, complete, when the stream is closed)."""
        if not self.remote:
            return self.path
        with self.guard("writing"):
            return self.filesystem().open_output_stream(self.path)

    def check_bucket(self, writing: bool) -> None:
        """Refuse to read or write under a bucket that does not exist (or these credentials
        cannot see it), said as such rather than as a missing file; a writer never creates one."""
        if not self.remote or self.scheme not in _BUCKET_SCHEMES:
            return
        bucket = self.path.split("/", 1)[0]
        from pyarrow.fs import FileType

        with self.guard("checking the bucket of"):
            found = self.filesystem().get_file_info(bucket).type
        if found == FileType.NotFound:
            todo = ("create it first: a savepoint is never written by creating a bucket" if writing
                    else "check the bucket's name and the credentials in the environment")
            raise StorageError(f"{self.uri}: bucket {bucket!r} does not exist (or these credentials cannot see it); {todo}")

    def check_writable(self) -> None:
        """Refuse to write under a bucket that does not exist (a writer never creates one)."""
        self.check_bucket(writing=True)


def locate(path: str | os.PathLike[str] | Location) -> Location:
    """The location of a savepoint, file or directory given as a local path or a URI."""
    if isinstance(path, Location):
        return path
    if not is_uri(path):
        if isinstance(path, str):
            if _FILE_ONE_SLASH.match(path):  # RFC 8089's file:/abs/path, as Flink prints local paths
                absolute = os.path.abspath(unquote(path[len("file:"):]))
                return Location(absolute, absolute)
            _refuse_malformed_uri(path)
        absolute = os.path.abspath(os.fspath(path))
        return Location(absolute, absolute)
    assert isinstance(path, str)
    scheme = _SCHEME.match(path).group(1).lower()  # type: ignore[union-attr]
    path = scheme + path[len(scheme):]  # schemes are case-insensitive (RFC 3986)
    parts = urlsplit(path)
    if scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise StorageError(f"{path}: a file:// URI names a local path (file:///abs/path), not host {parts.netloc!r}")
        absolute = os.path.abspath(unquote(parts.path))
        return Location(absolute, absolute)
    if "@" in parts.netloc or any(_REFUSED_QUERY.search(k) for k, _ in parse_qsl(parts.query)):
        raise StorageError(
            f"{_redacted(path)}: the URI carries credentials or an endpoint, and paths end up in "
            "logs and reports; give them through the environment instead (for S3: "
            "AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_DEFAULT_REGION)"
        )
    if scheme in _BUCKET_SCHEMES and (not parts.netloc or not parts.path.strip("/")):
        what = "no bucket" if not parts.netloc else "no prefix after the bucket"
        raise StorageError(f"{path}: {what}; a savepoint URI is {scheme}://BUCKET/PREFIX")
    _filesystem(path, scheme)  # an unsupported scheme fails here, before anything is read or written
    fs_path = unquote(parts.path)
    if scheme in _BUCKET_SCHEMES:
        fs_path = parts.netloc + fs_path
    uri = path.split("?", 1)[0].rstrip("/")
    return Location(uri, fs_path.rstrip("/"), scheme, path)


#: ``file:/abs/path``: a file URI without an authority (RFC 8089), the form Flink prints.
_FILE_ONE_SLASH = re.compile(r"(?i)file:/(?!/)")


def _refuse_malformed_uri(path: str) -> None:
    """Refuse a string that starts like a URI (``s3:/bucket/x``, ``s3:bucket``) but is not
    ``scheme://...``: taken for a local path, it would write a folder named ``s3:``."""
    found = _SCHEME_LIKE.match(path)
    if found is None:
        return
    scheme, rest = found.group(1), path[found.end():]
    meant = f"{scheme.lower()}:///{rest.lstrip('/')}" if scheme.lower() == "file" else (
        f"{scheme.lower()}://{rest.lstrip('/')}")
    slashes = "one slash" if rest.startswith("/") else "no slashes"
    typed = re.sub(r"^([A-Za-z][A-Za-z0-9+.-]+:/*)[^/@]*@", r"\1<user-info>@", path)
    raise StorageError(
        f"{typed!r} looks like a URI with {slashes}; did you mean {shown(meant)!r}? (a local "
        f"path starting with {scheme + ':'!r} must be written {'./' + typed!r})"
    )


_CACHE: dict[tuple[str, str, tuple[tuple[str, str], ...]], Any] = {}
_CACHE_LOCK = threading.Lock()


def store_environment() -> dict[str, str]:
    """The environment variables of this process that select and authenticate the stores
    (what an executor needs to reach the same store as the driver)."""
    return {k: v for k, v in os.environ.items() if _STORE_ENV.match(k)}


def _filesystem(uri: str, scheme: str) -> Any:
    parts = urlsplit(uri)
    env = tuple(sorted(store_environment().items()))
    key = (scheme, parts.netloc + "?" + parts.query, env)
    with _CACHE_LOCK:
        fs = _CACHE.get(key)
    if fs is None:
        from pyarrow.fs import FileSystem

        with _guard_uri(uri, "opening the file system of"):
            fs = FileSystem.from_uri(uri)[0]
        with _CACHE_LOCK:
            _CACHE[key] = fs
    return fs


@contextlib.contextmanager
def _guard_uri(uri: str, doing: str) -> Iterator[None]:
    try:
        yield
    except StateError:
        raise
    except Exception as exc:
        scheme = urlsplit(uri).scheme
        raise StorageError(_explain(Location(uri.split("?", 1)[0], "", scheme, uri), doing, exc)) from None


def _explain(location: Location, doing: str, exc: BaseException) -> str:
    """What failed and what to do, from a pyarrow or SDK error (secrets scrubbed)."""
    text = _scrub(f"{type(exc).__name__}: {exc}")
    low = text.lower()
    where = f"{doing} {location.uri} failed ({text})"
    if "unrecognized filesystem type" in low or "not supported" in low and "scheme" in low or (
            "support for" in low and "not" in low):
        return (f"{where}: the scheme {location.scheme!r} is not supported by this pyarrow; use "
                "a local path, file://, s3://, gs:// or hdfs:// (with pyarrow built with that "
                "file system)")
    if "network_connection" in low or "ssl" in low or "could not connect" in low or "couldn't connect" in low or (
            "curlcode" in low) or "connection refused" in low or "timed out" in low:
        endpoint = os.environ.get("AWS_ENDPOINT_URL") or os.environ.get("AWS_ENDPOINT_URL_S3")
        told = (f"AWS_ENDPOINT_URL={_shown_endpoint(endpoint)}" if endpoint
                else "the default endpoint (AWS_ENDPOINT_URL unset)")
        hint = ""
        if endpoint and "://" not in endpoint and ("ssl" in low or "tls" in low or "certificate" in low):
            hint = "; AWS_ENDPOINT_URL has no http:// or https://, so https is assumed"
        return f"{where}: the store cannot be reached at {told}{hint}; check the endpoint and that it is up"
    if "no_such_bucket" in low or "nosuchbucket" in low or "bucket does not exist" in low:
        return f"{where}: the bucket does not exist; create it first"
    if "access_denied" in low or "accessdenied" in low or "forbidden" in low or "403" in low or (
            "invalidaccesskeyid" in low or "signature" in low):
        return (f"{where}: access denied; check the credentials in the environment "
                "(AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, and AWS_SESSION_TOKEN for temporary "
                "ones, or the profile AWS_PROFILE names; values not shown)")
    if isinstance(exc, FileNotFoundError) or "not found" in low or "no such file" in low:
        return f"{where}: it does not exist"
    return f"{where}; check the location and the store's credentials in the environment"


def same_bytes(one: Location, other: Location) -> bool:
    """Whether two files hold the same bytes."""
    if not one.remote and not other.remote:
        return filecmp.cmp(one.path, other.path, shallow=False)
    if one.size() != other.size():
        return False
    return one.read_bytes() == other.read_bytes()
