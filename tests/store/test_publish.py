"""Tests for the one publisher (DESIGN.md §4; RELIABILITY.md test plan items 1–8, 11, 28–30)."""

from __future__ import annotations

import ast
import contextlib
import errno
import hashlib
import os
import random
import re
import secrets
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sesstool.core.errors import ExitStatus, InputError, WriteRefusedError
from sesstool.store import publish as publish_module
from sesstool.store.publish import FileIdentity, Published, Sink, publish

TEMP_RE = re.compile(r"^\..+\.[0-9a-f]{12}\.tmp$")
MIB = 1 << 20
REPO = Path(__file__).resolve().parents[2]
HELPER = Path(__file__).with_name("_crash_publish.py")


def _data(n: int, seed: int = 0) -> bytes:
    return random.Random(seed).randbytes(n)


def _producer(data: bytes, chunk: int = 64 * 1024) -> Callable[[Sink], None]:
    def produce(sink: Sink) -> None:
        for i in range(0, len(data), chunk):
            sink.write(data[i : i + chunk])

    return produce


def _expecting(data: bytes) -> Callable[[Path], None]:
    def verify(path: Path) -> None:
        if path.read_bytes() != data:
            raise InputError("staged bytes differ")

    return verify


def _temps(directory: Path) -> list[str]:
    return sorted(n for n in os.listdir(directory) if n.endswith(".tmp"))


def _publish(target: Path, data: bytes, **kwargs: Any) -> Published:
    return publish(target, _producer(data), verify=_expecting(data), **kwargs)


def _is_dir_fd(fd: int) -> bool:
    return stat.S_ISDIR(os.fstat(fd).st_mode)


def _never_called(name: str) -> Callable[..., Any]:
    def fail(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"os.{name} must never be called by the publisher")

    return fail


@pytest.fixture
def out_dir(tmp_path: Path) -> Path:
    d = tmp_path / "out"
    d.mkdir()
    return d


# --- happy path -----------------------------------------------------------------------------


def test_publishes_exact_bytes_size_and_sha256(tmp_path: Path, out_dir: Path) -> None:
    data = _data(2 * MIB + 12345)
    source = tmp_path / "session.jsonl"
    source.write_bytes(data)
    before = FileIdentity.of_path(source)
    target = out_dir / "session.v1.jsonl"

    def produce(sink: Sink) -> None:
        with source.open("rb") as f:
            while chunk := f.read(7919):  # odd chunk size: buffering must not reorder bytes
                sink.write(chunk)

    result = publish(target, produce, verify=_expecting(data), source=source, source_identity=before)

    assert result == Published(target, len(data), hashlib.sha256(data).hexdigest())
    assert target.read_bytes() == data
    assert os.listdir(out_dir) == [target.name]
    assert source.read_bytes() == data
    assert FileIdentity.of_path(source).changes_since(before) == ()


def test_empty_output_is_published(out_dir: Path) -> None:
    target = out_dir / "empty.jsonl"
    result = _publish(target, b"")
    assert result.size == 0
    assert result.sha256 == hashlib.sha256(b"").hexdigest()
    assert target.read_bytes() == b""


@pytest.mark.parametrize("umask", [0o000, 0o077])
@pytest.mark.parametrize("mode", [0o600, 0o640])
def test_mode_is_exact_whatever_the_umask(out_dir: Path, umask: int, mode: int) -> None:
    target = out_dir / "out.jsonl"
    old = os.umask(umask)
    try:
        _publish(target, b"x\n", mode=mode)
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.lstat(target).st_mode) == mode


def test_verify_sees_the_fsynced_temp_before_the_final_name_exists(out_dir: Path) -> None:
    data = _data(3000)
    target = out_dir / "out.jsonl"
    seen: list[Path] = []

    def verify(path: Path) -> None:
        seen.append(path)
        assert path.parent == out_dir
        assert TEMP_RE.match(path.name) and path.name.startswith(".out.jsonl.")
        assert path.read_bytes() == data
        assert stat.S_IMODE(os.lstat(path).st_mode) == 0o600
        assert not os.path.lexists(target)

    publish(target, _producer(data), verify=verify)
    assert len(seen) == 1
    assert not seen[0].exists()


