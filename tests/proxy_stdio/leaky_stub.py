"""A 2025-11-25 MCP server on stdio, written by hand (standard library only), whose
stderr and bad output say SECRET (its only argument), for tests/proxy_stdio.rs: none of it
may reach a gateway's client. Its tools:

- `bad_line`: writes a line that is not JSON (quoting SECRET), then answers `ok`;
- `bad_shape`: answers a result of the wrong shape (its content a string quoting SECRET);
- `bad_error`: answers an `error` that is not a JSON-RPC error object (SECRET);
- `crash`: says SECRET on stderr, then exits (status 3) without answering.

It says SECRET on stderr when it starts, and for every request. Given STARTS (a file it
counts its starts in), each start but the first answers `initialize` with a JSON-RPC
error (-32603) quoting SECRET: a child started again after a crash whose handshake fails.

Usage: leaky_stub.py SECRET [STARTS]
"""
import json
import sys

SECRET = sys.argv[1]
AGAIN = False
if len(sys.argv) > 2:
    with open(sys.argv[2], "a+") as starts:
        starts.seek(0)
        AGAIN = starts.read() != ""
        starts.write("start\n")
TOOLS = [{"name": n, "inputSchema": {"type": "object"}}
         for n in ["bad_line", "bad_shape", "bad_error", "crash"]]


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def result(req, value):
    return {"jsonrpc": "2.0", "id": req["id"], "result": value}


print(f"starting; connecting to {SECRET}", file=sys.stderr, flush=True)
for line in sys.stdin:
    req = json.loads(line)
    print(f"got {req.get('method')}; {SECRET}", file=sys.stderr, flush=True)
    if "id" not in req:
        continue
    method = req.get("method")
    name = (req.get("params") or {}).get("name")
    if method == "initialize" and AGAIN:
        send({"jsonrpc": "2.0", "id": req["id"], "error": {
            "code": -32603, "message": f"cannot open /srv/secret.db on {SECRET}"}})
    elif method == "initialize":
        send(result(req, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                          "serverInfo": {"name": "leaky", "version": "1"}}))
    elif method == "tools/list":
        send(result(req, {"tools": TOOLS}))
    elif method == "tools/call" and name == "bad_line":
        sys.stdout.write(f"Traceback: cannot reach {SECRET}\n")
        send(result(req, {"content": [{"type": "text", "text": "ok"}]}))
    elif method == "tools/call" and name == "bad_shape":
        send(result(req, {"content": f"see {SECRET}"}))
    elif method == "tools/call" and name == "bad_error":
        send({"jsonrpc": "2.0", "id": req["id"], "error": f"failed at {SECRET}"})
    elif method == "tools/call" and name == "crash":
        print(f"fatal: lost {SECRET}", file=sys.stderr, flush=True)
        sys.exit(3)
    else:
        send({"jsonrpc": "2.0", "id": req["id"],
              "error": {"code": -32601, "message": "unknown method"}})
