"""How a write command's human output names a published file that was already there."""

from __future__ import annotations

from sesstool.store.publish import Published


def already(published: Published) -> str:
    """The prefix of the output line when a re-run found the target already holding exactly
    these bytes: nothing was written, the command succeeded (issue 15 item 12)."""
    return "already published, identical: " if published.identical else ""
