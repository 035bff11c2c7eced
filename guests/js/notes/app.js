// notes: search a folder of notes, and write a summary of it. JavaScript twin of guests/python/notes.
import { fs, InvalidInput, log, serve } from './warden_tool.js';

const MAX_MATCHES = 200;

/** The files at or under `path`, in name order. */
function filesUnder(path) {
  if (!fs.isDirectory(path)) return [path];
  return fs.list(path).flatMap((entry) => {
    const child = `${path.replace(/\/+$/, '')}/${entry.name}`;
    if (entry.type === 'directory') return filesUnder(child);
    return entry.type === 'regular-file' ? [child] : [];
  });
}

const tools = serve({
  search: {
    description: 'Find the lines containing a text (case-insensitive) in a file or a folder of files.',
    inputSchema: {
      type: 'object',
      required: ['pattern', 'path'],
      properties: { pattern: { type: 'string', minLength: 1 }, path: { type: 'string' } },
    },
    run({ pattern, path }) {
      const needle = pattern.toLowerCase();
      if (needle === '') throw new InvalidInput('the pattern is empty');
      const lines = [];
      let found = 0;
      for (const file of filesUnder(path)) {
        fs.readText(file).split('\n').forEach((line, index) => {
          if (line.toLowerCase().includes(needle) && ++found <= MAX_MATCHES) lines.push(`${file}:${index + 1}: ${line.trimEnd()}`);
        });
      }
      lines.push(`${found} match${found === 1 ? '' : 'es'}`);
      return lines.join('\n');
    },
  },
  summarize: {
    description: 'Write a Markdown summary (lines, words, first heading of each file) of a folder to a file.',
    inputSchema: {
      type: 'object',
      required: ['path', 'output'],
      properties: { path: { type: 'string' }, output: { type: 'string' } },
    },
    run({ path, output }) {
      const rows = filesUnder(path).map((file) => {
        const text = fs.readText(file);
        const heading = text.split('\n').find((line) => line.startsWith('#'));
        const lines = text.split('\n').length - 1;
        const words = text.split(/\s+/).filter(Boolean).length;
        return `| ${file} | ${lines} | ${words} | ${heading ? heading.replace(/^[#\s]+/, '').trim() : ''} |`;
      });
      let document = `# Summary of ${path}\n\n| file | lines | words | first heading |\n|---|---|---|---|\n`;
      document += rows.map((row) => row + '\n').join('') + `\n${rows.length} files.\n`;
      fs.writeText(output, document);
      log('info', `summarized ${rows.length} files`);
      return `wrote ${output} (${new TextEncoder().encode(document).length} bytes, ${rows.length} files)`;
    },
  },
});

export const describe = tools.describe;
export const call = tools.call;
