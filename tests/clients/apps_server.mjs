// An MCP App server written with the official TypeScript server (@modelcontextprotocol/server
// 2.3.1) and the server helpers of @modelcontextprotocol/ext-apps 2.0.4 (registerAppTool,
// registerAppResource), on stdio; tests/proxy.rs puts a gateway in front of it.
//
// usage: node apps_server.mjs
import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import {
  registerAppResource, registerAppTool, RESOURCE_MIME_TYPE,
} from '@modelcontextprotocol/ext-apps/server';
import { z } from 'zod';

const server = new McpServer({ name: 'apps-demo', version: '1.0.0' });
const view = 'ui://clock/view.html';
registerAppTool(server, 'clock', {
  title: 'Clock',
  description: 'Shows the time in a zone, in a view.',
  inputSchema: { zone: z.string() },
  _meta: { ui: { resourceUri: view } },
}, async ({ zone }) => ({ content: [{ type: 'text', text: `12:00 in ${zone}` }] }));
registerAppResource(server, 'Clock view', view, {
  description: 'The clock face',
  _meta: { ui: { prefersBorder: true, csp: { connectDomains: ['https://time.example'] } } },
}, async () => ({
  contents: [{
    uri: view,
    mimeType: RESOURCE_MIME_TYPE,
    text: '<!doctype html><title>Clock</title>',
    _meta: { ui: { prefersBorder: true } },
  }],
}));
await server.connect(new StdioServerTransport());
