// The native QCOW2 writer against qemu-img: `check` finds no error or leak, `compare` finds the guest
// content equal to the raw disk, for data placed at the edges that matter (first and last cluster,
// both sides of a 512 MiB L2 boundary, a partial last cluster) and for an empty disk.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { openSync, closeSync, ftruncateSync, readFileSync, statSync, writeSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeDigested } from '../../src/imaging/disk/output';
import { dataRanges, parseFilefrag } from '../../src/imaging/disk/extents';
import { qcow2FromRaw, QCOW2_CLUSTER, scanAllocated } from '../../src/imaging/disk/qcow2';
import { open } from 'node:fs/promises';
import { qemuCheck, qemuInfo, tempDir } from './tools';

const tmp = tempDir('qcow2');
afterAll(() => tmp.cleanup());
const MiB = 1024 * 1024;

function sparseRaw(name: string, size: number, writes: [number, Buffer][]): string {
  const path = join(tmp.path, name);
  const fd = openSync(path, 'wx');
  try {
    ftruncateSync(fd, size);
    for (const [pos, data] of writes) writeSync(fd, data, 0, data.length, pos);
  } finally {
    closeSync(fd);
  }
  return path;
}

/** As a build writes it: one read buffer reused, the digests computed beside the writes. */
async function convert(raw: string, size: number): Promise<string> {
  const out = `${raw}.qcow2`;
  await writeDigested(qcow2FromRaw(raw, size, { reuseBuffer: true }), out, { compress: false });
  return out;
}

const coreutils = (cmd: string, p: string): string => execFileSync(cmd, [p], { encoding: 'utf8' }).split(' ')[0]!;

const cases: [string, number, [number, Buffer][]][] = [
  ['empty', 64 * MiB, []],
  ['edges', 64 * MiB, [[0, randomBytes(512)], [64 * MiB - 1, Buffer.from([7])]]],
  ['l2-boundary', 576 * MiB, [[512 * MiB - 100, randomBytes(200)], [560 * MiB + 5, randomBytes(3 * QCOW2_CLUSTER)]]],
  ['partial-last-cluster', 3 * MiB + 512, [[3 * MiB, Buffer.from('tail of an odd-sized disk')]]],
];

describe('qcow2FromRaw', () => {
  it.each(cases)('%s: consistent, equal to the raw disk, only data clusters allocated', async (name, size, writes) => {
    const raw = sparseRaw(`${name}.raw`, size, writes);
    const q = await convert(raw, size);
    const info = qemuInfo(q);
    expect(info).toMatchObject({ format: 'qcow2', 'virtual-size': size });
    const check = qemuCheck(q, 'qcow2');
    expect(check.status, check.out).toBe(0);
    expect(check.out).toMatch(/No errors were found/);
    execFileSync('qemu-img', ['compare', '-f', 'raw', '-F', 'qcow2', raw, q]);
    // Allocated clusters reported by qemu-img check equal the distinct clusters written.
    const clusters = new Set<number>();
    for (const [pos, data] of writes) {
      for (let c = Math.floor(pos / QCOW2_CLUSTER); c <= Math.floor((pos + data.length - 1) / QCOW2_CLUSTER); c++) clusters.add(c);
    }
    const report = JSON.parse(execFileSync('qemu-img', ['check', '--output=json', q], { encoding: 'utf8' })) as { 'allocated-clusters'?: number };
    expect(report['allocated-clusters'] ?? 0).toBe(clusters.size); // qemu-img leaves out a zero count
  });

  it.each(cases)('%s: the extent map skips only holes (same clusters found as a full read)', async (name, size, writes) => {
    const raw = sparseRaw(`${name}.scan.raw`, size, writes);
    const ranges = await dataRanges(raw);
    const fh = await open(raw, 'r');
    try {
      const full = await scanAllocated(fh, size, { ranges: null });
      const mapped = await scanAllocated(fh, size, { ranges });
      expect(mapped.allocated).toBe(full.allocated);
      expect(Buffer.from(mapped.bits).equals(Buffer.from(full.bits))).toBe(true);
    } finally {
      await fh.close();
    }
    if (ranges) for (const [pos, data] of writes) expect(ranges.some(([a, b]) => a <= pos && pos + data.length <= b)).toBe(true);
  });

  it('detects a difference (the comparison above is not vacuous)', async () => {
    const raw = sparseRaw('differs.raw', 8 * MiB, [[MiB, Buffer.from('one')]]);
    const q = await convert(raw, 8 * MiB);
    const other = sparseRaw('differs-other.raw', 8 * MiB, [[MiB, Buffer.from('two')]]);
    expect(() => execFileSync('qemu-img', ['compare', '-f', 'raw', '-F', 'qcow2', other, q], { stdio: 'ignore' })).toThrow();
  });

  it('the reused read buffer gives the bytes of fresh ones, and the digests are the written file\'s, plain and gzipped', async () => {
    // Data runs longer than one read chunk (4 MiB) and than all the writer's slots together, with holes between.
    const size = 48 * MiB;
    const raw = sparseRaw('digests.raw', size, [[0, randomBytes(9 * MiB + 123)], [20 * MiB + 7, randomBytes(5 * MiB)], [47 * MiB, randomBytes(MiB)]]);
    const fresh = `${raw}.fresh.qcow2`;
    const d = await writeDigested(qcow2FromRaw(raw, size), fresh, { compress: false });
    const q = await convert(raw, size);
    expect(readFileSync(q).equals(readFileSync(fresh))).toBe(true);
    expect(d).toEqual({ fileSize: statSync(fresh).size, sha256: coreutils('sha256sum', fresh), md5: coreutils('md5sum', fresh) });
    const gz = `${raw}.qcow2.gz`;
    const z = await writeDigested(qcow2FromRaw(raw, size), gz, { compress: true });
    expect(z).toEqual({ fileSize: statSync(gz).size, sha256: coreutils('sha256sum', gz), md5: coreutils('md5sum', gz) });
    expect(gunzipSync(readFileSync(gz)).equals(readFileSync(fresh))).toBe(true);
  });

  it('refuses a virtual size that is not a multiple of 512', async () => {
    const raw = sparseRaw('odd.raw', 1000, []);
    await expect(convert(raw, 1000)).rejects.toThrow(/multiple of 512/);
  });
});

describe('parseFilefrag', () => {
  it('reads the extents of `filefrag -v` and merges touching ones', () => {
    const text = [
      'Filesystem type is: ef53',
      'File size of d.raw is 67108864 (16384 blocks of 4096 bytes)',
      ' ext:     logical_offset:        physical_offset: length:   expected: flags:',
      '   0:        0..       0:    1234..      1234:      1:',
      '   1:        1..       3:    5000..      5002:      3:       1235:',
      '   2:     16383..   16383:    9000..      9000:      1:       5003: last,eof',
      'd.raw: 3 extents found',
    ].join('\n');
    expect(parseFilefrag(text)).toEqual([[0, 4 * 4096], [16383 * 4096, 16384 * 4096]]);
  });

  it('answers null (scan everything) when the output is not understood', () => {
    expect(parseFilefrag('FIBMAP: Operation not supported')).toBeNull();
    expect(parseFilefrag('File size of x is 10 (1 block of 4096 bytes)\nx: 2 extents found')).toBeNull();
    expect(parseFilefrag('File size of x is 0 (0 blocks of 4096 bytes)\nx: 0 extents found')).toEqual([]);
  });
});
