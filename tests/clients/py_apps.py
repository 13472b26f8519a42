"""Drives a gateway of tests/proxy.rs in front of an MCP App server (apps_server.mjs) with
the official Python SDK client (`mcp` 2.3.0), in the 2026-07-28 era or the legacy one:
lists the tools (with their `_meta`), reads the view and calls the tool. Prints one JSON
object with what it saw.

Usage: py_apps.py [--legacy] URL
"""
import json
import sys

import anyio
from mcp import Client


async def main() -> None:
    args = sys.argv[1:]
    mode = "legacy" if args[0] == "--legacy" else "2026-07-28"
    seen: dict = {}
    async with Client(args[-1], mode=mode) as c:
        seen["version"] = c.protocol_version
        tools = (await c.list_tools()).tools
        seen["tools"] = {t.name: t.meta for t in tools}
        resources = (await c.list_resources()).resources
        seen["resources"] = {str(r.uri): r.mime_type for r in resources}
        view = (await c.read_resource(tools[0].meta["ui"]["resourceUri"])).contents[0]
        seen["view"] = {"uri": str(view.uri), "text": view.text, "meta": view.meta}
        r = await c.call_tool(tools[0].name, {"zone": "UTC"})
        seen["called"] = "\n".join(x.text for x in r.content if x.type == "text")
    print(json.dumps(seen))


anyio.run(main)
