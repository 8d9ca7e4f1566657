// No crash on an old Node. Under Node 20, `serve`, a no-op `plan` and the Action's `plan`
// died with SIGSEGV: the store loaded better-sqlite3 13, a Node-API 10 addon, which Node 20 (Node-API 9) does
// not refuse but crashes on. Every entry (the command, the Action's action/dist/index.js, `appliance-forge/server`,
// `appliance-forge/pulumi` and its runtime) now checks the Node version first (src/node-floor.ts): under
// Node 20 each exits 2 with one line saying what it needs and how to get it, having loaded nothing of the
// package but itself and the check. Under Node 12 (Debian 11's and Ubuntu 22.04's) the same: the entries parse
// there too. The store refuses that addon on a Node without its Node-API instead of loading it (for library
// use below the entries, and Node 22.0 to 22.12). Under Node 22 the entries work. Runs dist/ (`npm test`
// compiles it first) and the committed action/dist.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE_FLOOR } from '../../src/node-floor';
import { nodeMajor, type NodeBin } from '../support/node24';

const root = path.resolve(__dirname, '../..');
const main = path.join(root, 'dist/src/cli/main.js');
const action = path.join(root, 'action/dist/index.js');
const FLOOR_CHECK = 'dist/src/node-floor.js';
/** A Node of this major from scripts/node.sh (its binary and its version without the v), or undefined with a warning. */
function node(major: number): { bin: string; version: string } | undefined {
  const n: NodeBin = nodeMajor(major);
  if (n.bin) return { bin: n.bin, version: n.version.replace(/^v/, '') };
  console.warn(`SKIP the entries under Node ${major}: ${n.reason}`);
  return undefined;
}
const n20 = node(20);
const n12 = node(12);
const n22 = node(22);

interface Entry {
  name: string;
  args: string[];
  env?: Record<string, string>;
  /** The package's files the entry loads before it exits on an old Node. */
  files: string[];
  /** Why the entry is not run under Node 12, if it is not. */
  notOn12?: string;
}

/** Requires `file` of dist/ and prints the type of its export `name`: a library entry as a program loads it. */
const requireOf = (file: string, name: string) => ['-e', `console.log(typeof require(${JSON.stringify(path.join(root, file))}).${name})`];

