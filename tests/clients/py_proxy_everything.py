"""Drives the gateway of tests/proxy.rs, in front of the reference "everything" server
(`@modelcontextprotocol/server-everything`, TypeScript SDK 1.x, 2025-11-25) on stdio and
on Streamable HTTP, with the official Python SDK client (`mcp` 2.3.0), in the 2026-07-28
era (the upstream's requests come as `input_required`) or the legacy one (they come as
requests in the client's session). Prints one JSON object with what it saw.

Usage: py_proxy_everything.py [--legacy] URL
"""
import json
import sys

import anyio
from mcp import Client
from mcp_types import CreateMessageResult, ElicitResult, TextContent


async def main() -> None:
    args = sys.argv[1:]
    legacy = args[0] == "--legacy"
    url = args[-1]
    seen: dict = {"asked": [], "sampled": []}

    async def on_elicit(ctx, params):
        if "interpretations" in params.message:  # simulate-research-query's question
            seen.setdefault("clarified", []).append(params.message)
            return ElicitResult(action="accept", content={"interpretation": "snake"})
        seen["asked"].append(params.message)
        return ElicitResult(action="accept", content={"name": "Ada Lovelace", "check": True})

    async def on_sample(ctx, params):
        seen["sampled"].append(params.messages[0].content.text)
        return CreateMessageResult(
            role="assistant",
            content=TextContent(type="text", text="forty-two"),
            model="test-model",
            stop_reason="endTurn",
        )

    mode = "legacy" if legacy else "2026-07-28"
    async with Client(
        url, mode=mode, elicitation_callback=on_elicit, sampling_callback=on_sample
    ) as c:
        seen["version"] = c.protocol_version
        tools = [t.name for t in (await c.list_tools()).tools]
        seen["tools"] = sorted(tools)
        for up in ("evs", "evh"):
            r = await c.call_tool(f"{up}_trigger-elicitation-request", {})
            seen[f"{up}_elicited"] = "\n".join(x.text for x in r.content if x.type == "text")
            seen[f"{up}_elicited_error"] = bool(r.is_error)
            r = await c.call_tool(
                f"{up}_trigger-sampling-request", {"prompt": "the answer?", "maxTokens": 20}
            )
            seen[f"{up}_sampled"] = "\n".join(x.text for x in r.content if x.type == "text")
        for up in ("evs", "evh"):  # its progress notifications, through the gateway
            progress: list = []

            async def on_progress(value, total, message, progress=progress):
                progress.append(value)

            r = await c.call_tool(
                f"{up}_trigger-long-running-operation",
                {"duration": 1, "steps": 4},
                progress_callback=on_progress,
            )
            seen[f"{up}_progress"] = progress
        # A tool the upstream runs only as a task (`taskSupport: "required"`), which asks
        # a question midway: the gateway runs the upstream task for a plain call, its
        # status messages coming as progress. Both upstreams at once (one call in flight
        # on each).
        async def research(up):
            said: list = []

            async def on_progress(value, total, message):
                said.append(message)

            r = await c.call_tool(
                f"{up}_simulate-research-query",
                {"topic": "python", "ambiguous": True},
                progress_callback=on_progress,
            )
            seen[f"{up}_research_progress"] = said
            seen[f"{up}_research"] = "\n".join(x.text for x in r.content if x.type == "text")
            seen[f"{up}_research_error"] = bool(r.is_error)

        async with anyio.create_task_group() as tg:
            for up in ("evs", "evh"):
                tg.start_soon(research, up)
        r = await c.call_tool("evs_get-sum", {"a": 2, "b": 40})
        seen["sum"] = r.content[0].text
        templates = (await c.list_resource_templates()).resource_templates
        seen["templates"] = sorted(t.uri_template for t in templates)
        r = await c.read_resource("evs+demo://resource/dynamic/text/7")
        seen["template_read"] = [r.contents[0].uri, r.contents[0].text]
    print(json.dumps(seen))


anyio.run(main)
