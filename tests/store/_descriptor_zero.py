"""Subprocess helper for the descriptor-0 tests of ``test_publish_faults.py``.

Usage: ``_descriptor_zero.py SCENARIO OUT_DIR``. Each scenario frees descriptor 0, as in a
process started with stdin closed (``sesstool ... <&-``), so that a descriptor the publisher
opens gets number 0, and asserts the publisher closes it. It runs in a fresh interpreter
because descriptor numbers are the whole process's: in the test session, the fleet suite's
Dask scheduler accepts its workers' connections on a thread of its own, and a socket accepted
while 0 is free takes it (then closes "its" 0 later, which by then is the restored stdin).
Here the scenario first asserts it is the only thread. Exit 0 when every assertion held.
"""

from __future__ import annotations

import errno
import os
import sys
import threading
from pathlib import Path
from typing import Any

from sesstool.core.errors import InputError
from sesstool.store.publish import Sink, publish


def is_open(fd: int) -> bool:
    """Whether ``fd`` is an open descriptor of this process."""
    try:
        os.fstat(fd)
    except OSError as exc:
        assert exc.errno == errno.EBADF
        return False
    return True


def anchor_numbered_0(out_dir: Path) -> None:
    """The anchor, opened after the producer returns, gets descriptor 0 and is closed."""
    opened: list[int] = []

    def produce(sink: Sink) -> None:
        sink.write(b"x\n")
        os.close(0)
        opened.append(0)

    publish(out_dir / "out.jsonl", produce, verify=lambda path: None)
    assert opened == [0]
    assert not is_open(0), "descriptor 0 is still open after the publication"


def temp_numbered_0_when_the_producer_fails(out_dir: Path) -> None:
    """The temp, created while 0 is free, gets descriptor 0 and is closed on the failure."""
    real_open = os.open
    numbers: list[int] = []

    def open_(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & os.O_CREAT:
            os.close(0)  # the directory is open: the temp gets descriptor 0
        fd = real_open(path, flags, *args, **kwargs)
        numbers.append(fd)
        return fd

    def produce(sink: Sink) -> None:
        sink.write(b"x")
        raise InputError("the source is corrupt")

    os.open = open_
    try:
        publish(out_dir / "out.jsonl", produce, verify=lambda path: None)
    except InputError:
        pass
    else:
        raise AssertionError("the producer's failure did not propagate")
    finally:
        os.open = real_open
    assert numbers[-1] == 0, numbers
    assert not is_open(0), "descriptor 0 is still open after the failed publication"


SCENARIOS = {
    "anchor": anchor_numbered_0,
    "temp-on-failure": temp_numbered_0_when_the_producer_fails,
}

if __name__ == "__main__":
    assert threading.active_count() == 1, threading.enumerate()
    assert is_open(0), "the scenario needs descriptor 0 open to free it"
    SCENARIOS[sys.argv[1]](Path(sys.argv[2]))
