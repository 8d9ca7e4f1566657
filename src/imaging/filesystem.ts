// The raw disk: a sparse file with an MBR and one ext4 partition made by e2fsprogs from a tree
// (`mke2fs -d`, at `-E offset=` the partition start). No loop device, no mount.
import { lchown, open } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { hostId, type Sandbox } from '../host/sandbox';
import { diskIdsFrom } from './disk-ids';
import { ImagingError } from './errors';
import { mbrSector, PARTITION_OFFSET } from './mbr';
import { clampTreeTimes, pinInodeTimes, reproducibleEnv, type Reproducible } from './reproducible';
import { runTool } from './run';

export interface Ext4DiskOptions {
  /** New file to create (it must not exist). */
  readonly rawPath: string;
  readonly diskBytes: number;
  /** The tree copied into the filesystem, owners and modes kept. */
  readonly tree: string;
  /** Filesystem label (`root`: /etc/fstab, GRUB and the kernel find it by label). */
  readonly label: string;
  /** Active flag of the partition (BIOS boot code looks for it). */
  readonly bootable: boolean;
  readonly signal?: AbortSignal | undefined;
  /** mke2fs reads the tree as root of the build's namespace, so the image's owners are its ids. */
  readonly sandbox: Sandbox;
  /** Times clamped to its epoch (reproducible.ts); absent: the clock's. */
  readonly reproducible?: Reproducible | undefined;
}

/** e2fsprogs opens `file?offset=N` at a byte offset (unix_io "offset" option); used by debugfs and e2fsck. */
export function partitionDevice(rawName: string): string {
  return `${rawName}?offset=${PARTITION_OFFSET}`;
}

export async function writeExt4Disk(o: Ext4DiskOptions): Promise<void> {
  const ids = o.reproducible && diskIdsFrom(o.reproducible.seed);
  const fh = await open(o.rawPath, 'wx');
  try {
    await fh.truncate(o.diskBytes); // sparse: only what mke2fs writes takes space
    await fh.write(mbrSector(o.diskBytes, o.bootable), 0, 512, 0);
    // A reproducible build's disk signature and filesystem ids come from its seed (disk-ids.ts).
    if (ids) await fh.write(Buffer.from(ids.diskGuid.replace(/-/g, ''), 'hex'), 0, 4, 440);
  } finally {
    await fh.close();
  }
  // Written by mke2fs (and read by dumpe2fs) as the namespace's root.
  await lchown(o.rawPath, hostId(o.sandbox, 0, 'uid'), hostId(o.sandbox, 0, 'gid'));
  // The tools run in the file's directory and get its bare name, so a `?` elsewhere in the path
  // cannot be read as the `?offset=` option.
  const cwd = dirname(o.rawPath);
  const name = basename(o.rawPath);
  const fsKiB = (o.diskBytes - PARTITION_OFFSET) / 1024;
  await clampTreeTimes(o.tree, o.reproducible, o.sandbox, o.signal);
  try {
    await runTool('mke2fs', ['-q', '-F', '-t', 'ext4', '-L', o.label, '-d', o.tree, ...(ids ? ['-U', ids.rootFsUuid] : []), '-E', `offset=${PARTITION_OFFSET}${ids ? `,hash_seed=${ids.hashSeed}` : ''}`, name, `${fsKiB}k`], { cwd, signal: o.signal, sandbox: o.sandbox, env: reproducibleEnv(o.reproducible) });
  } catch (e) {
    if (e instanceof ImagingError && /could not allocate|no space left|not enough space|too many inodes/i.test(e.message)) {
      throw new ImagingError('disk-full', `the system does not fit in a ${o.diskBytes / 1048576} MiB disk (mke2fs: ${lastLine(e.message)})`, e);
    }
    throw e;
  }
  await pinInodeTimes(cwd, partitionDevice(name), o.reproducible, o.sandbox, o.signal);
}

function lastLine(text: string): string {
  const lines = text.trim().split('\n');
  return lines[lines.length - 1] ?? '';
}
