#!/usr/bin/env bash
# Install the real Claude Code CLI for the lane into .claude-lane/ (git-ignored), only when missing.
# The npm package @anthropic-ai/claude-code ships its native binary inside a per-platform npm
# package (@anthropic-ai/claude-code-linux-x64 here); that binary runs on its own (no Node), so
# install scripts are skipped and nothing else is downloaded.
#
# Prints the path of the `claude` binary on stdout when ready; any failure exits non-zero (the
# lane fails: it is never skipped).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
dest="${SESSTOOL_CLAUDE_LANE_DIR:-$repo/.claude-lane}"
version="2.1.332"

say() { printf 'claude lane setup: %s\n' "$*" >&2; }

case "$(uname -m)" in
    x86_64 | amd64) arch="x64" ;;
    aarch64 | arm64) arch="arm64" ;;
    *) say "no Claude Code package for machine type $(uname -m)"; exit 3 ;;
esac
if ldd --version 2>&1 | grep -qi musl; then platform="linux-$arch-musl"; else platform="linux-$arch"; fi
binary="$dest/node_modules/@anthropic-ai/claude-code-$platform/claude"

installed() {
    [ -x "$binary" ] && [ "$("$binary" --version 2>/dev/null | cut -d' ' -f1)" = "$version" ]
}

if ! installed; then
    command -v npm >/dev/null 2>&1 || { say "npm is not installed"; exit 2; }
    say "installing @anthropic-ai/claude-code@$version ($platform) into $dest"
    rm -rf "$dest/node_modules"
    mkdir -p "$dest"
    if ! npm install --prefix "$dest" --no-audit --no-fund --ignore-scripts --no-save --no-package-lock \
        --engine-strict=false "@anthropic-ai/claude-code@$version" >"$dest/npm-install.log" 2>&1; then
        tail -n 30 "$dest/npm-install.log" >&2
        say "npm install failed (log: $dest/npm-install.log)"
        exit 3
    fi
    installed || { say "$binary is missing or is not version $version after the install"; exit 3; }
fi
printf '%s\n' "$binary"
