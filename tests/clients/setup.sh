#!/usr/bin/env bash
# Installs the pinned real clients that tests/real_clients.rs drives:
#   a Python venv with the official `mcp` SDK (requirements.txt); tests/clients/.venv, or
#     $MCP_CLIENTS_VENV when set (then point MCP_PYTHON at its bin/python)
#   tests/clients/node_modules: the official TypeScript client (package-lock.json)
# Needs python3 (with venv) and node >= 20 with npm. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")"
venv="${MCP_CLIENTS_VENV:-.venv}"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import mcp' 2>/dev/null; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r requirements.txt
fi
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --silent --no-audit --no-fund
fi
py=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))')
ts=$(node -p 'require("./node_modules/@modelcontextprotocol/client/package.json").version')
echo "real clients ready: python mcp $py ($venv), @modelcontextprotocol/client $ts"
