// Debian version order against dpkg itself (`dpkg --compare-versions`, the independent implementation),
// on pairs of real versions from apt's index of this machine plus the tricky shapes of Policy §5.6.12.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareVersions, formatVersion, parseVersion } from '../../src/debian/version';

const LISTS = '/var/lib/apt/lists';
const hasDpkg = existsSync('/usr/bin/dpkg');

/** Versions of the index apt keeps (every suite), or none when this machine has no index. */
function realVersions(): string[] {
  if (!existsSync(LISTS)) return [];
  const out = new Set<string>();
  for (const f of readdirSync(LISTS).filter((n) => /_main_binary-amd64_Packages/.test(n))) {
    const text = execFileSync('/usr/lib/apt/apt-helper', ['cat-file', join(LISTS, f)], { maxBuffer: 512 << 20, encoding: 'utf8' });
    for (const m of text.matchAll(/^Version: (.+)$/gm)) out.add(m[1]!);
  }
  return [...out].sort();
}

/** dpkg's verdict for each pair: -1, 0 or 1, from one shell running dpkg per pair. */
function dpkgVerdicts(pairs: Array<[string, string]>): number[] {
  const script = pairs
    .map(([a, b]) => `if dpkg --compare-versions '${a}' lt '${b}'; then echo -1; elif dpkg --compare-versions '${a}' eq '${b}'; then echo 0; else echo 1; fi`)
    .join('\n');
  return execFileSync('sh', ['-c', script], { encoding: 'utf8' }).trim().split('\n').map(Number);
}

/** A small deterministic generator, so a failure can be replayed. */
function lcg(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

describe('Debian version order', () => {
  const tricky: Array<[string, string]> = [
    ['1.0~rc1-1', '1.0-1'], ['1.0-1', '1.0+b1-1'], ['1:0.9', '2.0'], ['1.0', '1.0-0'], ['1.0a', '1.0+'],
    ['1.0~~', '1.0~'], ['1.0~', '1.0'], ['0001.2', '1.02'], ['1.2.3-1ubuntu1', '1.2.3-1+deb12u1'], ['2.36-9+deb12u10', '2.36-9+deb12u9'],
    ['1.0-1~bpo12+1', '1.0-1'], ['7.88.1-10+deb12u12', '7.88.1-10+deb12u8'], ['1:2.0-1', '1:2.0-1'], ['1a', '1A'], ['1.0.', '1.0'],
  ];

  it.runIf(hasDpkg)('agrees with dpkg --compare-versions on tricky shapes', () => {
    const ours = tricky.map(([a, b]) => compareVersions(a, b));
    expect(ours).toEqual(dpkgVerdicts(tricky));
  });

  const real = realVersions();
  it.runIf(hasDpkg && real.length > 1000)('agrees with dpkg on 600 pairs of real versions from the index', () => {
    const rnd = lcg(20261123);
    const pick = () => real[Math.floor(rnd() * real.length)]!;
    const pairs: Array<[string, string]> = [];
    // Neighbours in text order share prefixes (the hard cases); random pairs cover epochs and lengths.
    for (let k = 0; k < 300; k++) {
      const i = Math.floor(rnd() * (real.length - 1));
      pairs.push([real[i]!, real[i + 1]!]);
      pairs.push([pick(), pick()]);
    }
    expect(pairs.map(([a, b]) => compareVersions(a, b))).toEqual(dpkgVerdicts(pairs));
  }, 60_000);

  it('splits epoch, upstream and revision and writes them back', () => {
    expect(parseVersion('1:2.0~rc1-3+deb12u1')).toEqual({ epoch: 1, upstream: '2.0~rc1', revision: '3+deb12u1' });
    expect(parseVersion('2.36-git-1')).toEqual({ epoch: 0, upstream: '2.36-git', revision: '1' });
    expect(parseVersion('3.1')).toEqual({ epoch: 0, upstream: '3.1', revision: '' });
    for (const v of ['1:2.0~rc1-3+deb12u1', '2.36-git-1', '3.1']) expect(formatVersion(parseVersion(v))).toBe(v);
  });
});
