"""A small MCP server written with the official Python SDK (`mcp` 2.3.0), served over
Streamable HTTP on 127.0.0.1:$PORT, for tests/proxy.rs to put behind the gateway."""
import os

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("py-upstream", version="1.0.0")


@mcp.tool()
def add(a: int, b: int) -> str:
    """Adds two integers."""
    return str(a + b)


@mcp.tool()
def shout(text: str) -> str:
    """Upper-cases text."""
    return text.upper()


@mcp.prompt()
def review(code: str) -> str:
    """Asks for a code review."""
    return f"Please review:\n{code}"


if __name__ == "__main__":
    mcp.run("streamable-http", host="127.0.0.1", port=int(os.environ["PORT"]))
