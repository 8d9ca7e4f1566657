// How much of the disk a tree takes, as `du -sx` counts it: allocated blocks, each hard-linked inode
// once, mounts inside it not walked.
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** Disk usage of a tree (allocated blocks, each hard-linked inode once), like `du -sx`: mounts inside it are not walked. */
export async function diskUsage(dir: string): Promise<number> {
  return usageOf(dir, new Set());
}

/**
 * `diskUsage` with the inodes already counted in `seen` (shared between trees: a build's hard links to
 * the .deb files count once). Entries that vanish while walked (a build in progress) count nothing.
 */
export async function usageOf(dir: string, seen: Set<string>): Promise<number> {
  const top = await lstat(dir).catch(() => undefined);
  if (!top) return 0;
  let total = 0;
  const count = (s: { dev: number; ino: number; blocks: number }): boolean => {
    const id = `${s.dev}:${s.ino}`;
    if (seen.has(id)) return false;
    seen.add(id);
    total += s.blocks * 512;
    return true;
  };
  const walk = async (d: string): Promise<void> => {
    // A folder of another namespace id that this process may not read (an ordinary user's build) counts as empty.
    for (const e of await readdir(d, { withFileTypes: true }).catch(() => [])) {
      const p = join(d, e.name);
      const s = await lstat(p).catch(() => undefined);
      // Another file system (a build's /proc, /sys, /dev/shm) is not the cache's.
      if (!s || s.dev !== top.dev) continue;
      if (count(s) && s.isDirectory()) await walk(p);
    }
  };
  count(top);
  if (top.isDirectory()) await walk(dir);
  return total;
}
