"""Logs that live behind an fsspec URL (``s3://…``, ``memory://…``, anything fsspec reads).

The store ring is the only code that touches files and objects: this module lists, opens and
describes remote objects. fsspec is imported on use only, so the core install (no ``[fleet]``
extra) never needs it. An object is streamed into the same readers as a local file: fsspec's
buffered file reads it in blocks of ``BLOCK_SIZE`` (memory per open object stays bounded by
that block, whatever the object's size).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, BinaryIO

from sesstool.core.errors import InputError
from sesstool.core.held_map import HeldMap
from sesstool.store.run_spill import spilled_strings

# Read block for remote objects: big enough that one request serves many lines, small enough
# that a worker holding a few open objects stays well under its memory limit.
BLOCK_SIZE = 8 * 1024**2
# what a prefix walk keeps, in any case, as a local directory walk does (``Dialect.layout.suffixes``;
# the fleet passes the registered ones)
LOG_SUFFIXES = (".jsonl", ".jsonl.zst", ".jsonl.zstd")
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://")

StorageOptions = Mapping[str, Any]


def is_url(arg: str) -> bool:
    """An fsspec URL (``scheme://…``). ``file://`` counts; a bare path does not."""
    return _SCHEME.match(arg) is not None


def protocol(url: str) -> str:
    m = _SCHEME.match(url)
    return m.group(1).lower() if m else "file"


def basename(url: str) -> str:
    return url.rstrip("/").rsplit("/", 1)[-1]


def parent(url: str) -> str:
    return url.rstrip("/").rsplit("/", 1)[0]


def filesystem(url: str, options: StorageOptions | None = None) -> Any:
    """The fsspec file system for ``url`` (fsspec caches instances per process)."""
    try:
        import fsspec
    except ImportError as exc:  # only reachable without the [fleet] extra
        raise InputError(f"{url}: reading URLs needs the fleet extra: pip install 'sesstool[fleet]'") from exc
    try:
        chosen = options if options is not None else _OPTIONS.get()
        return fsspec.filesystem(protocol(url), **dict(chosen or {}))
    except (ImportError, ValueError) as exc:
        raise InputError(f"{url}: no file system for {protocol(url)!r}: {exc}") from None


def _full(fs: Any, url: str, path: str) -> str:
    """fsspec lists paths without the scheme; put it back so rows name what the user named."""
    if not is_url(url):
        return path
    return fs.unstrip_protocol(path) if hasattr(fs, "unstrip_protocol") else path


@dataclass(frozen=True, slots=True)
class RemoteEntry:
    """One listed object: its URL, size and version tag (ETag, or mtime for local files)."""

    url: str
    size: int
    tag: str | None


def _tag(info: Mapping[str, Any]) -> str | None:
    for key in ("ETag", "etag", "md5Hash", "mtime", "LastModified", "last_modified", "created"):
        if info.get(key) is not None:
            return str(info[key])
    return None


def list_logs(
    urls: tuple[str, ...], options: StorageOptions | None = None, suffixes: tuple[str, ...] | None = None
) -> Iterator[RemoteEntry]:
    """Every log file named by ``urls``, each once: objects as given, prefixes and directories
    walked for names ending in ``suffixes`` (default ``*.jsonl``, ``*.jsonl.zst``,
    ``*.jsonl.zstd``; any case; sorted), globs expanded. Unmatched names raise InputError. The
    URLs given are a ``core.held_map.HeldMap`` (past ``HELD_AT`` in a spill file); what fsspec
    answers for one prefix (its listing, and what its cache keeps) is fsspec's."""
    wanted = tuple(s.lower() for s in (suffixes or LOG_SUFFIXES))
    seen = HeldMap("the objects a listing gave", spilled_strings)
    for url in urls:
        fs = filesystem(url, options)
        try:
            if any(ch in url for ch in "*?[") and not fs.exists(url):
                found = fs.glob(url, detail=True)
            elif fs.isdir(url):
                found = fs.find(url, detail=True)
                found = {k: v for k, v in found.items() if k.lower().endswith(wanted)}
            else:
                found = {url: fs.info(url)}
        except FileNotFoundError:
            raise InputError(f"{url}: no such file, object or prefix") from None
        except OSError as exc:
            raise InputError(f"{url}: cannot list: {exc}") from None
        if not found:
            raise InputError(f"{url}: matched no log file ({', '.join('*' + s for s in wanted)})")
        for path in sorted(found):
            info = found[path]
            if info.get("type", "file") != "file":
                continue
            full = url if path == url else _full(fs, url, path)
            if full in seen:
                continue
            seen.put(full, "")
            yield RemoteEntry(full, int(info.get("size") or 0), _tag(info))


def describe(url: str, options: StorageOptions | None = None) -> RemoteEntry | None:
    """The object's entry now, or None when there is no object at ``url``."""
    fs = filesystem(url, options)
    try:
        info = fs.info(url)
    except FileNotFoundError:
        return None
    if info.get("type", "file") != "file":
        return None
    return RemoteEntry(url, int(info.get("size") or 0), _tag(info))


def describe_url(url: str, options: StorageOptions | None = None) -> tuple[str, int | None]:
    """``("object", size)``, ``("prefix", None)`` or ``("missing", None)``: what ``url`` names."""
    fs = filesystem(url, options)
    try:
        info = fs.info(url)
    except FileNotFoundError:
        return "missing", None
    except OSError as exc:
        raise InputError(f"{url}: cannot describe: {exc}") from None
    if info.get("type", "file") == "file":
        return "object", int(info.get("size") or 0)
    return "prefix", None


@contextmanager
def open_object(url: str, options: StorageOptions | None = None) -> Iterator[tuple[BinaryIO, RemoteEntry]]:
    """A read-only, block-buffered stream of the object (never the whole object in memory)."""
    fs = filesystem(url, options)
    try:
        # the readers only go forward: a read-ahead cache holds one block, never old ones
        f = fs.open(url, "rb", block_size=BLOCK_SIZE, cache_type="readahead")
    except FileNotFoundError:
        raise InputError(f"{url}: no such object") from None
    except IsADirectoryError:
        raise InputError(f"{url}: is a prefix, not an object") from None
    except OSError as exc:
        raise InputError(f"{url}: cannot open: {exc}") from None
    try:
        info = getattr(f, "details", None) or fs.info(url)
        entry = RemoteEntry(url, int(info.get("size") or 0), _tag(info))
        yield f, entry
    finally:
        f.close()


_OPTIONS: ContextVar[StorageOptions | None] = ContextVar("sesstool_storage_options", default=None)


@contextmanager
def using_storage_options(options: StorageOptions | None) -> Iterator[None]:
    """fsspec options (endpoint, credentials, …) for every URL opened in this context."""
    token = _OPTIONS.set(options)
    try:
        yield
    finally:
        _OPTIONS.reset(token)


def object_digest(url: str, options: StorageOptions | None = None) -> tuple[int, str]:
    """(size, SHA-256) of the object, streamed block by block."""
    digest = hashlib.sha256()
    size = 0
    with open_object(url, options) as (stream, _):
        while chunk := stream.read(BLOCK_SIZE):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()
