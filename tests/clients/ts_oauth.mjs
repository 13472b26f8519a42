// The official TypeScript client (@modelcontextprotocol/client 2.4.0) completes OAuth
// against a protected server with its client-credentials provider: the first 401, the
// protected-resource metadata, the authorization server, a token, authorized calls.
// Prints one JSON object with what it saw.
//
// usage: node ts_oauth.mjs SERVER_URL ISSUER
import { Client, StreamableHTTPClientTransport, ClientCredentialsProvider } from '@modelcontextprotocol/client';

const [url, issuer] = process.argv.slice(2);
const seen = { requests: [] };
const authProvider = new ClientCredentialsProvider({ clientId: 'svc', clientSecret: 'svc-secret', expectedIssuer: issuer });
const logged = async (u, init) => {
  seen.requests.push(`${init?.method ?? 'GET'} ${new URL(String(u)).pathname}`);
  return fetch(u, init);
};
const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider, fetch: logged });
const client = new Client({ name: 'ts-oauth', version: '0.1.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
await client.connect(transport);
seen.tools = (await client.listTools()).tools.map((t) => t.name).sort();
seen.whoami = (await client.callTool({ name: 'whoami', arguments: {} })).content[0].text;
try {
  const r = await client.callTool({ name: 'add_note', arguments: { text: 'hello' } });
  seen.add_note = r.content[0].text;
} catch (e) {
  seen.add_note_error = `${e.name}: ${e.message}`;
}
seen.scope = authProvider.tokens()?.scope ?? null;
await client.close();
console.log(JSON.stringify(seen));
