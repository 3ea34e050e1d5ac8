"""Keep the real CLI off the network: run inside a private network namespace with only loopback.

``reexec_private()`` restarts the current command under ``unshare -n`` (root, as in CI);
``ensure_private()`` checks that the only interface is ``lo`` and brings it up (with an ioctl,
so no iproute2 is needed). The mock API then listens on 127.0.0.1 inside the namespace.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import socket
import struct
import sys

MARK = "SESSTOOL_CLAUDE_NETNS"
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1


def interfaces() -> list[str]:
    # Asked of the kernel through a socket: /sys/class/net shows the host's namespace.
    return sorted(name for _, name in socket.if_nameindex())


def ensure_private() -> None:
    """Refuse to go on unless the namespace has loopback only; bring loopback up."""
    names = interfaces()
    if names != ["lo"]:
        raise SystemExit(f"claude lane: not in a private network namespace (interfaces: {names})")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(sock, SIOCGIFFLAGS, request))[1]
        if not flags & IFF_UP:
            fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


def reexec_private(argv: list[str]) -> None:
    """Run ``argv`` again inside ``unshare -n`` unless this process already is."""
    if os.environ.get(MARK) == "1":
        ensure_private()
        return
    unshare = shutil.which("unshare")
    if unshare is None:
        raise SystemExit("claude lane: `unshare` (util-linux) is required to isolate the CLI")
    os.environ[MARK] = "1"
    sys.stdout.flush()
    os.execv(unshare, [unshare, "-n", *argv])
