#!/usr/bin/env bash
# How much of the stdio server's idle RSS and cold start is code layout: the stdio bench's
# server binary (benches/servers, `mcp-bench-stdio`: "raw", the bare line loop, and "ours"
# in one binary) linked twice, the second time with its functions in the order they first
# run, and the start-up rows of benches/stdio.rs printed for both.
#
#   1. `cargo rustc --release -p mcp-bench-servers --bin mcp-bench-stdio` links the binary
#      with lld's `--symbol-ordering-file` naming an empty file: the usual layout
#      ("as linked").
#   2. That binary serves a `tools/list` and 50 `tools/call add` under valgrind's callgrind
#      (raw, ours, ours on a current-thread runtime); the functions of the binary each run
#      touches, in the order callgrind lists them, raw's first, become the ordering file.
#   3. The binary is linked again with the same flags (so the same symbol names), now
#      reading the filled file: the functions that run sit together ("first-use order").
#
# On a fault the kernel maps up to 64 KiB of the file around the faulting page, so the
# resident part of the binary is about 64 KiB per 64 KiB window that any code run lies in,
# however little of the window runs. The two tables differ only in where the same code
# lies. Printed, never asserted. Skipped, with the reason, without valgrind or when the
# link does not take `--symbol-ordering-file` (it needs lld, the toolchain's default linker
# on x86_64-unknown-linux-gnu). BENCH_STARTS as in benches/stdio.rs.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

cargo="${CARGO:-cargo}"
target="${CARGO_TARGET_DIR:-$PWD/target}"
case "$target" in /*) ;; *) target="$PWD/$target" ;; esac

if ! command -v valgrind >/dev/null 2>&1; then
    echo "layout: skipped (valgrind is not on PATH; Debian: apt-get install valgrind)"
    exit 0
fi

dir="$target/layout"
mkdir -p "$dir"
order="$dir/order.txt"
: >"$order"
flags=(-C "link-arg=-Wl,--symbol-ordering-file=$order" -C "link-arg=-Wl,--no-warn-symbol-ordering")

server_src=benches/servers/src/bin/stdio.rs

# Links the server binary with $flags and prints its path.
link() {
    local out
    out=$("$cargo" rustc --quiet --release -p mcp-bench-servers --bin mcp-bench-stdio \
        --message-format=json -- "${flags[@]}") || return 1
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' <<<"$out" | tail -1
}
# Afterwards the next plain build links it again, without the flags.
trap 'touch "$server_src"' EXIT

if ! bin=$(link) || [ -z "$bin" ]; then
    echo "layout: skipped (the server did not link with --symbol-ordering-file; it needs lld)"
    exit 0
fi
# The stdio bench itself, which runs the copies below (BENCH_SERVERS_DIR).
bench=$("$cargo" bench --quiet --bench stdio --no-run --message-format=json |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
mkdir -p "$dir/as-linked" "$dir/first-use"
cp "$bin" "$dir/as-linked/mcp-bench-stdio"
# The bench also runs "ours-tokio-io", a binary of its own, as built (not relinked).
io=$("$cargo" build --quiet --release -p mcp-bench-servers --bin mcp-bench-stdio-io \
    --message-format=json | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
cp "$io" "$dir/as-linked/mcp-bench-stdio-io"
cp "$io" "$dir/first-use/mcp-bench-stdio-io"

# The requests of the idle RSS rows: a tools/list, then 50 calls.
meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
{
    printf '{"jsonrpc":"2.0","id":0,"method":"tools/list","params":{%s}}\n' "$meta"
    for ((i = 1; i <= 50; i++)); do
        printf '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3},%s}}\n' \
            "$i" "$meta"
    done
} >"$dir/requests.jsonl"

for kind in raw ours ours-current-thread; do
    valgrind -q --tool=callgrind --demangle=no --compress-strings=no --compress-pos=no \
        --callgrind-out-file="$dir/callgrind.$kind" \
        "$dir/as-linked/mcp-bench-stdio" "$kind" <"$dir/requests.jsonl" >"$dir/answers.$kind"
    answers=$(grep -c '"result"' "$dir/answers.$kind" || true)
    if [ "$answers" != 51 ]; then
        echo "layout: $kind answered $answers of 51 requests with a result" >&2
        exit 1
    fi
done
# The functions of the binary (its `ob=`), each once, in the order of the files; names
# callgrind could not give (a bare address) and its recursion marks ('2) left out.
awk -v bin="$dir/as-linked/mcp-bench-stdio" '
    /^ob=/ { inside = (substr($0, 4) == bin); next }
    /^fn=/ && inside {
        name = substr($0, 4)
        sub(/\047[0-9]+$/, "", name)
        if (name !~ /^0x/ && !(name in seen)) { seen[name] = 1; print name }
    }
' "$dir/callgrind.raw" "$dir/callgrind.ours" "$dir/callgrind.ours-current-thread" >"$order"
echo "functions that ran, in first-use order: $(wc -l <"$order") (of raw, ours, ours on a current-thread runtime)"

# Same flags, so cargo would call the binary fresh: a newer source makes it link again.
touch "$server_src"
bin=$(link)
cp "$bin" "$dir/first-use/mcp-bench-stdio"

rows() {
    BENCH_SERVERS_DIR="$1" BENCH_CALLGRIND=0 BENCH_SECS=0.2 BENCH_ROUNDS=1 "$bench" 2>/dev/null |
        grep -E '^(metric|cold start|idle RSS|  of it anonymous|  current-thread: (cold start|idle RSS|anonymous))'
}
echo
echo "as linked:"
rows "$dir/as-linked"
echo
echo "first-use order (the same code, its functions that run placed together):"
rows "$dir/first-use"
