// Lists and calls a server's tools with the TypeScript SDK 1.x client, whose schemas hold
// 2025-11-25 to `outputSchema.type: "object"` and an object `structuredContent` (and which
// checks that content against the schema); prints what it saw as one JSON line, for
// tests/real_clients.rs.
//
// usage: node ts_legacy_outputs.mjs TOOL COMMAND [ARGS...]
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [tool, command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, stderr: 'ignore' });
const client = new Client({ name: 'real-clients-ts-legacy-outputs', version: '0.1.0' });
await client.connect(transport);
const seen = {};
const { tools } = await client.listTools();
seen.schema = tools.find((t) => t.name === tool)?.outputSchema ?? null;
const r = await client.callTool({ name: tool, arguments: {} });
seen.isError = r.isError ?? false;
seen.structured = r.structuredContent ?? null;
seen.text = r.content[0]?.text ?? null;
console.log(JSON.stringify(seen));
await client.close();
