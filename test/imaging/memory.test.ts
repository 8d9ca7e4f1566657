// Memory stays flat: building a 2 GiB disk that holds 160 MiB of data grows the process's resident
// set by far less than either (the QCOW2 writer and the digests stream; nothing holds the image).
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildImage, type DiskFormat } from '../../src/imaging';
import { fakeOs, fakeTree, qemuCheck, qemuInfo, tempDir } from './tools';

const tmp = tempDir('memory');
afterAll(() => tmp.cleanup());
const MiB = 1024 * 1024;
const TREE = fakeTree(tmp.path); // memory of disk writing: no boot here (see tools.ts)
const PAYLOAD_MIB = 160;
/** Bound on the growth of the resident set: under half the payload, a sixteenth of the disk. */
const MAX_GROWTH_MIB = 64;

async function writePayload(path: string): Promise<void> {
  const out = createWriteStream(path);
  for (let i = 0; i < PAYLOAD_MIB / 4; i++) if (!out.write(randomBytes(4 * MiB))) await once(out, 'drain');
  out.end();
  await once(out, 'finish');
}

describe('memory', () => {
  it.each<[DiskFormat, boolean]>([['qcow2', false], ['qcow2', true], ['raw', false]])('a 2 GiB %s disk (compress %s) is built with flat memory', async (disk, compress) => {
    const payload = join(tmp.path, `payload-${disk}-${compress}.bin`);
    await writePayload(payload);
    const outFile = join(tmp.path, `big-${disk}-${compress}.${disk}${compress ? '.gz' : ''}`);
    const base = process.memoryUsage.rss();
    let peak = base;
    const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 10);
    try {
      const r = await buildImage({
        ...fakeOs(TREE, 2048), disk, compress, manifest: '{}', outFile, workDir: tmp.path,
        files: [{ source: payload, destination: '/data/payload.bin' }],
        onProgress: () => (peak = Math.max(peak, process.memoryUsage.rss())),
      });
      expect(r.virtualSizeBytes).toBe(2048 * MiB);
      expect(r.fileSize).toBeGreaterThan(PAYLOAD_MIB * MiB * (compress ? 0.9 : 1)); // random data does not compress
    } finally {
      clearInterval(timer);
    }
    const growth = (peak - base) / MiB;
    console.log(`${disk}${compress ? '.gz' : ''} 2 GiB: RSS ${Math.round(base / MiB)} MiB → peak ${Math.round(peak / MiB)} MiB (+${growth.toFixed(1)} MiB)`);
    expect(growth).toBeLessThan(MAX_GROWTH_MIB);
    if (!compress) {
      expect(qemuInfo(outFile)['virtual-size']).toBe(2048 * MiB);
      if (disk === 'qcow2') expect(qemuCheck(outFile, 'qcow2').status).toBe(0);
    }
  });
});
