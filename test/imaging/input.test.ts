// Bad input is refused with an ImagingError before anything is written where it should not be:
// nothing lands outside the work directory, no output file appears, an existing image stays.
import { mkdirSync, readFileSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImage, isImagingError, type ImageFile } from '../../src/imaging';
import { findOnPath, sbinPath } from '../../src/host/path';
import { destinationSegments } from '../../src/imaging/system/destination';
import { ESP_HOST_NEEDS } from '../../src/imaging/disk/esp';
import { BIOS_HOST_NEEDS } from '../../src/imaging/disk/grub';
import { fakeOs, fakeTree, filesIn, tempDir } from './tools';

const tmp = tempDir('input');
afterAll(() => tmp.cleanup());
const src = join(tmp.path, 'src.txt');
const TREE = fakeTree(tmp.path); // disk writing only: no boot here (see tools.ts)
beforeAll(() => writeFileSync(src, 'payload\n'));

/** A build in a fresh out/work pair; returns the error and what was left in both directories. */
async function attempt(files: ImageFile[], over: { diskSizeMiB?: number; swapMiB?: number; manifest?: string } = {}) {
  const base = join(tmp.path, `case-${Math.random().toString(36).slice(2)}`);
  const out = join(base, 'out');
  const work = join(base, 'deep', 'work');
  mkdirSync(out, { recursive: true });
  mkdirSync(work, { recursive: true });
  const outFile = join(out, 'img.qcow2');
  const os = fakeOs(TREE, over.diskSizeMiB ?? 1024);
  const error = await buildImage({ ...os, settings: { ...os.settings, swapMiB: over.swapMiB ?? 0 }, disk: 'qcow2', compress: false, files, manifest: over.manifest ?? '{}', outFile, workDir: work }).then(
    () => undefined,
    (e: unknown) => e,
  );
  return { error, left: [...filesIn(out), ...filesIn(work)], base };
}

describe('hostile destinations', () => {
  it.each([
    ['../escape', /"\.\." segments/],
    ['/../../escape', /"\.\." segments/],
    ['/opt/../../../escape', /"\.\." segments/],
    ['/opt/./x', /"\." segments/],
    ['/opt//x', /empty segment/],
    ['/opt/x/', /empty segment or ends with "\/"/],
    ['', /empty/],
    ['/', /empty segment/],
    ['..\\..\\escape', /backslash/],
    ['/opt/x\u0000y', /control character/],
    ['/opt/line\nbreak', /control character/],
    ['/lost+found/x', /lost\+found/],
    [`/opt/${'n'.repeat(256)}`, /longer than 255 bytes/],
  ])('%j is refused, nothing is written', async (destination, why) => {
    const r = await attempt([{ source: src, destination }]);
    expect(isImagingError(r.error, 'input'), String(r.error)).toBe(true);
    expect((r.error as Error).message).toMatch(why);
    expect((r.error as Error).message).toContain('refused destination');
    expect(r.left).toEqual([]);
    expect(existsSync(join(r.base, 'escape'))).toBe(false);
    expect(existsSync(join(r.base, 'deep', 'escape'))).toBe(false);
  });

  it('accepts ordinary absolute and relative destinations', () => {
    expect(destinationSegments('/opt/app/bin/tool')).toEqual(['opt', 'app', 'bin', 'tool']);
    expect(destinationSegments('opt/my app/..data')).toEqual(['opt', 'my app', '..data']);
  });
});

