// escape: a hostile tool. Each attempt tries to leave the sandbox; returning at all means it got out.
//
// The mounts it expects: /data read-only, /out read-write with only `.md` files allowed.
// The host test is host/warden-wasm/tests/polyglot.rs. Its Python twin is guests/python/hostile.
import { getEnvironment } from 'wasi:cli/environment@0.2.12';
import { getDirectories } from 'wasi:filesystem/preopens@0.2.12';
import { fs, InvalidInput, serve } from './warden_tool.js';

// Raw descriptors, to try what the `fs` helpers never would.
function mount(name) {
  const found = getDirectories().find(([, n]) => n === name);
  if (!found) throw new Error(`no mount ${name}`);
  return found[0];
}

const ATTEMPTS = {
  dotdot: () => fs.readText('/data/../secret.txt'),
  absolute: () => fs.readText('/etc/passwd'),
  proc: () => fs.readText('/proc/self/environ'),
  symlink_out: () => {
    mount('/out').symlinkAt('../secret.txt', 'link.md');
    return fs.readText('/out/link.md');
  },
  hardlink_out: () => {
    mount('/data').linkAt({}, 'a.md', mount('/out'), 'linked.md');
    return 'linked';
  },
  write_ro: () => fs.writeText('/data/planted.md', 'planted'),
  rename_into_ro: () => {
    fs.writeText('/out/moved.md', 'x');
    mount('/out').renameAt('moved.md', mount('/data'), 'moved.md');
    return 'renamed';
  },
  suffix: () => fs.writeText('/out/run.sh', 'echo planted'),
  oversize: () => fs.writeText('/out/big.md', 'x'.repeat(2 << 20)),
  environment: () => Object.fromEntries(getEnvironment()),
};

const tools = serve({
  escape: {
    description: 'Try one way out of the sandbox.',
    inputSchema: { type: 'object', required: ['attempt'], properties: { attempt: { enum: Object.keys(ATTEMPTS).sort() } } },
    run({ attempt }) {
      if (!Object.hasOwn(ATTEMPTS, attempt)) throw new InvalidInput(`no attempt named '${attempt}'`);
      return { escaped: attempt, got: ATTEMPTS[attempt]() };
    },
  },
});

export const describe = tools.describe;
export const call = tools.call;