def test_leftover_temp_files_are_never_touched(out_dir: Path) -> None:
    debris = out_dir / ".out.jsonl.0123456789ab.tmp"
    debris.write_bytes(b"crash debris")
    target = out_dir / "out.jsonl"
    _publish(target, b"fresh\n")
    assert target.read_bytes() == b"fresh\n"
    assert debris.read_bytes() == b"crash debris"
    assert _temps(out_dir) == [debris.name]


def test_odd_names_are_used_verbatim_not_interpreted(out_dir: Path) -> None:
    target = out_dir / "new\nline id.jsonl"
    _publish(target, b"a\n")
    assert os.listdir(out_dir) == [target.name]


@pytest.mark.parametrize("name", ["nul\0byte.jsonl", "lone\ud800surrogate.jsonl"])
def test_unencodable_names_are_refused(out_dir: Path, name: str) -> None:
    with pytest.raises(WriteRefusedError):
        _publish(out_dir / name, b"a\n")
    assert os.listdir(out_dir) == []


def test_bad_arguments_are_programming_errors(tmp_path: Path, out_dir: Path) -> None:
    with pytest.raises(ValueError):
        _publish(out_dir / "a", b"", mode=0o4755)
    ident = FileIdentity.of_path(tmp_path)
    with pytest.raises(ValueError):
        _publish(out_dir / "a", b"", source_identity=ident)
    assert os.listdir(out_dir) == []


def test_sink_cannot_be_used_after_the_producer_returned(out_dir: Path) -> None:
    kept: list[Sink] = []

    def produce(sink: Sink) -> None:
        kept.append(sink)
        sink.write(b"ok\n")

    publish(out_dir / "a", produce, verify=_expecting(b"ok\n"))
    with pytest.raises(RuntimeError):
        kept[0].write(b"late")
    assert (out_dir / "a").read_bytes() == b"ok\n"


# --- never overwrite (items 1, 7) ---------------------------------------------------------------


def test_existing_target_is_refused_and_left_byte_identical(out_dir: Path) -> None:
    target = out_dir / "session.v2.jsonl.zstd"
    target.write_bytes(b"the existing generation")
    before = FileIdentity.of_path(target)
    produced: list[int] = []

    def produce(sink: Sink) -> None:
        produced.append(1)

    with pytest.raises(WriteRefusedError, match="target exists") as info:
        publish(target, produce, verify=_expecting(b""))

    assert info.value.exit_status is ExitStatus.WRITE_REFUSED
    assert int(info.value.exit_status) == 6
    # produced (to know whether the target already holds these bytes, issue 15 item 12), then
    # refused because it does not; nothing linked, nothing left
    assert produced == [1]
    assert target.read_bytes() == b"the existing generation"
    assert FileIdentity.of_path(target) == before
    assert _temps(out_dir) == []


def test_target_created_while_writing_makes_link_fail_with_eexist(out_dir: Path) -> None:
    target = out_dir / "session.v2.jsonl"

    def produce(sink: Sink) -> None:
        sink.write(b"ours\n")
        target.write_bytes(b"theirs\n")  # a concurrent publisher won the race

    with pytest.raises(WriteRefusedError, match="target exists") as info:
        publish(target, produce, verify=_expecting(b"ours\n"))

    assert info.value.exit_status == 6
    assert isinstance(info.value.__cause__, FileExistsError)
    assert target.read_bytes() == b"theirs\n"
    assert _temps(out_dir) == []


@pytest.mark.parametrize("pointee_exists", [False, True])
def test_target_symlink_is_refused_and_not_followed(tmp_path: Path, pointee_exists: bool) -> None:
    out = tmp_path / "out"
    out.mkdir()
    pointee = tmp_path / "elsewhere.jsonl"
    if pointee_exists:
        pointee.write_bytes(b"victim")
    target = out / "session.v1.jsonl"
    target.symlink_to(pointee)

    with pytest.raises(WriteRefusedError, match="symbolic link") as info:
        _publish(target, b"new\n")

    assert info.value.exit_status == 6
    assert os.readlink(target) == str(pointee)
    if pointee_exists:
        assert pointee.read_bytes() == b"victim"
    else:
        assert not os.path.lexists(pointee)
    assert sorted(os.listdir(out)) == [target.name]


