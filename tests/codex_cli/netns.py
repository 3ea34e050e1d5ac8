"""Run inside a private network namespace (``unshare -n``) with only the loopback interface up.

Real agent CLIs run only there, so nothing they do can reach another host. ``ensure_private_net``
re-executes the current Python command under ``unshare -n`` unless it already runs in one, and
brings ``lo`` up with an ioctl (no iproute2 needed).
"""

from __future__ import annotations

import fcntl
import os
import socket
import struct
import sys

_MARK = "SESSTOOL_CODEX_NETNS"
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1


def loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sh14s", b"lo", 0, b"")
        flags = struct.unpack("16sh14s", fcntl.ioctl(sock, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sh14s", b"lo", flags | _IFF_UP, b""))


def only_loopback() -> bool:
    """True when every network interface of this namespace is the loopback one."""
    return [name for _, name in socket.if_nameindex()] == ["lo"]


def ensure_private_net() -> None:
    """Re-exec under ``unshare -n`` (once), then bring ``lo`` up; refuse to go on otherwise."""
    if os.environ.get(_MARK) != "1":
        os.environ[_MARK] = "1"
        os.execvp("unshare", ["unshare", "-n", sys.executable, *sys.orig_argv[1:]])
    if not only_loopback():
        raise SystemExit("refusing to run the Codex CLI: this network namespace has more than loopback")
    loopback_up()
