// Shared by the OS layer tests: the suite-wide cache (real layers and .deb files reused across files,
// runs and the integrator's tests), the prerequisites (fail loudly, never skip), a counter of real
// mmdebstrap runs that does not depend on the code under test, and a worker in a second process.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync, linkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { buildSync } from 'esbuild';
import type { OsLayerSpec } from '../../../src/imaging/stages';
import { defaultMirror } from '../../../src/imaging/os';
import { defaultCacheDir } from '../../../src/imaging/cache-dir';
import { sandboxProblem } from '../../../src/host/sandbox';

/** The suite-wide OS layer cache (the integrator's image tests reuse its layers and .deb files): the server's default. */
export const CACHE_ROOT = defaultCacheDir();
export const TEST_CACHE = join(CACHE_ROOT, 'os');

/** Real builds need root or a user namespace, and mmdebstrap: say so (CI runs as root and installs it), never skip. */
export function requireBuildPrerequisites(): void {
  const problem = sandboxProblem();
  if (problem) throw new Error(`OS layer tests build real Debian trees with mmdebstrap: ${problem}`);
  if (spawnSync('sh', ['-c', 'command -v mmdebstrap']).status !== 0) throw new Error('OS layer tests need mmdebstrap: apt-get install mmdebstrap (scripts/test-prereqs.sh does it as root)');
}

export function spec(over: Partial<OsLayerSpec> = {}): OsLayerSpec {
  return { suite: 'bookworm', arch: 'amd64', profile: 'Minimal', packages: [], kernel: 'cloud', cloudInit: false, mirror: defaultMirror(), ...over };
}

/** A scratch directory beside the shared cache (same filesystem: the .deb files can be hard-linked). */
export function scratch(label: string): { path: string; cleanup(): void } {
  const base = join(CACHE_ROOT, 'scratch');
  mkdirSync(base, { recursive: true });
  const path = mkdtempSync(join(base, `af-oslayer-${label}-`));
  chmodSync(path, 0o711); // the build's user namespace root passes through (host/sandbox.ts)
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}

/** A private cache that starts with the shared .deb files (so a private build downloads little). */
export function privateCache(label: string): { path: string; cleanup(): void } {
  const s = scratch(label);
  const debs = join(s.path, 'debs');
  mkdirSync(debs);
  const shared = join(TEST_CACHE, 'debs');
  if (existsSync(shared)) for (const f of readdirSync(shared)) if (f.endsWith('.deb')) {
    try { linkSync(join(shared, f), join(debs, f)); } catch { /* another filesystem: the build downloads it */ }
  }
  return s;
}

/** Put a `mmdebstrap` wrapper first on PATH that logs each run to a file, then runs the real one. */
export function countMmdebstrap(dir: string): { runs(): number; env: NodeJS.ProcessEnv } {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const log = join(dir, 'mmdebstrap-runs.log');
  writeFileSync(log, '');
  chmodSync(log, 0o666); // the wrapper runs as root of the build's user namespace
  const real = execFileSync('sh', ['-c', 'command -v mmdebstrap'], { encoding: 'utf8' }).trim();
  writeFileSync(join(bin, 'mmdebstrap'), `#!/bin/sh\necho "$$" >> '${log}'\nexec '${real}' "$@"\n`);
  chmodSync(join(bin, 'mmdebstrap'), 0o755);
  return { runs: () => readFileSync(log, 'utf8').split('\n').filter(Boolean).length, env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` } };
}

let bundled: string | undefined;
/** The worker script (worker.ts) bundled for a plain `node` child process. */
function workerScript(): string {
  if (bundled) return bundled;
  const out = join(mkdtempSync('/tmp/af-oslayer-worker-'), 'worker.js');
  buildSync({ entryPoints: [join(__dirname, 'worker.ts')], bundle: true, platform: 'node', target: 'node20', outfile: out, logLevel: 'error' });
  bundled = out;
  return out;
}

/** Remove the bundled worker (call in afterAll of a file that started workers). */
export function removeWorkerScript(): void {
  if (bundled) rmSync(dirname(bundled), { recursive: true, force: true });
  bundled = undefined;
}

/** Run worker.ts in another process; its stdout lines are JSON messages. */
export function startWorker(args: unknown, env: NodeJS.ProcessEnv = process.env): { child: ChildProcess; messages: Promise<unknown[]>; next(): Promise<unknown> } {
  const child = spawn(process.execPath, [workerScript(), JSON.stringify(args)], { stdio: ['pipe', 'pipe', 'inherit'], env });
  const all: unknown[] = [];
  const waiters: ((m: unknown) => void)[] = [];
  let buf = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => {
    buf += s;
    const lines = buf.split('\n');
    buf = lines.pop() ?? '';
    for (const l of lines.filter(Boolean)) {
      const m = JSON.parse(l) as unknown;
      all.push(m);
      waiters.shift()?.(m);
    }
  });
  const messages = new Promise<unknown[]>((resolve) => child.on('close', () => resolve(all)));
  let read = 0;
  return {
    child,
    messages,
    next: () => (read < all.length ? Promise.resolve(all[read++]) : new Promise((r) => waiters.push((m) => { read++; r(m); }))),
  };
}

/**
 * A tree as find(1) and sha256sum(1) see it: each entry's path, type, mode, owner and link target, then
 * (`contents`) each file's size and digest.
 */
export function listing(tree: string, contents: boolean): string {
  const entries = `find . -printf '%p %y %m %U:%G %l\\n' | LC_ALL=C sort`;
  const files = `find . -type f -printf '%p %s\\n' | LC_ALL=C sort && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum`;
  return execFileSync('sh', ['-c', `cd "$1" && ${entries}${contents ? ` && ${files}` : ''}`, 'sh', tree], { encoding: 'utf8', maxBuffer: 256 * 1024 ** 2 });
}
