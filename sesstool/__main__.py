"""`python -m sesstool` entry point."""

from sesstool.cli.main import main

main()
