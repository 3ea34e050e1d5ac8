"""The object-store publisher: the only writer besides ``store/publish.py`` (DESIGN §4, docs/fleet.md).

An object store has no link(2); its equivalent of "create, never replace" is a conditional
create: ``PUT`` (or the multipart upload's completion) with ``If-None-Match: *``, which the
store refuses with 412 when the key exists. sesstool publishes only where it knows the store
honours that header (S3 and S3-compatible stores reached through s3fs), and first proves it
once per process and prefix with a probe object; anywhere else it refuses to write. After the
upload the object is read back — size and SHA-256 equal to what was sent, then the caller's
``verify`` (the same validator the local publisher uses) — before it is reported. An object
that fails verification was created by this call moments ago, so it is removed again.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sesstool.core.errors import WriteRefusedError
from sesstool.store.generations import parse_generation_name, refuse_second_encoding
from sesstool.store.remote import (
    BLOCK_SIZE,
    StorageOptions,
    basename,
    filesystem,
    object_digest,
    parent,
    protocol,
)

# Protocols whose fsspec implementation sends If-None-Match: * on "xb" (s3fs ≥ 2024.10).
CONDITIONAL_CREATE = frozenset({"s3", "s3a"})
# Upload part size (S3's minimum part is 5 MiB); memory per upload stays at about one part.
PART_SIZE = BLOCK_SIZE

_probed: set[tuple[str, str]] = set()
_probe_lock = threading.Lock()


class TargetExistsError(WriteRefusedError):
    """The store refused the conditional create: an object already has that key (exit 6)."""


@dataclass(frozen=True, slots=True)
class PublishedObject:
    url: str
    size: int
    sha256: str


def _refuse_protocol(url: str) -> WriteRefusedError:
    return WriteRefusedError(
        f"{url}: sesstool writes objects only where the store refuses to overwrite "
        f"(conditional create, If-None-Match: *); no such guarantee is known for "
        f"{protocol(url)!r} ({', '.join(sorted(CONDITIONAL_CREATE))} only); nothing was written"
    )


def check_conditional_create(url: str, options: StorageOptions | None = None) -> None:
    """Prove (once per process and prefix) that the store refuses a second create of one key.

    Writes a new probe object under ``url``'s prefix, tries to create it again, and removes it.
    A store that accepts the second create would let a publication overwrite: refuse (exit 6).
    """
    if protocol(url) not in CONDITIONAL_CREATE:
        raise _refuse_protocol(url)
    prefix = parent(url)
    key = (repr(sorted((options or {}).items(), key=lambda kv: kv[0])), prefix)
    with _probe_lock:
        if key in _probed:
            return
        fs = filesystem(url, options)
        probe = f"{prefix}/.sesstool-create-probe-{secrets.token_hex(8)}"
        try:
            fs.pipe_file(probe, b"", mode="create")
        except OSError as exc:
            raise WriteRefusedError(f"{prefix}: cannot create objects here: {exc}") from exc
        try:
            try:
                fs.pipe_file(probe, b"again", mode="create")
            except FileExistsError:
                pass
            except OSError as exc:
                raise WriteRefusedError(f"{prefix}: probing conditional create failed: {exc}") from exc
            else:
                raise WriteRefusedError(
                    f"{prefix}: the store accepted a second create of {probe} (it ignores "
                    "If-None-Match: *), so a publication could overwrite; nothing was written"
                )
        finally:
            fs.rm_file(probe)
        _probed.add(key)


def publish_object(
    target: str,
    local: Path,
    *,
    verify: Callable[[str], None],
    options: StorageOptions | None = None,
    probe: bool = True,
) -> PublishedObject:
    """Create the new object ``target`` from the local file ``local``; never overwrite.

    Raises TargetExistsError when the key is taken and WriteRefusedError for every other
    refusal (store without conditional create, upload failure, read-back or ``verify`` failure).
    ``probe=False`` when the caller has already run ``check_conditional_create`` on this prefix
    (the fleet does, once, on its client: a worker killed mid-probe would leave the probe).
    """
    if protocol(target) not in CONDITIONAL_CREATE:
        raise _refuse_protocol(target)
    if probe:
        check_conditional_create(target, options)
    fs = filesystem(target, options)
    check_generation_prefix(fs, target)
    sent = hashlib.sha256()
    size = 0
    try:
        with open(local, "rb") as src, fs.open(target, "xb", block_size=PART_SIZE) as dst:  # read-only src
            while chunk := src.read(PART_SIZE):
                sent.update(chunk)
                size += len(chunk)
                dst.write(chunk)
    except FileExistsError as exc:
        raise TargetExistsError(f"target exists: {target}; sesstool never overwrites") from exc
    except OSError as exc:
        raise WriteRefusedError(f"upload of {target} failed, nothing was published: {exc}") from exc
    try:
        got_size, got_sha = object_digest(target, options)
        if (got_size, got_sha) != (size, sent.hexdigest()):
            raise WriteRefusedError(
                f"read-back of {target}: {got_size} bytes sha256 {got_sha}, expected {size} bytes "
                f"sha256 {sent.hexdigest()}"
            )
        verify(target)
    except BaseException as exc:
        _remove_created(fs, target, exc)
        if isinstance(exc, WriteRefusedError):
            raise
        if isinstance(exc, Exception):
            raise WriteRefusedError(f"verification of {target} failed, it was removed: {exc}") from exc
        raise
    return PublishedObject(target, size, sent.hexdigest())


def check_generation_prefix(fs: Any, target: str) -> None:
    """A canonical generation (spec §10.1) published under a prefix must not give that session
    directory a second encoding (§9.2): the rule local writes follow (``check_publication_name``),
    applied to the objects beside ``target``. Other names are free."""
    parsed = parse_generation_name(basename(target))
    if parsed is None:
        return
    prefix = parent(target)
    try:
        fs.invalidate_cache(prefix)  # a listing cached earlier in this process may be stale
        names = [basename(str(p)) for p in fs.ls(prefix, detail=False)]
    except FileNotFoundError:
        return
    except OSError as exc:
        raise WriteRefusedError(f"{prefix}: cannot list the target prefix: {exc}") from exc
    existing = {g[1] for g in map(parse_generation_name, names) if g is not None}
    refuse_second_encoding(prefix, basename(target), parsed[1], existing)


def _remove_created(fs: Any, target: str, exc: BaseException) -> None:
    try:
        fs.rm_file(target)
    except OSError as err:
        exc.add_note(f"could not remove the unverified object {target}: {err}")
