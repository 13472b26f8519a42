#!/usr/bin/env bash
# What code footprint costs on this machine: the stdio bench (benches/stdio.rs) run
# against this crate's stand-in server (src/main.rs) in each of its modes, `same`,
# `lines` and `pages`, which run about the same instructions per round trip but reach
# different amounts of code, and `atomics` (`same` and 100 atomic read-modify-writes). Prints, per mode, the bench's rows for raw and "ours" (here:
# the bare loop plus the generated code): round trips, CPU per round trip, instructions,
# simulated L1i misses, and the code footprint (distinct instructions, and the 64-byte
# cache lines and 4 KiB pages they lie on) per round trip; then what `lines` and `pages`
# cost over `same`: ours' extra CPU over raw's in the same bench run, median of the runs.
#
# The `pages` mode needs each of its functions on a page of its own: the binary is linked
# with lld's `--symbol-ordering-file` naming each function and then its 4 KiB filler
# (as benches/layout.sh links the stdio server). Printed, never asserted; the callgrind
# rows need valgrind. BENCH_SECS and BENCH_ROUNDS as in benches/stdio.rs (here 2 and 2);
# FOOTPRINT_REPEATS (default 3) runs of the three modes, in turn.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cargo="${CARGO:-cargo}"
target="${CARGO_TARGET_DIR:-$root/target}"
case "$target" in /*) ;; *) target="$root/$target" ;; esac
dir="$target/footprint"
mkdir -p "$dir/bin"
order="$dir/order.txt"
: >"$order"
flags=(-C "link-arg=-Wl,--symbol-ordering-file=$order" -C "link-arg=-Wl,--no-warn-symbol-ordering")

link() {
    local out
    out=$(CARGO_TARGET_DIR="$dir/target" "$cargo" rustc --quiet --release \
        --manifest-path "$here/Cargo.toml" --bin mcp-bench-stdio --message-format=json \
        -- "${flags[@]}") || return 1
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' <<<"$out" | tail -1
}

bin=$(link)
# Each generated function of the `pages` mode (`p000` ... `p109`), then its filler
# (`p000f` ...), by their symbol names in this build.
nm "$bin" | awk '$3 ~ /4pads[45]p[0-9][0-9][0-9]f?17h/ { print $3 }' |
    sed 's/.*4pads[45]p\([0-9]*\)\(f\{0,1\}\)17h.*/\1\2 &/' | sort | cut -d' ' -f2 >"$order"
if [ "$(wc -l <"$order")" -ne 220 ]; then
    echo "footprint: found $(wc -l <"$order") of the 220 generated functions in $bin" >&2
    exit 1
fi
touch "$here/src/main.rs"
bin=$(link)
cp "$bin" "$dir/bin/mcp-bench-stdio"
# The bench also spawns its tokio::io variant from a binary of its own.
cp "$bin" "$dir/bin/mcp-bench-stdio-io"

bench=$(cd "$root" && "$cargo" bench --quiet --bench stdio --no-run --message-format=json |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)

rows='^(round trips/s|server CPU per round trip|instructions per round trip|L1 instruction misses/round trip|code footprint per round trip|  its cache lines|  its pages of code) '
# ours' CPU per round trip over raw's, in µs, from one bench run's output.
extra() { awk '/^server CPU per round trip/ { a = $6; b = $7; sub("us", "", a); sub("us", "", b); print b - a }'; }
# A figure of ours from the callgrind rows.
ours() { awk -v row="$1" 'index($0, row) == 1 { split(substr($0, length(row) + 1), f, " "); print f[2] }'; }
repeats="${FOOTPRINT_REPEATS:-3}"
declare -A extras lines pages
for ((r = 1; r <= repeats; r++)); do
    for mode in same lines pages atomics; do
        # The callgrind rows once per mode: they do not move between runs.
        callgrind=$([ "$r" = 1 ] && echo 1 || echo 0)
        out=$(cd "$root" && FOOTPRINT=$mode BENCH_SERVERS_DIR="$dir/bin" BENCH_RMCP=0 \
            BENCH_SECS="${BENCH_SECS:-2}" BENCH_ROUNDS="${BENCH_ROUNDS:-2}" BENCH_STARTS=1 \
            BENCH_CALLGRIND=$callgrind "$bench" --bench 2>&1) || { echo "$out"; exit 1; }
        if [ "$r" = 1 ]; then
            echo "== FOOTPRINT=$mode"
            grep -E "$rows|^metric" <<<"$out" | cut -c1-81
            lines[$mode]=$(ours "  its cache lines" <<<"$out")
            pages[$mode]=$(ours "  its pages of code" <<<"$out")
        fi
        extras[$mode]="${extras[$mode]:-} $(extra <<<"$out")"
    done
done
# Medians over the repeats of ours' extra CPU over raw (in the same bench run), then each
# mode's over `same`'s, per cache line and per page it adds.
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "ours' server CPU per round trip over raw's, per run (us):"
for mode in same lines pages atomics; do
    echo "  $mode:${extras[$mode]} (median $(median <<<"${extras[$mode]}"))"
done
same=$(median <<<"${extras[same]}")
for mode in lines pages; do
    awk -v m="$mode" -v e="$(median <<<"${extras[$mode]}")" -v s="$same" \
        -v dl="$((${lines[$mode]:-0} - ${lines[same]:-0}))" -v dp="$((${pages[$mode]:-0} - ${pages[same]:-0}))" \
        'BEGIN { printf "%s over same: %+.2f us per round trip for %+d cache lines and %+d pages of code\n", m, e - s, dl, dp }'
done
awk -v e="$(median <<<"${extras[atomics]}")" -v s="$same" \
    'BEGIN { printf "atomics over same: %+.2f us per round trip for 100 atomic read-modify-writes\n", e - s }'
