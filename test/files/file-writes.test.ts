// writeAll (src/file-writes.ts), the write of a large upload without digests, on a real file: what it
// writes is what came (sha256sum, an independent implementation, reads the file back), chunks of any
// size, and a batch never gathers more than BATCH_CHUNKS chunks however small they are (a client that
// sends tiny segments cannot make the server hold an object per byte). The write calls are counted with a
// spy on the real FileHandle; every byte still goes to the file.
import { execFileSync } from 'node:child_process';
import { createHash, randomFillSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { writeAll } from '../../src/file-writes';

const dir = mkdtempSync(join(tmpdir(), 'forge-file-writes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function* pieces(bytes: Buffer, sizes: (i: number) => number): AsyncGenerator<Buffer> {
  for (let off = 0, i = 0; off < bytes.length; i++) {
    const n = Math.min(sizes(i), bytes.length - off);
    yield bytes.subarray(off, off + n);
    off += n;
  }
}

describe('writeAll', () => {
  it('writes chunks of mixed sizes as they came, in at most 256 buffers a write', async () => {
    const bytes = randomFillSync(Buffer.alloc(3 * 1024 * 1024 + 17));
    const file = join(dir, 'mixed.bin');
    const fh = await open(file, 'wx');
    const writev = vi.spyOn(fh, 'writev');
    try {
      // 1-byte chunks first (past 256 of them), then 64 KiB ones and odd sizes.
      const { size } = await writeAll(pieces(bytes, (i) => (i < 1000 ? 1 : i % 3 === 0 ? 65536 : 4093)), fh);
      expect(size).toBe(bytes.length);
      await fh.sync();
    } finally {
      await fh.close();
    }
    const iovs = writev.mock.calls.map(([buffers]) => buffers.length);
    expect(Math.max(...iovs)).toBeLessThanOrEqual(256);
    expect(iovs.length).toBeGreaterThanOrEqual(4); // the first 1,000 one-byte chunks alone take four writes
    const sum = execFileSync('sha256sum', [file], { encoding: 'utf8' }).split(' ')[0];
    expect(sum).toBe(createHash('sha256').update(bytes).digest('hex'));
  });

  it('stops past its limit with the limit error', async () => {
    const fh = await open(join(dir, 'over.bin'), 'wx');
    try {
      const over = new Error('over');
      await expect(writeAll(pieces(Buffer.alloc(5000), () => 1000), fh, { bytes: 4500, error: () => over })).rejects.toBe(over);
    } finally {
      await fh.close();
    }
  });
});