describe('an entry under a Node below the floor', () => {
  let work: string;
  let loadedFile: string;
  let preload: string;
  let entries: Entry[];
  beforeAll(() => {
    work = mkdtempSync(path.join(tmpdir(), 'af-old-node-'));
    loadedFile = path.join(work, 'loaded.json');
    // Preloaded: at exit, the files the process loaded (in syntax Node 12 parses).
    preload = path.join(work, 'loaded.js');
    writeFileSync(preload, `process.on('exit', function () { require('fs').writeFileSync(process.env.AF_LOADED, JSON.stringify(Object.keys(require.cache))); });\n`);
    const data = path.join(work, 'data');
    const gha = path.join(work, 'gha');
    entries = [
      { name: 'serve', args: [main, 'serve', '--port', '0', '--data-dir', data], files: ['dist/src/cli/main.js', FLOOR_CHECK] },
      { name: 'a no-op plan', args: [main, 'plan', path.join(root, 'examples/local.yml'), '--data-dir', data, '--detailed-exitcode'], files: ['dist/src/cli/main.js', FLOOR_CHECK] },
      { name: '--version', args: [main, '--version'], files: ['dist/src/cli/main.js', FLOOR_CHECK] },
      {
        name: "the Action's plan",
        args: [action],
        env: {
          INPUT_FILE: path.join(root, 'examples/local.yml'), INPUT_URL: 'embedded', INPUT_MODE: 'plan',
          GITHUB_WORKSPACE: root, RUNNER_TEMP: gha, GITHUB_OUTPUT: path.join(work, 'output'), GITHUB_STEP_SUMMARY: path.join(work, 'summary'),
        },
        files: ['action/dist/index.js'],
      },
      { name: 'appliance-forge/server', args: requireOf('dist/src/server/index.js', 'startServer'), files: ['dist/src/server/index.js', FLOOR_CHECK] },
      { name: 'appliance-forge/pulumi', args: requireOf('dist/provider/index.js', 'Software'), files: ['dist/provider/index.js', FLOOR_CHECK] },
      {
        name: 'appliance-forge/pulumi/runtime/v1', args: requireOf('dist/provider/runtime/v1.js', 'check'), files: ['dist/provider/runtime/v1.js', FLOOR_CHECK],
        notOn12: '@pulumi/pulumi, which loads it, needs Node 18 or later; its own code is ES2022',
      },
    ];
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  function run(node: string, e: Entry) {
    rmSync(loadedFile, { force: true });
    const r = spawnSync(node, ['-r', preload, ...e.args], {
      cwd: work, encoding: 'utf8', timeout: 120_000, env: { PATH: process.env.PATH ?? '', AF_LOADED: loadedFile, ...e.env },
    });
    // None after a crash (SIGSEGV runs no exit handler).
    const all = existsSync(loadedFile) ? (JSON.parse(readFileSync(loadedFile, 'utf8')) as string[]) : [];
    const loaded = all.filter((f) => f.startsWith(`${root}/`)).map((f) => path.relative(root, f));
    return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr, loaded };
  }

  function expectRefused(n: { bin: string; version: string }, e: Entry) {
    const r = run(n.bin, e);
    const line = `appliance-forge needs Node ${NODE_FLOOR} or later and this is Node ${n.version} (${n.bin}): ` +
      `eval "$(bash scripts/node.sh)" in a clone of appliance-forge brings Node ${NODE_FLOOR} to this shell, or install Node ${NODE_FLOOR} or later`;
    expect({ name: e.name, status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr }).toEqual({ name: e.name, status: 2, signal: null, stdout: '', stderr: `${line}\n` });
    expect(r.stderr).not.toMatch(/Segmentation fault|^\s+at /m);
    expect(r.loaded, e.name).toEqual(e.files);
  }

  it.skipIf(!n20)('Node 20: exit 2 and one line for every entry, nothing loaded but the entry and the check', () => {
    expect(n20!.version).toMatch(/^20\./);
    for (const e of entries) expectRefused(n20!, e);
  }, 300_000);

  it.skipIf(!n12)('Node 12: the same, so the entries and the check parse on an old Node', () => {
    expect(n12!.version).toMatch(/^12\./);
    for (const e of entries) {
      if (e.notOn12) console.warn(`SKIP ${e.name} under Node 12: ${e.notOn12}`);
      else expectRefused(n12!, e);
    }
  }, 300_000);

  it.skipIf(!n20)('Node 20, below the entries: the store refuses better-sqlite3 13 instead of crashing on it', () => {
    const engines = path.join(root, 'dist/src/server/store/sqlite/engines.js');
    const script = `try { require(${JSON.stringify(engines)}).openSqlite(':memory:'); console.log('opened'); } catch (e) { console.log(e.name + ': ' + e.message); }`;
    const r = spawnSync(n20!.bin, ['-e', script], { encoding: 'utf8', timeout: 60_000 });
    expect({ status: r.status, signal: r.signal, stderr: r.stderr }).toEqual({ status: 0, signal: null, stderr: '' });
    const version = (JSON.parse(readFileSync(path.join(root, 'node_modules/better-sqlite3/package.json'), 'utf8')) as { version: string }).version;
    expect(r.stdout).toBe(
      `SqliteUnavailableError: no SQLite engine: Node ${n20!.version} has no node:sqlite (Node 22.13 or later has it) and the optional dependency ` +
        `better-sqlite3 cannot load (better-sqlite3 ${version} is a Node-API 10 addon (Node 22.14 or later) and Node ${n20!.version} has Node-API 9: ` +
        'loading it would crash Node; npm install better-sqlite3@12 for this Node)\n',
    );
  }, 60_000);
});

describe('an entry under Node 22', () => {
  it('the check is the floor of package.json\'s engines', () => {
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
    expect(pkg.engines.node).toBe(`>=${NODE_FLOOR}`);
  });

  it.skipIf(!n22)('works: --version, the Action, the server and the provider', () => {
    const bin = n22!.bin;
    const opts = { cwd: root, encoding: 'utf8', timeout: 120_000, env: { PATH: process.env.PATH ?? '' } } as const;
    const version = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;
    expect(spawnSync(bin, [main, '--version'], opts)).toMatchObject({ status: 0, stdout: `appliance-forge ${version}\n`, stderr: '' });
    for (const [file, name] of [['dist/src/server/index.js', 'startServer'], ['dist/provider/index.js', 'Software'], ['dist/provider/runtime/v1.js', 'check']] as const) {
      expect(spawnSync(bin, requireOf(file, name), opts), file).toMatchObject({ status: 0, stdout: 'function\n' });
    }
    // The Action past its entry's check: validate mode, which needs no service.
    const gha = mkdtempSync(path.join(tmpdir(), 'af-old-node-gha-'));
    try {
      for (const f of ['output', 'summary']) writeFileSync(path.join(gha, f), '');
      const env = { PATH: process.env.PATH ?? '', INPUT_FILE: 'examples/local.yml', INPUT_MODE: 'validate', GITHUB_WORKSPACE: root, GITHUB_OUTPUT: path.join(gha, 'output'), GITHUB_STEP_SUMMARY: path.join(gha, 'summary') };
      const r = spawnSync(bin, [action], { ...opts, env });
      expect(r.status, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toContain('examples/local.yml: valid');
    } finally {
      rmSync(gha, { recursive: true, force: true });
    }
  }, 300_000);
});
