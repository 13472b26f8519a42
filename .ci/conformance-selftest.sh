#!/usr/bin/env bash
# conformance-selftest.sh - test the baseline comparison of .ci/conformance.sh
# on fabricated result directories (no server, no network once the suite is
# cached). Each case builds a checks/ tree like the suite writes
# (server-<scenario>-<timestamp>/checks.json), runs `conformance.sh --report`
# and checks its exit status and final line.
#
# Usage: .ci/conformance-selftest.sh      exit 0 when every case behaves
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
RUNNER="$HERE/conformance.sh"
tmp="$(mktemp -d /tmp/mcp-conformance-selftest.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT

# Paths of the installed node and suite (installs them if needed).
paths="$(bash "$RUNNER" --install-only)" || { echo "selftest: --install-only failed" >&2; exit 2; }
node="$(sed -n 's/^node=//p' <<<"$paths")"
req="$(sed -n 's/^requirements=//p' <<<"$paths")"
node_path="$(sed -n 's/^node_path=//p' <<<"$paths")"

# Every server scenario of the requirement set (scored and not scored).
mapfile -t scenarios < <(REQ="$req" NODE_PATH="$node_path" "$node" -e '
  const y = require("yaml").parse(require("fs").readFileSync(process.env.REQ, "utf8"));
  for (const s of y.server) console.log(s);
  for (const e of y.not_scored) if (e.leg === "server") console.log(e.scenario);')
((${#scenarios[@]} > 0)) || { echo "selftest: no scenarios in $req" >&2; exit 2; }

# fake_results DIR [NAME=SPEC ...]: one result per scenario; by default a
# single SUCCESS check. SPEC is a comma list of check statuses
# (SUCCESS, FAILURE, WARNING, SKIPPED, INFO), MISSING (no directory at all),
# or GARBAGE (a checks.json that is not JSON).
fake_results() {
  local dir="$1" name spec override i status json
  shift
  mkdir -p "$dir"
  for name in "${scenarios[@]}"; do
    spec=SUCCESS
    for override in "$@"; do
      [[ "${override%%=*}" == "$name" ]] && spec="${override#*=}"
    done
    [[ "$spec" == MISSING ]] && continue
    mkdir -p "$dir/server-$name-2026-01-01T00-00-00-000Z"
    if [[ "$spec" == GARBAGE ]]; then
      echo '{ not json' >"$dir/server-$name-2026-01-01T00-00-00-000Z/checks.json"
      continue
    fi
    json="" i=0
    for status in ${spec//,/ }; do
      i=$((i + 1))
      json+="${json:+,}{\"id\":\"$name-check-$i\",\"status\":\"$status\",\"errorMessage\":\"fake $status\"}"
    done
    echo "[$json]" >"$dir/server-$name-2026-01-01T00-00-00-000Z/checks.json"
  done
}

# baseline FILE [NAME ...]: a baseline listing the given scenarios.
baseline() {
  local file="$1" name
  shift
  { echo "# selftest baseline"; echo "server:"; for name in "$@"; do echo "  - $name  # why"; done; } >"$file"
}

fails=0 n=0
# expect NAME RC FINAL-LINE-SUBSTRING CHECKS_DIR BASELINE
expect() {
  local name="$1" want_rc="$2" want_line="$3" dir="$4" base="$5" out rc=0
  n=$((n + 1))
  out="$(CONFORMANCE_BASELINE="$base" bash "$RUNNER" --report "$dir" 2>&1)" || rc=$?
  if [[ "$rc" == "$want_rc" ]] && grep -qF -- "$want_line" <<<"$(tail -n 1 <<<"$out")"; then
    echo "ok   $name"
  else
    fails=$((fails + 1))
    echo "FAIL $name: want exit $want_rc and last line containing '$want_line', got exit $rc:"
    # shellcheck disable=SC2001 # sed reads better than ${out//...} here
    sed 's/^/     | /' <<<"$out"
  fi
}

total=${#scenarios[@]}

baseline "$tmp/c1.yml"
fake_results "$tmp/c1"
expect "all pass, empty baseline" 0 "$total/$total scenarios passed, 0 unexpected failures, 0 stale" "$tmp/c1" "$tmp/c1.yml"

baseline "$tmp/c2.yml" resources-list
fake_results "$tmp/c2" resources-list=SUCCESS,FAILURE
expect "failure listed in the baseline" 0 "$((total - 1))/$total scenarios passed, 0 unexpected failures, 0 stale" "$tmp/c2" "$tmp/c2.yml"

baseline "$tmp/c3.yml"
fake_results "$tmp/c3" tasks-lifecycle=FAILURE http-header-validation=WARNING,FAILURE
expect "not-scored failures count" 1 "2 unexpected failures, 0 stale" "$tmp/c3" "$tmp/c3.yml"

baseline "$tmp/c4.yml" caching
fake_results "$tmp/c4"
expect "baseline entry that passes is stale" 1 "0 unexpected failures, 1 stale" "$tmp/c4" "$tmp/c4.yml"

baseline "$tmp/c5.yml" no-such-scenario
fake_results "$tmp/c5"
expect "unknown baseline entry is stale" 1 "0 unexpected failures, 1 stale" "$tmp/c5" "$tmp/c5.yml"

baseline "$tmp/c6.yml"
fake_results "$tmp/c6" caching=MISSING
expect "scenario without result fails" 1 "$((total - 1))/$total scenarios passed, 1 unexpected failures" "$tmp/c6" "$tmp/c6.yml"
baseline "$tmp/c6b.yml" caching
expect "scenario without result, in baseline" 0 "0 unexpected failures, 0 stale" "$tmp/c6" "$tmp/c6b.yml"

baseline "$tmp/c7.yml"
fake_results "$tmp/c7" tasks-status-notifications=SKIPPED tools-list=SUCCESS,WARNING,INFO
expect "warnings and skips do not fail" 0 "$total/$total scenarios passed" "$tmp/c7" "$tmp/c7.yml"

baseline "$tmp/c8.yml"
mkdir -p "$tmp/c8"
expect "no results at all is a harness error" 2 "harness error" "$tmp/c8" "$tmp/c8.yml"

printf 'server:\n  - caching\n  this is not a list entry\n' >"$tmp/c9.yml"
fake_results "$tmp/c9"
expect "unparsable baseline is a harness error" 2 "harness error" "$tmp/c9" "$tmp/c9.yml"

baseline "$tmp/c10.yml"
fake_results "$tmp/c10" prompts-list=GARBAGE
expect "unreadable checks.json fails" 1 "1 unexpected failures" "$tmp/c10" "$tmp/c10.yml"

baseline "$tmp/c11.yml"
fake_results "$tmp/c11" caching=FAILURE
mkdir -p "$tmp/c11/server-caching-2026-01-01T00-00-01-000Z"
echo '[{"id":"x","status":"SUCCESS"}]' >"$tmp/c11/server-caching-2026-01-01T00-00-01-000Z/checks.json"
expect "latest run of a scenario wins" 0 "$total/$total scenarios passed" "$tmp/c11" "$tmp/c11.yml"

# The project's baseline: results failing exactly its entries must match it
# (catches typos in scenario names and parse errors in the real file).
mapfile -t listed < <(sed -n 's/^[[:space:]]*-[[:space:]]*\([^[:space:]#]*\).*/\1/p' "$HERE/conformance-expected-failures.yml")
overrides=()
for name in "${listed[@]}"; do overrides+=("$name=FAILURE"); done
fake_results "$tmp/c12" "${overrides[@]}"
expect "project baseline names real scenarios" 0 "0 unexpected failures, 0 stale" "$tmp/c12" "$HERE/conformance-expected-failures.yml"

echo "selftest: $((n - fails))/$n cases ok"
((fails == 0))
