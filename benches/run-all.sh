#!/usr/bin/env bash
# Runs every benchmark, in order, short by default (see benches/README.md):
#   http, stdio, soak, fleet (when `redis-server` is on PATH), scaling,
#   then the README example's stripped release binary, dependency count and cold
#   release build time ("size").
# BENCH_ONLY="stdio size" runs only those pieces.
# Longer runs: BENCH_SECS, BENCH_ROUNDS, BENCH_STARTS, SOAK_SECS, BENCH_SCALING_N=10,100,1000.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

export BENCH_SECS="${BENCH_SECS:-1}"
export BENCH_ROUNDS="${BENCH_ROUNDS:-2}"
export SOAK_SECS="${SOAK_SECS:-20}"
export SOAK_REPORT_SECS="${SOAK_REPORT_SECS:-10}"
export SOAK_SETTLE_SECS="${SOAK_SETTLE_SECS:-2}"
export BENCH_SCALING_N="${BENCH_SCALING_N:-10,100}"
only="${BENCH_ONLY:-http stdio soak fleet scaling size}"
# 0: no cold release build of the README example (it is then built incrementally).
cold_build="${BENCH_COLD_BUILD:-1}"
cargo="${CARGO:-cargo}"
target="${CARGO_TARGET_DIR:-$PWD/target}"
case "$target" in /*) ;; *) target="$PWD/$target" ;; esac

section() { printf '\n=== %s ===\n' "$*"; }

wanted() { [[ " ${only//,/ } " == *" $1 "* ]]; }

run_bench() {
    wanted "$1" || return 0
    section "cargo bench --bench $1"
    "$cargo" bench --bench "$1"
}

run_bench http
run_bench stdio
run_bench soak
if wanted fleet && ! command -v redis-server >/dev/null 2>&1; then
    section "cargo bench --bench fleet"
    echo "skipped: benches/fleet.rs starts a real redis-server, and none is on PATH (apt-get install redis-server)"
else
    run_bench fleet
fi
run_bench scaling
wanted size || exit 0

# The README opens with a complete server (the `forecast` tool). No file in examples/ is
# that program, so it is built as a crate of its own from the README's first `rust`
# block, with mcp-runtime's default features (an example of this package would get the
# features its dev-dependencies turn on: auth, redis, metrics, proxy, testing).
section "README example (its first code block): binary size, dependencies, cold release build"
crate="$target/readme-example"
build_dir="$crate/target"
mkdir -p "$crate/src"
awk '/^```rust/ { inside = 1; next } inside && /^```/ { exit } inside' README.md >"$crate/src/main.rs"
{
    echo '[package]'
    echo 'name = "readme-example"'
    echo 'version = "0.1.0"'
    echo 'edition = "2024"'
    echo 'publish = false'
    echo
    echo '[dependencies]'
    echo "mcp-runtime = { path = \"$PWD/mcp-runtime\" }"
    echo 'serde = { version = "1", features = ["derive"] }'
    echo 'schemars = "1.2"'
    echo 'tokio = { version = "1.54", features = ["rt-multi-thread", "macros"] }'
    echo
    echo '[workspace]'
} >"$crate/Cargo.toml"
# The workspace's versions: nothing is resolved anew or downloaded.
cp Cargo.lock "$crate/Cargo.lock"
if [ "$cold_build" != 0 ] && [ -d "$build_dir" ]; then
    rm -rf -- "$build_dir"
fi
start=$(date +%s.%N)
(cd "$crate" && CARGO_TARGET_DIR="$build_dir" "$cargo" build --quiet --offline --release)
end=$(date +%s.%N)
if [ "$cold_build" != 0 ]; then
    awk -v s="$start" -v e="$end" -v j="$(nproc)" \
        'BEGIN { printf "cold release build (-j%s):          %.1f s\n", j, e - s }'
else
    echo "cold release build:                 skipped (BENCH_COLD_BUILD=0)"
fi
stripped="$(mktemp)"
trap 'rm -f "$stripped"' EXIT
cp "$build_dir/release/readme-example" "$stripped"
strip "$stripped"
size=$(stat -c %s "$stripped")
awk -v b="$size" 'BEGIN { printf "stripped release binary:            %d bytes (%.2f MiB)\n", b, b / 1048576 }'
# `(*)` marks a crate printed before: counted once in the first figure; the second is
# the plain `cargo tree -e normal --prefix none | sort -u | wc -l`.
tree=$(cd "$crate" && "$cargo" tree --offline -e normal --prefix none)
deps=$(sed 's/ (\*)$//' <<<"$tree" | sort -u | wc -l)
lines=$(sort -u <<<"$tree" | wc -l)
echo "crates in the dependency tree:      $deps ($lines lines with \`(*)\` repeats; cargo tree -e normal)"
