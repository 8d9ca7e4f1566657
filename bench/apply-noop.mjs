// A no-op `appliance-forge apply`: apply examples/local.yml once (creates and generates), then again
// unchanged; the second run must change nothing. Prints the request count and time of the no-op run
// against the first run, measured in the same run (requests counted from the server's own log).
// Then the same data folder served by the CLI's embedded server (no URL; the folder's credentials.json
// names alice): whole-command wall time of a no-op `plan` and `apply` (target ≤ 0.5 s), against `node -e 0`
// (the floor of any Node command) measured in the same run; and the catalog's part of a start: through
// the start index in the data folder against the whole data file read, each in a Node process of its own.
// The command runs through its one-file build (dist/cli/appliance-forge.js, src/cli/main.ts) when that is
// built after the tree; a row compares the same no-op plan through the module tree (dist/src/cli/cli.js
// run directly, with the same compile cache). Build first: `npm run build && node bench/apply-noop.mjs`.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
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

function apply(args = [CLI, 'apply', DECLARATION, '--json', '--no-publish'], embedded = false, extraEnv = {}) {
  // Credentials through the environment, never on a command line.
  const env = embedded
    ? { PATH: process.env.PATH, ...extraEnv }
    : { ...process.env, APPLIANCE_FORGE_URL: url, APPLIANCE_FORGE_USER: 'alice', APPLIANCE_FORGE_API_KEY: alice.publicKey, APPLIANCE_FORGE_SECRET_KEY: alice.secretKey };
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const before = requests;
    const p = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (c) => (out += c));
    p.stderr.on('data', (c) => (out += c));
    p.once('exit', async (code) => {
      const ms = performance.now() - t0;
      if (!embedded) await new Promise((r) => setTimeout(r, 200)); // let the last log lines arrive
      if (code !== 0) return reject(new Error(`${args.join(' ')} exited ${code}: ${out.slice(-2000)}`));
      resolve({ ms, requests: requests - before, out });
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

  // The embedded server on the same data: stop the served one, let the CLI find alice's keys.
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  const data = join(dir, 'data');
  writeFileSync(join(data, 'credentials.json'), JSON.stringify({ login: 'alice', publicKey: alice.publicKey, secretKey: alice.secretKey }), { mode: 0o600 });
  const best = async (args, extraEnv) => {
    const runs = [];
    for (let i = 0; i < 3; i++) runs.push(await apply(args, true, extraEnv));
    return Math.min(...runs.map((r) => r.ms));
  };
  // The first embedded run writes the catalog's start index into the data folder.
  await apply([CLI, 'plan', DECLARATION, '--data-dir', data, '--quiet'], true);
  const floor = await best(['-e', '0']);
  const plan = await best([CLI, 'plan', DECLARATION, '--data-dir', data, '--detailed-exitcode', '--quiet']);
  const applied = await best([CLI, 'apply', DECLARATION, '--data-dir', data, '--no-publish', '--quiet']);
  console.log(`  embedded server, whole command (best of 3): no-op plan ${plan.toFixed(0)} ms, no-op apply ${applied.toFixed(0)} ms; node -e 0 ${floor.toFixed(0)} ms`);
  // The same plan through the module tree, with the compile cache the entry turns on (Node's default folder).
  const tree = fileURLToPath(new URL('../dist/src/cli/cli.js', import.meta.url));
  const bundle = fileURLToPath(new URL('../dist/cli/appliance-forge.js', import.meta.url));
  const bundled = !process.env.BENCH_CLI && existsSync(bundle) && statSync(bundle).mtimeMs >= statSync(CLI).mtimeMs;
  if (bundled && existsSync(tree)) {
    const cache = { NODE_COMPILE_CACHE: join(tmpdir(), 'node-compile-cache') };
    await apply([tree, 'plan', DECLARATION, '--data-dir', data, '--quiet'], true, cache);
    const viaTree = await best([tree, 'plan', DECLARATION, '--data-dir', data, '--detailed-exitcode', '--quiet'], cache);
    console.log(`  no-op plan through the module tree (dist/src/cli/cli.js): ${viaTree.toFixed(0)} ms; through the one-file build ${plan.toFixed(0)} ms`);
    summary('apply-noop', 'embedded no-op plan, one-file build ms', Math.round(plan), Math.round(viaTree), plan / viaTree, 'baseline: the module tree');
  } else {
    console.log('  (the one-file build is not newer than the tree: `npm run build` first; the figures above are of the module tree)');
  }
  summary('apply-noop', 'embedded no-op plan ms', Math.round(plan), Math.round(floor), plan / floor, `target ≤ 500 ms; baseline: node -e 0`);
  summary('apply-noop', 'embedded no-op apply ms', Math.round(applied), Math.round(floor), applied / floor, `target ≤ 500 ms; baseline: node -e 0`);

  // The catalog at start, with what a no-op plan asks of it (profiles, two packages by name).
  const catalogDir = fileURLToPath(new URL('../dist/src/server/catalog/', import.meta.url));
  const asks = `c.profilePackages(1, 1); for (const n of ['nginx', 'curl']) c.searchPackages(1, { query: 'name==' + n, latestOnly: true });`;
  const indexed = await best(['-e', `const c = require(${JSON.stringify(join(catalogDir, 'start-index.js'))}).indexedCatalog(${JSON.stringify(join(data, 'catalog', 'start-index'))}); ${asks}`]);
  const whole = await best(['-e', `const c = require(${JSON.stringify(join(catalogDir, 'index.js'))}).loadCatalog(); ${asks}`]);
  console.log(`  catalog at start (best of 3, whole process): start index ${indexed.toFixed(0)} ms, whole data file ${whole.toFixed(0)} ms`);
  summary('apply-noop', 'catalog start through its index ms', Math.round(indexed), Math.round(whole), indexed / whole, 'baseline: the whole data file read');
} finally {
  if (server.exitCode === null && server.signalCode === null) {
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
  }
  rmSync(dir, { recursive: true, force: true });
}
