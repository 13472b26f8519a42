"""Drives the gateway of tests/proxy.rs with the official Python SDK client (`mcp` 2.3.0,
2026-07-28 over Streamable HTTP) and prints one JSON object with what it saw.

Usage: py_proxy.py URL FILE_PATH
"""
import json
import sys

import anyio
from mcp import Client
from mcp_types import ElicitResult


async def main() -> None:
    url, path = sys.argv[1], sys.argv[2]
    seen: dict = {}

    async def on_elicit(ctx, params):  # the upstream's question, passed through the gateway
        seen["asked"] = params.message
        return ElicitResult(action="accept", content={"ok": True})

    async with Client(url, mode="2026-07-28", elicitation_callback=on_elicit) as c:
        tools, cursor = [], None
        while True:  # every tool must survive the client's own validation
            page = await c.list_tools(cursor=cursor)
            tools += [t.name for t in page.tools]
            cursor = page.next_cursor
            if not cursor:
                break
        seen["tools"] = sorted(tools)
        r = await c.call_tool("fs_read_text_file", {"path": path})
        seen["read"] = r.content[0].text
        seen["read_error"] = bool(r.is_error)
        r = await c.call_tool("fs_list_directory", {"path": path.rsplit("/", 1)[0]})
        seen["listing"] = r.content[0].text
        r = await c.call_tool("py_add", {"a": 2, "b": 3})
        seen["add"] = r.content[0].text
        r = await c.call_tool("py_look_up", {"word": "gateway"})  # upstream: "look up"
        seen["look_up"] = r.content[0].text
        r = await c.call_tool("local_hello", {})
        seen["hello"] = r.content[0].text
        r = await c.call_tool("py_confirm", {"action": "deploy"})
        seen["confirm"] = r.content[0].text
    print(json.dumps(seen))


anyio.run(main)
