// Where a build's copy of the OS layer goes: a private folder in /dev/shm (a tmpfs) when memory has
// room for it, else the build's folder on disk. The copy is ~6,000 files that live a few seconds
// (copied, settings applied, read by `mke2fs -d`, removed). On an ext4 disk still writing back the
// layer just made, `cp -a` of the 178 MiB layer of examples/local.yml took 1.7–4.7 s in a build
// against 0.3 s into /dev/shm (README "Real images"). The bytes of the image do not depend on it:
// `mke2fs -d` adds a folder's entries in name order, not in the order the file system lists them,
// and the build pins every inode time after it (test/e2e/real-image-reproducible.test.ts builds once
// each way). Named for this process, so a start sweeps what a killed one left.
import { readFileSync } from 'node:fs';
import { lchown, lstat, mkdtemp, readdir, statfs, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { blockedFolder, hostId, type Sandbox } from '../host/sandbox';
import { removeTree } from './os/mmdebstrap';
import { ownerAlive, processOwner } from './os/owner';

export const MEMORY_DIR = '/dev/shm';
const TMPFS_MAGIC = 0x01021994;
/** What memory keeps beyond the tree: the build's tools, the server, the page cache of the disk it writes. */
const HEADROOM = 1024 * 1024 * 1024;
const NAME = /^\d+\.\d+-tree-/;

/** MemAvailable of /proc/meminfo in bytes (0 when unknown: then the disk is used). */
function memAvailable(): number {
  try {
    const m = /^MemAvailable:\s+(\d+) kB$/m.exec(readFileSync('/proc/meminfo', 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * A new folder in /dev/shm for a tree of `bytes`, owned by the namespace's root, when /dev/shm is a
 * tmpfs with room for twice the tree and 1 GiB, memory has room for the tree and 1 GiB, and the build's
 * namespace can reach it; undefined otherwise (the caller uses the disk). `APPLIANCE_FORGE_TREE_IN_MEMORY=0`
 * turns it off.
 */
export async function memoryFolder(bytes: number, sandbox: Sandbox): Promise<string | undefined> {
  if (process.env.APPLIANCE_FORGE_TREE_IN_MEMORY === '0' || !(bytes > 0)) return undefined;
  const fs = await statfs(MEMORY_DIR).catch(() => undefined);
  if (!fs || fs.type !== TMPFS_MAGIC || fs.bavail * fs.bsize < 2 * bytes + HEADROOM) return undefined;
  if (memAvailable() < bytes + HEADROOM || blockedFolder(sandbox, MEMORY_DIR) !== undefined) return undefined;
  const dir = await mkdtemp(join(MEMORY_DIR, `${processOwner()}-tree-`));
  await lchown(dir, hostId(sandbox, 0, 'uid'), hostId(sandbox, 0, 'gid'));
  return dir;
}

/**
 * Remove the folders of /dev/shm that a build of a process no longer running left (a killed server).
 * /dev/shm is everyone's: only an entry owned by this build's namespace root (as memoryFolder makes
 * them) is touched, so the sweep never descends into a tree another user could still change; a link or
 * a file is removed itself. /dev/shm is sticky: no other user can swap such an entry meanwhile.
 */
export async function sweepMemoryFolders(sandbox: Sandbox): Promise<number> {
  const owner = hostId(sandbox, 0, 'uid');
  let removed = 0;
  for (const name of await readdir(MEMORY_DIR).catch(() => [] as string[])) {
    if (!NAME.test(name) || ownerAlive(name)) continue;
    const path = join(MEMORY_DIR, name);
    const st = await lstat(path).catch(() => undefined);
    if (st?.uid !== owner) continue;
    await (st.isDirectory() ? removeTree(path, sandbox) : unlink(path)).then(() => removed++, () => undefined);
  }
  return removed;
}
