// The digests of a generated raw disk read only its data extents and hash holes as zeros: the result
// must be the checksums of every byte, as sha256sum and md5sum (coreutils) compute them over the file.
import { execFileSync } from 'node:child_process';
import { closeSync, ftruncateSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dataRanges } from '../../src/imaging/disk/extents';
import { digestFile } from '../../src/imaging/disk/output';

const dir = mkdtempSync(path.join(tmpdir(), 'af-sparse-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function sparseFile(name: string, size: number, writes: Array<[number, number]>): string {
  const p = path.join(dir, name);
  const fd = openSync(p, 'w');
  try {
    ftruncateSync(fd, size);
    for (const [at, len] of writes) {
      const b = Buffer.alloc(len);
      for (let i = 0; i < len; i++) b[i] = (at + i * 7) % 251;
      writeSync(fd, b, 0, len, at);
    }
  } finally {
    closeSync(fd);
  }
  return p;
}

const rchar = (): number => Number(/^rchar: (\d+)/m.exec(readFileSync('/proc/self/io', 'utf8'))![1]);
const tool = (cmd: string, p: string): string => execFileSync(cmd, [p], { encoding: 'utf8' }).split(' ')[0]!;

describe('digests of a sparse file', () => {
  const cases: Array<[string, number, Array<[number, number]>]> = [
    ['holes around data at odd offsets', 64 << 20, [[12345, 70_000], [5 << 20, 3 << 20], [(40 << 20) + 17, 1]]],
    ['data at the very end', 8 << 20, [[(8 << 20) - 3, 3]]],
    ['all hole', 16 << 20, []],
    ['no hole', 3 << 20, [[0, 3 << 20]]],
  ];
  for (const [name, size, writes] of cases) {
    it(`${name}: sha256, md5 and size equal coreutils' over the whole file`, async () => {
      const p = sparseFile(`${name.replace(/\W+/g, '-')}.raw`, size, writes);
      const d = await digestFile(p);
      expect(d).toEqual({ fileSize: size, sha256: tool('sha256sum', p), md5: tool('md5sum', p) });
    });
  }

  it('the holes are not read: bytes read by this process (/proc/self/io rchar) stay near the data size', async () => {
    const p = sparseFile('mostly-empty.raw', 256 << 20, [[1 << 20, 1 << 20]]);
    const ranges = await dataRanges(p);
    expect(ranges).not.toBeNull();
    const before = rchar();
    const d = await digestFile(p);
    const read = rchar() - before;
    expect(d.sha256).toBe(tool('sha256sum', p));
    expect(read).toBeLessThan(8 << 20); // a whole read would be 256 MiB
  });
});
