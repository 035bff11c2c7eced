// Writing Warden tools in JavaScript: declare tools, read and write files
// through the sandbox, and every throw becomes a `tool-error`.
//
//   import { serve, fs, InvalidInput } from './warden_tool.js';
//   const tools = serve({
//     shout: {
//       description: 'Upper-case a text.',
//       inputSchema: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
//       run: (args) => args.text.toUpperCase(),
//     },
//   });
//   export const describe = tools.describe;
//   export const call = tools.call;
//
// A tool may be async. Built for the `tool-http` world (guests/build.sh's
// js_tool ... tool-http), it can `await fetch(url)`: Warden checks each request
// against the policy's network allowlist, and a refused one is reported in the
// sandbox's words.
//
// componentize-js has no Node `fs`: `fs` below speaks wasi:filesystem, and the
// sandbox's mounts are its preopens.
import { log as hostLog } from 'warden:tool/host@0.1.0';
import { getDirectories } from 'wasi:filesystem/preopens@0.2.12';

/** Throw this when the input makes no sense; the caller sees `invalid-input`. */
export class InvalidInput extends Error {}

/** A failed file access: `code` is a wasi:filesystem error code, e.g. `no-entry`. */
export class FsError extends Error {
  constructor(code, path) {
    super(`${code}: ${path}`);
    this.code = code;
    this.path = path;
  }
}

// Codes that mean "the sandbox refused"; `outside` is ours, for a path under no mount.
const REFUSALS = new Set(['access', 'not-permitted', 'read-only', 'file-too-large', 'outside']);
const CHUNK = 1 << 20;

/** Adds a line to the host's log for this call: level is trace, debug, info, warn or error. */
export function log(level, message) {
  hostLog(level, message);
}

let preopens;
// Looked up on first use: the build runs the module's top level once, outside any sandbox.
function mounts() {
  preopens ??= getDirectories().map(([dir, name]) => [dir, name.replace(/\/+$/, '')]);
  return preopens;
}

/** The mount holding `path` (the longest match) and the path inside it. */
function locate(path) {
  let best;
  for (const [dir, name] of mounts()) {
    if ((path === name || path.startsWith(name + '/')) && (!best || name.length > best[1].length)) best = [dir, name];
  }
  if (!best) throw new FsError('outside', path);
  const inside = path.slice(best[1].length).replace(/^\/+/, '');
  return [best[0], inside === '' ? '.' : inside];
}

function withPath(path, action) {
  try {
    return action(...locate(path));
  } catch (e) {
    if (e instanceof FsError) throw e;
    if (typeof e?.payload === 'string') throw new FsError(e.payload, path);
    throw e;
  }
}

function openFile(dir, inside, openFlags, descriptorFlags) {
  return dir.openAt({ symlinkFollow: true }, inside, openFlags, descriptorFlags);
}

export const fs = {
  /** The whole file as UTF-8 text. */
  readText(path) {
    return withPath(path, (dir, inside) => {
      const file = openFile(dir, inside, {}, { read: true });
      const decoder = new TextDecoder();
      let text = '';
      for (let offset = 0n; ; ) {
        const [bytes, end] = file.read(BigInt(CHUNK), offset);
        text += decoder.decode(bytes, { stream: !end });
        offset += BigInt(bytes.length);
        if (end) return text;
      }
    });
  },

  /** Creates or replaces the file with `text`. */
  writeText(path, text) {
    withPath(path, (dir, inside) => {
      const file = openFile(dir, inside, { create: true, truncate: true }, { write: true });
      const bytes = new TextEncoder().encode(text);
      for (let done = 0; done < bytes.length; ) {
        done += Number(file.write(bytes.subarray(done, done + CHUNK), BigInt(done)));
      }
    });
  },

  /** The entries of a folder, sorted by name: `{ name, type }`, type as wasi:filesystem names it. */
  list(path) {
    return withPath(path, (dir, inside) => {
      const folder = inside === '.' ? dir : openFile(dir, inside, { directory: true }, { read: true });
      const stream = folder.readDirectory();
      const entries = [];
      for (let entry; (entry = stream.readDirectoryEntry()); ) entries.push(entry);
      return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    });
  },

  isDirectory(path) {
    return withPath(path, (dir, inside) => (inside === '.' ? dir.stat() : dir.statAt({ symlinkFollow: true }, inside)).type === 'directory');
  },
};

/** The `describe` and `call` exports for a set of tools: `{ name: { description, inputSchema, run } }`. */
export function serve(tools) {
  return {
    describe: () =>
      Object.entries(tools).map(([name, tool]) => ({
        name,
        description: tool.description,
        inputSchema: JSON.stringify(tool.inputSchema),
      })),
    // A tool may be async (`fetch`, in a tool built for the `tool-http` world):
    // componentize-js runs the event loop until its promise settles.
    call: (name, input) => {
      try {
        const result = run(tools, name, input);
        return result instanceof Promise ? result.then(asText, (error) => Promise.reject(toolError(error))) : asText(result);
      } catch (error) {
        throw toolError(error);
      }
    },
  };
}

function run(tools, name, input) {
  const tool = Object.hasOwn(tools, name) ? tools[name] : undefined;
  if (!tool) throw new InvalidInput(`no tool named '${name}'; this component offers: ${Object.keys(tools).sort().join(', ')}`);
  let args;
  try {
    args = JSON.parse(input);
  } catch (e) {
    throw new InvalidInput(`the input is not JSON: ${e.message}`);
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) throw new InvalidInput('the input must be a JSON object');
  const missing = (tool.inputSchema.required ?? []).find((key) => !(key in args));
  if (missing !== undefined) throw new InvalidInput(`missing field '${missing}'`);
  return tool.run(args);
}

function asText(result) {
  return typeof result === 'string' ? result : JSON.stringify(result);
}

function toolError(error) {
  // A raw wasi:filesystem call throws its error code as `payload`.
  if (typeof error?.payload === 'string' && !(error instanceof FsError)) error = new FsError(error.payload, '');
  if (error instanceof InvalidInput) return { tag: 'invalid-input', val: error.message };
  // The path alone: Warden puts the sandbox's own message in its place.
  if (error instanceof FsError && REFUSALS.has(error.code)) return { tag: 'denied', val: error.path };
  const kind = error?.constructor?.name ?? typeof error;
  return { tag: 'failed', val: error instanceof Error ? `${kind}: ${error.message}` : `thrown: ${String(error)}` };
}
