#!/usr/bin/env bash
# Install the pinned Codex CLI for the real-CLI lane into .interop/codex/ (git-ignored), only
# when missing. The npm package @openai/codex ships its native binary inside a platform package
# (@openai/codex-linux-x64 / -arm64); the lane runs that binary directly, so no Node is needed.
#
# Prints the path of the codex binary on stdout when ready.
# Exit codes: 0 ready; 10 npm is not installed (the lane is skipped with the reason printed on
# stderr); anything else: the pinned package failed to install (the lane fails).
set -uo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
dest="${SESSTOOL_CODEX_DIR:-$repo/.interop/codex}"
version="0.171.0"

say() { printf 'codex setup: %s\n' "$*" >&2; }

case "$(uname -m)" in
    x86_64 | amd64) triple="x86_64-unknown-linux-musl"; platform_pkg="codex-linux-x64" ;;
    aarch64 | arm64) triple="aarch64-unknown-linux-musl"; platform_pkg="codex-linux-arm64" ;;
    *) say "CODEX UNAVAILABLE: no Codex build for machine type $(uname -m)"; exit 10 ;;
esac

bin="$dest/node_modules/@openai/$platform_pkg/vendor/$triple/bin/codex"
codex_ok() {
    [ -x "$bin" ] || return 1
    "$bin" --version 2>/dev/null | grep -q " $version\$"
}

if ! codex_ok; then
    command -v npm >/dev/null 2>&1 || { say "CODEX UNAVAILABLE: npm is not installed"; exit 10; }
    say "installing @openai/codex@$version into $dest"
    rm -rf "$dest"
    mkdir -p "$dest"
    if ! npm install --prefix "$dest" --no-audit --no-fund --ignore-scripts --no-save \
        "@openai/codex@$version" >"$dest/npm-install.log" 2>&1; then
        tail -n 20 "$dest/npm-install.log" >&2
        say "npm install @openai/codex@$version failed (log: $dest/npm-install.log)"
        exit 3
    fi
    codex_ok || { say "$bin is missing or not version $version after the install"; exit 4; }
fi
printf '%s\n' "$bin"
exit 0
