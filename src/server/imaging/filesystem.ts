// The raw disk: a sparse file with an MBR and one ext4 partition made by e2fsprogs from the staging
// tree (`mke2fs -d`, at `-E offset=` the partition start), then owned by root (README "Image builder").
import { open, writeFile, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ImagingError } from './errors';
import { mbrSector, PARTITION_OFFSET } from './mbr';
import { runTool } from './run';

export interface Ext4DiskOptions {
  /** New file to create (it must not exist). */
  readonly rawPath: string;
  readonly diskBytes: number;
  readonly stagingDir: string;
  /** A private directory for the tools' scratch files. */
  readonly scratchDir: string;
  /** Image paths of everything staged (see StagedTree.paths). */
  readonly paths: readonly string[];
  readonly signal?: AbortSignal;
}

/** e2fsprogs opens `file?offset=N` at a byte offset (unix_io "offset" option); used by debugfs and e2fsck. */
export function partitionDevice(rawName: string): string {
  return `${rawName}?offset=${PARTITION_OFFSET}`;
}

export async function writeExt4Disk(o: Ext4DiskOptions): Promise<void> {
  const fh = await open(o.rawPath, 'wx');
  try {
    await fh.truncate(o.diskBytes); // sparse: only what mke2fs writes takes space
    await fh.write(mbrSector(o.diskBytes), 0, 512, 0);
  } finally {
    await fh.close();
  }
  // The tools run in the file's directory and get its bare name, so a `?` elsewhere in the path
  // cannot be read as the `?offset=` option.
  const cwd = dirname(o.rawPath);
  const name = basename(o.rawPath);
  const fsKiB = (o.diskBytes - PARTITION_OFFSET) / 1024;
  try {
    await runTool('mke2fs', [
      '-q', '-F', '-t', 'ext4', '-L', 'appliance',
      '-d', o.stagingDir,
      '-E', `offset=${PARTITION_OFFSET},root_owner=0:0`,
      name, `${fsKiB}k`,
    ], { cwd, signal: o.signal });
  } catch (e) {
    if (e instanceof ImagingError && /could not allocate|no space left|not enough space|too many inodes/i.test(e.message)) {
      throw new ImagingError('disk-full', `the appliance files do not fit in a ${o.diskBytes / 1048576} MiB disk (mke2fs: ${lastLine(e.message)})`, e);
    }
    throw e;
  }
  await ownByRoot(cwd, name, o.scratchDir, o.paths, o.signal);
}

function lastLine(text: string): string {
  const lines = text.trim().split('\n');
  return lines[lines.length - 1] ?? '';
}

/**
 * `mke2fs -d` copies the staging files' owners; set every staged inode to uid/gid 0, whoever built
 * the image. debugfs quotes like the ss library: `"…"` with `""` for a quote inside.
 */
async function ownByRoot(cwd: string, rawName: string, scratchDir: string, paths: readonly string[], signal?: AbortSignal): Promise<void> {
  if (paths.length === 0) return;
  const q = (p: string): string => `"${p.replace(/"/g, '""')}"`;
  const script = paths.map((p) => `sif ${q(p)} uid 0\nsif ${q(p)} gid 0\n`).join('');
  const cmdFile = join(scratchDir, 'owners.debugfs');
  await writeFile(cmdFile, script, { flag: 'wx' });
  try {
    const { stderr } = await runTool('debugfs', ['-w', '-f', cmdFile, partitionDevice(rawName)], { cwd, signal });
    // debugfs exits 0 even when a command fails; its only expected stderr line is the banner.
    const problems = stderr.split('\n').filter((l) => l.trim() !== '' && !/^debugfs \d/.test(l));
    if (problems.length > 0) throw new ImagingError('tool', `debugfs could not set owners: ${problems.slice(0, 3).join('; ')}`);
  } finally {
    await unlink(cmdFile).catch(() => undefined);
  }
}
