// The OS layer cache on disk: one directory, shared by every process on the machine that builds images.
//
//   <dir>/layers/<key>/{tree/,meta.json,used}  complete entries only (renamed in whole); `used`'s mtime is the LRU clock
//   <dir>/leases/<key>/<owner>-<n>             a lease: the entry is in use by that (live) process
//   <dir>/tmp/<owner>-…/                       builds in progress and entries being removed
//   <dir>/debs/                                downloaded .deb files, hard-linked into each build's apt archive
//   <dir>/locks/                               proper-lockfile locks: `cache` (short sections) and one per key being built
//
// The size bound (maxBytes) covers the layers, the .deb files and the trees being built. Before a new
// layer is built, least recently used layers and then .deb files no build links are removed until the
// bound leaves room for it; a build that still has no room is refused.
//
// An owner is `<pid>.<start time>` (/proc/<pid>/stat field 22): a crashed process's temporary
// directories and leases are recognised as dead (even if its pid is reused) and swept.
// proper-lockfile gives atomic (mkdir) locks with a heartbeat so a crashed holder's lock goes stale:
// that is the hard part of a cross-process lock, and it is well used; the leases are plain files
// because they are shared (many readers), which no lock library offers.
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, stat, statfs, unlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type lockfileModule from 'proper-lockfile';
import type { BuildHost } from '../build-host';
import { ImagingError } from '../errors';
import { sweepMemoryFolders } from '../memory-folder';
import { NEW_LAYER_BYTES } from './bounds';
import { debFiles } from './debs';
import { usageOf } from './disk-usage';
import { leaseOf, type LayerMeta, type OsLayer } from './layer';
import { removeTree } from './mmdebstrap';
import { ownerAlive, processOwner } from '../../host/process-owner';

export const OWNER = processOwner();

/**
 * proper-lockfile, loaded with the first lock: a server's start sweeps the cache without one, and the module
 * loads graceful-fs, which patches node:fs as it loads.
 */
let lockfile: typeof lockfileModule | undefined;
const locks = async (): Promise<typeof lockfileModule> => (lockfile ??= (await import('proper-lockfile')).default);

const mib = (bytes: number): number => Math.ceil(bytes / 1024 ** 2);

export class LayerStore {
  private swept = false;
  private leaseCount = 0;

  constructor(
    readonly dir: string,
    readonly maxBytes: number,
    private readonly host: BuildHost,
  ) {}

  p(...parts: string[]): string {
    return join(this.dir, ...parts);
  }

  /** A new folder name under tmp/ for work of `kind` (a build, a restore…), named for this process so a sweep knows it. */
  work(kind: string): string {
    return this.p('tmp', `${OWNER}-${kind}-${randomBytes(4).toString('hex')}`);
  }

  /** The meta.json and `used` clock of an entry being made in `work`. */
  async describe(work: string, meta: LayerMeta): Promise<void> {
    await writeFile(join(work, 'meta.json'), `${JSON.stringify(meta)}\n`);
    await writeFile(join(work, 'used'), '');
  }

  /** The entry made in `work` becomes `key`'s, whole (a rename under the cache lock). */
  async publish(work: string, key: string): Promise<void> {
    await this.withLock('cache', () => rename(work, this.p('layers', key)));
  }

  /** Create the layout; once per instance: sweep what dead processes left (builds, evictions, leases). */
  async init(): Promise<void> {
    for (const d of ['layers', 'leases', 'tmp', 'debs', 'locks']) await mkdir(this.p(d), { recursive: true });
    if (this.swept) return;
    this.swept = true;
    for (const name of await readdir(this.p('tmp'))) if (!ownerAlive(name)) await removeTree(this.p('tmp', name), this.host);
    await sweepMemoryFolders(this.host);
    for (const key of await readdir(this.p('leases'))) {
      for (const l of await readdir(this.p('leases', key)).catch(() => [] as string[])) {
        if (!ownerAlive(l)) await unlink(this.p('leases', key, l)).catch(() => undefined);
      }
    }
  }

  private async leased(key: string): Promise<boolean> {
    const leases = await readdir(this.p('leases', key)).catch(() => [] as string[]);
    return leases.some(ownerAlive);
  }

  /** The entry of `key`, leased, or undefined when there is none (under the cache lock, so eviction cannot interleave). */
  async lease(key: string, fromCache: boolean): Promise<OsLayer | undefined> {
    return this.withLock('cache', async () => {
      let meta: LayerMeta;
      try {
        meta = JSON.parse(await readFile(this.p('layers', key, 'meta.json'), 'utf8')) as LayerMeta;
      } catch {
        return undefined;
      }
      await mkdir(this.p('leases', key), { recursive: true });
      const lease = this.p('leases', key, `${OWNER}-${++this.leaseCount}-${randomBytes(4).toString('hex')}`);
      await writeFile(lease, '');
      const now = new Date();
      await utimes(this.p('layers', key, 'used'), now, now);
      const { installed, bytes, sourceDateEpoch } = meta;
      return leaseOf({ dir: this.p('layers', key, 'tree'), key, installed, bytes, sourceDateEpoch }, fromCache, () => unlink(lease).catch(() => undefined));
    });
  }

