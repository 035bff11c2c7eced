// httpget: one GET with `fetch`, in the `tool-http` world: the JavaScript twin
// of guests/c/httpget, for the network allowlist's tests.
import { serve } from './warden_tool.js';

const tools = serve({
  get: {
    description: 'GET scheme://authority/path and report the status and the body\'s size.',
    inputSchema: {
      type: 'object',
      required: ['authority'],
      properties: { scheme: { enum: ['http', 'https'] }, authority: { type: 'string' }, path: { type: 'string' } },
    },
    async run({ scheme = 'http', authority, path = '/' }) {
      const response = await fetch(`${scheme}://${authority}${path}`);
      const body = await response.arrayBuffer();
      return { status: response.status, bytes: body.byteLength };
    },
  },
});

export const describe = tools.describe;
export const call = tools.call;
