"""§5 item 8: the request envelope is canonicalised."""

from __future__ import annotations

from sesstool.core.request import canonical_header


def test_empty_system_and_tools_are_dropped() -> None:
    header = {"config": {"provider": "p", "model": "m"}, "system": "", "tools": []}
    assert canonical_header(header) == {"config": {"provider": "p", "model": "m"}}


def test_adapter_defaults_keep_only_true_markers() -> None:
    header = {
        "config": {"provider": "p", "model": "m", "maxTokens": 9},
        "adapterDefaults": {"maxTokens": True, "reasoningEffort": False},
    }
    assert canonical_header(header)["adapterDefaults"] == {"maxTokens": True}
    header["adapterDefaults"] = {"maxTokens": False}
    assert "adapterDefaults" not in canonical_header(header)


def test_non_empty_values_and_non_objects_are_kept() -> None:
    header = {"config": {}, "system": "Be brief.", "tools": [{"name": "bash"}]}
    assert canonical_header(header) == header
    assert canonical_header("odd") == "odd"
