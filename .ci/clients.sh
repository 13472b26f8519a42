#!/usr/bin/env bash
# clients.sh - install the pinned real clients for tests/real_clients.rs on a CI
# machine and write the environment the tests need to the file named by $1:
#   MCP_PYTHON  the venv's python (venv cached in $MCP_CI_CACHE by requirements hash)
#   MCP_NODE    Node 22 (the one .ci/conformance.sh installs)
# Installs python3, python3-venv, curl and jq with apt-get when they are missing.
set -euo pipefail
out="${1:?usage: clients.sh ENV_FILE}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
CACHE="${MCP_CI_CACHE:-$HOME/.cache/mcp-ci}"

pkgs=()
python3 -c 'import venv, ensurepip' 2>/dev/null || pkgs+=(python3 python3-venv)
command -v curl >/dev/null || pkgs+=(curl)
command -v jq >/dev/null || pkgs+=(jq)   # curl and jq: tests/readme_wire.rs
if ((${#pkgs[@]} > 0)); then
  echo "clients.sh: installing ${pkgs[*]}"
  sudo=()
  [[ $(id -u) == 0 ]] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${pkgs[@]}"
fi

node="$(bash .ci/conformance.sh --install-only | sed -n 's/^node=//p')"
[[ -x "$node" ]] || { echo "clients.sh: no node from conformance.sh" >&2; exit 1; }
export PATH="$(dirname "$node"):$PATH"   # npm ci below runs under the same node

hash="$(sha256sum tests/clients/requirements.txt | cut -c1-12)"
venv="$CACHE/clients-venv-$hash"
MCP_CLIENTS_VENV="$venv" bash tests/clients/setup.sh
{
  echo "export MCP_PYTHON='$venv/bin/python'"
  echo "export MCP_NODE='$node'"
} >"$out"
