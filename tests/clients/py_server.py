"""A small MCP server written with the official Python SDK (`mcp` 2.3.0), served over
Streamable HTTP on 127.0.0.1:$PORT, for tests/proxy.rs to put behind the gateway."""
import os

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult

mcp = MCPServer("py-upstream", version="1.0.0")


@mcp.tool()
def add(a: int, b: int) -> str:
    """Adds two integers."""
    return str(a + b)


@mcp.tool()
def shout(text: str) -> str:
    """Upper-cases text."""
    return text.upper()


@mcp.tool(name="look up")
def look_up(word: str) -> str:
    """Looks a word up (its name has a space, which the Python SDK lets through with a
    warning)."""
    return f"{word}: found"


@mcp.tool()
async def confirm(ctx: Context, action: str) -> str | InputRequiredResult:
    """Asks the user to confirm an action (a multi round-trip request), then does it."""
    if not ctx.input_responses:
        ask = ElicitRequest(
            method="elicitation/create",
            params=ElicitRequestFormParams(
                message=f"Really {action}?",
                requested_schema={"type": "object", "properties": {"ok": {"type": "boolean"}}},
            ),
        )
        return InputRequiredResult(
            input_requests={"ok": ask}, request_state=f"pending:{action}", result_type="input_required"
        )
    answer = ctx.input_responses["ok"]
    content = getattr(answer, "content", None) or {}
    return f"{action} confirmed={content.get('ok')} state={ctx.request_state}"


@mcp.prompt()
def review(code: str) -> str:
    """Asks for a code review."""
    return f"Please review:\n{code}"


if __name__ == "__main__":
    mcp.run("streamable-http", host="127.0.0.1", port=int(os.environ["PORT"]))
