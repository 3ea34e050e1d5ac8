"""The Codex CLI rollout dialect (agent-formats §3, §4): reading a rollout as Codex 0.171 loads
it, deriving the history it rebuilds on resume, and planning repairs and forks."""
