"""The dsh root layout (spec §2.2): session-id encoding and root-layout recognition."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sesstool.core.errors import WriteRefusedError
from sesstool.store.layout import (
    dsh_session_dir,
    encode_session_id,
    is_encoded_session_id,
)
from sesstool.store.publish import create_directory, remove_created_directory

ENCODINGS = [
    ("s-demo", "s-demo"),
    ("session-2", "session-2"),
    ("A.b_c-9", "A.b_c-9"),
    (".", "~002E"),
    ("..", "~002E~002E"),
    ("...", "..."),  # only the two special names are encoded whole
    (".hidden", ".hidden"),
    ("a/b", "a~002Fb"),
    ("../etc/passwd", "..~002Fetc~002Fpasswd"),
    ("/abs", "~002Fabs"),
    ("a\\b", "a~005Cb"),
    ("nul\0byte", "nul~0000byte"),
    ("new\nline", "new~000Aline"),
    ("tab\t", "tab~0009"),
    ("a b", "a~0020b"),
    ("~", "~007E"),  # the escape character itself is always escaped
    ("~0041", "~007E0041"),
    ("é", "~00E9"),
    ("日本", "~65E5~672C"),
    ("\U0001f600", "~D83D~DE00"),  # astral: two UTF-16 units
    ("x\U00010000y", "x~D800~DC00y"),
    ("\ud800", "~D800"),  # a lone surrogate (valid in a Node-written log)
    ("a\udfffb", "a~DFFFb"),
    ("\u202e", "~202E"),
]


@pytest.mark.parametrize(("session_id", "encoded"), ENCODINGS, ids=[repr(i) for i, _ in ENCODINGS])
def test_encode_session_id(session_id: str, encoded: str) -> None:
    assert encode_session_id(session_id) == encoded
    assert is_encoded_session_id(encoded)


@pytest.mark.parametrize("session_id", [i for i, _ in ENCODINGS])
def test_an_encoded_id_is_one_safe_path_component(session_id: str) -> None:
    name = encode_session_id(session_id)
    assert name not in ("", ".", "..")
    assert "/" not in name and "\0" not in name and "\n" not in name
    assert name.isascii()
    assert Path("root", name).parent == Path("root")


def test_empty_id_is_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        encode_session_id("")


def test_encoding_is_injective_on_tricky_pairs() -> None:
    ids = [".", "~002E", "..", "~002E~002E", "a/b", "a~002Fb", "\U0001f600", "\ud83d\ude00"]
    encoded = [encode_session_id(i) for i in ids]
    # a surrogate pair and the astral character it spells are the same UTF-16 units
    assert encoded[6] == encoded[7]
    assert len(set(encoded[:6])) == 6


@pytest.mark.parametrize(
    "name", ["", ".", "..", "a/b", "a~002f", "a~00E", "a b", "é", "~", "x~GGGGy"], ids=repr
)
def test_not_an_encoded_id(name: str) -> None:
    assert not is_encoded_session_id(name)


# -- root layout recognition -----------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/data/dsh/--home-u-proj--/s-demo/session.jsonl",
        "/data/dsh/--home-u-proj--/s-demo/session.v4.jsonl.zstd",
        "/data/dsh/_no-cwd/session-2/session.v2.jsonl",
        "/data/dsh/--root--/a~002Fb/session.v1.jsonl",
        "dsh/--p--/s1/session.jsonl",
    ],
)
def test_root_layout_is_recognised(path: str) -> None:
    found = dsh_session_dir(Path(path))
    assert found is not None
    root, project = found
    assert project == Path(path).parent.parent
    assert root == Path(path).parent.parent.parent


def test_relative_paths_keep_their_form_or_become_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = tmp_path / "--p--" / "s1"
    session.mkdir(parents=True)
    monkeypatch.chdir(session)
    found = dsh_session_dir(Path("session.jsonl"))
    assert found == (tmp_path, tmp_path / "--p--")


@pytest.mark.parametrize(
    "path",
    [
        "/data/dsh/--home-u-proj--/s-demo/child.jsonl",  # not a canonical generation
        "/data/dsh/--home-u-proj--/s-demo/session.v0.jsonl",  # .v0 is not canonical
        "/data/dsh/--home-u-proj--/s-demo/session.jsonl.tmp",
        "/data/dsh/project/s-demo/session.jsonl",  # project dir not --…--
        "/data/dsh/----/s-demo/session.jsonl",  # empty slug
        "/data/dsh/--p--/s demo/session.jsonl",  # not an encoded id
        "/data/dsh/--p--/../session.jsonl",
        "/--p--/session.jsonl",
        "/session.jsonl",
    ],
)
def test_other_paths_are_not_a_root_layout(path: str) -> None:
    assert dsh_session_dir(Path(path)) is None


# -- create_directory (the one directory writer, store/publish.py) ---------------------------


def test_create_directory_is_exclusive_with_exact_mode(tmp_path: Path) -> None:
    old = os.umask(0o077)
    try:
        create_directory(tmp_path / "a", 0o750)
    finally:
        os.umask(old)
    assert (tmp_path / "a").stat().st_mode & 0o777 == 0o750
    create_directory(tmp_path / "b")
    assert (tmp_path / "b").stat().st_mode & 0o777 == 0o700
    (tmp_path / "b" / "keep").write_bytes(b"x")
    with pytest.raises(WriteRefusedError, match="exists") as info:
        create_directory(tmp_path / "b")
    assert info.value.exit_status == 6
    assert (tmp_path / "b" / "keep").read_bytes() == b"x"


def test_create_directory_refuses_a_symlink_and_a_missing_parent(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(WriteRefusedError):
        create_directory(tmp_path / "link")
    assert not (tmp_path / "elsewhere").exists()
    with pytest.raises(WriteRefusedError, match="creating the directory"):
        create_directory(tmp_path / "no" / "such")
    with pytest.raises(ValueError):
        create_directory(tmp_path / "c", 0o4700)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("nul\x00byte", "target path contains a NUL byte"),
        ("bad\ud800name", "target path cannot be encoded for the file system"),
        ("..", "target is not a file name"),
    ],
)
def test_create_directory_refuses_a_name_no_directory_can_have(
    tmp_path: Path, name: str, message: str
) -> None:
    """The publisher's name check, before any mkdir: a refusal (exit 6), never a ValueError or a
    UnicodeEncodeError from the system call, nor ``..`` taken for an existing target."""
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(WriteRefusedError, match=f"^{message}") as info:
        create_directory(tmp_path / name)
    assert info.value.exit_status == 6
    assert sorted(os.listdir(tmp_path)) == before


def test_remove_created_directory_removes_only_an_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "f").write_bytes(b"")
    remove_created_directory(tmp_path / "empty")
    remove_created_directory(tmp_path / "full")
    remove_created_directory(tmp_path / "missing")
    assert not (tmp_path / "empty").exists()
    assert (tmp_path / "full" / "f").exists()
