// Drives an MCP server with the TypeScript SDK 1.x client (@modelcontextprotocol/sdk 1.32.2,
// which speaks only the initialize-based revisions) and prints one JSON object with what it
// saw, for tests/real_clients.rs.
//
// usage: node ts_legacy_client.mjs stdio COMMAND [ARGS...]  |  node ts_legacy_client.mjs http URL
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema, ElicitRequestSchema, ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

const [kind, ...rest] = process.argv.slice(2);
const transport = kind === 'stdio'
  ? new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: 'ignore' })
  : new StreamableHTTPClientTransport(new URL(rest[0]));
const client = new Client({ name: 'real-clients-ts-legacy', version: '0.1.0' },
  { capabilities: { elicitation: { form: {} }, sampling: {} } });
const seen = {};
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  seen.elicitation = req.params.message;
  return { action: 'accept', content: { name: 'Ada' } };
});
client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
  seen.sampling = req.params.messages[0].content.text;
  return { role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'test-model', stopReason: 'endTurn' };
});
let updated;
const gotUpdate = new Promise((resolve) => { updated = resolve; });
client.setNotificationHandler(ResourceUpdatedNotificationSchema, async (n) => {
  seen.updated = n.params.uri;
  updated();
});
await client.connect(transport);
seen.version = kind === 'http' ? transport.protocolVersion : '(stdio)';
seen.server = client.getServerVersion().name;

const tools = [];
let cursor;
do {
  const page = await client.listTools(cursor ? { cursor } : undefined);
  tools.push(...page.tools.map((t) => t.name));
  cursor = page.nextCursor;
} while (cursor);
seen.tools = tools.sort();

const progress = [];
let r = await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined,
  { onprogress: (p) => progress.push(p.progress) });
seen.progress_result = r.content[0].text;
seen.progress = progress;
r = await client.callTool({ name: 'test_x_mcp_header', arguments: { region: 'eu-west1', priority: 3 } });
seen.header_result = r.content[0].text;
r = await client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} });
seen.mrtr = r.content[0].text;
r = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'What is the capital of France?' } });
seen.sampled = r.content[0].text;
r = await client.readResource({ uri: 'test://static-text' });
seen.resource = r.contents[0].text;
await client.subscribeResource({ uri: 'test://watched-resource' });
await client.callTool({ name: 'test_trigger_resource_update', arguments: {} });
await Promise.race([gotUpdate, new Promise((resolve) => setTimeout(resolve, 5000))]);
await client.unsubscribeResource({ uri: 'test://watched-resource' });
r = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'a', arg2: 'b' } });
seen.prompt = r.messages[0].content.text;
r = await client.complete({ ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'test' } });
seen.completion = r.completion.values;
await client.ping();
seen.ping = true;
if (kind === 'http') await transport.terminateSession();
await client.close();
console.log(JSON.stringify(seen));
