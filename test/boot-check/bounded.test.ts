// Bounded work on an untrusted image: `boot --direct-kernel` and `diff` on a qcow2 bomb
// (vectors.ts: a few hundred KiB whose 100 GiB virtual disk holds 256 MiB of data) end at once with a
// clear error, having written next to nothing to $TMPDIR; the bytes are measured from outside, by
// polling what the command's private $TMPDIR holds on disk. Seconds.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, lstatSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliBundle } from '../cli/helpers/cli';
import { qcow2Bomb } from './vectors';

const MiB = 1024 * 1024;
const work = mkdtempSync(path.join(tmpdir(), 'af-bounded-'));
// Reachable by a build's sandbox (a user namespace's root), as an image folder usually is.
chmodSync(work, 0o755);
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Bytes the files under `dir` hold on disk (allocated blocks; a sparse file's holes are free). */
function diskBytes(dir: string): number {
  let total = 0;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    const p = path.join(dir, name);
    try {
      const st = lstatSync(p);
      total += st.isDirectory() ? diskBytes(p) : st.blocks * 512;
    } catch {
      // removed while we looked
    }
  }
  return total;
}

interface Measured {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
  /** The most $TMPDIR held on disk at any poll (every 20 ms). */
  readonly peakBytes: number;
}

/**
 * Runs the real CLI with a private $TMPDIR and polls it; past `killAbove` bytes the CLI is killed (the
 * test has failed; the machine's disk is spared what an unbounded copy would write).
 */
function measured(args: string[], killAbove = 64 * MiB): Promise<Measured> {
  const tmp = mkdtempSync(path.join(work, 'tmp-'));
  chmodSync(tmp, 0o755);
  const started = Date.now();
  const child = spawn(process.execPath, [cliBundle(), ...args], { cwd: work, env: { PATH: process.env.PATH ?? '', TMPDIR: tmp }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  let peak = 0;
  const poll = setInterval(() => {
    peak = Math.max(peak, diskBytes(tmp));
    if (peak > killAbove) child.kill('SIGKILL');
  }, 20);
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  return new Promise((resolve) => {
    child.on('close', (code) => {
      clearInterval(poll);
      clearTimeout(timer);
      peak = Math.max(peak, diskBytes(tmp));
      rmSync(tmp, { recursive: true, force: true });
      resolve({ code, stdout, stderr, ms: Date.now() - started, peakBytes: peak });
    });
  });
}

let bomb: string;

beforeAll(() => {
  void cliBundle();
  bomb = qcow2Bomb(work, 'bomb.qcow2', 256);
});

describe('a qcow2 bomb (a few hundred KiB, a 100 GiB disk with 256 MiB of data)', () => {
  it('is what it claims, as qemu-img and sfdisk read it', () => {
    expect(statSync(bomb).size).toBeLessThan(2 * MiB);
    const info = JSON.parse(execFileSync('qemu-img', ['info', '--output=json', '-f', 'qcow2', bomb], { encoding: 'utf8' })) as { 'virtual-size': number };
    expect(info['virtual-size']).toBe(100 * 1024 * MiB);
    const map = JSON.parse(execFileSync('qemu-img', ['map', '--output=json', '-f', 'qcow2', bomb], { encoding: 'utf8' })) as Array<{ length: number; data: boolean; zero: boolean }>;
    expect(map.filter((e) => e.data && !e.zero).reduce((n, e) => n + e.length, 0)).toBeGreaterThanOrEqual(256 * MiB);
    const head = path.join(work, 'head.raw');
    execFileSync('qemu-img', ['dd', '-f', 'qcow2', '-O', 'raw', 'bs=1M', 'count=1', `if=${bomb}`, `of=${head}`]);
    execFileSync('truncate', ['-s', '100G', head]);
    const table = JSON.parse(execFileSync('sfdisk', ['--json', head], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })) as { partitiontable: { label: string; partitions: Array<{ start: number }> } };
    expect(table.partitiontable.label).toBe('gpt');
    expect(table.partitiontable.partitions.map((p) => p.start)).toEqual([2048]);
  });

  it('boot --direct-kernel: exit 2 within seconds, the bound in words, and $TMPDIR never holds more than 4 MiB', async () => {
    const r = await measured(['boot', bomb, '--direct-kernel', '--json', '--timeout', '60']);
    expect(r.peakBytes, `peak ${r.peakBytes} bytes in $TMPDIR`).toBeLessThan(4 * MiB);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`${bomb}: its root partition holds more than ${64 * MiB} bytes of data (QEMU's map of it), more than the direct-kernel path copies out of a ${statSync(bomb).size}-byte image file`);
    expect(r.stderr).toContain('boot it without --direct-kernel');
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.ms).toBeLessThan(30_000);
  });

  it('diff: exit 2 within seconds, the bound in words, and $TMPDIR never holds more than 4 MiB', async () => {
    const r = await measured(['diff', bomb, bomb]);
    expect(r.peakBytes, `peak ${r.peakBytes} bytes in $TMPDIR`).toBeLessThan(4 * MiB);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${bomb}: its virtual disk holds more than ${64 * MiB} bytes of data (QEMU's map of it), more than diff copies out of a ${statSync(bomb).size}-byte image file`);
    expect(r.ms).toBeLessThan(30_000);
  });
});
