"""Scratch space on a worker for write commands on remote objects (docs/fleet.md).

The single-file write commands read their source twice (scan, then copy the committed bytes)
and hold ``session.lock`` beside it, so a remote source gets a local copy first — streamed
block by block through the one publisher, bounded by the free space of the scratch
directory, and removed with the directory when the file is done. Read commands never copy.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sesstool.core.errors import InputError, WriteRefusedError
from sesstool.store.digest import sha256_file
from sesstool.store.publish import Sink, publish
from sesstool.store.remote import BLOCK_SIZE, RemoteEntry, basename, open_object

# Kept free on the scratch file system beside a copy (other tasks on the worker write too).
HEADROOM = 256 * 1024**2


@contextmanager
def scratch_directory(base: str | None = None) -> Iterator[Path]:
    """A private directory (mode 0700) removed with everything in it on exit."""
    path = Path(tempfile.mkdtemp(prefix="sesstool-fleet-", dir=base))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def local_copy(url: str, directory: Path) -> tuple[Path, RemoteEntry]:
    """Copy the object to ``directory`` under its own name; returns the copy and the object's
    entry as read (size and tag, for the unchanged-source check before publication)."""
    target = directory / basename(url)
    with open_object(url) as (stream, entry):
        free = shutil.disk_usage(directory).free
        if entry.size + HEADROOM > free:
            raise InputError(
                f"{url}: {entry.size} bytes do not fit the scratch directory {directory} "
                f"({free} bytes free, {HEADROOM} kept free); set --scratch to a larger one"
            )
        digest = hashlib.sha256()

        def produce(sink: Sink) -> None:
            while chunk := stream.read(BLOCK_SIZE):
                digest.update(chunk)
                sink.write(chunk)

        def verify(tmp: Path) -> None:
            if tmp.stat().st_size != entry.size or sha256_file(tmp) != digest.hexdigest():
                raise WriteRefusedError(f"{url}: the local copy differs from the object as read")

        publish(target, produce, verify=verify)
    return target, entry
