"""Run a producer on a thread ahead of its consumer, through a bounded queue (issue 14).

The zstd reader walks and decompresses frames here while the scanner works on the lines
already decoded: libzstd runs without the GIL, so on two cores the two overlap. What crosses
the queue is in the producer's order; an exception the producer raises is raised to the
consumer where it happened, after everything produced before it. Memory is bounded by the
queue: the producer blocks when ``depth`` items wait.

The thread stops when the consumer is done with it: at the end, on ``close()`` (an exception
or an early stop in the consumer, a generator closed, SIGINT in the main thread), so nothing
keeps running, reading or holding memory after the read. It is a daemon thread, so a producer
blocked in a read that never returns (a pipe whose writer stalls) cannot keep the process
alive; ``close()`` waits for it only a bounded time.

A thread pays only when another CPU can run it: ``more_than_one_cpu()`` is what readers ask
before starting one (on one CPU the producer and the consumer would only take turns, paying
the queue's hand-offs for nothing).
"""

from __future__ import annotations

import os
import queue
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")

# How often a producer blocked on a full queue checks whether the consumer has gone.
_POLL = 0.05
# How long close() waits for the thread (a regular file's read or one decode: milliseconds).
JOIN_TIMEOUT = 5.0


def more_than_one_cpu() -> bool:
    """Whether this process may run on more than one CPU (its affinity mask, which a container's
    cpuset or ``taskset`` narrows; the machine's count where the platform has no mask)."""
    affinity = getattr(os, "sched_getaffinity", None)
    count = len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)
    return count > 1


class _End:
    """The producer finished (the last item of every queue)."""


_END = _End()


class _Raised:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


class Ahead(Generic[T]):
    """Iterate ``produce()`` on a daemon thread; ``depth`` items at most wait in the queue."""

    def __init__(
        self, produce: Callable[[], Iterator[T]], depth: int, name: str = "sesstool-read-ahead"
    ) -> None:
        self._queue: queue.Queue[T | _End | _Raised] = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._done = False
        self._thread = threading.Thread(target=self._run, args=(produce,), name=name, daemon=True)
        self._thread.start()

    def _run(self, produce: Callable[[], Iterator[T]]) -> None:
        try:
            for item in produce():
                if not self._put(item):
                    return
        except BaseException as exc:  # handed to the consumer, raised there
            self._put(_Raised(exc))
            return
        self._put(_END)

    def _put(self, item: T | _End | _Raised) -> bool:
        """Queue ``item``; False when the consumer has stopped (the producer then ends)."""
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=_POLL)
            except queue.Full:
                continue
            return True
        return False

    def __iter__(self) -> Iterator[T]:
        return self

    def __next__(self) -> T:
        if self._done:
            raise StopIteration
        item = self._queue.get()
        if isinstance(item, _End):
            self._done = True
            self._thread.join()
            raise StopIteration
        if isinstance(item, _Raised):
            self._done = True
            self._thread.join()
            raise item.exc
        return item

    def close(self) -> None:
        """Stop the producer and wait (a bounded time) for its thread; idempotent."""
        self._done = True
        self._stop.set()
        try:
            while True:  # free what waits, and unblock a put in progress
                self._queue.get_nowait()
        except queue.Empty:
            pass
        if isinstance(sys.exc_info()[1], KeyboardInterrupt):
            return  # the process is ending (exit 130): not a moment's wait for a stalled pipe
        self._thread.join(JOIN_TIMEOUT)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()
