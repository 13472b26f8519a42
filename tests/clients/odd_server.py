"""A 2025-11-25 MCP server on stdio, written by hand (no SDK), whose lists have the odd
entries real servers send and this framework's rules refuse: a tool whose input schema is
no object, a tool named with a space, one with no name, a tool listed twice, a tool
name too long once mounted, a resource
with a blank name, one whose URI has a bad percent-encoding, one whose URI has
variables, and two templates that can match the same URI. tests/proxy.rs puts a gateway
in front of it.

Usage: odd_server.py
"""
import json
import sys

TOOLS = [
    {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
    {"name": "broken", "inputSchema": {"type": "string"}},
    {"name": "look up", "inputSchema": {"type": "object"}},
    {"name": "", "inputSchema": {"type": "object"}},
    {"name": "echo", "description": "listed twice", "inputSchema": {"type": "object"}},
    # 66 characters, as OpenAPI-generated names can be: too long for a tool name here once
    # mounted (64), within the 128 the spec recommends.
    {"name": "get_repos_owner_repo_pulls_pull_number_reviews_review_id_comments",
     "inputSchema": {"type": "object"}},
]
RESOURCES = [
    {"uri": "x://1", "name": " "},
    {"uri": "x://%zz", "name": "bad"},
    {"uri": "x://{id}", "name": "vars"},
]
TEMPLATES = [
    {"uriTemplate": "t://{id}", "name": "by id"},
    {"uriTemplate": "t://{name}", "name": "by name"},
]


def result(req, value):
    return {"jsonrpc": "2.0", "id": req["id"], "result": value}


def answer(req):
    method = req.get("method")
    params = req.get("params") or {}
    if method == "initialize":
        return result(req, {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}, "resources": {}},
            "serverInfo": {"name": "odd", "version": "1.0.0"},
        })
    if method == "tools/list":
        return result(req, {"tools": TOOLS})
    if method == "resources/list":
        return result(req, {"resources": RESOURCES})
    if method == "resources/templates/list":
        return result(req, {"resourceTemplates": TEMPLATES})
    if method == "resources/read":
        uri = params.get("uri", "")
        return result(req, {"contents": [{"uri": uri, "text": f"read {uri}"}]})
    if method == "tools/call":
        name, args = params.get("name"), params.get("arguments") or {}
        text = f"{name}: {json.dumps(args, sort_keys=True)}"
        return result(req, {"content": [{"type": "text", "text": text}]})
    if method == "ping":
        return result(req, {})
    return {"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32601, "message": "Method not found"}}


for line in sys.stdin:
    try:
        req = json.loads(line)
    except ValueError:
        continue
    if "id" not in req or "method" not in req:
        continue  # a notification, or an answer
    sys.stdout.write(json.dumps(answer(req)) + "\n")
    sys.stdout.flush()