@pytest.mark.parametrize("victim_exists", [False, True])
def test_preplanted_temp_symlink_is_refused_by_o_excl_nofollow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, victim_exists: bool
) -> None:
    monkeypatch.setattr(secrets, "token_hex", lambda nbytes=None: "0123456789ab")
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim"
    if victim_exists:
        victim.write_bytes(b"do not touch")
        victim.chmod(0o644)
        victim_before = (FileIdentity.of_path(victim), victim.stat().st_mode)
    planted = out / ".session.v1.jsonl.0123456789ab.tmp"
    planted.symlink_to(victim)
    target = out / "session.v1.jsonl"

    with pytest.raises(WriteRefusedError, match="already exists") as info:
        _publish(target, b"payload\n")

    assert info.value.exit_status == 6
    assert os.path.islink(planted) and os.readlink(planted) == str(victim)
    if victim_exists:
        assert victim.read_bytes() == b"do not touch"
        assert (FileIdentity.of_path(victim), victim.stat().st_mode) == victim_before
    else:
        assert not os.path.lexists(victim)
    assert not os.path.lexists(target)


def test_temp_replaced_during_verification_is_refused_and_foreign_file_kept(
    out_dir: Path,
) -> None:
    target = out_dir / "out.jsonl"

    def verify(path: Path) -> None:
        path.unlink()
        path.write_bytes(b"someone else's file")

    with pytest.raises(WriteRefusedError, match="modified or replaced") as info:
        publish(target, _producer(b"ours\n"), verify=verify)

    assert not os.path.lexists(target)
    [left] = _temps(out_dir)
    assert (out_dir / left).read_bytes() == b"someone else's file"
    assert any("not the file this run created" in n for n in info.value.__notes__)


# --- verification and source checks (item 11) -----------------------------------------------


def test_verify_failure_leaves_no_final_name_and_no_temp(out_dir: Path) -> None:
    target = out_dir / "out.jsonl"

    def verify(path: Path) -> None:
        raise InputError("staged file is not balanced")

    with pytest.raises(WriteRefusedError, match="verification") as info:
        publish(target, _producer(b"x\n"), verify=verify)

    assert info.value.exit_status == 6
    assert isinstance(info.value.__cause__, InputError)
    assert os.listdir(out_dir) == []


def test_verify_write_refusal_passes_through(out_dir: Path) -> None:
    def verify(path: Path) -> None:
        raise WriteRefusedError("custom refusal")

    with pytest.raises(WriteRefusedError, match=r"^custom refusal$"):
        publish(out_dir / "o", _producer(b"x"), verify=verify)
    assert os.listdir(out_dir) == []


def _append(p: Path) -> None:
    with p.open("ab") as f:
        f.write(b"appended by a live writer\n")


def _swap_inode(p: Path) -> None:
    data = p.read_bytes()
    p.unlink()
    p.write_bytes(data)


def _touch_mtime(p: Path) -> None:
    st = p.stat()
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


@pytest.mark.parametrize("mutate", [_append, _swap_inode, _touch_mtime, Path.unlink])
@pytest.mark.parametrize("identity_given", [True, False])
def test_source_changed_while_read_is_refused(
    tmp_path: Path, out_dir: Path, mutate: Callable[[Path], None], identity_given: bool
) -> None:
    source = tmp_path / "session.jsonl"
    source.write_bytes(b'{"seq":1}\n')
    before = FileIdentity.of_path(source) if identity_given else None
    target = out_dir / "session.v1.jsonl"

    def produce(sink: Sink) -> None:
        sink.write(source.read_bytes())
        mutate(source)

    with pytest.raises(WriteRefusedError, match="source changed while it was read") as info:
        publish(
            target,
            produce,
            verify=_expecting(b'{"seq":1}\n'),
            source=source,
            source_identity=before,
        )

    assert info.value.exit_status == 6
    assert os.listdir(out_dir) == []


# --- injected faults (items 4, 5, 6) -----------------------------------------------------------


