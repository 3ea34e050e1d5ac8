"""A small mock of the OpenAI Responses API for the Codex CLI lane (127.0.0.1 only).

Every request is recorded (method, path, JSON body). A POST to ``/v1/responses`` answers with
the next scripted reply: a list of steps, each either an SSE event to stream or a pause/hang, so
a scenario can stop the CLI mid-stream or while its tools run. Stdlib only.
"""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

Json = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Event:
    """One SSE event: ``data`` is serialised with its ``type`` as the event name."""

    data: Json


@dataclass(frozen=True, slots=True)
class Pause:
    """Flush what was sent, then wait (``seconds``), or forever (``None``: a stream that hangs)."""

    seconds: float | None


Step = Event | Pause


@dataclass(slots=True)
class Recorded:
    method: str
    path: str
    body: Json | None
    served: int  # index of the scripted reply served, -1 when none


@dataclass
class Script:
    """The replies, served in order; ``default`` answers any request past the end."""

    replies: list[list[Step]] = field(default_factory=list)
    default: list[Step] | None = None


class MockResponses:
    """A threaded HTTP server on 127.0.0.1 (port chosen by the OS)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._script = Script()
        self._next = 0
        self.requests: list[Recorded] = []
        self._served_event = threading.Condition(self._lock)
        mock = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                mock._record("GET", self.path, None)
                self._plain(404, b"not found")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = {"_undecodable": raw.decode("utf-8", "replace")}
                path = self.path.split("?", 1)[0]
                if path.endswith("/responses"):
                    steps, index = mock._take()
                    mock._record("POST", self.path, body, index)
                    if steps is None:
                        self._plain(500, b"mock: no scripted reply left")
                        return
                    self._stream(steps)
                    return
                mock._record("POST", self.path, body)
                self._plain(404, b"not found")

            def _plain(self, status: int, text: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(text)))
                self.end_headers()
                self.wfile.write(text)

            def _stream(self, steps: list[Step]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                try:
                    for step in steps:
                        if isinstance(step, Pause):
                            self.wfile.flush()
                            if step.seconds is None:
                                while True:  # hang until the client goes away
                                    time.sleep(0.2)
                                    self.wfile.write(b": keep-alive\n\n")
                                    self.wfile.flush()
                            time.sleep(step.seconds)
                            continue
                        name = step.data["type"]
                        payload = json.dumps(step.data, separators=(",", ":"))
                        self.wfile.write(f"event: {name}\ndata: {payload}\n\n".encode())
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    return

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> MockResponses:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def load(self, script: Script) -> None:
        """Replace the script and forget recorded requests (one CLI run per script)."""
        with self._lock:
            self._script = script
            self._next = 0
            self.requests = []

    def _take(self) -> tuple[list[Step] | None, int]:
        with self._lock:
            index = self._next
            self._next += 1
            self._served_event.notify_all()
            if index < len(self._script.replies):
                return self._script.replies[index], index
            return self._script.default, -1

    def _record(self, method: str, path: str, body: Json | None, served: int = -1) -> None:
        with self._lock:
            self.requests.append(Recorded(method, path, body, served))

    def wait_for_replies(self, count: int, timeout: float) -> bool:
        """Wait until ``count`` scripted replies have been handed out."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._next < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._served_event.wait(left)
            return True

    def model_requests(self) -> list[Json]:
        with self._lock:
            return [r.body for r in self.requests if r.path.split("?")[0].endswith("/responses") and r.body]


# --- building replies ------------------------------------------------------------------------

_counter = iter(range(1, 1_000_000))


def _rid(prefix: str) -> str:
    return f"{prefix}_{next(_counter):04d}"


def created(response_id: str) -> Event:
    return Event({"type": "response.created", "response": {"id": response_id}})


def completed(response_id: str, input_tokens: int = 100, output_tokens: int = 10) -> Event:
    return Event(
        {
            "type": "response.completed",
            "response": {
                "id": response_id,
                "usage": {
                    "input_tokens": input_tokens,
                    "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens": output_tokens,
                    "output_tokens_details": {"reasoning_tokens": 0},
                    "total_tokens": input_tokens + output_tokens,
                },
            },
        }
    )


def message_item(text: str, item_id: str | None = None) -> Json:
    return {
        "type": "message",
        "role": "assistant",
        "id": item_id or _rid("msg"),
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def function_call_item(call_id: str, name: str, arguments: Json) -> Json:
    return {
        "type": "function_call",
        "id": _rid("fc"),
        "call_id": call_id,
        "name": name,
        "arguments": json.dumps(arguments, separators=(",", ":")),
    }


def item_events(item: Json) -> Iterator[Step]:
    yield Event({"type": "response.output_item.added", "item": item})
    if item["type"] == "message":
        for part in item["content"]:
            yield Event({"type": "response.output_text.delta", "item_id": item["id"], "delta": part["text"]})
    yield Event({"type": "response.output_item.done", "item": item})


def reply(*items: Json, input_tokens: int = 100, output_tokens: int = 10) -> list[Step]:
    """A complete response carrying ``items``."""
    rid = _rid("resp")
    steps: list[Step] = [created(rid)]
    for item in items:
        steps.extend(item_events(item))
    steps.append(completed(rid, input_tokens, output_tokens))
    return steps


def text_reply(text: str, **usage: int) -> list[Step]:
    return reply(message_item(text), **usage)


def shell_call(call_id: str, command: str, name: str = "exec_command") -> Json:
    return function_call_item(call_id, name, {"cmd": command})
