"""sesstool — a forensic toolkit for append-only coding-agent session logs."""

__version__ = "0.1.0"