  /**
   * Remove layers, least recently used first (leased ones stay), then .deb files no build links, oldest
   * first, until layers + .deb files + trees being built fit in maxBytes less `reserve`.
   */
  async evictFor(reserve: number): Promise<{ removed: string[]; total: number }> {
    await this.init();
    return this.withLock('cache', async () => {
      const entries = await this.entries();
      const seen = new Set<string>();
      const debs = await debFiles(this.p('debs'), seen);
      let inProgress = 0;
      for (const name of await readdir(this.p('tmp')).catch(() => [] as string[])) inProgress += await usageOf(this.p('tmp', name), seen);
      let total = entries.reduce((n, e) => n + e.bytes, 0) + debs.reduce((n, d) => n + d.bytes, 0) + inProgress;
      const bound = this.maxBytes - reserve;
      const removed: string[] = [];
      for (const e of entries.sort((a, b) => a.used - b.used)) {
        if (total <= bound) break;
        if (await this.leased(e.key)) continue;
        const trash = this.work('evict');
        await rename(this.p('layers', e.key), trash);
        await removeTree(trash, this.host);
        total -= e.bytes;
        removed.push(e.key);
      }
      // A .deb file with one link is in no build's archive: a later build downloads it again if needed.
      for (const d of debs.filter((x) => x.links === 1).sort((a, b) => a.mtime - b.mtime)) {
        if (total <= bound) break;
        await unlink(d.path).catch(() => undefined);
        total -= d.bytes;
      }
      return { removed, total };
    });
  }

  /**
   * Make room for a new layer before it is built: evict down to the bound less its estimated size,
   * and check the file system has that much free. Refused (disk-full) when either is short.
   */
  async makeRoom(): Promise<number> {
    const largest = Math.max(0, ...(await this.entries()).map((e) => e.bytes));
    const reserve = Math.min(this.maxBytes, Math.max(NEW_LAYER_BYTES, largest));
    const { total } = await this.evictFor(reserve);
    if (total + reserve > this.maxBytes) {
      throw new ImagingError(
        'disk-full',
        `the OS layer cache has no room for another layer: ${mib(total)} MiB of its ${mib(this.maxBytes)} MiB bound are layers in use, downloaded packages in use and builds in progress, and a new layer needs about ${mib(reserve)} MiB; retry when other builds end, or raise the bound (serve --max-cache-mib)`,
      );
    }
    const fs = await statfs(this.dir);
    const free = fs.bavail * fs.bsize;
    if (free < reserve) {
      throw new ImagingError('disk-full', `the file system of the OS layer cache has ${mib(free)} MiB free and a new layer needs about ${mib(reserve)} MiB: free space there or lower the cache bound`);
    }
    return reserve;
  }

  /** The complete entries: size (from their meta.json) and when last used. */
  private async entries(): Promise<{ key: string; bytes: number; used: number }[]> {
    const entries: { key: string; bytes: number; used: number }[] = [];
    for (const key of await readdir(this.p('layers')).catch(() => [] as string[])) {
      try {
        const meta = JSON.parse(await readFile(this.p('layers', key, 'meta.json'), 'utf8')) as LayerMeta;
        const used = (await stat(this.p('layers', key, 'used'))).mtimeMs;
        entries.push({ key, bytes: meta.bytes, used });
      } catch {
        // not an entry (cannot happen through this class): leave it alone
      }
    }
    return entries;
  }

  /** Keys of the complete entries, for inspection. */
  async keys(): Promise<string[]> {
    return (await readdir(this.p('layers')).catch(() => [] as string[])).sort();
  }

  async tryLock(name: string): Promise<(() => Promise<void>) | undefined> {
    try {
      return await (await locks()).lock(this.p('locks', name), { realpath: false, stale: 30_000, update: 5_000, retries: 0, onCompromised: () => undefined });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ELOCKED') return undefined;
      throw e;
    }
  }

  async withLock<T>(name: string, f: () => Promise<T>): Promise<T> {
    const release = await (await locks()).lock(this.p('locks', name), {
      realpath: false,
      stale: 30_000,
      update: 5_000,
      retries: { retries: 600, minTimeout: 20, maxTimeout: 200 },
      onCompromised: () => undefined,
    });
    try {
      return await f();
    } finally {
      await release().catch(() => undefined);
    }
  }
}
