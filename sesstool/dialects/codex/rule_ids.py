"""Every Codex rollout rule id as a named constant: the table in ``vocabulary.py`` defines the rules,
``tests/test_architecture.py`` checks that these constants name exactly them.

Use ``from sesstool.dialects.codex import rule_ids as CX`` and ``CX.EMPTY_FILE``, never a bare
``"codex-empty-file"``."""

from __future__ import annotations

EMPTY_FILE = "codex-empty-file"
MISSING_SESSION_META = "codex-missing-session-meta"
SESSION_META_INVALID = "codex-session-meta-invalid"
UNKNOWN_HISTORY_MODE = "codex-unknown-history-mode"
TORN_TAIL = "codex-torn-tail"
UNDECODABLE_LINE = "codex-undecodable-line"
INTERLEAVED_LINE = "codex-interleaved-line"
NUL_RUN = "codex-nul-run"
CALL_WITHOUT_OUTPUT = "codex-call-without-output"
OUTPUT_WITHOUT_CALL = "codex-output-without-call"
UNFINISHED_TURN = "codex-unfinished-turn"
UNKNOWN_ITEM_TYPE = "codex-unknown-item-type"
NEWER_CLI_VERSION = "codex-newer-cli-version"
LEGACY_ROLLOUT = "codex-legacy-rollout"
SESSION_META_REPEATED = "codex-session-meta-repeated"
