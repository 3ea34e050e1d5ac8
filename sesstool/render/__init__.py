"""Renderers: the only code that prints. Human views (rich) and machine formats (JSON, CI)."""
