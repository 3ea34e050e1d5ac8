"""The pre-commit hook (.pre-commit-hooks.yaml) and the configurations docs/ci.md documents.

pre-commit itself runs them: ``pre-commit try-repo`` and ``pre-commit run`` with each documented
``.pre-commit-config.yaml``. The hook repository is a fresh git repository holding a snapshot of
this working tree's installable files (committed or not), so the test checks the code as it is
now and never writes to this project's own git repository. pre-commit builds the hook's
virtualenv with pip: this test needs the package index (PyPI), once per run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import FIXTURES, ROOT

pytestmark = pytest.mark.slow

DSH = FIXTURES / "dsh"
HOOK_ID = "sesstool-validate"
GOOD = {
    "fixtures/good/session.v4.jsonl": DSH / "v4-tiny" / "session.v4.jsonl",
    "fixtures/good/session.v4.jsonl.zstd": DSH / "v4-tiny" / "session.v4.jsonl.zstd",
    "fixtures/README.md": DSH / "README.md",  # not a log: the hook must not be given it
    "notes.txt": DSH / "seq-gap" / "README.md",
    "elsewhere/torn/session.jsonl": DSH / "torn-tail" / "session.jsonl",  # warning only
}
BAD = {"fixtures/bad/session.jsonl": DSH / "seq-gap" / "session.jsonl"}
TORN_IN_FIXTURES = {"fixtures/torn/session.jsonl": DSH / "torn-tail" / "session.jsonl"}


def _git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_AUTHOR_NAME="sesstool tests",
        GIT_AUTHOR_EMAIL="tests@sesstool.invalid",
        GIT_COMMITTER_NAME="sesstool tests",
        GIT_COMMITTER_EMAIL="tests@sesstool.invalid",
    )
    return env


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null", *args],
        cwd=repo,
        env=_git_env(),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout


def make_repo(path: Path, files: Mapping[str, Path]) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q")
    for dest, src in files.items():
        target = path / dest
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "snapshot")
    return path


def project_files() -> dict[str, Path]:
    """What a clone of this project would hold that installing it needs: top-level files and sesstool/."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout.decode()
    names = [n for n in listed.split("\0") if n and ("/" not in n or n.startswith("sesstool/"))]
    names.append(".pre-commit-hooks.yaml")
    return {n: ROOT / n for n in sorted(set(names)) if (ROOT / n).is_file()}


@dataclass(frozen=True)
class PreCommit:
    home: Path
    hook_repo: Path
    rev: str

    def run(self, repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
        env.update(PRE_COMMIT_HOME=str(self.home), PRE_COMMIT_COLOR="never", NO_COLOR="1")
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", *args],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
        )


@pytest.fixture(scope="module")
def pre_commit(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PreCommit]:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    base = tmp_path_factory.mktemp("pre-commit")
    hook_repo = make_repo(base / "sesstool", project_files())
    rev = git(hook_repo, "rev-parse", "HEAD").strip()
    yield PreCommit(base / "home", hook_repo, rev)


def documented_configs() -> list[dict[str, Any]]:
    """Every ``.pre-commit-config.yaml`` snippet of docs/ci.md (YAML blocks with ``repos:``)."""
    text = (ROOT / "docs" / "ci.md").read_text()
    blocks = re.findall(r"^```yaml\n(.*?)^```", text, flags=re.S | re.M)
    configs = [yaml.safe_load(b) for b in blocks if b.startswith("repos:")]
    assert len(configs) == 2
    return configs


def local_config(doc: dict[str, Any], pc: PreCommit, path: Path) -> Path:
    """The documented configuration, pointed at the local snapshot instead of the published repo."""
    (repo,) = doc["repos"]
    assert repo["repo"] == "https://github.com/OWNER/sesstool"
    assert repo["rev"] == "v0.1.0"
    assert [h["id"] for h in repo["hooks"]] == [HOOK_ID]
    local = {"repos": [{**repo, "repo": str(pc.hook_repo), "rev": pc.rev}]}
    path.write_text(yaml.safe_dump(local, sort_keys=False))
    return path


def test_manifest_declares_the_hook() -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == HOOK_ID
    assert hook["language"] == "python"
    assert hook["entry"] == "sesstool validate"
    pattern = re.compile(hook["files"])
    for name in ("a/session.jsonl", "session.v4.jsonl.zstd", "x.jsonl"):
        assert pattern.search(name), name
    for name in ("session.jsonl.bak", "README.md", "x.zstd", "x.jsonl.tmp"):
        assert not pattern.search(name), name


def test_try_repo_fails_on_an_invalid_log(pre_commit: PreCommit, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "consumer", {**GOOD, **BAD})
    done = pre_commit.run(repo, "try-repo", str(pre_commit.hook_repo), HOOK_ID, "--all-files")
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "[seq-gap]" in out
    assert "fixtures/bad/session.jsonl" in out
    assert "fixtures/good/session.v4.jsonl.zstd: clean" in out
    assert "fixtures/README.md" not in out and "notes.txt" not in out  # not logs: not passed


def test_try_repo_passes_on_valid_logs(pre_commit: PreCommit, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "consumer", GOOD)
    done = pre_commit.run(repo, "try-repo", str(pre_commit.hook_repo), HOOK_ID, "--all-files")
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"sesstool validate\.+Passed", done.stdout), done.stdout


@pytest.mark.parametrize("which", [0, 1], ids=["default", "fixtures-fail-on-warning"])
def test_documented_configs(pre_commit: PreCommit, tmp_path: Path, which: int) -> None:
    doc = documented_configs()[which]
    config = local_config(doc, pre_commit, tmp_path / "config.yaml")
    hook = doc["repos"][0]["hooks"][0]
    strict = hook.get("args") == ["--fail-on", "warning"]
    assert strict == (which == 1)

    def run(name: str, files: Mapping[str, Path]) -> subprocess.CompletedProcess[str]:
        repo = make_repo(tmp_path / name, files)
        return pre_commit.run(repo, "run", "--config", str(config), "--all-files")

    bad = run("bad", {**GOOD, **BAD})
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "[seq-gap]" in bad.stdout

    good = run("good", GOOD)  # includes a torn log outside fixtures/ and non-log files
    assert good.returncode == 0, good.stdout + good.stderr

    torn = run("torn", {**GOOD, **TORN_IN_FIXTURES})
    if strict:
        assert torn.returncode == 1, torn.stdout + torn.stderr
        assert "[torn-tail]" in torn.stdout
        assert "fixtures/torn/session.jsonl" in torn.stdout
        assert "elsewhere/" not in torn.stdout  # files: ^fixtures/ ...
    else:
        assert torn.returncode == 0, torn.stdout + torn.stderr
