#!/usr/bin/env bash
# Runs every benchmark, in order, short by default (see benches/README.md):
#   http, stdio, soak, fleet (when `redis-server` is on PATH), scaling,
#   then the README example's stripped release binary, dependency count, cold
#   release build time and code by crate (cargo-bloat, installed into <target>/tools
#   when not on PATH) ("size"), then the stdio bench binary's start-up rows and the http
#   bench binary's tools/call rows, each as linked and relinked with its functions in
#   first-use order ("layout", benches/layout.sh).
# rmcp (the official Rust SDK) beside ours: benches/rmcp-server is built first (release,
#   in <target>/rmcp-server/, cold when "size" runs and BENCH_COLD_BUILD is not 0), and
#   BENCH_RMCP_BIN points http and stdio at it; "size" sets its binary, dependency count
#   and cold build beside the README example's. BENCH_RMCP=0 skips all of that.
# BENCH_ONLY="stdio size" runs only those pieces.
# Longer runs: BENCH_SECS, BENCH_ROUNDS, BENCH_STARTS, SOAK_SECS, BENCH_SCALING_N=10,100,1000.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

export BENCH_SECS="${BENCH_SECS:-1}"
export BENCH_ROUNDS="${BENCH_ROUNDS:-2}"
# Past the server's longest default deadline (write stall, 60 s), so the soak sees
# slow bodies and non-readers cut off, not only slow headers.
export SOAK_SECS="${SOAK_SECS:-75}"
export SOAK_REPORT_SECS="${SOAK_REPORT_SECS:-25}"
export SOAK_SETTLE_SECS="${SOAK_SETTLE_SECS:-2}"
export BENCH_SCALING_N="${BENCH_SCALING_N:-10,100}"
only="${BENCH_ONLY:-http stdio soak fleet scaling size layout}"
# 0: no cold release build of the README example nor of the rmcp server (they are then
# built incrementally).
cold_build="${BENCH_COLD_BUILD:-1}"
# 0: no rmcp server, no rmcp rows (the benches print why).
with_rmcp="${BENCH_RMCP:-1}"
cargo="${CARGO:-cargo}"
target="${CARGO_TARGET_DIR:-$PWD/target}"
case "$target" in /*) ;; *) target="$PWD/$target" ;; esac
# What cargo builds with: -j as CARGO_BUILD_JOBS says, else one job per core.
jobs="${CARGO_BUILD_JOBS:-$(nproc)}"

section() { printf '\n=== %s ===\n' "$*"; }

wanted() { [[ " ${only//,/ } " == *" $1 "* ]]; }

# Seconds between two `date +%s.%N` readings, one decimal.
elapsed() { awk -v s="$1" -v e="$2" 'BEGIN { printf "%.1f", e - s }'; }

# The rmcp server (benches/rmcp-server, rmcp 3.11.0): a crate and workspace of its own
# with its own Cargo.lock, built like the README example below (release, its own target
# dir, cold when "size" is wanted, timed). Its crates are fetched before the clock starts.
rmcp_crate="$PWD/benches/rmcp-server"
rmcp_dir="$target/rmcp-server"
rmcp_bin="$rmcp_dir/rmcp-bench-server"
rmcp_build=""
unset BENCH_RMCP_BIN
if [ "$with_rmcp" = 0 ]; then
    rmcp_why="BENCH_RMCP=0"
elif ! { wanted http || wanted stdio || wanted size; }; then
    rmcp_why="not needed by BENCH_ONLY=\"$only\""
else
    section "rmcp server (benches/rmcp-server): release build"
    rmcp_why=""
    if [ "$cold_build" != 0 ] && wanted size && [ -d "$rmcp_dir/target" ]; then
        rm -rf -- "$rmcp_dir/target"
    fi
    rmcp_cargo() { (cd "$rmcp_crate" && CARGO_TARGET_DIR="$rmcp_dir/target" "$cargo" "$@"); }
    if ! rmcp_cargo fetch --locked --quiet; then
        rmcp_why="cargo fetch failed in benches/rmcp-server"
    else
        start=$(date +%s.%N)
        if rmcp_cargo build --quiet --offline --locked --release; then
            end=$(date +%s.%N)
            if [ "$cold_build" != 0 ] && wanted size; then
                rmcp_build=$(elapsed "$start" "$end")
            fi
            cp "$rmcp_dir/target/release/rmcp-bench-server" "$rmcp_bin"
            export BENCH_RMCP_BIN="$rmcp_bin"
            echo "built $rmcp_bin in $(elapsed "$start" "$end") s (-j$jobs)"
        else
            rmcp_why="its release build failed"
        fi
    fi
    [ -z "$rmcp_why" ] || echo "rmcp: skipped ($rmcp_why)"
fi

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
if wanted layout; then
    section "benches/layout.sh: the stdio start-up rows and the HTTP tools/call rows, as linked and in first-use order"
    benches/layout.sh
fi
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
build=""
if [ "$cold_build" != 0 ]; then
    build=$(elapsed "$start" "$end")
    echo "cold release build (-j$jobs):          $build s"
else
    echo "cold release build:                 skipped (BENCH_COLD_BUILD=0)"
fi
stripped="$(mktemp)"
trap 'rm -f "$stripped"' EXIT
# The stripped size of binary $1, in bytes.
stripped_size() {
    cp "$1" "$stripped"
    strip "$stripped"
    stat -c %s "$stripped"
}
mib() { awk -v b="$1" 'BEGIN { printf "%d bytes (%.2f MiB)", b, b / 1048576 }'; }
# $1 over $2, two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }
size=$(stripped_size "$build_dir/release/readme-example")
echo "stripped release binary:            $(mib "$size")"
# What a server links only when its items need it (the README example has one tool, which
# neither asks for input nor runs as a task, and no middleware, and whose arguments are
# plain types): the engines serving prompts, resources, task tools, input rounds and
# middleware, and the pattern engine, each found by a function only it names. The pattern
# engine is left out by the optimizer (`Signature::add_argument` names it only for types
# that are not plain), so only a release build shows it.
if command -v nm >/dev/null 2>&1; then
    syms=$(nm -C "$build_dir/release/readme-example" 2>/dev/null || true)
    linked=""
    for f in server::methods::prompts::get server::methods::resources::serve \
        server::tasks::task_method mrtr::round::Round::open_with server::middleware::wrap \
        schema::compile::regex; do
        if grep -q " mcp_runtime::$f\$" <<<"$syms"; then
            linked="$linked $f"
        fi
    done
    echo "engines linked (prompts, resources, tasks, input rounds, middleware, patterns):${linked:- none}"
    echo "regex_lite functions linked:        $(grep -c " regex_lite::" <<<"$syms" || true)"
fi
# `(*)` marks a crate printed before: counted once in the first figure; the second is
# the plain `cargo tree -e normal --prefix none | sort -u | wc -l`.
count_crates() {
    local tree
    tree=$("$cargo" tree --offline -e normal --prefix none "$@")
    echo "$(sed 's/ (\*)$//' <<<"$tree" | sort -u | wc -l) $(sort -u <<<"$tree" | wc -l)"
}
read -r deps lines < <(cd "$crate" && count_crates)
echo "crates in the dependency tree:      $deps ($lines lines with \`(*)\` repeats; cargo tree -e normal)"
# "VmRSS RssAnon" (KiB) of binary $1 serving stdio, after a tools/list and 50 calls of
# tool $2 with arguments $3 (2026-07-28, `_meta` on each); each answer must be a result.
# Each the median of 5 starts: the resident set moves between starts by whole 64 KiB
# windows of code (the pages the kernel maps around each fault, which address space
# randomization places differently each time).
idle_rss() {
    local runs=() i
    for ((i = 0; i < 5; i++)); do
        runs+=("$(idle_rss_once "$@")") || return 1
    done
    local rss anon
    rss=$(printf '%s\n' "${runs[@]}" | awk '{ print $1 }' | sort -n | sed -n 3p)
    anon=$(printf '%s\n' "${runs[@]}" | awk '{ print $2 }' | sort -n | sed -n 3p)
    echo "$rss $anon"
}
idle_rss_once() {
    local meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
    local line i rss anon
    coproc SRV { exec env RUST_LOG=warn "$1" 2>/dev/null; }
    local pid=$SRV_PID
    printf '{"jsonrpc":"2.0","id":0,"method":"tools/list","params":{%s}}\n' "$meta" >&"${SRV[1]}"
    read -r line <&"${SRV[0]}"
    for ((i = 1; i <= 50; i++)); do
        printf '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":%s,%s}}\n' \
            "$i" "$2" "$3" "$meta" >&"${SRV[1]}"
        read -r line <&"${SRV[0]}" || line=""
        case "$line" in
        *'"result"'*) ;;
        *) echo "bad answer from $1: ${line:-nothing}" >&2; kill "$pid" 2>/dev/null; return 1 ;;
        esac
        case "$line" in *'"isError":true'*) echo "tool error from $1: $line" >&2; kill "$pid"; return 1 ;; esac
    done
    sleep 0.3
    rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")
    anon=$(awk '/^RssAnon:/ { print $2 }' "/proc/$pid/status")
    # Run inside `$(...)`, where `set -e` does not hold: a server gone after its answers
    # must fail the run, not give an empty figure to the median.
    if [[ -z $rss || -z $anon ]]; then
        echo "no RSS figure for $1 (did it exit?)" >&2
        kill "$pid" 2>/dev/null
        return 1
    fi
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null || true
    echo "$rss $anon"
}
read -r rss anon < <(idle_rss "$build_dir/release/readme-example" forecast '{"city":"Oslo"}')
echo "idle RSS (its own binary, stdio):   $rss KiB after tools/list and 50 calls ($anon KiB anonymous)"

# The floor for that figure: the stdio bench's bare line loop (read a line, parse it into
# a serde_json::Value, answer, write, flush) as a binary of its own, release, stripped of
# nothing, built with the same toolchain (its own target dir; serde_json from the lock).
bare="$target/bare-loop"
mkdir -p "$bare/src"
cat >"$bare/src/main.rs" <<'RS'
use std::io::{BufRead, Write};
fn main() -> std::io::Result<()> {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(req) = serde_json::from_str::<serde_json::Value>(&line?) else { continue };
        let result = match req["method"].as_str() {
            Some("tools/call") => serde_json::json!({"content": [{"type": "text", "text": "ok"}]}),
            _ => serde_json::json!({"tools": []}),
        };
        let reply = serde_json::json!({"jsonrpc": "2.0", "id": req["id"], "result": result});
        serde_json::to_writer(&mut out, &reply)?;
        out.write_all(b"\n")?;
        out.flush()?;
    }
    Ok(())
}
RS
{
    echo '[package]'
    echo 'name = "bare-loop"'
    echo 'version = "0.1.0"'
    echo 'edition = "2024"'
    echo 'publish = false'
    echo
    echo '[dependencies]'
    echo 'serde_json = "1"'
    echo
    echo '[workspace]'
} >"$bare/Cargo.toml"
cp Cargo.lock "$bare/Cargo.lock"
(cd "$bare" && CARGO_TARGET_DIR="$bare/target" "$cargo" build --quiet --offline --release)
read -r bare_rss bare_anon < <(idle_rss "$bare/target/release/bare-loop" any '{}')
echo "idle RSS of a bare line loop:       $bare_rss KiB ($bare_anon KiB anonymous); the README example over it: $(awk -v a="$rss" -v b="$bare_rss" 'BEGIN { printf "%.2fx", a / b }') ($(awk -v a="$anon" -v b="$bare_anon" 'BEGIN { printf "%.2fx", a / b }') anonymous)"

# Seconds a release build of the crate in $1 takes (target dir $2, extra cargo flags after).
timed_build() {
    local dir=$1 tdir=$2 start end
    shift 2
    start=$(date +%s.%N)
    (cd "$dir" && CARGO_TARGET_DIR="$tdir" "$cargo" build --quiet --offline --release "$@")
    end=$(date +%s.%N)
    elapsed "$start" "$end"
}

# Seconds to rebuild the crate in $1 (release, target dir $2, extra cargo flags after $4)
# after one line of a tool's body changes: text $3 of its src/main.rs becomes $4. The
# crate was built just before; only it is rebuilt.
rebuild_after_edit() {
    local dir=$1 tdir=$2 from=$3 to=$4 src
    shift 4
    src=$(<"$dir/src/main.rs")
    if [[ "$src" != *"$from"* ]]; then
        echo "rebuild: no \"$from\" in $dir/src/main.rs" >&2
        return 1
    fi
    printf '%s\n' "${src/"$from"/"$to"}" >"$dir/src/main.rs"
    timed_build "$dir" "$tdir" "$@"
    printf '%s\n' "$src" >"$dir/src/main.rs"
}
rebuild=$(rebuild_after_edit "$crate" "$build_dir" 'summary: "sunny"' 'summary: "cloudy"')
bare_rebuild=$(rebuild_after_edit "$bare" "$bare/target" '"text": "ok"' '"text": "fine"')
echo "rebuild after a one-line tool edit: $rebuild s (release, -j$jobs; the bare line loop: $bare_rebuild s, $(ratio "$rebuild" "$bare_rebuild"))"

# The README example as a stdio-only project may build it: a current-thread runtime, and
# tokio without its multi-thread scheduler (tokio's features "rt" and "macros";
# mcp-runtime without its default features, but "stdio", so it asks for no more). The
# multi-thread scheduler alone calls libm (`pow`), so it also drops that library's
# mapping. Same source otherwise; its own target dir (tokio's features differ, so most of
# the tree is built again).
lean="$target/readme-stdio"
mkdir -p "$lean/src"
sed 's/^#\[tokio::main\]$/#[tokio::main(flavor = "current_thread")]/' "$crate/src/main.rs" >"$lean/src/main.rs"
if ! grep -q 'flavor = "current_thread"' "$lean/src/main.rs"; then
    echo "stdio-only build: no \`#[tokio::main]\` line in the README example" >&2
    exit 1
fi
sed -e 's/^name = "readme-example"$/name = "readme-stdio"/' \
    -e 's/^tokio = .*/tokio = { version = "1.54", features = ["rt", "macros"] }/' \
    -e 's/^\(mcp-runtime = { path = "[^"]*"\) }$/\1, default-features = false, features = ["stdio"] }/' \
    "$crate/Cargo.toml" >"$lean/Cargo.toml"
cp Cargo.lock "$lean/Cargo.lock"
(cd "$lean" && CARGO_TARGET_DIR="$lean/target" "$cargo" build --quiet --offline --release)
lean_size=$(stripped_size "$lean/target/release/readme-stdio")
read -r lean_rss lean_anon < <(idle_rss "$lean/target/release/readme-stdio" forecast '{"city":"Oslo"}')
echo "stdio-only build (current-thread, tokio \"rt\", mcp-runtime \"stdio\" alone): $(mib "$lean_size"); idle RSS $lean_rss KiB ($lean_anon KiB anonymous), $(ratio "$lean_rss" "$bare_rss") the bare loop's, $(ratio "$lean_rss" "$rss") the README example's"

# The README example with mcp-runtime compiled as one codegen unit (the profile override
# README.md's "Binary size and memory" shows): in release, rustc gives every codegen unit
# its own copy of each drop glue and `#[inline]` function it uses, and mcp-runtime's 16
# units repeat many. Same source and target dir: mcp-runtime and the example are built
# again both ways (after touching mcp-runtime's lib.rs), timed; the size and idle RSS are
# of the one-unit binary, which then replaces the default one in that target dir.
touch mcp-runtime/src/lib.rs
units16=$(timed_build "$crate" "$build_dir")
touch mcp-runtime/src/lib.rs
units1=$(timed_build "$crate" "$build_dir" --config 'profile.release.package.mcp-runtime.codegen-units=1')
unit_size=$(stripped_size "$build_dir/release/readme-example")
read -r unit_rss unit_anon < <(idle_rss "$build_dir/release/readme-example" forecast '{"city":"Oslo"}')
echo "mcp-runtime as one codegen unit:    $(mib "$unit_size") ($(ratio "$unit_size" "$size") the default's); idle RSS $unit_rss KiB ($unit_anon KiB anonymous), $(ratio "$unit_rss" "$bare_rss") the bare loop's, $(ratio "$unit_rss" "$rss") the default's; mcp-runtime + the example built in $units1 s against $units16 s with 16 units (-j$jobs)"

# Where the README example's code comes from: cargo-bloat's table of its `.text` by crate,
# then mcp-runtime's largest functions. cargo-bloat is taken from PATH, else installed
# once (pinned) into <target>/tools. It builds the example itself, unstripped, with the
# default profile otherwise (so mcp-runtime in 16 units again), in the same target dir:
# about two minutes, since the profile differs from the builds above.
bloat_version=0.12.1
if ! "$cargo" bloat --version >/dev/null 2>&1; then
    PATH="$target/tools/bin:$PATH"
    "$cargo" bloat --version >/dev/null 2>&1 ||
        "$cargo" install --quiet --locked cargo-bloat --version "$bloat_version" --root "$target/tools" ||
        true
fi
# cargo bloat's table for the README example (arguments after), indented, or why not.
bloat() {
    local out
    if ! out=$(cd "$crate" && "$cargo" bloat --release --frozen --target-dir "$build_dir" "$@" 2>&1); then
        echo "    cargo bloat $* failed: $(tail -1 <<<"$out")"
        return 0
    fi
    # Its build's progress lines go to stderr, before the table; its closing note is dropped.
    sed -n '/^ *File  *\.text/,$p' <<<"$out" | grep -v '^Note: \|^$' | sed 's/^/    /'
}
if "$cargo" bloat --version >/dev/null 2>&1; then
    echo "its .text by crate (cargo-bloat $("$cargo" bloat --version) --crates):"
    bloat --crates -n 12
    echo "mcp-runtime's largest functions (cargo bloat --filter mcp_runtime):"
    bloat --filter mcp_runtime -n 10
else
    echo "its .text by crate: skipped (no cargo-bloat, and \`cargo install cargo-bloat\` failed)"
fi

section "rmcp server (benches/rmcp-server, rmcp 3.11.0) beside the README example"
if [ -z "${BENCH_RMCP_BIN:-}" ]; then
    echo "rmcp: skipped (${rmcp_why:-no binary})"
    exit 0
fi
if [ -n "$rmcp_build" ] && [ -n "$build" ]; then
    echo "cold release build (-j$jobs):          rmcp $rmcp_build s; ours/rmcp $(ratio "$build" "$rmcp_build")"
else
    echo "cold release build:                 skipped (BENCH_COLD_BUILD=0)"
fi
rmcp_size=$(stripped_size "$BENCH_RMCP_BIN")
echo "stripped release binary:            rmcp $(mib "$rmcp_size"); ours/rmcp $(ratio "$size" "$rmcp_size")"
read -r rmcp_deps rmcp_lines < <(cd "$rmcp_crate" && count_crates --locked)
echo "crates in the dependency tree:      rmcp $rmcp_deps ($rmcp_lines lines); ours/rmcp $(ratio "$deps" "$rmcp_deps")"
read -r rmcp_rss rmcp_anon < <(idle_rss "$BENCH_RMCP_BIN" add '{"a":1,"b":2}')
echo "idle RSS (its own binary, stdio):   rmcp $rmcp_rss KiB ($rmcp_anon KiB anonymous); ours/rmcp $(ratio "$rss" "$rmcp_rss") ($(ratio "$anon" "$rmcp_anon") anonymous)"
# The README example serves stdio alone (mcp-runtime's default features compile HTTP in,
# but it never calls it); the rmcp server above serves stdio and HTTP. Without its
# `http` feature it serves stdio alone too (its own target dir, built incrementally).
(cd "$rmcp_crate" && CARGO_TARGET_DIR="$rmcp_dir/target-stdio" \
    "$cargo" build --quiet --offline --locked --release --no-default-features)
stdio_size=$(stripped_size "$rmcp_dir/target-stdio/release/rmcp-bench-server")
read -r stdio_deps stdio_lines < <(cd "$rmcp_crate" && count_crates --locked --no-default-features)
echo "stdio only (--no-default-features): rmcp $(mib "$stdio_size"), $stdio_deps crates ($stdio_lines lines); ours/rmcp $(ratio "$size" "$stdio_size") size, $(ratio "$deps" "$stdio_deps") crates"
# The same one-line edit in rmcp's server (a copy of its crate, built into its target dir,
# so the dependencies are not rebuilt and the repository is not touched).
edit="$rmcp_dir/edit-crate"
rm -rf -- "$edit"
mkdir -p "$edit"
cp -r "$rmcp_crate/src" "$rmcp_crate/Cargo.toml" "$rmcp_crate/Cargo.lock" "$edit/"
(cd "$edit" && CARGO_TARGET_DIR="$rmcp_dir/target" "$cargo" build --quiet --offline --locked --release)
rmcp_rebuild=$(rebuild_after_edit "$edit" "$rmcp_dir/target" '(a + b).to_string()' '(b + a).to_string()' --locked)
echo "rebuild after a one-line tool edit: rmcp $rmcp_rebuild s; ours/rmcp $(ratio "$rebuild" "$rmcp_rebuild")"
