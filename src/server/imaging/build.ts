// buildImage: the appliance's files → staging tree → raw disk (MBR + ext4) → target format → the
// output file, written under a temporary name beside it and renamed only when complete
// (docs/contracts.md "Imaging"). Whatever happens, the work directory is removed, and on failure
// or abort the temporary output too; an existing `outFile` is only replaced by a finished image.
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { AbortedError } from '../../errors';
import { ImagingError } from './errors';
import { writeExt4Disk } from './filesystem';
import type { DiskFormat } from './formats';
import { PARTITION_OFFSET } from './mbr';
import { digestFile, writeDigested, type Digests } from './output';
import { reporter, type ProgressSink, type Reporter } from './progress';
import { qcow2FromRaw } from './qcow2';
import { qemuConvert } from './qemu';
import { stageTree, type ImageFile } from './staging';

const MiB = 1024 * 1024;
/** Smallest disk: a Minimal Debian 12 with its kernel and boot loader (~700 MiB) plus room to run. */
export const MIN_DISK_MIB = 1024;
/** Largest disk an MBR partition table can describe with 512-byte sectors (2 TiB). */
export const MAX_DISK_MIB = 2 * 1024 * 1024;
const DISKS: readonly DiskFormat[] = ['raw', 'qcow2', 'vmdk', 'vhd', 'vdi'];

export interface BuildImageOptions {
  readonly disk: DiskFormat;
  /** Virtual size of the disk in MiB (installProfile.diskSize, wire contract §8). */
  readonly diskSizeMiB: number;
  /** gzip the final file; name it `….<ext>.gz` (see imageFileName). */
  readonly compress: boolean;
  readonly files: readonly ImageFile[];
  /** Content of MANIFEST_PATH in the image. */
  readonly manifest: string;
  /** The finished image; its directory must exist. Replaced only when the new image is complete. */
  readonly outFile: string;
  /** Where scratch files go (a private subdirectory is made and removed). */
  readonly workDir: string;
  readonly signal?: AbortSignal;
  readonly onProgress?: ProgressSink;
}

export interface BuiltImage extends Digests {
  readonly virtualSizeBytes: number;
}

async function checkOptions(o: BuildImageOptions): Promise<void> {
  const bad = (m: string): never => {
    throw new ImagingError('input', m);
  };
  if (!DISKS.includes(o.disk)) bad(`unknown disk format ${JSON.stringify(o.disk)} (expected one of ${DISKS.join(', ')})`);
  if (!Number.isSafeInteger(o.diskSizeMiB) || o.diskSizeMiB < MIN_DISK_MIB || o.diskSizeMiB > MAX_DISK_MIB) {
    bad(`disk size must be a whole number of MiB from ${MIN_DISK_MIB} to ${MAX_DISK_MIB}, got ${String(o.diskSizeMiB)}`);
  }
  if (typeof o.manifest !== 'string') bad('the manifest must be a string');
  if (!Array.isArray(o.files)) bad('files must be a list');
  const outDir = await stat(dirname(o.outFile)).catch(() => undefined);
  if (!outDir?.isDirectory()) bad(`the directory of the output file does not exist: ${dirname(o.outFile)}`);
  if (basename(o.outFile) === '') bad('the output file has no name');
}

function checkAbort(signal?: AbortSignal): void {
  if (signal?.aborted) throw new AbortedError('image build aborted');
}

export async function buildImage(o: BuildImageOptions): Promise<BuiltImage> {
  checkAbort(o.signal);
  await checkOptions(o);
  const progress = reporter(o.onProgress);
  const diskBytes = o.diskSizeMiB * MiB;
  progress.stage(0, 0, 'preparing the image');
  await mkdir(o.workDir, { recursive: true });
  const buildDir = await mkdtemp(join(o.workDir, 'image-'));
  const partOut = join(dirname(o.outFile), `.${basename(o.outFile)}.${randomUUID().slice(0, 8)}.part`);
  try {
    const stagingDir = join(buildDir, 'root');
    await mkdir(stagingDir);
    progress.stage(0, 10, 'copying the appliance files');
    const tree = await stageTree(stagingDir, o.files, o.manifest, o.signal);
    if (tree.bytes > diskBytes - PARTITION_OFFSET) {
      throw new ImagingError('disk-full', `the appliance files (${Math.ceil(tree.bytes / MiB)} MiB) do not fit in a ${o.diskSizeMiB} MiB disk`);
    }
    checkAbort(o.signal);

    // A raw image is made in place (sparse); every other disk is made from a raw one in the work dir.
    const directRaw = o.disk === 'raw' && !o.compress;
    const rawPath = directRaw ? partOut : join(buildDir, 'disk.raw');
    progress.stage(10, 10, 'making the ext4 filesystem');
    await writeExt4Disk({ rawPath, diskBytes, stagingDir, scratchDir: buildDir, paths: tree.paths, signal: o.signal });
    await rm(stagingDir, { recursive: true, force: true });
    progress.stage(30, 30, `writing the ${o.disk} disk`);
    checkAbort(o.signal);

    const digests = await writeDisk(o, rawPath, partOut, buildDir, diskBytes, progress);
    checkAbort(o.signal);
    await rename(partOut, o.outFile);
    progress.stage(100, 100, 'image ready', 1, { done: digests.fileSize, total: digests.fileSize });
    return { ...digests, virtualSizeBytes: diskBytes };
  } catch (e) {
    await unlink(partOut).catch(() => undefined);
    throw o.signal?.aborted && !(e instanceof AbortedError) ? new AbortedError('image build aborted') : e;
  } finally {
    await rm(buildDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** Percentages 30..98: the target format, compressed or not, digested on the way. */
async function writeDisk(o: BuildImageOptions, rawPath: string, partOut: string, buildDir: string, diskBytes: number, progress: Reporter): Promise<Digests> {
  const { signal, compress } = o;
  const written = (from: number, to: number, message: string, total: number) => (n: number) =>
    progress.stage(from, to, message, n / total, { done: n, total });
  switch (o.disk) {
    case 'raw':
      if (!compress) return digestFile(partOut, signal, written(30, 98, 'computing checksums', diskBytes));
      return writeDigested(readCounted(rawPath, written(30, 98, 'compressing the disk', diskBytes)), partOut, { compress, signal });
    case 'qcow2': {
      const chunks = qcow2FromRaw(rawPath, diskBytes, {
        signal,
        onProgress: (p) =>
          p.phase === 'scan'
            ? progress.stage(30, 60, 'finding the used clusters', p.done / p.total, p)
            : progress.stage(60, 98, 'writing the qcow2 disk', p.done / p.total, p),
      });
      return writeDigested(chunks, partOut, { compress, signal });
    }
    case 'vmdk':
    case 'vhd':
    case 'vdi': {
      const converted = compress ? join(buildDir, `disk.${o.disk}`) : partOut;
      await qemuConvert(rawPath, converted, o.disk, {
        signal,
        onFraction: (f) => progress.stage(30, 80, `writing the ${o.disk} disk (qemu-img)`, f),
      });
      checkAbort(signal);
      const size = (await stat(converted)).size;
      if (!compress) return digestFile(converted, signal, written(80, 98, 'computing checksums', size));
      return writeDigested(readCounted(converted, written(80, 98, 'compressing the disk', size)), partOut, { compress, signal });
    }
  }
}

/** A file's bytes, counting them as they are read (progress of a compression, whose output size is unknown). */
async function* readCounted(path: string, onRead: (n: number) => void): AsyncGenerator<Buffer> {
  let n = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
    const b = chunk as Buffer;
    n += b.length;
    onRead(n);
    yield b;
  }
}
