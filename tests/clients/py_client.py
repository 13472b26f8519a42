"""Drives an MCP server with the official Python SDK client (`mcp` 2.3.0, in 2026-07-28 mode)
and prints one JSON object with what it saw, for tests/real_clients.rs to check.

Usage: py_client.py stdio COMMAND [ARGS...]  |  py_client.py http URL
"""
import json
import sys

import anyio
from mcp import Client, StdioServerParameters
from mcp_types import ElicitResult, PromptReference


async def main() -> None:
    kind, *rest = sys.argv[1:]
    target = StdioServerParameters(command=rest[0], args=rest[1:]) if kind == "stdio" else rest[0]
    seen: dict = {}
    progress: list = []

    async def on_elicit(ctx, params):  # answers the input_required round
        seen["elicitation"] = params.message
        return ElicitResult(action="accept", content={"name": "Ada"})

    async def on_progress(value, total, message):
        progress.append(value)

    async with Client(target, mode="2026-07-28", elicitation_callback=on_elicit) as c:
        tools, cursor = [], None
        while True:  # every tool must survive the client's own validation
            page = await c.list_tools(cursor=cursor)
            tools += [t.name for t in page.tools]
            cursor = page.next_cursor
            if not cursor:
                break
        seen["tools"] = sorted(tools)
        r = await c.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
        seen["progress_result"] = r.content[0].text
        r = await c.call_tool("test_x_mcp_header", {"region": "eu-west1", "priority": 3})
        seen["header_result"] = r.content[0].text
        r = await c.call_tool("test_input_required_result_elicitation", {})
        seen["mrtr"] = r.content[0].text
        r = await c.read_resource("test://static-text")
        seen["resource"] = r.contents[0].text
        r = await c.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
        seen["prompt"] = r.messages[0].content.text
        r = await c.complete(
            PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
            {"name": "arg1", "value": "test"},
        )
        seen["completion"] = r.completion.values
    seen["progress"] = progress
    print(json.dumps(seen))


anyio.run(main)