describe('conflicting or invalid files', () => {
  it.each<[string, ImageFile[], RegExp]>([
    ['the manifest path', [{ source: src, destination: '/etc/appliance-forge/manifest.json' }], /already the appliance manifest/],
    ['a duplicate', [{ source: src, destination: '/a' }, { source: src, destination: 'a' }], /already another file/],
    ['a file used as a directory', [{ source: src, destination: '/a' }, { source: src, destination: '/a/b' }], /\/a is already a file/],
    ['a directory used as a file', [{ source: src, destination: '/a/b' }, { source: src, destination: '/a' }], /already a directory/],
    ['bad rights', [{ source: src, destination: '/a', rights: '0999' }], /refused rights "0999"/],
    ['rights with extra text', [{ source: src, destination: '/a', rights: '0755; rm -rf /' }], /refused rights/],
    ['a missing source', [{ source: join(tmp.path, 'nope'), destination: '/a' }], /cannot be read \(ENOENT\)/],
    ['a directory as source', [{ source: tmp.path, destination: '/a' }], /not a regular file/],
  ])('%s is refused', async (_, files, why) => {
    const r = await attempt(files);
    expect(isImagingError(r.error, 'input'), String(r.error)).toBe(true);
    expect((r.error as Error).message).toMatch(why);
    expect(r.left).toEqual([]);
  });

  it.each([0, 1023, 1.5, Number.NaN, 4 * 1024 * 1024])('disk size %s MiB is refused', async (diskSizeMiB) => {
    const r = await attempt([], { diskSizeMiB });
    expect(isImagingError(r.error, 'input'), String(r.error)).toBe(true);
    expect((r.error as Error).message).toMatch(/disk size must be a whole number of MiB from 1024 to 2097152/);
    expect(r.left).toEqual([]);
  });

  it('a system and swap larger than the disk: a clear disk-full error with the sizes', async () => {
    const r = await attempt([{ source: src, destination: '/small' }], { swapMiB: 2000 });
    expect(isImagingError(r.error, 'disk-full'), String(r.error)).toBe(true);
    expect((r.error as Error).message).toMatch(/the system takes \d+ MiB and its swap 2000 MiB: it does not fit in a 1024 MiB disk/);
    expect(r.left).toEqual([]);
  });

  it('a swap that fits the partition but not ext4 with its metadata: disk-full from the free blocks left', async () => {
    // The root partition is 957 MiB of the 1024 (after the boot partitions and the backup GPT's MiB).
    const r = await attempt([{ source: src, destination: '/small' }], { swapMiB: 945 });
    expect(isImagingError(r.error, 'disk-full'), String(r.error)).toBe(true);
    expect((r.error as Error).message).toMatch(/does not fit in a 1024 MiB disk \(\d+ MiB left free\)/);
    expect(r.left).toEqual([]);
  });

  /** PATH of links to the host's own build tools, less `without`, plus `extra` scripts (name → body). */
  function hostPath(name: string, without: readonly string[], extra: Record<string, string> = {}): string {
    const bin = join(tmp.path, name);
    mkdirSync(bin);
    const bootLoaders = [...ESP_HOST_NEEDS, ...BIOS_HOST_NEEDS].filter((t) => !t.startsWith('/')); // programs, not files
    const tools = ['cp', 'du', 'sfdisk', 'mke2fs', 'dumpe2fs', 'unshare', 'newuidmap', 'newgidmap', ...bootLoaders];
    for (const t of tools.filter((t) => !without.includes(t) && !(t in extra))) {
      const real = findOnPath(t, sbinPath());
      if (real === undefined) throw new Error(`${t} is not installed: bash scripts/prereqs.sh build`);
      symlinkSync(real, join(bin, t));
    }
    for (const [t, body] of Object.entries(extra)) writeFileSync(join(bin, t), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
    return bin;
  }

  async function attemptWithPath(path: string): ReturnType<typeof attempt> {
    const saved = process.env.PATH;
    process.env.PATH = path;
    try {
      return await attempt([{ source: src, destination: '/small' }]);
    } finally {
      process.env.PATH = saved;
    }
  }

  it('a host without grub-mkimage: a prerequisite error naming the Debian packages, nothing left', async () => {
    // PATH holds only the other tools the build runs: the real grub-mkimage is simply not found.
    const r = await attemptWithPath(hostPath('bin-no-grub', ['grub-mkimage']));
    expect(isImagingError(r.error, 'prerequisite'), String(r.error)).toBe(true);
    expect((r.error as Error).message).toMatch(/^grub-mkimage is not installed.*grub-pc-bin/);
    expect(r.left).toEqual([]);
  });

  it('a host without mtools nor grub-mkimage: one error naming every missing tool and both packages, before any disk work', async () => {
    const r = await attemptWithPath(hostPath('bin-no-loaders', ['grub-mkimage', 'mmd', 'mcopy']));
    expect(isImagingError(r.error, 'prerequisite'), String(r.error)).toBe(true);
    expect((r.error as Error).message).toMatch(/^mmd and mcopy and grub-mkimage are not installed on this host: install the Debian packages grub-pc-bin mtools /);
    expect(r.left).toEqual([]);
  });

  it('an ESP tool that fails while mke2fs runs: that error, reported once, nothing left', async () => {
    // A stand-in mmd that fails: a fault the real mtools cannot be made to produce on a sound FAT file.
    // The ESP fails while mke2fs still runs; before its failure was handled, that was an unhandled rejection.
    const r = await attemptWithPath(hostPath('bin-bad-mmd', [], { mmd: 'echo "mmd: simulated failure" >&2; exit 1' }));
    expect(isImagingError(r.error, 'tool'), String(r.error)).toBe(true);
    expect((r.error as Error).message).toMatch(/mmd/);
    expect(r.left).toEqual([]);
  });

  it('an output directory that does not exist is refused', async () => {
    const error = await buildImage({ ...fakeOs(TREE), disk: 'raw', compress: false, files: [], manifest: '{}', outFile: join(tmp.path, 'no', 'dir', 'x.raw'), workDir: join(tmp.path, 'w') }).catch((e: unknown) => e);
    expect(isImagingError(error, 'input')).toBe(true);
    expect((error as Error).message).toMatch(/directory of the output file does not exist/);
  });

  it('a failed rebuild keeps the previous image', async () => {
    const out = join(tmp.path, 'keep');
    mkdirSync(out);
    const outFile = join(out, 'img.raw');
    writeFileSync(outFile, 'previous image');
    const error = await buildImage({ ...fakeOs(TREE), disk: 'raw', compress: false, files: [{ source: src, destination: '/../x' }], manifest: '{}', outFile, workDir: join(tmp.path, 'w2') }).catch((e: unknown) => e);
    expect(isImagingError(error, 'input')).toBe(true);
    expect(readFileSync(outFile, 'utf8')).toBe('previous image');
    expect(filesIn(out)).toEqual(['img.raw']);
  });
});
