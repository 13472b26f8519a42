"""A 2025-11-25 MCP server on stdio, written by hand (standard library only), that
misbehaves on request, for tests/proxy_stdio.rs. It writes a line to STATE/starts each
time it starts (`start PID`), and a line to STATE/overlaps for each earlier start still
running then (its pid), and exits at once (status 4) while STATE/crash-on-start exists.
Its tools:

- `echo`: its arguments, as text;
- `crash`: exits (status 3) without answering;
- `hang`: never answers;
- `string_id`: answers with its request's id written as a string (`"7"` for 7);
- `wrong_id`: answers with an id no request has (its id + 1000), and never with its own;
- `cancelled`: the request ids it was told were cancelled (`notifications/cancelled`);
- `deaf`: answers, then stops reading its stdin (kept open) and sleeps, up and silent;
- `mute`: closes its stdout without answering, then sleeps, up, reading nothing;
- `stuck_task`: run only as a task (its experimental task API, `taskSupport: "required"`),
  which `tasks/get` says is completed at once, and whose `tasks/result` never answers;
- `gen<N>`: listed only by its Nth start, so a reader of its list sees which start it is.

Usage: stdio_stub.py STATE
"""
import json
import os
import sys
import time

STATE = sys.argv[1]
with open(os.path.join(STATE, "starts"), "a") as f:
    f.write(f"start {os.getpid()}\n")
with open(os.path.join(STATE, "starts")) as f:
    EARLIER = [int(l.split()[1]) for l in f if l.startswith("start ")][:-1]
for pid in EARLIER:
    try:
        os.kill(pid, 0)
    except OSError:
        continue
    with open(os.path.join(STATE, "overlaps"), "a") as f:
        f.write(f"{pid}\n")
if os.path.exists(os.path.join(STATE, "crash-on-start")):
    sys.exit(4)
with open(os.path.join(STATE, "starts")) as f:
    START = len(f.readlines())

TOOLS = [
    {"name": name, "inputSchema": {"type": "object"}}
    for name in ["echo", "crash", "hang", "string_id", "wrong_id", "cancelled", "deaf",
                 "mute", f"gen{START}"]
] + [{"name": "stuck_task", "inputSchema": {"type": "object"},
      "execution": {"taskSupport": "required"}}]
cancelled = []


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def result(req, value):
    return {"jsonrpc": "2.0", "id": req["id"], "result": value}


def text(req, t):
    return result(req, {"content": [{"type": "text", "text": t}]})


def task(status):
    """The one task it runs (`stuck_task`'s), with `status`."""
    at = "2025-01-01T00:00:00Z"
    return {"taskId": "stuck", "status": status, "createdAt": at, "lastUpdatedAt": at,
            "ttl": 60000, "pollInterval": 100}


def answer(req):
    method = req.get("method")
    params = req.get("params") or {}
    if method == "initialize":
        return result(req, {
            "protocolVersion": "2025-11-25",
            "capabilities": {
                "tools": {"listChanged": True},
                "tasks": {"requests": {"tools": {"call": {}}}},
            },
            "serverInfo": {"name": "stub", "version": str(START)},
        })
    if method == "ping":
        return result(req, {})
    if method == "tools/list":
        return result(req, {"tools": TOOLS})
    if method == "tools/call" and params.get("name") == "stuck_task" and "task" in params:
        return result(req, {"task": task("working")})
    if method == "tasks/get":
        return result(req, task("completed"))
    if method == "tasks/result":
        return None
    if method == "tasks/cancel":
        return result(req, task("cancelled"))
    if method == "tools/call":
        name = params.get("name")
        if name == "echo" or name == f"gen{START}":
            return text(req, json.dumps(params.get("arguments") or {}, sort_keys=True))
        if name == "crash":
            sys.exit(3)
        if name == "hang":
            return None
        if name == "string_id":
            reply = text(req, "as a string")
            reply["id"] = str(req["id"])
            return reply
        if name == "wrong_id":
            reply = text(req, "to no one")
            reply["id"] = req["id"] + 1000
            return reply
        if name == "cancelled":
            return text(req, json.dumps(cancelled))
        if name == "mute":
            os.close(1)
            while True:
                time.sleep(60)
        if name == "deaf":
            send(text(req, "deaf from now on"))
            while True:
                time.sleep(60)
    return {"jsonrpc": "2.0", "id": req["id"],
            "error": {"code": -32601, "message": f"Method not found: {method}"}}


for line in sys.stdin:
    try:
        req = json.loads(line)
    except ValueError:
        continue
    if "id" not in req:
        if req.get("method") == "notifications/cancelled":
            cancelled.append((req.get("params") or {}).get("requestId"))
        continue
    reply = answer(req)
    if reply is not None:
        send(reply)
