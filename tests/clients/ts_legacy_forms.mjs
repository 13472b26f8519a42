// Calls the approvals example's `deploy` with the TypeScript SDK 1.x client (2025-11-25),
// which checks every `elicitation/create` against its schema: a form's `requestedSchema`
// (one `type` per property) and a URL request's `elicitationId`. Answers the form (leaving
// the optional `note` out) and the URL, and prints one JSON line with what it saw, for
// tests/real_clients.rs.
//
// usage: node ts_legacy_forms.mjs stdio COMMAND [ARGS...]  |  node ts_legacy_forms.mjs http URL
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const [kind, ...rest] = process.argv.slice(2);
const transport = kind === 'stdio'
  ? new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: 'ignore' })
  : new StreamableHTTPClientTransport(new URL(rest[0]));
const client = new Client({ name: 'real-clients-ts-legacy-forms', version: '0.1.0' },
  { capabilities: { elicitation: { form: {}, url: {} } } });
const seen = {};
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  if (req.params.mode === 'url') {
    seen.url = req.params;
    return { action: 'accept' };
  }
  seen.form = req.params;
  return { action: 'accept', content: { env: 'staging', replicas: 3 } };
});
await client.connect(transport);
const r = await client.callTool({ name: 'deploy', arguments: { service: 'api' } });
seen.isError = r.isError ?? false;
seen.text = r.content[0]?.text ?? null;
if (kind === 'http') await transport.terminateSession();
await client.close();
console.log(JSON.stringify(seen));