class FsyncSpy:
    def __init__(self, real: Callable[[int], None], fail_kind: str, fail_nth: int, err: int) -> None:
        self.real = real
        self.fail_kind = fail_kind
        self.fail_nth = fail_nth
        self.err = err
        self.calls: list[tuple[str, int]] = []  # (kind, fd)

    def __call__(self, fd: int) -> None:
        kind = "dir" if _is_dir_fd(fd) else "file"
        self.calls.append((kind, fd))
        if kind == self.fail_kind and sum(k == kind for k, _ in self.calls) == self.fail_nth:
            raise OSError(self.err, os.strerror(self.err))
        self.real(fd)


def test_file_fsync_eio_aborts_without_retry(
    tmp_path: Path, out_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "src"
    source.write_bytes(b"source bytes\n")
    spy = FsyncSpy(os.fsync, "file", 1, errno.EIO)
    monkeypatch.setattr(os, "fsync", spy)

    with pytest.raises(WriteRefusedError, match="EIO") as info:
        _publish(out_dir / "out.jsonl", b"data\n")

    assert info.value.exit_status == 6
    assert "fsync of the temporary file" in str(info.value)
    assert spy.calls == [("file", spy.calls[0][1])]  # once, never retried, no dir fsync
    assert os.listdir(out_dir) == []
    assert source.read_bytes() == b"source bytes\n"


@pytest.mark.parametrize("nth", [1, 2])
@pytest.mark.parametrize("err", [errno.EIO, errno.ENOSPC])
def test_dir_fsync_failure_removes_the_final_name_without_retry(
    out_dir: Path, monkeypatch: pytest.MonkeyPatch, nth: int, err: int
) -> None:
    spy = FsyncSpy(os.fsync, "dir", nth, err)
    monkeypatch.setattr(os, "fsync", spy)
    target = out_dir / "out.jsonl"

    with pytest.raises(WriteRefusedError, match=errno.errorcode[err]) as info:
        _publish(target, b"data\n")

    assert info.value.exit_status == 6
    dir_fds = [fd for kind, fd in spy.calls if kind == "dir"]
    assert len(dir_fds) == nth  # nothing after the failed fsync, on that fd or any other
    assert spy.calls[-1][0] == "dir"
    assert os.listdir(out_dir) == []


def test_keyboard_interrupt_after_link_removes_everything(
    out_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = os.fsync

    def fsync(fd: int) -> None:
        if _is_dir_fd(fd):
            raise KeyboardInterrupt
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(KeyboardInterrupt):
        _publish(out_dir / "out.jsonl", b"data\n")
    assert os.listdir(out_dir) == []


def test_keyboard_interrupt_in_producer_removes_the_temp(out_dir: Path) -> None:
    def produce(sink: Sink) -> None:
        sink.write(b"partial")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        publish(out_dir / "o", produce, verify=_expecting(b""))
    assert os.listdir(out_dir) == []


def test_producer_error_propagates_unchanged(out_dir: Path) -> None:
    def produce(sink: Sink) -> None:
        sink.write(b"partial")
        raise InputError("source is corrupt")

    with pytest.raises(InputError, match="source is corrupt"):
        publish(out_dir / "o", produce, verify=_expecting(b""))
    assert os.listdir(out_dir) == []


def test_write_enospc_mid_generation_aborts(
    tmp_path: Path, out_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _data(3 * MIB)
    source = tmp_path / "src"
    source.write_bytes(data)
    real = os.write
    calls: list[int] = []

    def write(fd: int, buf: Any) -> int:
        calls.append(len(buf))
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, buf)

    monkeypatch.setattr(os, "write", write)
    with pytest.raises(WriteRefusedError, match="ENOSPC") as info:
        _publish(out_dir / "out.jsonl", data, source=source)

    assert info.value.exit_status == 6
    assert len(calls) == 2
    assert os.listdir(out_dir) == []
    assert source.read_bytes() == data


def test_producer_that_swallows_a_write_error_still_fails_closed(
    out_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def write(fd: int, buf: Any) -> int:
        raise OSError(errno.EDQUOT, os.strerror(errno.EDQUOT))

    monkeypatch.setattr(os, "write", write)

    def produce(sink: Sink) -> None:
        with contextlib.suppress(WriteRefusedError):  # a careless producer
            sink.write(b"x" * (2 * MIB))

    with pytest.raises(WriteRefusedError, match="EDQUOT"):
        publish(out_dir / "o", produce, verify=_expecting(b""))
    assert os.listdir(out_dir) == []


def test_one_byte_short_writes_still_produce_exact_content(
    out_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _data(20_000, seed=1)
    real = os.write
    calls: list[int] = []

    def write(fd: int, buf: Any) -> int:
        calls.append(len(buf))
        return real(fd, bytes(buf[:1]))

    monkeypatch.setattr(os, "write", write)
    target = out_dir / "out.jsonl"
    result = _publish(target, data)

    assert len(calls) == len(data)
    assert target.read_bytes() == data
    assert result.sha256 == hashlib.sha256(data).hexdigest()


def test_random_short_writes_on_a_large_file(out_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _data(3 * MIB + 17, seed=2)
    rng = random.Random(3)
    real = os.write

    def write(fd: int, buf: Any) -> int:
        return real(fd, bytes(buf[: rng.randint(1, 8191)]))

    monkeypatch.setattr(os, "write", write)
    target = out_dir / "out.jsonl"
    _publish(target, data)
    assert target.read_bytes() == data


def test_write_that_makes_no_progress_is_refused(out_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "write", lambda fd, buf: 0)
    with pytest.raises(WriteRefusedError, match="no progress"):
        _publish(out_dir / "out.jsonl", b"data\n")
    assert os.listdir(out_dir) == []


@pytest.mark.parametrize("err", [errno.EXDEV, errno.EPERM, errno.ENOTSUP, errno.EMLINK])
def test_link_unsupported_is_refused_and_never_falls_back_to_rename(
    out_dir: Path, monkeypatch: pytest.MonkeyPatch, err: int
) -> None:
    def link(*args: Any, **kwargs: Any) -> None:
        raise OSError(err, os.strerror(err))

    monkeypatch.setattr(os, "link", link)
    monkeypatch.setattr(os, "rename", _never_called("rename"))
    monkeypatch.setattr(os, "replace", _never_called("replace"))
    monkeypatch.setattr(os, "renames", _never_called("renames"))
    monkeypatch.setattr(shutil, "move", _never_called("shutil.move"))

    with pytest.raises(WriteRefusedError) as info:
        _publish(out_dir / "out.jsonl", b"data\n")

    message = str(info.value)
    assert info.value.exit_status == 6
    assert errno.errorcode[err] in message
    assert "hard links are required" in message
    assert "never falls back to rename" in message
    assert os.listdir(out_dir) == []


def test_link_io_error_is_refused_with_its_errno(out_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def link(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "link", link)
    with pytest.raises(WriteRefusedError, match="EIO"):
        _publish(out_dir / "out.jsonl", b"data\n")
    assert os.listdir(out_dir) == []


def test_publisher_never_renames_or_replaces() -> None:
    """Static guard: rename/replace would overwrite silently (RELIABILITY point 1)."""
    for module in ("publish.py", "liveness.py"):
        tree = ast.parse((REPO / "sesstool" / "store" / module).read_text(encoding="utf-8"))
        names = {
            node.attr if isinstance(node, ast.Attribute) else node.id
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute | ast.Name)
        }
        assert not names & {"rename", "renames", "replace", "move", "copyfile"}, module


_WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_APPEND", "O_TRUNC", "O_CREAT"}


def _writes_in(tree: ast.AST) -> Iterator[int]:
    """Line numbers of calls that open or write a file for writing."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in ("write_text", "write_bytes", "touch", "mkstemp", "NamedTemporaryFile"):
            yield node.lineno
        # fsspec / object-store writes: create, put, remove
        if name in ("pipe", "pipe_file", "put_file", "rm_file", "cp_file", "put_object", "delete_object",
                    "upload_file", "upload_fileobj"):  # fmt: skip
            yield node.lineno
        if name not in ("open", "fdopen"):
            continue
        owner = func.value if isinstance(func, ast.Attribute) else None
        if node.args and ast.unparse(node.args[0]) == "os.devnull":
            continue  # the null device (e.g. silencing stdout after EPIPE) writes no file
        if isinstance(owner, ast.Name) and owner.id == "os" and name == "open":
            flag_names = {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
            if flag_names & _WRITE_FLAGS:
                yield node.lineno
            continue
        # builtin open(path, mode) / os.fdopen(fd, mode) vs Path.open(mode)
        # fs.open(url, mode) (fsspec) takes the mode second, like the builtin
        modes = node.args[1:2] if owner is None or name == "fdopen" else node.args[0:2]
        modes += [k.value for k in node.keywords if k.arg == "mode"]
        for arg in modes:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and set(arg.value) & set("wax+"):
                yield node.lineno


def test_publish_is_the_only_module_that_opens_files_for_writing() -> None:
    """DESIGN §4 / STYLE 7: one writer. liveness may create session.lock (read-only open); the
    object-store publisher is the one other writer (docs/fleet.md)."""
    offenders: list[str] = []
    for path in sorted((REPO / "sesstool").rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        if rel in (
            "sesstool/store/publish.py",
            "sesstool/store/liveness.py",
            "sesstool/store/object_publish.py",
        ):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        offenders += [f"{rel}:{line}" for line in _writes_in(tree)]
    assert offenders == []


# --- directories that refuse writes (item 30) -------------------------------------------------


@pytest.fixture
def unwritable_dir(tmp_path: Path) -> Iterator[Path]:
    d = tmp_path / "readonly"
    d.mkdir()
    if os.geteuid() != 0:
        d.chmod(0o500)
        try:
            yield d
        finally:
            d.chmod(0o700)
        return
    # Root ignores permission bits; the immutable attribute stops root too.
    chattr = shutil.which("chattr")
    if chattr is None:
        pytest.skip("running as root (mode 0o500 does not stop root) and no chattr(1) for +i")
    done = subprocess.run([chattr, "+i", str(d)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(
            "running as root (mode 0o500 does not stop root) and `chattr +i` failed "
            f"(needs CAP_LINUX_IMMUTABLE and ext2/3/4, xfs or btrfs): {done.stderr.strip()}"
        )
    try:
        yield d
    finally:
        subprocess.run([chattr, "-i", str(d)], check=True)


def test_unwritable_directory_is_refused_before_any_temp(unwritable_dir: Path) -> None:
    with pytest.raises(OSError):  # sanity: this directory really refuses new files
        (unwritable_dir / "probe").write_bytes(b"")
    produced: list[int] = []

    def produce(sink: Sink) -> None:
        produced.append(1)

    with pytest.raises(WriteRefusedError, match="not writable") as info:
        publish(unwritable_dir / "out.jsonl", produce, verify=_expecting(b""))

    assert info.value.exit_status == 6
    assert produced == []
    assert os.listdir(unwritable_dir) == []


@pytest.mark.parametrize("err", [errno.EACCES, errno.EROFS, errno.EDQUOT, errno.ENOSPC])
def test_temp_creation_errors_are_refused_with_errno_and_path(
    out_dir: Path, monkeypatch: pytest.MonkeyPatch, err: int
) -> None:
    real = os.open

    def fake_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & os.O_CREAT:
            raise OSError(err, os.strerror(err))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", fake_open)
    with pytest.raises(WriteRefusedError) as info:
        _publish(out_dir / "out.jsonl", b"data\n")

    assert errno.errorcode[err] in str(info.value)
    assert str(out_dir / ".out.jsonl.") in str(info.value)
    assert os.listdir(out_dir) == []


def test_eacces_on_a_parent_is_a_clean_refusal(out_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Simulated: as root, a 0o000 parent would not stop us.
    def lstat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))

    monkeypatch.setattr(os, "lstat", lstat)
    with pytest.raises(WriteRefusedError, match="EACCES"):
        _publish(out_dir / "deeper" / "out.jsonl", b"data\n")
    monkeypatch.undo()
    assert os.listdir(out_dir) == []


def test_missing_or_non_directory_parent_is_refused(tmp_path: Path) -> None:
    with pytest.raises(WriteRefusedError, match="does not exist"):
        _publish(tmp_path / "missing" / "out.jsonl", b"x")
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(WriteRefusedError, match="not a directory"):
        _publish(tmp_path / "file" / "out.jsonl", b"x")
    assert sorted(os.listdir(tmp_path)) == ["file"]


# --- crash matrix (item 2) -----------------------------------------------------------------

CRASH_POINTS = [
    "before-first-write",
    "after-first-write",
    "before-file-fsync",
    "after-file-fsync",
    "before-link",
    "after-link",
    "before-dir-fsync",
    "after-dir-fsync",
    "before-unlink",
    "after-unlink",
    "before-last-dir-fsync",
    "after-last-dir-fsync",
]
LINKED = set(CRASH_POINTS[CRASH_POINTS.index("after-link") :])
TEMP_GONE = set(CRASH_POINTS[CRASH_POINTS.index("after-unlink") :])


def _run_helper(point: str, source: Path, target: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, str(HELPER), point, str(source), str(target)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )


def test_crash_points_match_the_helper() -> None:
    text = HELPER.read_text(encoding="utf-8")
    assert all(f'"{p}"' in text for p in CRASH_POINTS)


@pytest.mark.parametrize("point", CRASH_POINTS)
def test_crash_at_every_point_leaves_nothing_or_a_complete_file(tmp_path: Path, point: str) -> None:
    session = tmp_path / "session"
    session.mkdir()
    data = _data(MIB + MIB // 2, seed=4)  # more than one buffered write
    source = session / "session.jsonl"
    source.write_bytes(data)
    source_before = FileIdentity.of_path(source)
    target = session / "session.v1.jsonl"

    crashed = _run_helper(point, source, target)
    assert crashed.returncode == 77, crashed.stderr

    # Either no final name, or a complete one — never a partial file under the final name.
    if point in LINKED:
        assert target.read_bytes() == data
    else:
        assert not os.path.lexists(target)
    assert source.read_bytes() == data
    assert FileIdentity.of_path(source) == source_before

    debris = _temps(session)
    assert len(debris) == (0 if point in TEMP_GONE else 1)
    debris_bytes = {}
    for name in debris:
        assert TEMP_RE.match(name) and name.startswith(".session.v1.jsonl.")
        assert name != target.name and not name.endswith((".jsonl", ".zstd"))
        content = (session / name).read_bytes()
        assert data.startswith(content)  # partial at worst, never foreign bytes
        debris_bytes[name] = content

    rerun = _run_helper("none", source, target)
    # after a crash past link the target holds exactly these bytes: the rerun finds it identical
    # and succeeds without linking anything (issue 15 item 12); otherwise it publishes
    assert rerun.returncode == 0, rerun.stderr
    assert rerun.stdout.strip() == hashlib.sha256(data).hexdigest()
    assert target.read_bytes() == data
    assert source.read_bytes() == data
    # The rerun cleaned up after itself and did not touch the debris of the crashed run.
    assert _temps(session) == debris
    assert {n: (session / n).read_bytes() for n in debris} == debris_bytes
    assert sorted(os.listdir(session)) == sorted([source.name, target.name, *debris])


def test_module_calls_os_through_the_module() -> None:
    """Fault injection patches ``os.<fn>``; a ``from os import`` would bypass it."""
    tree = ast.parse(Path(publish_module.__file__).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert node.module != "os"


# --- the exact system-call sequence (issue 12: mutants that dropped a close or an fsync lived) --


def _trace(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record the publisher's open/fchmod/write/fsync/link/unlink/close calls, naming each
    descriptor by what it was opened as (dir, tmp, anchor); consecutive writes count as one."""
    log: list[str] = []
    names: dict[int, str] = {}
    real_open, real_close = os.open, os.close

    def open_(path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        fd = real_open(path, flags, mode, dir_fd=dir_fd)
        names[fd] = "dir" if flags & os.O_DIRECTORY else ("tmp" if flags & os.O_CREAT else "anchor")
        log.append(f"open:{names[fd]}")
        return fd

    def close(fd: int) -> None:
        log.append(f"close:{names.pop(fd, '?')}")
        real_close(fd)

    def wrap(name: str, label: Callable[..., str]) -> None:
        real = getattr(os, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            entry = label(*args)
            if not (name == "write" and log and log[-1] == entry):
                log.append(entry)
            return real(*args, **kwargs)

        monkeypatch.setattr(os, name, call)

    monkeypatch.setattr(os, "open", open_)
    monkeypatch.setattr(os, "close", close)
    wrap("fchmod", lambda fd, mode: f"fchmod:{names.get(fd)}:{mode:o}")
    wrap("write", lambda fd, data: f"write:{names.get(fd)}")
    wrap("fsync", lambda fd: f"fsync:{names.get(fd)}")
    wrap("link", lambda *a: "link")
    wrap("unlink", lambda *a: "unlink")
    return log


STAGED = ["open:dir", "open:tmp", "fchmod:tmp:640", "write:tmp", "fsync:tmp", "open:anchor", "close:tmp"]


def test_the_system_calls_of_a_publication_in_order(out_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _data(MIB // 2)
    log = _trace(monkeypatch)
    target = out_dir / "out.jsonl"

    def verify(path: Path) -> None:
        log.append("verify")
        assert path.read_bytes() == data

    publish(target, _producer(data), verify=verify, mode=0o640)
    assert log == [*STAGED, "verify", "link", "fsync:dir", "unlink", "fsync:dir", "close:anchor", "close:dir"]


def test_a_refused_publication_closes_everything_it_opened(
    out_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def verify(path: Path) -> None:
        raise InputError("no")

    log = _trace(monkeypatch)
    with pytest.raises(WriteRefusedError):
        publish(out_dir / "out.jsonl", _producer(b"x\n"), verify=verify, mode=0o640)
    assert log == [*STAGED, "unlink", "close:anchor", "close:dir"]
    assert os.listdir(out_dir) == []

    log.clear()  # link finds the name taken (a writer raced us): EEXIST

    def produce(sink: Sink) -> None:
        sink.write(b"x\n")

    def link(*args: Any, **kwargs: Any) -> None:
        raise FileExistsError(errno.EEXIST, "exists")

    monkeypatch.setattr(os, "link", link)
    with pytest.raises(WriteRefusedError, match="does not hold what this run wrote"):
        publish(out_dir / "late", produce, verify=lambda p: None, mode=0o640)
    assert log == [*STAGED, "unlink", "close:anchor", "close:dir"]
    assert os.listdir(out_dir) == []


def test_a_producer_error_closes_the_temp_before_removing_it(
    out_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def produce(sink: Sink) -> None:
        sink.write(b"x")
        raise KeyError("producer")

    log = _trace(monkeypatch)
    with pytest.raises(KeyError):
        publish(out_dir / "out.jsonl", produce, verify=lambda p: None, mode=0o640)
    assert log == ["open:dir", "open:tmp", "fchmod:tmp:640", "close:tmp", "unlink", "close:dir"]


def test_small_writes_are_batched_per_mebibyte(out_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _data(2 * MIB + MIB // 2, seed=9)
    sizes: list[int] = []
    real = os.write

    def write(fd: int, buf: Any) -> int:
        sizes.append(len(buf))
        return real(fd, buf)

    monkeypatch.setattr(os, "write", write)
    _publish(out_dir / "out.jsonl", data)  # 64 KiB pieces
    assert sizes == [MIB, MIB, MIB // 2]


def test_a_target_that_already_holds_these_bytes_is_identical(out_dir: Path) -> None:
    """Issue 15 item 12: nothing linked, nothing replaced, the temp removed; other bytes (even one
    more, or one fewer) are still refused."""
    target = out_dir / "session.v1.jsonl"
    target.write_bytes(b"same\n" * 1000)
    before = FileIdentity.of_path(target)
    published = publish(target, _producer(b"same\n" * 1000), verify=_expecting(b"same\n" * 1000))
    assert published.identical and published.size == 5000
    assert published.sha256 == hashlib.sha256(b"same\n" * 1000).hexdigest()
    assert FileIdentity.of_path(target) == before
    assert _temps(out_dir) == []
    for other in (b"same\n" * 999 + b"sane\n", b"same\n" * 1001, b"same\n" * 999):
        with pytest.raises(WriteRefusedError, match="does not hold what this run wrote"):
            publish(target, _producer(other), verify=_expecting(other))
        assert FileIdentity.of_path(target) == before and _temps(out_dir) == []


def test_a_fresh_publication_is_not_identical(out_dir: Path) -> None:
    assert not publish(out_dir / "new.jsonl", _producer(b"x\n"), verify=_expecting(b"x\n")).identical
