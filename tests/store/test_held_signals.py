"""Signals held while the publisher creates, links or removes a name (issue 15 item 4): a
SIGINT/SIGTERM/SIGHUP that arrives meanwhile reaches its handler right after, never inside."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

import pytest

from sesstool.store.held_signals import signals_held

HELD = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@pytest.fixture
def recorded() -> Iterator[list[tuple[str, int]]]:
    """A recording handler on each held signal (the previous handlers restored after)."""
    calls: list[tuple[str, int]] = []
    before = {sig: signal.getsignal(sig) for sig in HELD}

    def handler_for(name: str) -> Callable[[int, FrameType | None], None]:
        def handler(signum: int, frame: FrameType | None) -> None:
            calls.append((name, signum))

        return handler

    for sig in HELD:
        signal.signal(sig, handler_for(sig.name))
    try:
        yield calls
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def _raise(sig: signal.Signals) -> None:
    os.kill(os.getpid(), sig)


@pytest.mark.parametrize("sig", HELD)
def test_a_signal_while_held_reaches_its_handler_right_after(
    recorded: list[tuple[str, int]], sig: int
) -> None:
    handlers = {s: signal.getsignal(s) for s in HELD}
    with signals_held():
        _raise(signal.Signals(sig))
        for _ in range(1000):  # Python runs a pending handler between bytecodes: it has run by now
            pass
        assert recorded == []
    assert recorded == [(signal.Signals(sig).name, sig)]
    assert {s: signal.getsignal(s) for s in HELD} == handlers


def test_nothing_is_delivered_when_nothing_arrived(recorded: list[tuple[str, int]]) -> None:
    handlers = {s: signal.getsignal(s) for s in HELD}
    with signals_held():
        pass
    assert recorded == []
    assert {s: signal.getsignal(s) for s in HELD} == handlers


def test_the_first_of_several_signals_is_the_one_delivered(recorded: list[tuple[str, int]]) -> None:
    """One is enough to end the run: the one that came first."""
    with signals_held():
        _raise(signal.SIGHUP)
        _raise(signal.SIGTERM)
        for _ in range(1000):
            pass
    assert recorded == [("SIGHUP", signal.SIGHUP)]


def test_sigint_with_python_s_own_handler_is_a_keyboard_interrupt_after_the_block() -> None:
    # installed here: a process started in the background by a shell has SIGINT ignored, and
    # Python then leaves it so
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    done: list[str] = []
    try:
        with pytest.raises(KeyboardInterrupt), signals_held():
            _raise(signal.SIGINT)
            for _ in range(1000):
                pass
            done.append("the block ran to its end")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert done == ["the block ran to its end"]


def test_an_ignored_signal_stays_ignored(recorded: list[tuple[str, int]]) -> None:
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    with signals_held():
        _raise(signal.SIGHUP)
    assert recorded == []
    assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN


def test_a_signal_meant_for_the_default_action_is_sent_again_after_the_block(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In-process (the subprocess test below shows the end): the handler in place while held
    is run as the kernel would run it, and os.kill is recorded instead of ending pytest."""
    sent: list[tuple[int, int]] = []
    previous = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        monkeypatch.setattr(os, "kill", lambda pid, sig: sent.append((pid, sig)))
        with signals_held():
            handler = signal.getsignal(signal.SIGTERM)
            assert callable(handler)
            handler(signal.SIGTERM, None)
            assert sent == []
        assert sent == [(os.getpid(), signal.SIGTERM)]
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
        sent.clear()  # two arrive: the first is the one sent again
        hup = signal.signal(signal.SIGHUP, signal.SIG_DFL)
        try:
            with signals_held():
                for sig in (signal.SIGHUP, signal.SIGTERM):
                    held = signal.getsignal(sig)
                    assert callable(held)
                    held(sig, None)
            assert sent == [(os.getpid(), signal.SIGHUP)]
        finally:
            signal.signal(signal.SIGHUP, hup)
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_signal_whose_default_ends_the_process_ends_it_after_the_block() -> None:
    code = (
        "import os, signal, sys\n"
        "from sesstool.store.held_signals import signals_held\n"
        "signal.signal(signal.SIGTERM, signal.SIG_DFL)\n"
        "with signals_held():\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    print('inside', flush=True)\n"
        "print('after', flush=True)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert (done.returncode, done.stdout) == (-signal.SIGTERM, "inside\n"), done.stderr


def test_off_the_main_thread_nothing_is_held(recorded: list[tuple[str, int]]) -> None:
    """Only the main thread may set handlers (and only it runs them): elsewhere the block runs
    with the handlers untouched."""
    seen: list[Any] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            with signals_held():
                seen.append(signal.getsignal(signal.SIGTERM))
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert errors == []
    assert seen == [signal.getsignal(signal.SIGTERM)]
