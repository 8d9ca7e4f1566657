// The OS layer cache: one directory, shared by every process on the machine that builds images.
//
//   <dir>/layers/<key>/{tree/,meta.json,used}  complete entries only (renamed in whole); `used`'s mtime is the LRU clock
//   <dir>/leases/<key>/<owner>-<n>             a lease: the entry is in use by that (live) process
//   <dir>/tmp/<owner>-…/                       builds in progress and entries being removed
//   <dir>/debs/                                downloaded .deb files, hard-linked into each build's apt archive
//
// A new layer is built in memory (/dev/shm, memory-folder.ts) when there is room: its tree is leased
// at once, and copied into <dir>/tmp, synced and published in the background; the key's build lock is
// held until then, and `settle()` waits for it (a server's close). Without room, or once the tree in
// memory outgrows its bound, it is built on disk as before.
//
// The size bound (maxBytes) covers all three: the layers, the .deb files and the trees being built.
// Before a new layer is built, least recently used layers and then .deb files no build links are
// removed until the bound leaves room for it; a build that still has no room is refused.
//   <dir>/locks/                               proper-lockfile locks: `cache` (short sections) and one per key being built
//
// An owner is `<pid>.<start time>` (/proc/<pid>/stat field 22): a crashed process's temporary
// directories and leases are recognised as dead (even if its pid is reused) and swept.
// proper-lockfile gives atomic (mkdir) locks with a heartbeat so a crashed holder's lock goes stale:
// that is the hard part of a cross-process lock, and it is well used; the leases are plain files
// because they are shared (many readers), which no lock library offers.
import { randomBytes, createHash } from 'node:crypto';
import { constants, createWriteStream } from 'node:fs';
import { lchown, link, lstat, mkdir, open, readdir, readFile, rename, rm, statfs, unlink, utimes, writeFile, stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type lockfileModule from 'proper-lockfile';
import { AbortedError, messageOf } from '../../errors';
import { currentSandbox, hostId, type Sandbox } from '../../host/sandbox';
import { ImagingError } from '../errors';
import type { InstalledPackage, OsLayerSpec } from '../stages';
import { validateMirror } from './mirror';
import { mirrorState } from './mirror-state';
import { assertReachable, runTool } from '../run';
import { checkPrerequisites, installedPackages, removeTree, runMmdebstrap } from './mmdebstrap';
import { ownerAlive, processOwner } from './owner';
import { memoryFolder, memoryGuard, sweepMemoryFolders } from '../memory-folder';
import { copyTree } from '../tree';
import type { OsLayerProgress } from './progress';
import { buildNote, timed } from '../stage-log';
import { RECIPE_VERSION, checkSpec, mmdebstrapArgs } from './recipe';
import { packLayer, unpackLayer, type SharedLayerTier } from './shared-tier';

export const DEFAULT_MAX_BYTES = 8 * 1024 ** 3;
/**
 * Room a new layer is assumed to need before it is built (its tree and the .deb files it downloads):
 * a Minimal layer with the cloud kernel takes about half of it. The largest cached layer counts
 * instead when it is bigger (a Standard profile), and never more than the bound itself.
 */
export const NEW_LAYER_BYTES = 768 * 1024 ** 2;

/** A build in memory copies every kept .deb file into its tree's archive: past this much, it is built on disk. */
export const MAX_DEBS_COPIED = 1024 ** 3;

export interface OsLayer {
  /** The root tree: read-only for callers (copy it with `cp -a`, or `mke2fs -d` it). */
  readonly dir: string;
  readonly key: string;
  readonly installed: readonly InstalledPackage[];
  readonly fromCache: boolean;
  /** The tree's size on disk (bytes), as measured when the layer was made. */
  readonly bytes: number;
  /** The SOURCE_DATE_EPOCH the layer was built with: the newest Release date of its mirror state. */
  readonly sourceDateEpoch: number;
  /**
   * The key without the host ids of the tree's owners (`sharedLayerKey`): the same for every host and
   * user that builds this spec from this mirror state, so what derives from it (a disk's ids) is too.
   */
  readonly portableKey?: string | undefined;
  /** Ends the lease: the entry may be evicted again. Idempotent. */
  release(): Promise<void>;
}

export interface OsLayerOptions {
  readonly signal?: AbortSignal | undefined;
  readonly onProgress?: (p: OsLayerProgress) => void;
}

export interface OsLayerCacheOptions {
  readonly dir: string;
  /** Bound on the cache's disk usage: layers, downloaded .deb files and trees being built; default 8 GiB. */
  readonly maxBytes?: number | undefined;
  /** Bound on a layer built in memory: past it, the build goes on disk. Default: twice the room a new layer is assumed to need. */
  readonly memoryBytes?: number | undefined;
  /** What went wrong after a build's answer (a layer built in memory not kept on disk); default: the debug log. */
  readonly onWarning?: ((message: string) => void) | undefined;
  /** Layers other machines built (a build farm's bucket): restored before one is built, shared once built here. */
  readonly shared?: SharedLayerTier | undefined;
}

/** A layer built in memory in this process: leased from there until it is kept on disk and its last lease ends. */
interface MemoryLayer {
  readonly folder: string;
  readonly dir: string;
  readonly key: string;
  readonly installed: InstalledPackage[];
  readonly bytes: number;
  readonly sourceDateEpoch: number;
  readonly sandbox: Sandbox;
  refs: number;
  kept: boolean;
}

interface Meta {
  readonly key: string;
  readonly bytes: number;
  readonly installed: InstalledPackage[];
  readonly canonical: unknown;
  readonly builtAt: string;
  readonly sourceDateEpoch: number;
}

const OWNER = processOwner();

/** The shared tier of a layer being acquired, with the layer's key there. */
interface Shared {
  readonly tier: SharedLayerTier;
  readonly key: string;
}

/** The canonical form of everything that determines the tree, and its sha256: the cache key. */
export function layerKey(spec: OsLayerSpec, indexes: Record<string, string>, sandbox: Sandbox = { kind: 'privileged', reason: '' }): { key: string; canonical: unknown } {
  // The host ids of the tree's owners: a tree made in a namespace is read only through the same one.
  return keyOf(spec, indexes, sandbox.kind === 'userns' ? [sandbox.uid0, sandbox.gid0, sandbox.uidBase, sandbox.gidBase].join(':') : 'host');
}

/**
 * The key of a layer in the shared tier (shared-tier.ts): the same, but for the host ids, which its
 * archive does not hold. How it was built (as root, or in a namespace) stays part of it.
 */
export function sharedLayerKey(spec: OsLayerSpec, indexes: Record<string, string>, sandbox: Sandbox): string {
  return keyOf(spec, indexes, sandbox.kind === 'userns' ? 'namespace' : 'host').key;
}

function keyOf(spec: OsLayerSpec, indexes: Record<string, string>, owners: string): { key: string; canonical: unknown } {
  const canonical = {
    recipe: RECIPE_VERSION,
    // Built with SOURCE_DATE_EPOCH: the newest date of the indexes below (mirror-state.ts).
    sourceDateEpoch: 'newest InRelease Date',
    owners,
    suite: spec.suite,
    arch: spec.arch,
    profile: spec.profile,
    kernel: spec.kernel,
    cloudInit: spec.cloudInit,
    mirror: { archive: spec.mirror.archive, security: spec.mirror.security ?? null },
    packages: [...spec.packages].map((p) => [p.name, p.arch ?? '', p.version ?? '']).sort((a, b) => (a.join('\0') < b.join('\0') ? -1 : 1)),
    indexes: Object.keys(indexes).sort().map((u) => [u, indexes[u]]),
    // Left out of the JSON when unset: the keys of layers without one stay what they were.
    partition: spec.partition,
  };
  return { key: createHash('sha256').update(JSON.stringify(canonical)).digest('hex'), canonical };
}

/** Disk usage of a tree (allocated blocks, each hard-linked inode once), like `du -sx`: mounts inside it are not walked. */
export async function diskUsage(dir: string): Promise<number> {
  return usageOf(dir, new Set());
}

/**
 * `diskUsage` with the inodes already counted in `seen` (shared between trees: a build's hard links to
 * the .deb files count once). Entries that vanish while walked (a build in progress) count nothing.
 */
async function usageOf(dir: string, seen: Set<string>): Promise<number> {
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

/**
 * proper-lockfile, loaded with the first lock: a server's start sweeps the cache without one, and the module
 * loads graceful-fs, which patches node:fs as it loads.
 */
let lockfile: typeof lockfileModule | undefined;
const locks = async (): Promise<typeof lockfileModule> => (lockfile ??= (await import('proper-lockfile')).default);

export class OsLayerCache {
  readonly dir: string;
  readonly maxBytes: number;
  private readonly memoryBytes: number | undefined;
  private readonly warn: (message: string) => void;
  private swept = false;
  private leaseCount = 0;
  private readonly inMemory = new Map<string, MemoryLayer>();
  private readonly keeping = new Set<Promise<void>>();
  private readonly shared: SharedLayerTier | undefined;
  /** Shared keys this process knows the tier has (or is sharing): a cache hit looks once. */
  private readonly sharedKeys = new Set<string>();

  constructor(o: OsLayerCacheOptions) {
    this.dir = o.dir;
    this.shared = o.shared;
    this.maxBytes = o.maxBytes ?? DEFAULT_MAX_BYTES;
    this.memoryBytes = o.memoryBytes;
    this.warn = o.onWarning ?? ((m) => buildNote(`warning: ${m}`));
    if (!(this.maxBytes > 0)) throw new ImagingError('input', `maxBytes must be positive, not ${o.maxBytes}`);
  }

  private p(...parts: string[]): string {
    return join(this.dir, ...parts);
  }

  /** The layer for a spec: from the cache when an entry of its key exists, else built (once, whoever asks). */
  async acquire(spec: OsLayerSpec, o: OsLayerOptions = {}): Promise<OsLayer> {
    checkSpec(spec);
    const mirror = validateMirror(spec.mirror);
    const s: OsLayerSpec = { ...spec, mirror };
    await this.init();
    o.onProgress?.({ phase: 'resolving', fraction: 0, message: 'reading the mirror state' });
    const sandbox = currentSandbox();
    const state = await timed('reading the mirror state', () => mirrorState(s, o.signal));
    const { key, canonical } = layerKey(s, state.indexes, sandbox);
    const portableKey = sharedLayerKey(s, state.indexes, sandbox);
    const shared = this.shared && { tier: this.shared, key: portableKey };
    return { ...(await this.take(s, key, canonical, state.releaseDate, sandbox, shared, o)), portableKey };
  }

  /** The layer of `key`: from this cache, from another process building it, from the shared tier, or built here. */
  private async take(s: OsLayerSpec, key: string, canonical: unknown, releaseDate: number, sandbox: Sandbox, shared: Shared | undefined, o: OsLayerOptions): Promise<OsLayer> {
    for (;;) {
      const hit = await this.lease(key);
      if (hit) {
        if (shared) this.shareLater(shared, key, sandbox);
        o.onProgress?.({ phase: 'installing', fraction: 1, message: 'OS layer ready (from the cache)' });
        return hit;
      }
      checkPrerequisites(sandbox);
      const release = await this.tryLock(`build-${key}`);
      if (!release) {
        // Another process builds this key: wait for its entry (or for its failure, then build here).
        o.onProgress?.({ phase: 'resolving', fraction: 0, message: 'waiting for the same OS layer being built by another job' });
        await sleep(1000, undefined, { signal: o.signal }).catch(() => {
          throw new AbortedError('image build aborted');
        });
        continue;
      }
      let handedOff = false;
      try {
        const again = await this.lease(key);
        if (again) {
          o.onProgress?.({ phase: 'installing', fraction: 1, message: 'OS layer ready (built by another job)' });
          return again;
        }
        let unlockShared: (() => Promise<void>) | undefined;
        if (shared) {
          const got = await this.fromTier(shared, { key, canonical }, sandbox, o);
          if (got.layer) return got.layer;
          unlockShared = got.unlock;
        }
        let built: { layer: OsLayer; keeping?: Promise<void> };
        try {
          built = await this.build(s, { key, canonical, sourceDateEpoch: releaseDate }, sandbox, o);
        } catch (e) {
          await unlockShared?.().catch(() => undefined);
          throw e;
        }
        if (built.keeping) {
          // The lock holds until the layer is on disk: another process waits for the entry, not a second build.
          handedOff = true;
          this.background(built.keeping.finally(() => release().catch(() => undefined)));
        }
        // The tier's lock holds until the layer is shared: another machine waits for it, not a second build.
        if (shared) this.shareLater(shared, key, sandbox, unlockShared);
        return built.layer;
      } finally {
        if (!handedOff) await release().catch(() => undefined);
      }
    }
  }

  /** Resolves once every layer built in memory here is kept on disk and every layer being shared is (or failed to be: a warning). */
  async settle(): Promise<void> {
    while (this.keeping.size > 0) await Promise.all([...this.keeping]);
  }

  /** Work that outlives the build that started it: `settle()` waits for it. */
  private background(p: Promise<void>): void {
    this.keeping.add(p);
    void p.finally(() => this.keeping.delete(p));
  }

  /**
   * The layer from the shared tier, or the tier's lock of its key to build it here. While another machine
   * holds the lock (it builds the layer), wait and look again. A tier that fails is a warning: the layer
   * is then built here without it.
   */
  private async fromTier(shared: Shared, ids: Pick<Meta, 'key' | 'canonical'>, sandbox: Sandbox, o: OsLayerOptions): Promise<{ layer?: OsLayer; unlock?: () => Promise<void> }> {
    try {
      for (;;) {
        const restored = await this.restore(shared, ids, sandbox, o);
        if (restored) return { layer: restored };
        const unlock = await shared.tier.tryLock(shared.key);
        if (unlock) {
          // Shared between the look and the lock.
          const late = await this.restore(shared, ids, sandbox, o).catch(async (e: unknown) => {
            await unlock().catch(() => undefined);
            throw e;
          });
          if (!late) return { unlock };
          await unlock().catch(() => undefined);
          return { layer: late };
        }
        o.onProgress?.({ phase: 'resolving', fraction: 0, message: 'waiting for the same OS layer being built by another worker' });
        await sleep(2000, undefined, { signal: o.signal });
      }
    } catch (e) {
      if (o.signal?.aborted) throw new AbortedError('image build aborted');
      if (e instanceof AbortedError) throw e;
      this.warn(`the shared OS layers at ${shared.tier.where} cannot be used (this layer is built here): ${messageOf(e)}`);
      return {};
    }
  }

  /** The layer of `ids.key` restored from the shared tier into this cache and leased; undefined when the tier has none. */
  private async restore(shared: Shared, { key, canonical }: Pick<Meta, 'key' | 'canonical'>, sandbox: Sandbox, o: OsLayerOptions): Promise<OsLayer | undefined> {
    if (!(await shared.tier.has(shared.key))) return undefined;
    assertReachable(sandbox, this.dir, 'cache folder');
    await this.makeRoom();
    const work = this.p('tmp', `${OWNER}-restore-${randomBytes(4).toString('hex')}`);
    const [uid, gid] = [hostId(sandbox, 0, 'uid'), hostId(sandbox, 0, 'gid')];
    try {
      await mkdir(work);
      const archive = join(work, 'layer.tar');
      o.onProgress?.({ phase: 'resolving', fraction: 0.05, message: `fetching the OS layer from ${shared.tier.where}` });
      const meta = await timed('fetching the OS layer from the shared tier', () => shared.tier.fetch(shared.key, archive, o.signal));
      if (!meta) {
        await removeTree(work, sandbox);
        return undefined;
      }
      // Read by the namespace's root, which unpacks it into a folder of its own.
      await lchown(archive, uid, gid);
      const tree = join(work, 'tree');
      await mkdir(tree);
      await lchown(tree, uid, gid);
      o.onProgress?.({ phase: 'installing', fraction: 0.5, message: 'unpacking the OS layer built by another worker' });
      await timed('unpacking the shared OS layer', () => unpackLayer(archive, tree, sandbox, o.signal));
      await rm(archive, { force: true });
      const entry: Meta = { key, bytes: await diskUsage(work), installed: [...meta.installed], canonical, builtAt: new Date().toISOString(), sourceDateEpoch: meta.sourceDateEpoch };
      await writeFile(join(work, 'meta.json'), `${JSON.stringify(entry)}\n`);
      await writeFile(join(work, 'used'), '');
      await timed('syncing the layer', () => runTool('sync', ['--file-system', work], { signal: o.signal }));
      await this.withLock('cache', () => rename(work, this.p('layers', key)));
    } catch (e) {
      await removeTree(work, sandbox).catch(() => undefined);
      throw o.signal?.aborted ? new AbortedError('image build aborted') : e;
    }
    this.sharedKeys.add(shared.key);
    const layer = await this.lease(key);
    if (!layer) throw new ImagingError('tool', `OS layer ${key} vanished right after it was restored`);
    await timed('evicting old layers', () => this.evict());
    o.onProgress?.({ phase: 'installing', fraction: 1, message: 'OS layer ready (built by another worker)' });
    return layer;
  }

  /**
   * In the background, the local layer `key` packed and put in the shared tier, unless the tier has it.
   * `unlock`: the tier's lock of its key, held already (this process built it), freed once shared.
   */
  private shareLater(shared: Shared, key: string, sandbox: Sandbox, unlock?: () => Promise<void>): void {
    if (this.sharedKeys.has(shared.key)) {
      void unlock?.().catch(() => undefined);
      return;
    }
    this.sharedKeys.add(shared.key);
    this.background((async () => {
      let done = false;
      try {
        if (!unlock) {
          if (await shared.tier.has(shared.key)) return void (done = true);
          unlock = await shared.tier.tryLock(shared.key);
          // Another machine builds or shares it.
          if (!unlock) return void (done = true);
          if (await shared.tier.has(shared.key)) return void (done = true);
        }
        const layer = await this.lease(key);
        if (!layer) return;
        const work = this.p('tmp', `${OWNER}-share-${randomBytes(4).toString('hex')}`);
        try {
          await mkdir(work);
          await lchown(work, hostId(sandbox, 0, 'uid'), hostId(sandbox, 0, 'gid'));
          const archive = join(work, 'layer.tar');
          await timed('sharing the OS layer: packing it', () => packLayer(layer.dir, archive, sandbox));
          await timed('sharing the OS layer: storing it', () => shared.tier.put(shared.key, archive, { installed: layer.installed, sourceDateEpoch: layer.sourceDateEpoch }));
          done = true;
        } finally {
          await layer.release();
          await removeTree(work, sandbox).catch(() => undefined);
        }
      } catch (e) {
        this.warn(`the OS layer ${key.slice(0, 12)} could not be shared through ${shared.tier.where} (the next hit tries again): ${messageOf(e)}`);
      } finally {
        if (!done) this.sharedKeys.delete(shared.key);
        await unlock?.().catch(() => undefined);
      }
    })());
  }

  /**
   * Remove layers, least recently used first (leased ones stay), then .deb files no build links, oldest
   * first, until layers + .deb files + trees being built fit in maxBytes less `reserve`. The removed
   * layers' keys.
   */
  async evict(reserve = 0): Promise<string[]> {
    return (await this.evictFor(reserve)).removed;
  }

  private async evictFor(reserve: number): Promise<{ removed: string[]; total: number }> {
    await this.init();
    return this.withLock('cache', async () => {
      const entries = await this.entries();
      const seen = new Set<string>();
      const debs = await this.debFiles(seen);
      let inProgress = 0;
      for (const name of await readdir(this.p('tmp')).catch(() => [] as string[])) inProgress += await usageOf(this.p('tmp', name), seen);
      let total = entries.reduce((n, e) => n + e.bytes, 0) + debs.reduce((n, d) => n + d.bytes, 0) + inProgress;
      const bound = this.maxBytes - reserve;
      const removed: string[] = [];
      for (const e of entries.sort((a, b) => a.used - b.used)) {
        if (total <= bound) break;
        if (await this.leased(e.key)) continue;
        const trash = this.p('tmp', `${OWNER}-evict-${randomBytes(4).toString('hex')}`);
        await rename(this.p('layers', e.key), trash);
        await removeTree(trash);
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

  /** The downloaded .deb files with their disk usage (their inodes added to `seen`). */
  private async debFiles(seen: Set<string>): Promise<{ path: string; bytes: number; links: number; mtime: number }[]> {
    const out: { path: string; bytes: number; links: number; mtime: number }[] = [];
    for (const name of await readdir(this.p('debs')).catch(() => [] as string[])) {
      const path = this.p('debs', name);
      const s = await lstat(path).catch(() => undefined);
      if (!s?.isFile()) continue;
      const id = `${s.dev}:${s.ino}`;
      if (seen.has(id)) continue;
      seen.add(id);
      out.push({ path, bytes: s.blocks * 512, links: s.nlink, mtime: s.mtimeMs });
    }
    return out;
  }

  /**
   * Make room for a new layer before it is built: evict down to the bound less its estimated size,
   * and check the file system has that much free. Refused (disk-full) when either is short.
   */
  private async makeRoom(): Promise<number> {
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
        const meta = JSON.parse(await readFile(this.p('layers', key, 'meta.json'), 'utf8')) as Meta;
        const used = (await stat(this.p('layers', key, 'used'))).mtimeMs;
        entries.push({ key, bytes: meta.bytes, used });
      } catch {
        // not an entry (cannot happen through this class): leave it alone
      }
    }
    return entries;
  }

  /** Remove what dead processes left (builds with their mounts, evictions, leases); the server calls it when it starts. */
  async sweep(): Promise<void> {
    await this.init();
  }

  /** Keys of the complete entries, for inspection. */
  async keys(): Promise<string[]> {
    return (await readdir(this.p('layers')).catch(() => [] as string[])).sort();
  }

  /** Create the layout; once per instance: sweep what dead processes left (builds, evictions, leases). */
  private async init(): Promise<void> {
    for (const d of ['layers', 'leases', 'tmp', 'debs', 'locks']) await mkdir(this.p(d), { recursive: true });
    if (this.swept) return;
    this.swept = true;
    for (const name of await readdir(this.p('tmp'))) if (!ownerAlive(name)) await removeTree(this.p('tmp', name));
    await sweepMemoryFolders(currentSandbox());
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
  async lease(key: string, fromCache = true): Promise<OsLayer | undefined> {
    await this.init();
    const m = this.inMemory.get(key);
    if (m) return this.memoryLease(m, fromCache);
    return this.withLock('cache', async () => {
      let meta: Meta;
      try {
        meta = JSON.parse(await readFile(this.p('layers', key, 'meta.json'), 'utf8')) as Meta;
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

  /** The new layer of `key`: built in memory when there is room (kept on disk in the background: `keeping`), else on disk. */
  private async build(spec: OsLayerSpec, ids: Pick<Meta, 'key' | 'canonical' | 'sourceDateEpoch'>, sandbox: Sandbox, o: OsLayerOptions): Promise<{ layer: OsLayer; keeping?: Promise<void> }> {
    // Either way the layer ends in the cache (a build in memory is copied there): the namespace must reach it.
    assertReachable(sandbox, this.dir, 'cache folder');
    const reserve = await timed('making room in the layer cache', () => this.makeRoom());
    const folder = await this.memoryBuildFolder(reserve, sandbox);
    if (folder) {
      const guard = memoryGuard(this.memoryBytes ?? 2 * reserve);
      try {
        return await this.buildInMemory(spec, ids, folder, sandbox, { ...o, signal: o.signal ? AbortSignal.any([o.signal, guard.signal]) : guard.signal });
      } catch (e) {
        const why = guard.why();
        if (why === undefined || o.signal?.aborted) {
          await removeTree(folder, sandbox);
          throw e;
        }
        // What it downloaded is kept: the build on disk links it instead of fetching it again.
        await this.harvestDebs(join(folder, 'tree'), sandbox, (file, name) => this.keepDeb(file, name, sandbox)).catch(() => undefined);
        await removeTree(folder, sandbox);
        buildNote(`the OS layer in memory stopped (${why}): building it on disk`);
      } finally {
        guard.stop();
      }
    }
    return { layer: await this.buildOnDisk(spec, ids, sandbox, o) };
  }

  /** A folder of /dev/shm for a new layer, when memory has room for it and for the kept .deb files it copies in. */
  private async memoryBuildFolder(reserve: number, sandbox: Sandbox): Promise<string | undefined> {
    const debs = (await this.debFiles(new Set())).reduce((n, d) => n + d.bytes, 0);
    if (debs > MAX_DEBS_COPIED) return undefined;
    return memoryFolder(reserve + debs, sandbox, 'layer');
  }

  /** mmdebstrap into `<work>/tree` (its temporary files in `<work>/tmp`, removed after). */
  private async runBuild(spec: OsLayerSpec, work: string, debs: 'link' | 'copy', sandbox: Sandbox, sourceDateEpoch: number, o: OsLayerOptions): Promise<string> {
    const tree = join(work, 'tree');
    const tmpDir = join(work, 'tmp');
    await mkdir(tmpDir, { mode: 0o700 });
    await lchown(tmpDir, hostId(sandbox, 0, 'uid'), hostId(sandbox, 0, 'gid'));
    const mode = sandbox.kind === 'userns' ? 'unshare' : 'root';
    await timed('mmdebstrap', () => runMmdebstrap(mmdebstrapArgs(spec, tree, this.p('debs'), mode, debs), tree, { sandbox, tmpDir, sourceDateEpoch, signal: o.signal, onProgress: o.onProgress }));
    await rm(tmpDir, { recursive: true, force: true });
    o.onProgress?.({ phase: 'installing', fraction: 0.97, message: 'recording the installed packages' });
    return tree;
  }

  /**
   * Build in `folder` (/dev/shm) and lease the tree from there at once. Its downloads are set aside in
   * `<folder>/debs`; `keeping` copies both to the cache, syncs and publishes them, then the folder goes
   * with the last lease.
   */
  private async buildInMemory(spec: OsLayerSpec, { key, canonical, sourceDateEpoch }: Pick<Meta, 'key' | 'canonical' | 'sourceDateEpoch'>, folder: string, sandbox: Sandbox, o: OsLayerOptions): Promise<{ layer: OsLayer; keeping: Promise<void> }> {
    const tree = await this.runBuild(spec, folder, 'copy', sandbox, sourceDateEpoch, o);
    const debs = join(folder, 'debs');
    await mkdir(debs);
    await timed('setting the downloaded packages aside', () => this.harvestDebs(tree, sandbox, (file, name) => rename(file, join(debs, name))));
    const installed = await timed('listing the installed packages', () => installedPackages(tree, sandbox, o.signal));
    const bytes = await timed('measuring the layer', () => diskUsage(tree));
    if (o.signal?.aborted) throw new AbortedError('image build aborted');
    const m: MemoryLayer = { folder, dir: tree, key, installed, bytes, sourceDateEpoch, sandbox, refs: 0, kept: false };
    this.inMemory.set(key, m);
    const layer = this.memoryLease(m, false);
    o.onProgress?.({ phase: 'installing', fraction: 1, message: 'OS layer ready' });
    return { layer, keeping: this.keepOnDisk(m, canonical) };
  }

  /** Copy a layer built in memory into the cache, with its downloads; sync, publish, evict. A failure is a warning: the build that made it goes on. */
  private async keepOnDisk(m: MemoryLayer, canonical: unknown): Promise<void> {
    const work = this.p('tmp', `${OWNER}-keep-${randomBytes(4).toString('hex')}`);
    try {
      await mkdir(work);
      await lchown(work, hostId(m.sandbox, 0, 'uid'), hostId(m.sandbox, 0, 'gid'));
      await timed('keeping the OS layer: copying it to the cache', () => copyTree(m.dir, join(work, 'tree'), m.sandbox));
      await timed('keeping the OS layer: the downloaded packages', async () => {
        for (const name of await readdir(join(m.folder, 'debs'))) await this.keepDeb(join(m.folder, 'debs', name), name, m.sandbox);
      });
      const meta: Meta = { key: m.key, bytes: await diskUsage(work), installed: m.installed, canonical, builtAt: new Date().toISOString(), sourceDateEpoch: m.sourceDateEpoch };
      await writeFile(join(work, 'meta.json'), `${JSON.stringify(meta)}\n`);
      await writeFile(join(work, 'used'), '');
      await timed('keeping the OS layer: syncing it', () => runTool('sync', ['--file-system', work]));
      await this.withLock('cache', () => rename(work, this.p('layers', m.key)));
      await timed('evicting old layers', () => this.evict());
    } catch (e) {
      await removeTree(work, m.sandbox).catch(() => undefined);
      this.warn(`the OS layer ${m.key.slice(0, 12)} was built but could not be kept in the cache (the next build of it starts again): ${messageOf(e)}`);
    } finally {
      m.kept = true;
      if (m.refs === 0) await this.dropMemory(m);
    }
  }

  private memoryLease(m: MemoryLayer, fromCache: boolean): OsLayer {
    m.refs++;
    return leaseOf(m, fromCache, async () => {
      if (--m.refs === 0 && m.kept) await this.dropMemory(m);
    });
  }

  /** The tree in memory is no longer leased here (later leases read the cache's copy). */
  private async dropMemory(m: MemoryLayer): Promise<void> {
    if (this.inMemory.get(m.key) === m) this.inMemory.delete(m.key);
    await removeTree(m.folder, m.sandbox).catch(() => undefined);
  }

  private async buildOnDisk(spec: OsLayerSpec, { key, canonical, sourceDateEpoch }: Pick<Meta, 'key' | 'canonical' | 'sourceDateEpoch'>, sandbox: Sandbox, o: OsLayerOptions): Promise<OsLayer> {
    const work = this.p('tmp', `${OWNER}-build-${randomBytes(4).toString('hex')}`);
    try {
      await mkdir(work);
      // mmdebstrap makes the tree here as the namespace's root.
      await lchown(work, hostId(sandbox, 0, 'uid'), hostId(sandbox, 0, 'gid'));
      const tree = await this.runBuild(spec, work, 'link', sandbox, sourceDateEpoch, o);
      await timed('keeping the downloaded packages', () => this.harvestDebs(tree, sandbox, (file, name) => this.keepDeb(file, name, sandbox)));
      const installed = await timed('listing the installed packages', () => installedPackages(tree, sandbox, o.signal));
      const meta: Meta = { key, bytes: await timed('measuring the layer', () => diskUsage(work)), installed, canonical, builtAt: new Date().toISOString(), sourceDateEpoch };
      await writeFile(join(work, 'meta.json'), `${JSON.stringify(meta)}\n`);
      await writeFile(join(work, 'used'), '');
      if (o.signal?.aborted) throw new AbortedError('image build aborted');
      // dpkg ran without fsync (recipe.ts): one syncfs makes the tree durable before it is published.
      await timed('syncing the layer', () => runTool('sync', ['--file-system', work], { signal: o.signal }));
      await this.withLock('cache', () => rename(work, this.p('layers', key)));
    } catch (e) {
      await removeTree(work);
      throw e;
    }
    const layer = await this.lease(key, false);
    if (!layer) throw new ImagingError('tool', `OS layer ${key} vanished right after it was built`);
    await timed('evicting old layers', () => this.evict());
    o.onProgress?.({ phase: 'installing', fraction: 1, message: 'OS layer ready' });
    return layer;
  }

  /**
   * Keep one downloaded .deb (a hard link). A kept file of other owners (a privileged build's, which the
   * namespace's root may not link: protected_hardlinks) is replaced atomically, so the next builds link
   * it instead of downloading it again; EPERM: this process may not link the new one, it is not kept.
   * From another file system (a build in memory), a copy owned by the namespace's root.
   */
  private async keepDeb(file: string, name: string, sandbox: Sandbox): Promise<void> {
    const kept = this.p('debs', name);
    const err = await link(file, kept).then(() => undefined, (e: NodeJS.ErrnoException) => e);
    if (err?.code === 'EXDEV') return this.copyDeb(file, kept, sandbox);
    if (err === undefined || err.code === 'EPERM') return;
    if (err.code !== 'EEXIST') throw err;
    const st = await lstat(kept).catch(() => undefined);
    if (st === undefined || st.uid === hostId(sandbox, 0, 'uid')) return;
    const fresh = this.p('debs', `.${name}.${randomBytes(4).toString('hex')}`);
    await link(file, fresh).then(() => rename(fresh, kept), () => unlink(fresh).catch(() => undefined));
  }

  /**
   * A copy of a .deb from another file system, unless one is kept already (the same name is the same
   * file: apt checks it). Only a regular file is copied, never what a link of the tree points at, and
   * opening a FIFO placed there does not wait for a writer.
   */
  private async copyDeb(file: string, kept: string, sandbox: Sandbox): Promise<void> {
    if (await lstat(kept).then(() => true, () => false)) return;
    const src = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => undefined);
    if (!src) return;
    const fresh = `${kept}.${randomBytes(4).toString('hex')}.part`;
    try {
      if (!(await src.stat()).isFile()) return;
      await pipeline(src.createReadStream({ autoClose: false }), createWriteStream(fresh, { flags: 'wx', mode: 0o644 }));
      await lchown(fresh, hostId(sandbox, 0, 'uid'), hostId(sandbox, 0, 'gid'));
      await rename(fresh, kept);
    } finally {
      await src.close();
      await unlink(fresh).catch(() => undefined);
    }
  }

  /** Hand each downloaded .deb file of the tree to `keep` (which moves or links it), and leave none in the tree. */
  private async harvestDebs(tree: string, sandbox: Sandbox, keep: (file: string, name: string) => Promise<void>): Promise<void> {
    const archives = join(tree, 'var/cache/apt/archives');
    for (const name of await readdir(archives)) {
      if (!name.endsWith('.deb')) continue;
      await keep(join(archives, name), name);
      await unlink(join(archives, name)).catch((e: NodeJS.ErrnoException) => {
        if (e.code !== 'ENOENT') throw e; // moved by `keep`
      });
    }
    await rm(join(archives, 'partial'), { recursive: true, force: true });
    await mkdir(join(archives, 'partial'), { recursive: true });
    await lchown(join(archives, 'partial'), hostId(sandbox, 0, 'uid'), hostId(sandbox, 0, 'gid'));
    for (const bin of ['pkgcache.bin', 'srcpkgcache.bin']) await rm(join(tree, 'var/cache/apt', bin), { force: true });
  }

  private async tryLock(name: string): Promise<(() => Promise<void>) | undefined> {
    try {
      return await (await locks()).lock(this.p('locks', name), { realpath: false, stale: 30_000, update: 5_000, retries: 0, onCompromised: () => undefined });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ELOCKED') return undefined;
      throw e;
    }
  }

  private async withLock<T>(name: string, f: () => Promise<T>): Promise<T> {
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

const mib = (bytes: number): number => Math.ceil(bytes / 1024 ** 2);

/** A lease of `layer` whose release runs `end` once, however often it is called. */
function leaseOf(layer: Omit<OsLayer, 'fromCache' | 'release'>, fromCache: boolean, end: () => Promise<void>): OsLayer {
  let released = false;
  const { dir, key, installed, bytes, sourceDateEpoch } = layer;
  return {
    dir, key, installed, fromCache, bytes, sourceDateEpoch,
    release: async () => {
      if (released) return;
      released = true;
      await end();
    },
  };
}

/** Build (or take from the cache at `cacheDir`) the OS layer of a spec. The caller must `release()` it. */
export function buildOsLayer(spec: OsLayerSpec, o: OsLayerOptions & { cacheDir: string; maxBytes?: number | undefined }): Promise<OsLayer> {
  return new OsLayerCache({ dir: o.cacheDir, maxBytes: o.maxBytes }).acquire(spec, o);
}
