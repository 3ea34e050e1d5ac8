"""The publisher under faults the happy path never shows (issue 12: each test here is one that
a surviving mutant of store/publish.py passed). Names swapped under it as it works (symlinks,
foreign files), a process started with stdin closed (the descriptor numbered 0), failing system
calls in the cleanup and in ``create_directory``, and the exact words of a refusal."""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sesstool.core.errors import InputError, WriteRefusedError
from sesstool.store.publish import FileIdentity, Sink, copy_into, create_directory, publish
from tests.store._descriptor_zero import is_open
from tests.store.test_publish import _expecting, _producer

MIB = 1 << 20
DESCRIPTOR_ZERO = Path(__file__).with_name("_descriptor_zero.py")


def _the_temp(directory: Path) -> Path:
    [name] = [n for n in os.listdir(directory) if n.endswith(".tmp")]
    return directory / name


def _notes(exc: BaseException) -> list[str]:
    return list(getattr(exc, "__notes__", []))


@pytest.fixture
def out_dir(tmp_path: Path) -> Path:
    d = tmp_path / "out"
    d.mkdir()
    return d


@contextlib.contextmanager
def _umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def _modes_at_fchmod(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The mode each file or directory had when os.fchmod was about to change it."""
    seen: list[int] = []
    real = os.fchmod

    def fchmod(fd: int, mode: int) -> None:
        seen.append(stat.S_IMODE(os.fstat(fd).st_mode))
        real(fd, mode)

    monkeypatch.setattr(os, "fchmod", fchmod)
    return seen


# --- the exact words of a refusal ------------------------------------------------------------


def test_a_refusal_states_the_step_the_path_the_errno_and_its_reason(
    out_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def link(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "link", link)
    target = out_dir / "out.jsonl"
    with pytest.raises(WriteRefusedError) as info:
        publish(target, _producer(b"x\n"), verify=_expecting(b"x\n"))
    assert str(info.value) == f"link to the final name failed for {target}: EIO ({os.strerror(errno.EIO)})"


@pytest.mark.parametrize("name", ["..", ""])
def test_a_target_that_names_no_file_is_refused(out_dir: Path, name: str) -> None:
    target = out_dir / name if name else Path(".")
    assert target.name == name
    with pytest.raises(WriteRefusedError, match="target is not a file name"):
        publish(target, _producer(b"x"), verify=_expecting(b"x"))
    assert os.listdir(out_dir) == []


def test_a_file_as_the_parent_is_named_in_the_refusal(tmp_path: Path) -> None:
    parent = tmp_path / "file"
    parent.write_bytes(b"")
    with pytest.raises(WriteRefusedError) as info:
        publish(parent / "out.jsonl", _producer(b"x"), verify=_expecting(b"x"))
    assert str(info.value) == f"target directory {parent} is not a directory: {parent / 'out.jsonl'}"


def test_a_parent_that_became_a_file_after_the_target_check_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The target's lstat saw no such name (the parent was still a directory); by the parent's
    own stat it is a file."""
    parent = tmp_path / "file"
    parent.write_bytes(b"")

    def lstat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(path))

    monkeypatch.setattr(os, "lstat", lstat)
    with pytest.raises(WriteRefusedError) as info:
        publish(parent / "out.jsonl", _producer(b"x"), verify=_expecting(b"x"))
    assert str(info.value) == f"target directory is not a directory: {parent}"


