// {{name}}: a Warden tool in JavaScript. Counts the lines and words of a text file in the sandbox.
import { fs, serve } from './warden_tool.js';

const tools = serve({
  '{{name}}': {
    description: 'Count the lines and words of a text file.',
    inputSchema: {
      type: 'object',
      required: ['path'],
      properties: { path: { type: 'string', description: 'e.g. /data/hello.md' } },
    },
    run({ path }) {
      // `fs` reads through the sandbox: the policy's mounts (/data, /out) are the only folders there are.
      const text = fs.readText(path);
      return `${path}: ${text.split('\n').length - 1} lines, ${text.split(/\s+/).filter(Boolean).length} words`;
    },
  },
});

export const describe = tools.describe;
export const call = tools.call;
