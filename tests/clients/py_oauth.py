"""The official Python client (mcp 2.3.0) completes OAuth against a protected server:
the first 401, the protected-resource metadata, the authorization server's metadata, a
client-credentials token, then authorized calls; a call needing a wider scope makes it
step up. Prints one JSON object with what it saw.

usage: python py_oauth.py SERVER_URL ISSUER
"""
import json
import sys

import anyio
import httpx2
from mcp import Client
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client


class Memory:
    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, info):
        self.client = info


async def main(url, issuer):
    seen = {"requests": []}

    async def log(request):
        seen["requests"].append(f"{request.method} {request.url.path}")

    auth = ClientCredentialsOAuthProvider(
        server_url=url, storage=Memory(), client_id="svc", client_secret="svc-secret", issuer=issuer
    )
    async with httpx2.AsyncClient(auth=auth, event_hooks={"request": [log]}) as http:
        async with Client(streamable_http_client(url, http_client=http), mode="2026-07-28") as c:
            seen["tools"] = sorted(t.name for t in (await c.list_tools()).tools)
            seen["whoami"] = (await c.call_tool("whoami", {})).content[0].text
            try:
                r = await c.call_tool("add_note", {"text": "hello"})
                seen["add_note"] = r.content[0].text
            except Exception as e:  # a step-up the client could not make
                seen["add_note_error"] = f"{type(e).__name__}: {e}"
            seen["scope"] = auth.context.current_tokens.scope if auth.context.current_tokens else None
    print(json.dumps(seen))


anyio.run(main, sys.argv[1], sys.argv[2])