def test_an_unreadable_parent_is_a_refusal_with_its_errno(
    out_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = os.stat

    def stat_(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        if Path(path) == out_dir:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat_)
    with pytest.raises(WriteRefusedError) as info:
        publish(out_dir / "out.jsonl", _producer(b"x"), verify=_expecting(b"x"))
    assert str(info.value) == (
        f"checking the target directory failed for {out_dir}: EACCES ({os.strerror(errno.EACCES)})"
    )


# --- modes -----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", [0o751, 0o644, 0o400])
def test_any_permission_bits_are_published_exactly(out_dir: Path, mode: int) -> None:
    target = out_dir / "out.jsonl"
    with _umask(0o077):
        publish(target, _producer(b"x"), verify=_expecting(b"x"), mode=mode)
    assert stat.S_IMODE(target.stat().st_mode) == mode


@pytest.mark.parametrize("mode", [0o1600, 0o2600, 0o4600, 0o10600])
def test_bits_beyond_the_permissions_are_programming_errors(out_dir: Path, mode: int) -> None:
    with pytest.raises(ValueError, match="permission bits only"):
        publish(out_dir / "out.jsonl", _producer(b"x"), verify=_expecting(b"x"), mode=mode)
    with pytest.raises(ValueError, match="permission bits only"):
        create_directory(out_dir / "d", mode)
    assert os.listdir(out_dir) == []


def test_the_temp_is_owner_only_from_its_creation_whatever_the_umask(
    out_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before the fchmod that gives it the published mode, nobody else may open the temp."""
    seen = _modes_at_fchmod(monkeypatch)
    with _umask(0):
        publish(out_dir / "out.jsonl", _producer(b"x"), verify=_expecting(b"x"), mode=0o644)
    assert seen == [0o600]
    assert stat.S_IMODE((out_dir / "out.jsonl").stat().st_mode) == 0o644


# --- the producer's writes -------------------------------------------------------------------


def _publish_pieces(out_dir: Path, monkeypatch: pytest.MonkeyPatch, pieces: list[bytes]) -> list[memoryview]:
    """Publish ``pieces`` written one by one; answers what each ``os.write`` was given (the
    buffers as they were when written: the file is checked to hold the pieces)."""
    given: list[memoryview] = []
    real = os.write

    def write(fd: int, buf: Any) -> int:
        assert isinstance(buf, memoryview)
        given.append(buf)
        return real(fd, buf)

    def produce(sink: Sink) -> None:
        for piece in pieces:
            sink.write(piece)

    monkeypatch.setattr(os, "write", write)
    data = b"".join(pieces)
    publish(out_dir / "out.jsonl", produce, verify=_expecting(data))
    assert (out_dir / "out.jsonl").read_bytes() == data
    return given


def test_a_large_piece_after_a_small_one_keeps_the_order(
    out_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A piece of a mebibyte or more is never copied into the buffer (which is one fixed block):
    what is buffered before it is written first, then the piece itself."""
    pieces = [b"head", bytes(range(256)) * (2 * MIB // 256), b"mid", b"z" * (3 * MIB)]
    given = _publish_pieces(out_dir, monkeypatch, pieces)
    assert [len(buf) for buf in given] == [4, 2 * MIB, 3, 3 * MIB]


def test_a_piece_that_fills_the_block_exactly_is_written_with_it(
    out_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pieces that fill the block to its last byte stay together: the block is written whole
    when the next piece does not fit, not before the piece that fills it."""
    given = _publish_pieces(out_dir, monkeypatch, [b"a" * (MIB - 10), b"b" * 10, b"c" * 5])
    assert [len(buf) for buf in given] == [MIB, 5]


def test_small_pieces_fill_one_block_that_is_never_remade(
    out_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lines of every length up to a few KiB, 5.5 MiB of them: each write is a full mebibyte
    (a piece that would not fit goes to the next one) out of the same block, and only the last
    is short. (A buffer grown by appends and replaced at each flush left holes in the C heap:
    a long write's peak RSS crept up with its length.)"""
    pieces = [bytes([65 + i % 26]) * (1 + (i * 7919) % 4096) for i in range(2800)]
    given = _publish_pieces(out_dir, monkeypatch, pieces)
    total = sum(map(len, pieces))
    assert len({id(buf.obj) for buf in given}) == 1 and len(given) == total // MIB + 1
    cuts = list(itertools.accumulate(len(buf) for buf in given))[:-1]  # where each full write ended
    ends = list(itertools.accumulate(len(p) for p in pieces))
    for start, cut in zip([0, *cuts[:-1]], cuts, strict=True):
        i = ends.index(cut)  # at the end of a piece ...
        assert cut - start <= MIB < cut - start + len(pieces[i + 1])  # ... the next did not fit


def test_after_a_swallowed_write_error_every_write_and_copy_fails_without_a_system_call(
    tmp_path: Path, out_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "src"
    source.write_bytes(b"s" * 100)
    calls: list[int] = []

    def write(fd: int, buf: Any) -> int:
        calls.append(len(buf))
        raise OSError(errno.EDQUOT, os.strerror(errno.EDQUOT))

    monkeypatch.setattr(os, "write", write)
    raised: list[BaseException] = []

    def produce(sink: Sink) -> None:
        attempts: list[Callable[[], None]] = [
            lambda: sink.write(b"x" * (2 * MIB)),
            lambda: sink.write(b"y"),
            lambda: copy_into(sink, source, 0, 100),
        ]
        for attempt in attempts:
            try:
                attempt()
            except WriteRefusedError as exc:  # a careless producer swallows each one
                raised.append(exc)

    with pytest.raises(WriteRefusedError, match="EDQUOT"):
        publish(out_dir / "o", produce, verify=_expecting(b""))
    assert calls == [2 * MIB]
    assert len(raised) == 3 and raised[1] is raised[0] and raised[2] is raised[0]
    assert os.listdir(out_dir) == []


# --- the source -----------------------------------------------------------------------------


@pytest.mark.parametrize("identity_given", [True, False])
def test_a_source_named_by_a_symlink_is_watched_through_it(
    tmp_path: Path, out_dir: Path, identity_given: bool
) -> None:
    real = tmp_path / "session.jsonl"
    real.write_bytes(b'{"seq":1}\n')
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    before = FileIdentity.of_path(link) if identity_given else None
    assert FileIdentity.of_path(link) == FileIdentity.of_path(real)

    def produce(sink: Sink) -> None:
        sink.write(link.read_bytes())
        with real.open("ab") as f:
            f.write(b"appended by a live writer\n")

    with pytest.raises(WriteRefusedError, match="source changed while it was read"):
        publish(
            out_dir / "out.jsonl",
            produce,
            verify=_expecting(b'{"seq":1}\n'),
            source=link,
            source_identity=before,
        )
    assert os.listdir(out_dir) == []


# --- names swapped under the publisher -------------------------------------------------------


def test_a_temp_replaced_by_a_symlink_while_written_is_never_followed(tmp_path: Path, out_dir: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(b"x\n")
    swapped: list[Path] = []

    def produce(sink: Sink) -> None:
        sink.write(b"x\n")
        temp = _the_temp(out_dir)
        temp.unlink()
        temp.symlink_to(elsewhere)
        swapped.append(temp)

    with pytest.raises(WriteRefusedError) as info:
        publish(out_dir / "out.jsonl", produce, verify=_expecting(b"x\n"))
    [temp] = swapped
    assert str(info.value).startswith(f"reopening the temporary file failed for {temp}: ELOOP")
    assert _notes(info.value) == [f"left {temp} in place: it is not the file this run created"]
    assert os.readlink(temp) == str(elsewhere) and sorted(os.listdir(out_dir)) == [temp.name]


def test_a_temp_replaced_by_a_file_while_written_is_refused_and_left(out_dir: Path) -> None:
    swapped: list[Path] = []

    def produce(sink: Sink) -> None:
        sink.write(b"x\n")
        temp = _the_temp(out_dir)
        temp.unlink()
        temp.write_bytes(b"x\n")  # the same bytes, another file
        swapped.append(temp)

    with pytest.raises(WriteRefusedError) as info:
        publish(out_dir / "out.jsonl", produce, verify=_expecting(b"x\n"))
    [temp] = swapped
    assert str(info.value) == f"temporary file {temp} was replaced while written"
    assert _notes(info.value) == [f"left {temp} in place: it is not the file this run created"]
    assert sorted(os.listdir(out_dir)) == [temp.name]


def test_a_temp_replaced_during_verification_by_a_symlink_to_its_own_bytes(
    tmp_path: Path, out_dir: Path
) -> None:
    """The symlink leads to the very inode that was written: it is still not the temp, so the
    publication is refused and the symlink (not followed) is left where it is."""
    keep = tmp_path / "keep"
    swapped: list[Path] = []

    def verify(path: Path) -> None:
        os.link(path, keep)
        path.unlink()
        path.symlink_to(keep)
        swapped.append(path)

    target = out_dir / "out.jsonl"
    with pytest.raises(WriteRefusedError, match="modified or replaced before publication") as info:
        publish(target, _producer(b"x\n"), verify=verify)
    [temp] = swapped
    assert not os.path.lexists(target)
    assert _notes(info.value) == [f"left {temp} in place: it is not the file this run created"]
    assert os.readlink(temp) == str(keep) and keep.read_bytes() == b"x\n"


@pytest.mark.parametrize("replacement", ["foreign file", "symlink to our bytes"])
def test_a_temp_replaced_just_before_link_is_never_published(
    tmp_path: Path, out_dir: Path, monkeypatch: pytest.MonkeyPatch, replacement: str
) -> None:
    keep = tmp_path / "keep"
    real_link = os.link
    target = out_dir / "out.jsonl"

    def link(src: Any, dst: Any, **kwargs: Any) -> None:
        temp = out_dir / src
        if replacement == "foreign file":
            temp.unlink()
            temp.write_bytes(b"x\n")
        else:
            real_link(temp, keep)
            temp.unlink()
            temp.symlink_to(keep)
        real_link(src, dst, **kwargs)

    monkeypatch.setattr(os, "link", link)
    with pytest.raises(WriteRefusedError) as info:
        publish(target, _producer(b"x\n"), verify=_expecting(b"x\n"))
    assert str(info.value) == (
        f"{target} does not hold the verified file: the temporary name was replaced just before link"
    )
    temp = _the_temp(out_dir)
    # what link made of the replacement is not ours either: both names stay, each noted
    assert _notes(info.value) == [
        f"left {target} in place: it is not the file this run created",
        f"left {temp} in place: it is not the file this run created",
    ]
    assert os.path.islink(target) == (replacement != "foreign file")
    assert os.lstat(target).st_ino == os.lstat(temp).st_ino


def test_a_temp_name_that_reappears_after_its_removal_is_not_ours_to_mention(
    out_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last directory fsync fails after the temp was removed: the final name is taken back;
    a file that meanwhile took the temp's name is another's, and cleanup does not look at it."""
    removed: list[str] = []
    real_unlink, real_fsync = os.unlink, os.fsync

    def unlink(name: Any, *args: Any, **kwargs: Any) -> None:
        removed.append(str(name))
        real_unlink(name, *args, **kwargs)

    def fsync(fd: int) -> None:
        if removed and stat.S_ISDIR(os.fstat(fd).st_mode):
            (out_dir / removed[0]).write_bytes(b"another run's bytes")
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real_fsync(fd)

    monkeypatch.setattr(os, "unlink", unlink)
    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(WriteRefusedError, match="fsync of the directory after removing the temp") as info:
        publish(out_dir / "out.jsonl", _producer(b"x\n"), verify=_expecting(b"x\n"))
    assert _notes(info.value) == []
    assert os.listdir(out_dir) == [removed[0]]
    assert (out_dir / removed[0]).read_bytes() == b"another run's bytes"


def test_a_refusal_before_anything_was_created_touches_and_mentions_no_name(
    out_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The temp's name was taken (O_EXCL) and the target appeared meanwhile: neither is ours."""
    monkeypatch.setattr("secrets.token_hex", lambda nbytes=None: "0123456789ab")
    planted = out_dir / ".out.jsonl.0123456789ab.tmp"
    planted.write_bytes(b"someone's temp")
    with pytest.raises(WriteRefusedError, match="already exists and was not created by this run") as info:
        publish(out_dir / "out.jsonl", _producer(b"x\n"), verify=_expecting(b"x\n"))
    assert _notes(info.value) == []
    assert planted.read_bytes() == b"someone's temp"
    monkeypatch.undo()

    target = out_dir / "late.jsonl"

    def produce(sink: Sink) -> None:
        sink.write(b"ours\n")
        target.write_bytes(b"theirs\n")

    with pytest.raises(WriteRefusedError, match="target exists") as info:
        publish(target, produce, verify=_expecting(b"ours\n"))
    assert _notes(info.value) == []
    assert target.read_bytes() == b"theirs\n"


def test_a_temp_whose_identity_cannot_be_taken_is_left_and_noted(
    out_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """fstat of the new temp fails: without its (dev, ino) the publisher cannot prove the name
    is still its own, so it leaves it and says so."""
    real = os.fstat
    calls: list[int] = []

    def fstat(fd: int) -> os.stat_result:
        calls.append(fd)
        if len(calls) == 1:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return real(fd)

    monkeypatch.setattr(os, "fstat", fstat)
    with pytest.raises(WriteRefusedError, match="stat of the temporary file failed") as info:
        publish(out_dir / "out.jsonl", _producer(b"x\n"), verify=_expecting(b"x\n"))
    monkeypatch.undo()
    temp = _the_temp(out_dir)
    assert _notes(info.value) == [f"left {temp} in place: it is not the file this run created"]
    assert temp.read_bytes() == b""


def test_a_temp_that_cannot_be_removed_is_noted_with_its_errno(
    out_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unlink(*args: Any, **kwargs: Any) -> None:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))

    def verify(path: Path) -> None:
        raise InputError("no")

    monkeypatch.setattr(os, "unlink", unlink)
    with pytest.raises(WriteRefusedError, match="verification") as info:
        publish(out_dir / "out.jsonl", _producer(b"x\n"), verify=verify)
    temp = _the_temp(out_dir)
    assert _notes(info.value) == [f"could not remove {temp}: EACCES ({os.strerror(errno.EACCES)})"]


# --- descriptor 0 (a process started with stdin closed) -------------------------------------


def _descriptor_zero(scenario: str, out_dir: Path) -> None:
    """Run a descriptor-0 scenario of ``_descriptor_zero.py`` in a fresh interpreter, the only
    thread of its process (see that module for why), with its stdin open on /dev/null."""
    proc = subprocess.run(
        [sys.executable, str(DESCRIPTOR_ZERO), scenario, str(out_dir)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=Path(__file__).parents[2],
    )
    assert proc.returncode == 0, proc.stderr


def test_an_anchor_numbered_0_is_closed(out_dir: Path) -> None:
    _descriptor_zero("anchor", out_dir)
    assert (out_dir / "out.jsonl").read_bytes() == b"x\n"


def test_a_temp_numbered_0_is_closed_when_the_producer_fails(out_dir: Path) -> None:
    _descriptor_zero("temp-on-failure", out_dir)
    assert os.listdir(out_dir) == []


# --- create_directory -----------------------------------------------------------------------


def _left_open(monkeypatch: pytest.MonkeyPatch) -> set[int]:
    """The descriptors this thread opens with ``os.open`` and has not closed with ``os.close``
    (the process's whole fd table would also see other threads' files come and go: the fleet
    suite's servers run beside these tests)."""
    me = threading.get_ident()
    left: set[int] = set()
    real_open, real_close = os.open, os.close

    def spy_open(*args: Any, **kwargs: Any) -> int:
        fd = real_open(*args, **kwargs)
        if threading.get_ident() == me:
            left.add(fd)
        return fd

    def spy_close(fd: int) -> None:
        real_close(fd)
        if threading.get_ident() == me:
            left.discard(fd)

    monkeypatch.setattr(os, "open", spy_open)
    monkeypatch.setattr(os, "close", spy_close)
    return left


@pytest.mark.parametrize("mode", [0o755, 0o750, 0o500])
def test_a_new_directory_is_never_wider_than_asked_nor_than_0700_while_set_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: int
) -> None:
    seen = _modes_at_fchmod(monkeypatch)
    left = _left_open(monkeypatch)
    with _umask(0):
        create_directory(tmp_path / "d", mode)
    assert seen == [0o700 & mode]
    assert stat.S_IMODE((tmp_path / "d").stat().st_mode) == mode
    assert left == set()  # the directory and its parent were closed again


@pytest.mark.parametrize("step", ["fchmod", "fsync"])
def test_a_new_directory_is_removed_when_its_set_up_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    def fail(*args: Any) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, step, fail)
    left = _left_open(monkeypatch)
    what = "setting the mode of the new directory" if step == "fchmod" else "fsync of the parent directory"
    with pytest.raises(WriteRefusedError, match=what):
        create_directory(tmp_path / "d", 0o750)
    assert os.listdir(tmp_path) == []
    assert left == set()


@pytest.mark.parametrize("replacement", ["symlink", "file"])
def test_a_new_directory_swapped_before_its_mode_is_set_changes_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, replacement: str
) -> None:
    """Between mkdir and the open that sets its mode, the new name is replaced: neither a
    symlink's target nor a file gets the mode."""
    victim = tmp_path / "victim"
    if replacement == "symlink":
        victim.mkdir(mode=0o711)
    else:
        victim.write_bytes(b"")
    victim.chmod(0o711)
    real_mkdir = os.mkdir

    def mkdir(path: Any, mode: int = 0o777) -> None:
        real_mkdir(path, mode)
        os.rmdir(path)
        if replacement == "symlink":
            os.symlink(victim, path)
        else:
            os.link(victim, path)

    monkeypatch.setattr(os, "mkdir", mkdir)
    with pytest.raises(WriteRefusedError, match="setting the mode of the new directory"):
        create_directory(tmp_path / "d", 0o750)
    assert stat.S_IMODE(victim.stat().st_mode) == 0o711


# --- the descriptors the caller owns -----------------------------------------------------------


def _fail_creating_the_temp(monkeypatch: pytest.MonkeyPatch, err: int = errno.EDQUOT) -> None:
    real = os.open

    def open_(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & os.O_CREAT:
            raise OSError(err, os.strerror(err))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_)


def _fail_verifying(path: Path) -> None:
    raise InputError("no")


@pytest.mark.parametrize("step", ["creating the temp", "producing", "verifying", "closing the temp"])
def test_a_refused_publication_never_closes_a_descriptor_it_did_not_open(
    out_dir: Path, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    """Descriptor 0 (stdin) stays open and the same file whatever step fails."""
    stdin = os.fstat(0)
    verify: Callable[[Path], None] = lambda path: None  # noqa: E731
    produce = _producer(b"x\n")
    if step == "creating the temp":
        _fail_creating_the_temp(monkeypatch)
    elif step == "producing":

        def produce(sink: Sink) -> None:
            raise InputError("the source is corrupt")

    elif step == "verifying":
        verify = _fail_verifying
    else:  # a late write error surfaces at close
        real_close, real_open = os.close, os.open
        temps: list[int] = []

        def open_(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            fd = real_open(path, flags, *args, **kwargs)
            if flags & os.O_CREAT:
                temps.append(fd)
            return fd

        def close(fd: int) -> None:
            real_close(fd)
            if temps and fd == temps[0]:
                raise OSError(errno.EIO, os.strerror(errno.EIO))

        monkeypatch.setattr(os, "open", open_)
        monkeypatch.setattr(os, "close", close)
    with pytest.raises((WriteRefusedError, InputError)):
        publish(out_dir / "out.jsonl", produce, verify=verify)
    monkeypatch.undo()
    assert is_open(0)
    assert (os.fstat(0).st_dev, os.fstat(0).st_ino) == (stdin.st_dev, stdin.st_ino)
    assert os.listdir(out_dir) == []


@pytest.mark.parametrize(
    ("err", "unwritable"),
    [
        (errno.EACCES, True),
        (errno.EPERM, True),
        (errno.EROFS, True),
        (errno.EDQUOT, False),
        (errno.ENOSPC, False),
    ],
)
def test_a_directory_that_takes_no_new_file_is_named_for_o(
    out_dir: Path, monkeypatch: pytest.MonkeyPatch, err: int, unwritable: bool
) -> None:
    """Permissions or a read-only file system: the refusal names the directory, so that the
    command line can suggest writing elsewhere with -o; a full disk is not that."""
    _fail_creating_the_temp(monkeypatch, err)
    with pytest.raises(WriteRefusedError) as info:
        publish(out_dir / "out.jsonl", _producer(b"x"), verify=_expecting(b"x"))
    assert info.value.unwritable_directory == (str(out_dir) if unwritable else None)


def test_a_directory_access_calls_unwritable_is_refused_before_any_temp(
    out_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """access(2) is asked for write and search permission (as root a mode 0500 directory would
    not refuse: the answer is simulated)."""
    asked: list[int] = []

    def access(path: Any, mode: int, **kwargs: Any) -> bool:
        asked.append(mode)
        return not mode & os.W_OK

    produced: list[int] = []

    def produce(sink: Sink) -> None:
        produced.append(1)

    monkeypatch.setattr(os, "access", access)
    with pytest.raises(WriteRefusedError, match="not writable") as info:
        publish(out_dir / "out.jsonl", produce, verify=_expecting(b""))
    assert info.value.unwritable_directory == str(out_dir)
    assert produced == [] and os.listdir(out_dir) == []
    monkeypatch.setattr(os, "access", lambda path, mode, **kwargs: mode & os.W_OK and mode & os.X_OK)
    publish(out_dir / "out.jsonl", _producer(b"x"), verify=_expecting(b"x"))  # both granted: published
    assert (out_dir / "out.jsonl").read_bytes() == b"x"


def test_a_parent_swapped_for_a_file_after_the_checks_is_refused_when_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent = tmp_path / "out"
    parent.mkdir()
    real = os.access

    def access(path: Any, mode: int, **kwargs: Any) -> bool:
        granted = real(path, mode, **kwargs)
        os.rmdir(parent)  # the last check passed; now the parent is a file
        parent.write_bytes(b"")
        return granted

    monkeypatch.setattr(os, "access", access)
    with pytest.raises(WriteRefusedError) as info:
        publish(parent / "out.jsonl", _producer(b"x"), verify=_expecting(b"x"))
    assert str(info.value) == (
        f"opening the target directory failed for {parent}: ENOTDIR ({os.strerror(errno.ENOTDIR)})"
    )


def test_an_oserror_without_an_errno_is_named_by_its_type(
    out_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def link(*args: Any, **kwargs: Any) -> None:
        raise OSError("the file system said no")

    monkeypatch.setattr(os, "link", link)
    target = out_dir / "out.jsonl"
    with pytest.raises(WriteRefusedError) as info:
        publish(target, _producer(b"x"), verify=_expecting(b"x"))
    assert str(info.value) == f"link to the final name failed for {target}: OSError (the file system said no)"


# --- the default mode -----------------------------------------------------------------------


def test_without_a_mode_the_output_is_owner_only_or_follows_the_source(tmp_path: Path, out_dir: Path) -> None:
    source = tmp_path / "session.jsonl"
    source.write_bytes(b"x")
    source.chmod(0o644)
    with _umask(0):
        publish(out_dir / "alone.jsonl", _producer(b"x"), verify=_expecting(b"x"))
        publish(out_dir / "copy.jsonl", _producer(b"x"), verify=_expecting(b"x"), source=source)
    assert stat.S_IMODE((out_dir / "alone.jsonl").stat().st_mode) == 0o600
    assert stat.S_IMODE((out_dir / "copy.jsonl").stat().st_mode) == 0o644


# --- a target that holds these bytes already (a re-run) ---------------------------------------


def _rerun(target: Path, data: bytes) -> bool:
    return publish(target, _producer(data), verify=_expecting(data)).identical


def test_identical_means_every_byte_from_the_first_to_the_last(out_dir: Path) -> None:
    data = bytes(range(256)) * (5 * MIB // 2 // 256)  # more than two comparison chunks
    target = out_dir / "session.v1.jsonl"
    target.write_bytes(data)
    descriptors = sorted(os.listdir("/proc/self/fd"))
    assert _rerun(target, data)
    for other in (b"\xff" + data[1:], data[:-1] + b"\x00", data[: MIB + 7] + b"\xff" + data[MIB + 8 :]):
        with pytest.raises(WriteRefusedError, match="does not hold what this run wrote"):
            _rerun(target, other)
    assert target.read_bytes() == data and os.listdir(out_dir) == [target.name]
    # the comparison closes what it opened, same bytes or not: a rerun leaks no descriptor
    assert sorted(os.listdir("/proc/self/fd")) == descriptors


def test_a_target_that_cannot_be_read_back_is_not_identical(
    out_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = out_dir / "session.v1.jsonl"
    target.write_bytes(b"same\n")

    def pread(*args: Any) -> bytes:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "pread", pread)
    with pytest.raises(WriteRefusedError, match="does not hold what this run wrote"):
        _rerun(target, b"same\n")
    monkeypatch.undo()
    assert target.read_bytes() == b"same\n" and os.listdir(out_dir) == [target.name]


@pytest.mark.parametrize("kind", ["symlink", "fifo", "device"])
def test_a_name_that_appears_as_no_regular_file_is_never_identical(
    tmp_path: Path, out_dir: Path, kind: str
) -> None:
    """The final name appears while the (empty) output is written: a symlink to the same bytes, a
    FIFO (which must not hang the comparison) or a device node that reads as nothing."""
    target = out_dir / "session.v1.jsonl"
    same = tmp_path / "same"
    same.write_bytes(b"")

    def produce(sink: Sink) -> None:
        if kind == "symlink":
            target.symlink_to(same)
        elif kind == "fifo":
            os.mkfifo(target)
        else:
            try:
                os.mknod(target, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # like /dev/null
            except PermissionError:
                pytest.skip("mknod(2) needs CAP_MKNOD")

    def alarm(signum: int, frame: Any) -> None:
        raise AssertionError("the comparison hung on the final name")  # not an OSError

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(20)
    try:
        with pytest.raises(WriteRefusedError, match="does not hold what this run wrote"):
            publish(target, produce, verify=_expecting(b""))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert not stat.S_ISREG(os.lstat(target).st_mode)
    assert os.listdir(out_dir) == [target.name]


# --- copy_into ------------------------------------------------------------------------------


class _Pieces:
    """A sink that is not the publisher's own: copy_into reads and writes for it."""

    def __init__(self) -> None:
        self.pieces: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.pieces.append(data)


def _source_file(tmp_path: Path, size: int) -> Path:
    path = tmp_path / "src.bin"
    path.write_bytes(bytes(range(251)) * (size // 251) + b"t" * (size % 251))
    return path


def test_copy_into_another_sink_reads_one_mebibyte_at_a_time(tmp_path: Path) -> None:
    source = _source_file(tmp_path, 3 * MIB + 100)
    sink = _Pieces()
    copy_into(sink, source, 3, 3 * MIB + 98)
    assert [len(p) for p in sink.pieces] == [MIB, MIB, MIB, 95]
    assert b"".join(sink.pieces) == source.read_bytes()[3 : 3 * MIB + 98]


@pytest.mark.skipif(not hasattr(os, "copy_file_range"), reason="no os.copy_file_range here")
def test_the_kernel_copy_asks_for_one_mebibyte_at_a_time(
    tmp_path: Path, out_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _source_file(tmp_path, 3 * MIB + 100)
    asked: list[int] = []
    real = os.copy_file_range

    def copy(src: int, dst: int, count: int, offset_src: int | None = None) -> int:
        asked.append(count)
        return real(src, dst, count, offset_src)

    monkeypatch.setattr(os, "copy_file_range", copy)
    published = publish(
        out_dir / "out", lambda sink: copy_into(sink, source, 0, 3 * MIB + 100), verify=lambda path: None
    )
    assert asked == [MIB, MIB, MIB, 100]
    assert published.path.read_bytes() == source.read_bytes()


@pytest.mark.skipif(not hasattr(os, "copy_file_range"), reason="no os.copy_file_range here")
@pytest.mark.parametrize("behaviour", ["half of what is asked", "nothing (the source shrank)"])
def test_short_kernel_copies_still_give_the_exact_bytes(
    tmp_path: Path, out_dir: Path, monkeypatch: pytest.MonkeyPatch, behaviour: str
) -> None:
    source = _source_file(tmp_path, 2 * MIB + 333)
    real = os.copy_file_range
    calls: list[tuple[int | None, int]] = []  # (source offset asked, bytes the kernel copied)

    def copy(src: int, dst: int, count: int, offset_src: int | None = None) -> int:
        if behaviour.startswith("nothing"):
            calls.append((offset_src, 0))
            return 0
        copied = real(src, dst, max(1, count // 2), offset_src)
        calls.append((offset_src, copied))
        return copied

    monkeypatch.setattr(os, "copy_file_range", copy)

    def produce(sink: Sink) -> None:
        sink.write(b"head:")
        copy_into(sink, source, 7, 2 * MIB + 300)
        sink.write(b":tail")

    published = publish(out_dir / "out", produce, verify=lambda path: None)
    expected = b"head:" + source.read_bytes()[7 : 2 * MIB + 300] + b":tail"
    assert published.path.read_bytes() == expected
    assert published.size == len(expected)
    if behaviour.startswith("half"):
        # the kernel carries every byte: each call asks from where the copies so far ended
        assert sum(n for _, n in calls) == 2 * MIB + 293
        ends = [7, *[offset + n for offset, n in calls if offset is not None][:-1]]
        assert [offset for offset, _ in calls] == ends
    else:  # one call per chunk finds nothing, then that chunk is written from what was read
        assert calls == [(7, 0), (7 + MIB, 0), (7 + 2 * MIB, 0)]


@pytest.mark.skipif(not hasattr(os, "copy_file_range"), reason="no os.copy_file_range here")
def test_a_kernel_copy_error_that_is_not_a_refusal_fails_the_publication(
    tmp_path: Path, out_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _source_file(tmp_path, 1000)

    def copy(*args: Any) -> int:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "copy_file_range", copy)
    with pytest.raises(WriteRefusedError) as info:
        publish(out_dir / "out", lambda sink: copy_into(sink, source, 0, 1000), verify=lambda path: None)
    temp = str(info.value).split(" failed for ")[1].split(":")[0]
    assert (
        str(info.value) == f"copy into the temporary file failed for {temp}: EIO ({os.strerror(errno.EIO)})"
    )
    assert os.listdir(out_dir) == []


@pytest.mark.skipif(not hasattr(os, "copy_file_range"), reason="no os.copy_file_range here")
def test_a_kernel_copy_error_is_raised_by_copy_into_itself(
    tmp_path: Path, out_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The producer learns of the failure where it happens, not only at the end."""
    source = _source_file(tmp_path, 3 * MIB)

    def copy(*args: Any) -> int:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "copy_file_range", copy)
    raised: list[str] = []

    def produce(sink: Sink) -> None:
        with pytest.raises(WriteRefusedError, match="copy into the temporary file") as info:
            copy_into(sink, source, 0, 3 * MIB)
        raised.append(str(info.value))

    with pytest.raises(WriteRefusedError, match="copy into the temporary file"):
        publish(out_dir / "out", produce, verify=lambda path: None)
    assert len(raised) == 1 and os.listdir(out_dir) == []


@pytest.mark.skipif(not hasattr(os, "copy_file_range"), reason="no os.copy_file_range here")
def test_after_a_refusal_the_kernel_copy_is_not_asked_again(
    tmp_path: Path, out_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _source_file(tmp_path, 3 * MIB + 5)
    calls: list[int] = []

    def copy(*args: Any) -> int:
        calls.append(1)
        raise OSError(errno.EXDEV, os.strerror(errno.EXDEV))

    monkeypatch.setattr(os, "copy_file_range", copy)
    published = publish(
        out_dir / "out", lambda sink: copy_into(sink, source, 0, 3 * MIB + 5), verify=lambda p: None
    )
    assert calls == [1]  # four chunks: the first asks, the plain copy takes the rest
    assert published.path.read_bytes() == source.read_bytes()


def test_the_sink_refuses_a_copy_after_the_producer_returned(tmp_path: Path, out_dir: Path) -> None:
    source = _source_file(tmp_path, 100)
    kept: list[Sink] = []

    def produce(sink: Sink) -> None:
        kept.append(sink)
        copy_into(sink, source, 0, 100)

    publish(out_dir / "out", produce, verify=lambda path: None)
    with pytest.raises(RuntimeError, match="copy_range called after the producer returned"):
        copy_into(kept[0], source, 0, 100)
    assert (out_dir / "out").read_bytes() == source.read_bytes()
