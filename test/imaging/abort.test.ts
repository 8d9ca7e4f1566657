// Abort at each kind of stage (native qcow2 writing, a qemu-img child, mke2fs, the digest pass,
// before the start): the build throws AbortedError and leaves no file behind, in the output
// directory or the work directory; an earlier image of the same name is kept.
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AbortedError, isForgeError } from '../../src/errors';
import { buildImage, type BuildProgress, type DiskFormat } from '../../src/imaging';
import { fakeOs, fakeTree, filesIn, tempDir } from './tools';

const tmp = tempDir('abort');
afterAll(() => tmp.cleanup());
const payload = join(tmp.path, 'payload.bin');
const TREE = fakeTree(tmp.path); // disk writing and its abort: no boot here (see tools.ts)

beforeAll(async () => {
  // 96 MiB of random data: every stage takes long enough to be caught in the middle.
  const out = createWriteStream(payload);
  for (let i = 0; i < 24; i++) if (!out.write(randomBytes(4 * 1024 * 1024))) await once(out, 'drain');
  out.end();
  await once(out, 'finish');
});

async function abortedBuild(disk: DiskFormat, compress: boolean, when: (p: BuildProgress) => boolean) {
  const dir = join(tmp.path, `${disk}-${compress}-${Math.random().toString(36).slice(2)}`);
  const out = join(dir, 'out');
  const work = join(dir, 'work');
  mkdirSync(out, { recursive: true });
  const outFile = join(out, `img.${disk}`);
  writeFileSync(outFile, 'previous image');
  const ac = new AbortController();
  const seen: BuildProgress[] = [];
  const error = await buildImage({
    ...fakeOs(TREE), disk, compress, manifest: '{}', outFile, workDir: work,
    files: [{ source: payload, destination: '/opt/payload.bin' }],
    signal: ac.signal,
    onProgress: (p) => {
      seen.push(p);
      if (!ac.signal.aborted && when(p)) ac.abort();
    },
  }).then(() => undefined, (e: unknown) => e);
  return { error, seen, left: filesIn(out), work: filesIn(work), previous: readFileSync(outFile, 'utf8') };
}

describe('abort', () => {
  it.each<[string, DiskFormat, boolean, (p: BuildProgress) => boolean]>([
    ['while writing qcow2 clusters', 'qcow2', false, (p) => p.message === 'converting to qcow2' && (p.bytesDone ?? 0) > 32 * 1024 * 1024],
    ['while scanning for used clusters', 'qcow2', true, (p) => p.message === 'finding the used clusters'],
    ['while qemu-img converts (the child is killed)', 'vmdk', false, (p) => p.message.includes('qemu-img')],
    ['when mke2fs starts', 'vdi', false, (p) => p.message === 'writing the disk: making the ext4 filesystem'],
    ['while making the base disk (after the OS tree is copied)', 'raw', false, (p) => p.message === 'applying settings'],
    ['while computing checksums', 'raw', false, (p) => p.message === 'computing checksums' && (p.bytesDone ?? 0) > 0],
    ['while compressing', 'raw', true, (p) => p.message === 'compressing the disk' && (p.bytesDone ?? 0) > 8 * 1024 * 1024],
  ])('%s (%s): AbortedError, no file left, previous image kept', async (_, disk, compress, when) => {
    const r = await abortedBuild(disk, compress, when);
    expect(isForgeError(r.error, AbortedError), String(r.error)).toBe(true);
    expect(r.seen.at(-1)?.percentage).toBeLessThan(100);
    expect(r.left).toEqual([`img.${disk}`]);
    expect(r.previous).toBe('previous image');
    expect(r.work).toEqual([]);
  });

  it('an already aborted signal stops before anything is made', async () => {
    const work = join(tmp.path, 'never');
    const error = await buildImage({
      ...fakeOs(TREE), disk: 'qcow2', compress: false, files: [], manifest: '{}',
      outFile: join(tmp.path, 'never.qcow2'), workDir: work, signal: AbortSignal.abort(),
    }).catch((e: unknown) => e);
    expect(isForgeError(error, AbortedError)).toBe(true);
    expect(filesIn(tmp.path)).not.toContain('never');
    expect(filesIn(tmp.path)).not.toContain('never.qcow2');
  });
});
