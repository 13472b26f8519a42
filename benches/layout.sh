#!/usr/bin/env bash
# How much of the stdio server's idle RSS and cold start, and of the HTTP server's CPU per
# call (the second part, at the end), is code layout: the stdio bench's
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
http_src=benches/servers/src/bin/http.rs

# Links server binary $1 (default mcp-bench-stdio) with $flags and prints its path.
link() {
    local out
    out=$("$cargo" rustc --quiet --release -p mcp-bench-servers --bin "${1:-mcp-bench-stdio}" \
        --message-format=json -- "${flags[@]}") || return 1
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' <<<"$out" | tail -1
}
# Afterwards the next plain build links them again, without the flags.
trap 'touch "$server_src" "$http_src"' EXIT

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
# The functions of binary $1 (its `ob=`) in the callgrind files that follow, each once, in
# the order of the files; names callgrind could not give (a bare address) and its
# recursion marks ('2) left out.
functions_of() {
    local bin=$1
    shift
    awk -v bin="$bin" '
        /^ob=/ { inside = (substr($0, 4) == bin); next }
        /^fn=/ && inside {
            name = substr($0, 4)
            sub(/\047[0-9]+$/, "", name)
            if (name !~ /^0x/ && !(name in seen)) { seen[name] = 1; print name }
        }
    ' "$@"
}
functions_of "$dir/as-linked/mcp-bench-stdio" \
    "$dir/callgrind.raw" "$dir/callgrind.ours" "$dir/callgrind.ours-current-thread" >"$order"
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

# The HTTP server binary (`mcp-bench-http`: "raw", a bare axum + serde_json handler, and
# "ours" in one binary) the same way: as linked, then with the functions that ran when
# each served 50 `tools/call add` over one keep-alive connection under callgrind (raw's
# first, then ours'), and the http bench's `tools/call` rows for both copies. On this
# path the layout moves CPU time, not memory: equal instructions, unequal stalls.
echo
if ! command -v curl >/dev/null 2>&1; then
    echo "layout (HTTP): skipped (the requests are sent with curl, which is not on PATH)"
    exit 0
fi
http_order="$dir/http-order.txt"
: >"$http_order"
flags=(-C "link-arg=-Wl,--symbol-ordering-file=$http_order" -C "link-arg=-Wl,--no-warn-symbol-ordering")
touch "$http_src"
bin=$(link mcp-bench-http)
cp "$bin" "$dir/as-linked/mcp-bench-http"
http_bench=$("$cargo" bench --quiet --bench http --no-run --message-format=json |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)

printf '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3},%s}}' \
    "$meta" >"$dir/call.json"
# Serves 50 calls with server $1 under callgrind; its answers go to answers.http-$1.
http_calls() {
    local kind=$1 port="" stdin="$dir/stdin.http-$kind" portfile="$dir/port.http-$kind"
    rm -f "$stdin" "$portfile"
    mkfifo "$stdin"
    BENCH_TOOLS_LIST='{"tools":[]}' valgrind -q --tool=callgrind --demangle=no \
        --compress-strings=no --compress-pos=no --callgrind-out-file="$dir/callgrind.http-$kind" \
        "$dir/as-linked/mcp-bench-http" "$kind" <"$stdin" >"$portfile" &
    local server=$!
    exec {hold}>"$stdin" # the server serves until its stdin closes
    for ((i = 0; i < 600 && ${#port} == 0; i++)); do
        sleep 0.1
        port=$(head -1 "$portfile")
    done
    {
        for ((i = 1; i <= 50; i++)); do
            printf 'url = "http://127.0.0.1:%s/mcp"\n' "$port"
            printf 'header = "%s"\n' "Content-Type: application/json" \
                "Accept: application/json, text/event-stream" "MCP-Protocol-Version: 2026-07-28" \
                "Mcp-Method: tools/call" "Mcp-Name: add"
            printf 'data-binary = "@%s"\n' "$dir/call.json"
            if ((i < 50)); then echo next; fi
        done
    } >"$dir/curl.cfg"
    curl -s --http1.1 -K "$dir/curl.cfg" >"$dir/answers.http-$kind" || true
    exec {hold}>&-
    wait "$server"
    answers=$(grep -o '"text":"5"' "$dir/answers.http-$kind" | wc -l)
    if [ "$answers" != 50 ]; then
        echo "layout: HTTP $kind answered $answers of 50 calls with 5" >&2
        exit 1
    fi
}
http_calls raw
http_calls ours
functions_of "$dir/as-linked/mcp-bench-http" "$dir/callgrind.http-raw" "$dir/callgrind.http-ours" >"$http_order"
echo "HTTP: functions that ran, in first-use order: $(wc -l <"$http_order") (of raw, ours)"
touch "$http_src"
bin=$(link mcp-bench-http)
cp "$bin" "$dir/first-use/mcp-bench-http"

http_rows() {
    BENCH_SERVERS_DIR="$1" BENCH_CALLGRIND=0 BENCH_SECS="${BENCH_SECS:-3}" "$http_bench" 2>/dev/null |
        grep -E '^(tools/call c=(16|128) |server CPU per request, tools/call \(all c\))'
}
echo
echo "HTTP, as linked:"
http_rows "$dir/as-linked"
echo
echo "HTTP, first-use order (the same code, its functions that run placed together):"
http_rows "$dir/first-use"
