"""A small mock of the Anthropic Messages API for the real-CLI lane (spec agent-formats §0).

Listens on 127.0.0.1 only, answers ``POST /v1/messages`` with a streamed (SSE) reply chosen by a
*responder* (a function of the request body), records every request body in order, and can hold
a reply open mid-stream so the driver can kill the CLI while nothing of the reply is finished.
Standard library only: the lane must not depend on anything the CLI does not.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Json = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Reply:
    """One streamed assistant message: content blocks (``text`` / ``tool_use``) and a stop reason.

    ``stall_after_text`` streams the first text block's first half and then holds the connection
    open (pinging until the client is gone or the server stops) without ``content_block_stop``:
    a reply killed mid-stream.
    """

    blocks: tuple[Json, ...]
    stop_reason: str = "end_turn"
    stall_after_text: bool = False


def text(value: str) -> Reply:
    return Reply(blocks=({"type": "text", "text": value},))


def tool_calls(*calls: tuple[str, str, Json], lead: str | None = None) -> Reply:
    """``calls`` are (tool use id, tool name, input); ``lead`` an optional text block before them."""
    blocks: list[Json] = []
    if lead is not None:
        blocks.append({"type": "text", "text": lead})
    blocks.extend({"type": "tool_use", "id": i, "name": n, "input": inp} for i, n, inp in calls)
    return Reply(blocks=tuple(blocks), stop_reason="tool_use")


def stalled(value: str) -> Reply:
    return Reply(blocks=({"type": "text", "text": value},), stall_after_text=True)


Responder = Callable[[Json], Reply]


@dataclass
class Recorder:
    """Every request the mock received, in arrival order (path + parsed body)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    requests: list[Json] = field(default_factory=list)

    def add(self, path: str, body: Json) -> int:
        with self.lock:
            self.requests.append({"path": path, "body": body})
            return len(self.requests) - 1

    def snapshot(self) -> list[Json]:
        with self.lock:
            return list(self.requests)

    def clear(self) -> None:
        with self.lock:
            self.requests.clear()


def _sse(event: str, data: Json) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def _usage(body: Json) -> Json:
    # A stable, content-derived token count keeps transcripts comparable across runs.
    size = len(json.dumps(body.get("messages", []), sort_keys=True))
    return {
        "input_tokens": size // 4 + 1,
        "output_tokens": 1,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


class MockServer:
    """``with MockServer(responder) as mock:`` → ``mock.base_url``; ``mock.recorder.requests``."""

    def __init__(self, responder: Responder, model: str = "claude-mock-1") -> None:
        self.responder = responder
        self.model = model
        self.recorder = Recorder()
        self.release = threading.Event()
        self.stalling = threading.Event()
        self._counter = 0
        self._counter_lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> MockServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()

    def next_message_id(self) -> str:
        with self._counter_lock:
            self._counter += 1
            return f"msg_mock{self._counter:04d}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        mock = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                mock.recorder.add(self.path, {"method": "GET"})
                self._plain(404, {"type": "error", "error": {"type": "not_found_error", "message": "mock"}})

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"unparsed": raw.decode("utf-8", "replace")}
                mock.recorder.add(self.path, body)
                if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
                    if "count_tokens" in self.path:
                        self._plain(200, {"input_tokens": _usage(body)["input_tokens"]})
                    else:
                        self._plain(404, {"type": "error", "error": {"type": "not_found_error"}})
                    return
                reply = mock.responder(body)
                if body.get("stream"):
                    self._stream(body, reply)
                else:
                    self._plain(200, self._message(body, reply))

            def _plain(self, status: int, doc: Json) -> None:
                data = json.dumps(doc).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _message(self, body: Json, reply: Reply) -> Json:
                usage = _usage(body)
                usage["output_tokens"] = 5 * len(reply.blocks) + 1
                return {
                    "id": mock.next_message_id(),
                    "type": "message",
                    "role": "assistant",
                    "model": body.get("model", mock.model),
                    "content": list(reply.blocks),
                    "stop_reason": reply.stop_reason,
                    "stop_sequence": None,
                    "usage": usage,
                }

            def _stream(self, body: Json, reply: Reply) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                usage = _usage(body)
                start = {
                    "id": mock.next_message_id(),
                    "type": "message",
                    "role": "assistant",
                    "model": body.get("model", mock.model),
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": usage,
                }
                out = [_sse("message_start", {"type": "message_start", "message": start})]
                for index, block in enumerate(reply.blocks):
                    if block["type"] == "text":
                        out.append(
                            _sse(
                                "content_block_start",
                                {
                                    "type": "content_block_start",
                                    "index": index,
                                    "content_block": {"type": "text", "text": ""},
                                },
                            )
                        )
                        value = block["text"]
                        if reply.stall_after_text:
                            half = value[: max(1, len(value) // 2)]
                            out.append(self._delta(index, {"type": "text_delta", "text": half}))
                            self._send(b"".join(out))
                            mock.stalling.set()
                            self._hold()
                            self.close_connection = True
                            return
                        for piece in (value[: len(value) // 2], value[len(value) // 2 :]):
                            if piece:
                                out.append(self._delta(index, {"type": "text_delta", "text": piece}))
                    else:
                        out.append(
                            _sse(
                                "content_block_start",
                                {
                                    "type": "content_block_start",
                                    "index": index,
                                    "content_block": {
                                        "type": "tool_use",
                                        "id": block["id"],
                                        "name": block["name"],
                                        "input": {},
                                    },
                                },
                            )
                        )
                        args = json.dumps(block["input"])
                        out.append(self._delta(index, {"type": "input_json_delta", "partial_json": args}))
                    out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
                out.append(
                    _sse(
                        "message_delta",
                        {
                            "type": "message_delta",
                            "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
                            "usage": {"output_tokens": 5 * len(reply.blocks) + 1},
                        },
                    )
                )
                out.append(_sse("message_stop", {"type": "message_stop"}))
                self._send(b"".join(out))
                self.close_connection = True

            def _hold(self) -> None:
                # Keep the reply open with SSE pings until the client goes away (it is killed).
                while not mock.release.wait(0.2):
                    try:
                        self.wfile.write(_sse("ping", {"type": "ping"}))
                        self.wfile.flush()
                    except OSError:
                        return

            def _delta(self, index: int, delta: Json) -> bytes:
                return _sse(
                    "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
                )

            def _send(self, data: bytes) -> None:
                try:
                    self.wfile.write(data)
                    self.wfile.flush()
                except OSError:
                    pass

        return Handler
