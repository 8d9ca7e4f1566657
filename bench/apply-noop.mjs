// A no-op `appliance-forge apply`: apply examples/local.yml once (creates and generates), then again
// unchanged; the second run must change nothing. Prints the request count and time of the no-op run
// against the first run, measured in the same run (requests counted from the server's own log).
// Build first: `npx tsc -p tsconfig.json && node bench/apply-noop.mjs`.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI, summary } from './lib/servers.mjs';

const require = createRequire(import.meta.url);
const { createUser } = require('../dist/src/server/index.js');
const DECLARATION = fileURLToPath(new URL('../examples/local.yml', import.meta.url));
if (!existsSync(join(fileURLToPath(new URL('../dist/src/cli/commands/apply.js', import.meta.url))))) {
  console.log('apply bench: skipped, `appliance-forge apply` is not built');
  process.exit(0);
}

const dir = mkdtempSync(join(tmpdir(), 'forge-bench-apply-'));
const alice = await createUser(join(dir, 'data'), { login: 'alice' });
// The server with --log: one "incoming request" line per request is the request count.
const server = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--data-dir', join(dir, 'data'), '--log'], { stdio: ['ignore', 'pipe', 'inherit'] });
let requests = 0;
const url = await new Promise((resolve, reject) => {
  let buf = '';
  server.stdout.on('data', (c) => {
    buf += c;
    const lines = buf.split('\n');
    buf = lines.pop();
    for (const l of lines) {
      if (l.startsWith('http://')) resolve(l.trim());
      if (l.includes('"incoming request"')) requests++;
    }
  });
  server.once('exit', (code) => reject(new Error(`server exited ${code}`)));
});

function apply() {
  // Credentials through the environment, never on a command line.
  const env = { ...process.env, APPLIANCE_FORGE_URL: url, APPLIANCE_FORGE_USER: 'alice', APPLIANCE_FORGE_API_KEY: alice.publicKey, APPLIANCE_FORGE_SECRET_KEY: alice.secretKey };
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const before = requests;
    const p = spawn(process.execPath, [CLI, 'apply', DECLARATION, '--json', '--no-publish'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (c) => (out += c));
    p.stderr.on('data', (c) => (out += c));
    p.once('exit', async (code) => {
      await new Promise((r) => setTimeout(r, 200)); // let the last log lines arrive
      if (code !== 0) return reject(new Error(`apply exited ${code}: ${out.slice(-2000)}`));
      resolve({ ms: performance.now() - t0, requests: requests - before, out });
    });
  });
}

try {
  const first = await apply();
  const noop = await apply();
  console.log(`apply bench: ${DECLARATION} (node ${process.version})`);
  console.log(`  first apply (create + generate)  ${first.requests.toString().padStart(5)} requests  ${first.ms.toFixed(0).padStart(7)} ms`);
  console.log(`  no-op apply (unchanged file)     ${noop.requests.toString().padStart(5)} requests  ${noop.ms.toFixed(0).padStart(7)} ms   time ratio ${(noop.ms / first.ms).toFixed(2)}`);
  const tail = noop.out.trim().split('\n').pop() ?? '';
  console.log(`  no-op result: ${tail.slice(0, 300)}`);
  summary('apply-noop', 'no-op apply requests', noop.requests, first.requests, noop.ms / first.ms, `no-op ${noop.ms.toFixed(0)} ms vs first ${first.ms.toFixed(0)} ms`);
} finally {
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
