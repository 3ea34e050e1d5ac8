"""``inspect PATH...``: each path's report (one log's summary, or a root's listing) in turn,
as text or as JSON — one document for one path, one document with a ``reports`` list for
several (each entry the document that path alone would print, or its error)."""

from __future__ import annotations

from typing import Any, BinaryIO

from rich.text import Text

from sesstool.core.documents import SCHEMA_VERSION
from sesstool.core.jsonline import dumps_pretty
from sesstool.engine.inspect import InspectReport
from sesstool.engine.listing import ListReport
from sesstool.render.console import Consoles
from sesstool.render.escape import safe_line


class InspectWriter:
    def __init__(self, consoles: Consoles, out: BinaryIO, as_json: bool, *, several: bool) -> None:
        self.consoles = consoles
        self.out = out
        self.as_json = as_json
        self.several = several
        self.count = 0

    def report(self, outcome: InspectReport | ListReport) -> None:
        if self.as_json:
            self._json(outcome)
        else:
            if self.count:
                self.consoles.out.print()
            if isinstance(outcome, ListReport):
                from sesstool.render.list_view import render_list

                render_list(outcome, self.consoles.out)
            else:
                from sesstool.render.inspect_view import render_inspect

                render_inspect(outcome, self.consoles.out)
        self.count += 1

    def error(self, path: str, message: str, status: int) -> None:
        """A path that could not be inspected: on stderr, as the exit boundary says it (and in
        the JSON document's ``reports``)."""
        self.consoles.err.print(Text(f"sesstool: {safe_line(message)}"))
        if self.as_json:
            self._entry(dumps_pretty({"path": path, "error": message, "exit_status": status}))
        self.count += 1

    def close(self) -> None:
        if self.as_json and self.several and self.count:
            self.out.write(b"\n  ]\n}\n")

    def _json(self, outcome: InspectReport | ListReport) -> None:
        if isinstance(outcome, ListReport):
            from sesstool.render.list_view import write_list_json

            if not self.several:
                write_list_json(outcome, self.out, "inspect")
                self.out.write(b"\n")
                return
            self._start_entry()
            write_list_json(outcome, _Indented(self.out), "inspect")  # the rows as read back
            return
        from sesstool.render.jsonout import write_inspect_json

        if not self.several:
            write_inspect_json(outcome, self.out)
            return
        self._start_entry()
        write_inspect_json(outcome, _Indented(self.out))  # written as made, never held whole

    def _entry(self, doc: bytes) -> None:
        self._start_entry()
        self.out.write(doc.replace(b"\n", b"\n    "))

    def _start_entry(self) -> None:
        if self.count == 0:
            head: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "command": "inspect", "reports": []}
            self.out.write(dumps_pretty(head)[: -len(b"[]\n}")].rstrip() + b" [\n    ")
        else:
            self.out.write(b",\n    ")


class _Indented:
    """One path's document as an entry of ``reports``: each line after the first indented by
    four spaces, the document's final newline left out (issue 11 item 1: the closers of a
    document are streamed, so the document is not gathered first)."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.newline = False  # a newline held back: the document's last, or one more line

    def write(self, data: bytes) -> int:
        if not data:
            return 0
        if self.newline:
            self.out.write(b"\n    ")
        self.newline = data.endswith(b"\n")
        self.out.write((data[:-1] if self.newline else data).replace(b"\n", b"\n    "))
        return len(data)
