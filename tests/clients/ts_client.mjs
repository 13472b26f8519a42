// Drives an MCP server with the official TypeScript client (@modelcontextprotocol/client 2.4.0,
// pinned to 2026-07-28) and prints one JSON object with what it saw, for tests/real_clients.rs.
//
// usage: node ts_client.mjs stdio COMMAND [ARGS...]  |  node ts_client.mjs http URL
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const [kind, ...rest] = process.argv.slice(2);
const transport = kind === 'stdio'
  ? new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: 'ignore' })
  : new StreamableHTTPClientTransport(new URL(rest[0]));
const client = new Client({ name: 'real-clients-ts', version: '0.1.0' }, {
  capabilities: { elicitation: { form: {} }, sampling: {} },
  versionNegotiation: { mode: { pin: '2026-07-28' } },
});
const seen = {};
client.setRequestHandler('elicitation/create', async (req) => {
  seen.elicitation = req.params.message;
  return { action: 'accept', content: { name: 'Ada' } };
});
client.setRequestHandler('sampling/createMessage', async (req) => {
  seen.sampling = req.params.messages[0].content.text;
  return { role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'test-model', stopReason: 'endTurn' };
});
await client.connect(transport);

const tools = [];
let cursor;
do { // every tool must survive the client's own schema validation
  const page = await client.listTools(cursor ? { cursor } : undefined);
  tools.push(...page.tools.map((t) => t.name));
  cursor = page.nextCursor;
} while (cursor);
seen.tools = tools.sort();

const progress = [];
let r = await client.callTool({ name: 'test_tool_with_progress', arguments: {} },
  { onprogress: (p) => progress.push(p.progress) });
seen.progress_result = r.content[0].text;
r = await client.callTool({ name: 'test_x_mcp_header', arguments: { region: 'eu-west1', priority: 3 } });
seen.header_result = r.content[0].text;
r = await client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} });
seen.mrtr = r.content[0].text;
r = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'What is the capital of France?' } });
seen.sampled = r.content[0].text;
r = await client.readResource({ uri: 'test://static-text' });
seen.resource = r.contents[0].text;
r = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'a', arg2: 'b' } });
seen.prompt = r.messages[0].content.text;
r = await client.complete({
  ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
  argument: { name: 'arg1', value: 'test' },
});
seen.completion = r.completion.values;
seen.progress = progress;
await client.close();
console.log(JSON.stringify(seen));
