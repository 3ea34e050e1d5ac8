"""A real S3 API on loopback (moto's server mode), a mixed corpus in it, and a 2-worker
LocalCluster shared by the fleet tests. Both are package fixtures: they stop when the fleet
tests end, so the scheduler's thread (which accepts the workers' connections, taking whatever
descriptor number is free) does not run beside the rest of the suite."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES

# Every fixture log, raw and zstd where the fixture has both: dsh v0–v5 and mini logs, clean,
# interrupted, torn, corrupt, unsupported and hostile ones, and the migration fixtures (v0–v4).
CORPUS_DIRS = ("dsh", "mini", "migrate")


def corpus_files() -> list[Path]:
    found = [
        p
        for d in CORPUS_DIRS
        for p in sorted((FIXTURES / d).rglob("*"))
        if p.is_file() and p.name.endswith((".jsonl", ".jsonl.zstd")) and "expected" not in p.parts
    ]
    assert len(found) > 150
    return found


# For the write commands (each file is copied, upgraded or balanced, published and read back
# twice): every dsh version, torn, torn-frame, interrupted, corrupt and newer logs, and mini
# logs, raw and zstd — the variety of the full corpus at a fraction of its runtime.
WRITE_DIRS = (
    "dsh/v0-tiny", "dsh/v1-tiny", "dsh/v2-tiny", "dsh/v3-tiny", "dsh/v4-tiny", "dsh/torn-tail",
    "dsh/torn-frame", "dsh/crash-dangling-call", "dsh/corrupt-middle", "dsh/newer-version",
    "mini/basic", "mini/torn-tail", "mini/dangling-call", "migrate/v1-to-v2/cancelled-attempt",
)  # fmt: skip


def write_corpus(dirs: tuple[str, ...] = WRITE_DIRS) -> list[Path]:
    """The logs of ``dirs``, one encoding per session directory: a fixture directory holds its
    log raw *and* zstd, and a write command refuses to publish a second encoding into a session
    directory (docs/format.md, issue 11 item 10) — so the directories alternate between keeping
    the raw and the zstd copy, and the corpus still holds both encodings."""
    chosen: list[Path] = []
    for index, directory in enumerate(dirs):
        logs = [p for p in corpus_files() if rel(p).startswith(directory + "/")]
        zstd = [p for p in logs if p.name.endswith(".zstd")]
        raw = [p for p in logs if not p.name.endswith(".zstd")]
        if zstd and raw:
            logs = zstd if index % 2 else raw
        chosen.extend(logs)
    return chosen


def rel(path: Path) -> str:
    return path.relative_to(FIXTURES).as_posix()


@dataclass(frozen=True)
class S3:
    endpoint: str
    options: dict[str, Any]

    def fs(self) -> Any:
        import s3fs

        return s3fs.S3FileSystem(skip_instance_cache=True, **self.options)

    def new_bucket(self) -> str:
        import boto3

        name = f"fleet-{secrets.token_hex(6)}"
        client = boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            region_name="us-east-1",
        )
        client.create_bucket(Bucket=name)
        return name

    def upload(self, bucket: str, files: list[Path]) -> None:
        self.fs().pipe({f"{bucket}/{rel(path)}": path.read_bytes() for path in files})

    def etags(self, bucket: str) -> dict[str, str]:
        fs = self.fs()
        return {k: v["ETag"] for k, v in fs.find(bucket, detail=True).items()}

    def sha256(self, key: str) -> str:
        return hashlib.sha256(self.fs().cat_file(key)).hexdigest()

    def storage_options(self) -> tuple[tuple[str, object], ...]:
        return tuple(sorted(self.options.items()))


@pytest.fixture(scope="package")
def s3() -> Iterator[S3]:
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    assert server._server is not None
    port = server._server.server_address[1]
    endpoint = f"http://127.0.0.1:{port}"
    options = {
        "key": "testing",
        "secret": "testing",
        "endpoint_url": endpoint,
        "client_kwargs": {"region_name": "us-east-1"},
    }
    try:
        yield S3(endpoint, options)
    finally:
        server.stop()


@pytest.fixture(scope="package")
def cluster() -> Iterator[Any]:
    from distributed import Client, LocalCluster

    with (
        LocalCluster(  # type: ignore[no-untyped-call]
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", host="127.0.0.1"
        ) as c,
        Client(c) as client,  # type: ignore[no-untyped-call]
    ):
        yield client
