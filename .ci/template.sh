#!/usr/bin/env bash
# .ci/template.sh - keeps the project template from rotting: builds cargo-mcp, runs
# `cargo mcp new demo` in a temporary folder against this workspace's crates (path
# dependencies), and runs the new project's own checks (fmt, clippy, tests) and
# `cargo mcp schema` against its committed snapshot.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
target="${CARGO_TARGET_DIR:-$root/target}"

cargo build -p cargo-mcp
export PATH="$target/debug:$PATH"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cd "$work"
# No flag: the project depends on the checkout cargo-mcp was built from.
echo "+ cargo mcp new demo"
cargo mcp new demo
test -d demo/.git || { echo "cargo mcp new did not make a git repository"; exit 1; }
cd demo
# Share the workspace's build of mcp-runtime and its dependencies.
export CARGO_TARGET_DIR="$target/template"
echo "+ cargo fmt --check"; cargo fmt --check
echo "+ cargo clippy --all-targets -- -D warnings"; cargo clippy --all-targets -- -D warnings
echo "+ cargo test"; cargo test
echo "+ cargo mcp schema --check tests/snapshots/server__lists.snap"
cargo build --quiet
cargo mcp schema --check tests/snapshots/server__lists.snap -- "$CARGO_TARGET_DIR/debug/demo"
echo "template OK"
