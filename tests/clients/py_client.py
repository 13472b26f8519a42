"""Drives an MCP server with the official Python SDK client (`mcp` 2.3.0), in the
2026-07-28 era (stateless) or the legacy era (`initialize`, a session), and prints one JSON
object with what it saw, for tests/real_clients.rs to check.

Usage: py_client.py [--legacy] stdio COMMAND [ARGS...]  |  py_client.py [--legacy] http URL
"""
import json
import sys

import anyio
from mcp import Client, StdioServerParameters
from mcp_types import (
    CreateMessageResult,
    ElicitResult,
    PromptReference,
    ResourceUpdatedNotification,
    TextContent,
)


async def main() -> None:
    args = sys.argv[1:]
    legacy = args[0] == "--legacy"
    if legacy:
        args = args[1:]
    kind, *rest = args
    target = StdioServerParameters(command=rest[0], args=rest[1:]) if kind == "stdio" else rest[0]
    seen: dict = {}
    progress: list = []
    updated = anyio.Event()

    async def on_elicit(ctx, params):  # answers the elicitation (input_required or a request)
        seen["elicitation"] = params.message
        return ElicitResult(action="accept", content={"name": "Ada"})

    async def on_sample(ctx, params):  # answers sampling/createMessage
        seen["sampling"] = params.messages[0].content.text
        return CreateMessageResult(
            role="assistant",
            content=TextContent(type="text", text="Paris"),
            model="test-model",
            stop_reason="endTurn",
        )

    async def on_message(msg):
        if isinstance(msg, ResourceUpdatedNotification):
            seen["updated"] = msg.params.uri
            updated.set()

    async def on_progress(value, total, message):
        progress.append(value)

    mode = "legacy" if legacy else "2026-07-28"
    async with Client(
        target,
        mode=mode,
        elicitation_callback=on_elicit,
        sampling_callback=on_sample,
        message_handler=on_message,
    ) as c:
        seen["version"] = c.protocol_version
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
        r = await c.call_tool("test_sampling", {"prompt": "What is the capital of France?"})
        seen["sampled"] = r.content[0].text
        r = await c.read_resource("test://static-text")
        seen["resource"] = r.contents[0].text
        if legacy:  # subscriptions are legacy-only; 2026-07-28 has subscriptions/listen
            await c.subscribe_resource("test://watched-resource")
            await c.call_tool("test_trigger_resource_update", {})
            with anyio.move_on_after(5):
                await updated.wait()
            await c.unsubscribe_resource("test://watched-resource")
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
