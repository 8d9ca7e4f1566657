// The raw disk: a sparse file with the GPT of gpt.ts and the root partition's ext4 made by e2fsprogs
// from a tree (`mke2fs -d`, at `-E offset=` the partition start). No loop device, no mount.
import { open } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { BuildHost } from '../build-host';
import { ImagingError } from '../errors';
import type { DiskIds } from './disk-ids';
import { ROOT_OFFSET, rootBytes, writeGpt } from './gpt';
import { reproducibleEnv, type Reproducible } from '../reproducible';
import { clampTreeTimes, pinInodeTimes } from './times';
import { timed } from '../stage-log';

export interface Ext4DiskOptions {
  /** New file to create (it must not exist). */
  readonly rawPath: string;
  readonly diskBytes: number;
  /** The tree copied into the filesystem, owners and modes kept. */
  readonly tree: string;
  /** Filesystem label (`root`: /etc/fstab, GRUB and the kernel find it by label). */
  readonly label: string;
  /** GPT GUIDs, the filesystem's UUID and hash seed. */
  readonly ids: DiskIds;
  readonly signal?: AbortSignal | undefined;
  /** mke2fs reads the tree as root of the build's namespace, so the image's owners are its ids. */
  readonly host: BuildHost;
  /** Times clamped to its epoch (times.ts); absent: the clock's. */
  readonly reproducible?: Reproducible | undefined;
}

/** e2fsprogs opens `file?offset=N` at a byte offset (unix_io "offset" option); used by debugfs and e2fsck. */
export function partitionDevice(rawName: string): string {
  return `${rawName}?offset=${ROOT_OFFSET}`;
}

export async function writeExt4Disk(o: Ext4DiskOptions): Promise<void> {
  const fh = await open(o.rawPath, 'wx');
  try {
    await fh.truncate(o.diskBytes); // sparse: only what is written takes space
  } finally {
    await fh.close();
  }
  await writeGpt(o.rawPath, o.diskBytes, o.ids, o.signal);
  // Written by mke2fs (and read by dumpe2fs) as the namespace's root.
  await o.host.own(o.rawPath);
  // The tools run in the file's directory and get its bare name, so a `?` elsewhere in the path
  // cannot be read as the `?offset=` option.
  const cwd = dirname(o.rawPath);
  const name = basename(o.rawPath);
  const fsKiB = rootBytes(o.diskBytes) / 1024;
  const extended = `offset=${ROOT_OFFSET},hash_seed=${o.ids.hashSeed}`;
  await timed('clamping the tree times', () => clampTreeTimes(o.tree, o.reproducible, o.host, o.signal));
  try {
    await timed('mke2fs -d', () => o.host.run('mke2fs', ['-q', '-F', '-t', 'ext4', '-L', o.label, '-U', o.ids.rootFsUuid, '-E', extended, '-d', o.tree, name, `${fsKiB}k`], { cwd, signal: o.signal, env: reproducibleEnv(o.reproducible) }));
  } catch (e) {
    if (e instanceof ImagingError && /could not allocate|no space left|not enough space|too many inodes/i.test(e.message)) {
      throw new ImagingError('disk-full', `the system does not fit in a ${o.diskBytes / 1048576} MiB disk (mke2fs: ${lastLine(e.message)})`, e);
    }
    throw e;
  }
  // The one place for steps on the fresh filesystem before anything else reads or changes it.
  await timed('pinning the inode times', () => pinInodeTimes(cwd, partitionDevice(name), o.reproducible, o.host, o.signal));
}

function lastLine(text: string): string {
  const lines = text.trim().split('\n');
  return lines[lines.length - 1] ?? '';
}
