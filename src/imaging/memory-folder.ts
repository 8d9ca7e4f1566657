// Where a build's copy of the OS layer goes, and where a new OS layer is built (os/cache.ts): a private
// folder in /dev/shm (a tmpfs) when memory has room for it, else a folder on disk. The copy is ~6,000 files that live a few seconds
// (copied, settings applied, read by `mke2fs -d`, removed). On an ext4 disk still writing back the
// layer just made, `cp -a` of the 178 MiB layer of examples/local.yml took 1.7–4.7 s in a build
// against 0.3 s into /dev/shm (docs/images.md "Real images"). The bytes of the image do not depend on it:
// `mke2fs -d` adds a folder's entries in name order, not in the order the file system lists them,
// and the build pins every inode time after it (test/e2e/real-image-reproducible.test.ts builds once
// each way). Named for this process, so a start sweeps what a killed one left.
import { readFileSync, statfsSync } from 'node:fs';
import { chmod, lstat, mkdtemp, readdir, statfs, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { BuildHost } from './build-host';
import { removeTree } from './os/mmdebstrap';
import { ownerAlive, processOwner } from '../host/process-owner';

export const MEMORY_DIR = '/dev/shm';
const TMPFS_MAGIC = 0x01021994;
/** What memory keeps beyond the tree: the build's tools, the server, the page cache of the disk it writes. */
const HEADROOM = 1024 * 1024 * 1024;
const NAME = /^\d+\.\d+-(?:tree|layer)-/;

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
 * turns it off. `kind` names it: a base disk's `tree`, or a `layer` being built.
 */
export async function memoryFolder(bytes: number, host: BuildHost, kind: 'tree' | 'layer' = 'tree'): Promise<string | undefined> {
  if (process.env.APPLIANCE_FORGE_TREE_IN_MEMORY === '0' || !(bytes > 0)) return undefined;
  const fs = await statfs(MEMORY_DIR).catch(() => undefined);
  if (!fs || fs.type !== TMPFS_MAGIC || fs.bavail * fs.bsize < 2 * bytes + HEADROOM) return undefined;
  if (memAvailable() < bytes + HEADROOM || host.unreachable(MEMORY_DIR, 'memory folder') !== undefined) return undefined;
  const dir = await mkdtemp(join(MEMORY_DIR, `${processOwner()}-${kind}-`));
  await host.own(dir);
  // A layer's build passes through it as apt's `_apt` (its downloads' sandbox), as through the cache
  // folder on disk; otherwise apt downloads as root and leaves its lists/partial owned by root.
  if (kind === 'layer') await chmod(dir, 0o711);
  return dir;
}

export interface MemoryGuard {
  /** Aborted once the bound is passed (its reason: why). */
  readonly signal: AbortSignal;
  /** Why the guard fired, or undefined. */
  why(): string | undefined;
  stop(): void;
}

/**
 * Watches a build that writes into /dev/shm (whose final size is not known before it ends): fires when
 * /dev/shm has grown by more than `limitBytes` since the guard started, or when /dev/shm's free room or
 * MemAvailable falls under 1 GiB; the caller aborts the build there and makes it on disk instead.
 * Checked every `everyMs` (two cheap reads: statfs and /proc/meminfo).
 */
export function memoryGuard(limitBytes: number, everyMs = 250): MemoryGuard {
  const ac = new AbortController();
  let why: string | undefined;
  const used = (): { used: number; free: number } => {
    const fs = statfsSync(MEMORY_DIR);
    return { used: (fs.blocks - fs.bfree) * fs.bsize, free: fs.bavail * fs.bsize };
  };
  const start = used().used;
  const mib = (n: number): number => Math.round(n / 1024 ** 2);
  const timer = setInterval(() => {
    const now = used();
    const available = memAvailable();
    if (now.used - start > limitBytes) why = `it grew past ${mib(limitBytes)} MiB`;
    else if (now.free < HEADROOM) why = `${MEMORY_DIR} has ${mib(now.free)} MiB left`;
    else if (available < HEADROOM) why = `only ${mib(available)} MiB of memory are available`;
    if (why === undefined) return;
    clearInterval(timer);
    ac.abort(new Error(`the build in memory stopped: ${why}`));
  }, everyMs);
  timer.unref();
  return { signal: ac.signal, why: () => why, stop: () => clearInterval(timer) };
}

/**
 * Remove the folders of /dev/shm that a build of a process no longer running left (a killed server).
 * /dev/shm is everyone's: only an entry owned by a build's namespace root (this one's or an owner's,
 * as memoryFolder makes them) is touched, so the sweep never descends into a tree another user could still change; a link or
 * a file is removed itself. /dev/shm is sticky: no other user can swap such an entry meanwhile.
 */
export async function sweepMemoryFolders(host: BuildHost): Promise<number> {
  let removed = 0;
  for (const name of await readdir(MEMORY_DIR).catch(() => [] as string[])) {
    if (!NAME.test(name) || ownerAlive(name)) continue;
    const path = join(MEMORY_DIR, name);
    const st = await lstat(path).catch(() => undefined);
    if (st === undefined || !host.isBuildRoot(st.uid)) continue;
    await (st.isDirectory() ? removeTree(path, host) : unlink(path)).then(() => removed++, () => undefined);
  }
  return removed;
}
