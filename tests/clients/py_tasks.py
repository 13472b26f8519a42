"""Drives tasks (the io.modelcontextprotocol/tasks extension) with the official Python SDK
client (`mcp` 2.3.0). The SDK has no tasks API of its own, but its extension hooks are
enough: `ClientExtension` declares the extension on every request, a `ResultClaim` turns a
`resultType: "task"` answer into a `CallToolResult` by polling `tasks/get`, and custom
requests with `name_param = "taskId"` send `tasks/*` with the `Mcp-Name` header.

Prints one JSON object with what it saw, for tests/real_clients.rs.
Usage: py_tasks.py stdio COMMAND [ARGS...]  |  py_tasks.py http URL
"""
import asyncio
import json
import sys
from typing import Any, Literal

from mcp import Client, StdioServerParameters
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.shared.exceptions import MCPError
import mcp_types as types
from pydantic import ConfigDict, TypeAdapter

TASKS = "io.modelcontextprotocol/tasks"
RAW = TypeAdapter(dict[str, Any])


class CreateTaskResult(types.Result):
    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    poll_interval_ms: int | None = None


class TaskIdParams(types.RequestParams):
    task_id: str


class UpdateParams(TaskIdParams):
    input_responses: dict[str, Any]


class GetTask(types.Request[TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskIdParams
    name_param = "taskId"


class UpdateTask(types.Request[UpdateParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: UpdateParams
    name_param = "taskId"


class CancelTask(types.Request[TaskIdParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskIdParams
    name_param = "taskId"


async def get(session, task_id: str) -> dict:
    return await session.send_request(GetTask(params=TaskIdParams(task_id=task_id)), RAW)


async def until(session, task_id: str, statuses: set[str]) -> dict:
    for _ in range(500):
        t = await get(session, task_id)
        if t["status"] in statuses:
            return t
        await asyncio.sleep((t.get("pollIntervalMs") or 100) / 1000 / 5)
    raise RuntimeError(f"task {task_id} never reached {statuses}")


async def resolve(created: CreateTaskResult, ctx: ClaimContext) -> types.CallToolResult:
    t = await until(ctx.session, created.task_id, {"completed", "failed", "cancelled"})
    if t["status"] != "completed":
        raise RuntimeError(f"task ended {t['status']}: {t.get('error')}")
    return types.CallToolResult.model_validate(t["result"])


class Tasks(ClientExtension):
    identifier = TASKS

    def claims(self):
        return [ResultClaim(result_type="task", model=CreateTaskResult, resolve=resolve)]


async def main() -> None:
    kind, *rest = sys.argv[1:]
    target = StdioServerParameters(command=rest[0], args=rest[1:]) if kind == "stdio" else rest[0]
    seen: dict = {}
    async def on_elicit(ctx, params):  # declares elicitation; a task's questions come by tasks/get
        raise RuntimeError("no elicitation expected outside tasks")

    async with Client(
        target, mode="2026-07-28", extensions=[Tasks()], elicitation_callback=on_elicit
    ) as c:
        s = c.session
        # Transparent: the claim polls the task and hands back its CallToolResult.
        r = await c.call_tool("slow_compute", {"seconds": 1, "label": "py"})
        seen["slow"] = r.content[0].text
        r = await c.call_tool("failing_job", {})
        seen["failing_is_error"] = r.is_error
        # By hand: the handle, the input request, the answer, the result.
        h = await s.call_tool("confirm_delete", {"filename": "notes.txt"}, allow_claimed=True)
        seen["handle_status"] = h.status
        t = await until(s, h.task_id, {"input_required"})
        (key, request), = t["inputRequests"].items()
        seen["asked"] = request["params"]["message"]
        answer = {key: {"action": "accept", "content": {"confirm": True}}}
        ack = await s.send_request(
            UpdateTask(params=UpdateParams(task_id=h.task_id, input_responses=answer)), RAW
        )
        seen["update_ack"] = sorted(k for k in ack if k != "_meta")
        t = await until(s, h.task_id, {"completed", "failed", "cancelled"})
        seen["confirm"] = t["result"]["content"][0]["text"]
        # Cancel a long one.
        h = await s.call_tool("slow_compute", {"seconds": 60, "label": "long"}, allow_claimed=True)
        await s.send_request(CancelTask(params=TaskIdParams(task_id=h.task_id)), RAW)
        seen["cancelled"] = (await get(s, h.task_id))["status"]
        try:
            await get(s, "no-such-task")
        except MCPError as e:
            seen["unknown_code"] = e.error.code
    print(json.dumps(seen))


asyncio.run(main())
