// Node 24 (the runtime of `runs.using: node24`) for tests that must run something under it:
// scripts/node.sh fetches the npm registry's node-linux-<arch> package once into the cache folder
// (`<cache>/node/<version>/bin/node`). Unreachable registry: undefined and a reason.
import { execFileSync } from 'node:child_process';
import path from 'node:path';

export type NodeBin = { bin: string; version: string; reason?: undefined } | { bin: undefined; reason: string };

const SCRIPT = path.resolve(__dirname, '../../scripts/node.sh');

/** A Node of exactly this major, fetched once. */
export function nodeMajor(major: number): NodeBin {
  if (process.platform !== 'linux') return { bin: undefined, reason: `no node-linux package for ${process.platform}` };
  try {
    const bin = execFileSync('bash', [SCRIPT, String(major), '--bin'], { encoding: 'utf8', timeout: 300_000, stdio: ['ignore', 'pipe', 'pipe'] }).trim();
    return { bin, version: execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim() };
  } catch (e) {
    return { bin: undefined, reason: `scripts/node.sh ${major} failed (registry unreachable?): ${(e as Error).message.split('\n')[0]}` };
  }
}

export function node24(): NodeBin {
  return nodeMajor(24);
}
