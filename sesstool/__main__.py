"""`python -m sesstool` entry point."""

from sesstool.cli.entry import run

run()
