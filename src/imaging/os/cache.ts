// The OS layer cache: the layers on disk (layer-store.ts, one directory shared by every process on the
// machine that builds images), a new layer built once whoever asks (a lock per key), in memory when
// there is room (memory-layers.ts) or on disk (layer-build.ts), and the layers other machines share
// (shared-layers.ts).
//
// A new layer is built in memory (/dev/shm, ../memory-folder.ts) when there is room: its tree is leased
// at once, and copied into <dir>/tmp, synced and published in the background; the key's build lock is
// held until then, and `settle()` waits for it (a server's close). Without room, or once the tree in
// memory outgrows its bound, it is built on disk as before.
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { AbortedError } from '../../errors';
import { currentBuildHost, type BuildHost } from '../build-host';
import { ImagingError } from '../errors';
import { memoryFolder, memoryGuard } from '../memory-folder';
import type { OsLayerSpec } from '../stages';
import { buildNote, timed } from '../stage-log';
import { DEFAULT_MAX_BYTES, MAX_DEBS_COPIED } from './bounds';
import { debFiles, harvestDebs, keepDeb } from './debs';
import type { OsLayer, OsLayerOptions } from './layer';
import { buildOnDisk, type LayerIds } from './layer-build';
import { layerKey, sharedLayerKey } from './layer-key';
import { LayerStore } from './layer-store';
import { MemoryLayers } from './memory-layers';
import { mirrorState } from './mirror-state';
import { validateMirror } from './mirror';
import { checkPrerequisites, removeTree } from './mmdebstrap';
import { checkSpec } from './recipe';
import { SharedLayers } from './shared-layers';
import type { SharedLayerTier } from './shared-tier';

export { DEFAULT_MAX_BYTES, MAX_DEBS_COPIED, NEW_LAYER_BYTES } from './bounds';
export { diskUsage } from './disk-usage';
export { layerKey, sharedLayerKey } from './layer-key';
export type { OsLayer, OsLayerOptions } from './layer';

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
  /** Who the builds' tools run as; default: this process's (currentBuildHost). */
  readonly host?: BuildHost | undefined;
}

export class OsLayerCache {
  readonly dir: string;
  readonly maxBytes: number;
  private readonly memoryBytes: number | undefined;
  private readonly warn: (message: string) => void;
  private readonly host: BuildHost;
  private readonly store: LayerStore;
  private readonly memory: MemoryLayers;
  private readonly shared: SharedLayers | undefined;
  private readonly keeping = new Set<Promise<void>>();

  constructor(o: OsLayerCacheOptions) {
    this.dir = o.dir;
    this.maxBytes = o.maxBytes ?? DEFAULT_MAX_BYTES;
    this.memoryBytes = o.memoryBytes;
    this.warn = o.onWarning ?? ((m) => buildNote(`warning: ${m}`));
    if (!(this.maxBytes > 0)) throw new ImagingError('input', `maxBytes must be positive, not ${o.maxBytes}`);
    this.host = o.host ?? currentBuildHost();
    this.store = new LayerStore(this.dir, this.maxBytes, this.host);
    this.memory = new MemoryLayers(this.store, this.host, this.warn);
    const { store, host, warn } = this;
    this.shared = o.shared && new SharedLayers(o.shared, { store, host, warn, lease: (key) => this.lease(key), background: (p) => this.background(p) });
  }

  /** The layer for a spec: from the cache when an entry of its key exists, else built (once, whoever asks). */
  async acquire(spec: OsLayerSpec, o: OsLayerOptions = {}): Promise<OsLayer> {
    checkSpec(spec);
    const mirror = validateMirror(spec.mirror);
    const s: OsLayerSpec = { ...spec, mirror };
    await this.store.init();
    o.onProgress?.({ phase: 'resolving', fraction: 0, message: 'reading the mirror state' });
    const state = await timed('reading the mirror state', () => mirrorState(s, o.signal));
    const { key, canonical } = layerKey(s, state.indexes, this.host);
    const portableKey = sharedLayerKey(s, state.indexes, this.host);
    return { ...(await this.take(s, { key, canonical, sourceDateEpoch: state.releaseDate }, portableKey, o)), portableKey };
  }

  /** The layer of `key`: from this cache, from another process building it, from the shared tier, or built here. */
  private async take(s: OsLayerSpec, ids: LayerIds, sharedKey: string, o: OsLayerOptions): Promise<OsLayer> {
    const { key } = ids;
    for (;;) {
      const hit = await this.lease(key);
      if (hit) {
        this.shared?.shareLater(sharedKey, key);
        o.onProgress?.({ phase: 'installing', fraction: 1, message: 'OS layer ready (from the cache)' });
        return hit;
      }
      checkPrerequisites(this.host);
      const release = await this.store.tryLock(`build-${key}`);
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
        if (this.shared) {
          const got = await this.shared.take(sharedKey, ids, o);
          if (got.layer) return got.layer;
          unlockShared = got.unlock;
        }
        let built: { layer: OsLayer; keeping?: Promise<void> };
        try {
          built = await this.build(s, ids, o);
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
        this.shared?.shareLater(sharedKey, key, unlockShared);
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

  /** The new layer of `key`: built in memory when there is room (kept on disk in the background: `keeping`), else on disk. */
  private async build(spec: OsLayerSpec, ids: LayerIds, o: OsLayerOptions): Promise<{ layer: OsLayer; keeping?: Promise<void> }> {
    // Either way the layer ends in the cache (a build in memory is copied there): the namespace must reach it.
    this.host.assertReachable(this.dir, 'cache folder');
    const reserve = await timed('making room in the layer cache', () => this.store.makeRoom());
    const folder = await this.memoryBuildFolder(reserve);
    if (folder) {
      const guard = memoryGuard(this.memoryBytes ?? 2 * reserve);
      try {
        return await this.memory.build(spec, ids, folder, { ...o, signal: o.signal ? AbortSignal.any([o.signal, guard.signal]) : guard.signal });
      } catch (e) {
        const why = guard.why();
        if (why === undefined || o.signal?.aborted) {
          await removeTree(folder, this.host);
          throw e;
        }
        // What it downloaded is kept: the build on disk links it instead of fetching it again.
        await harvestDebs(join(folder, 'tree'), this.host, (file, name) => keepDeb(this.store.p('debs'), file, name, this.host)).catch(() => undefined);
        await removeTree(folder, this.host);
        buildNote(`the OS layer in memory stopped (${why}): building it on disk`);
      } finally {
        guard.stop();
      }
    }
    return { layer: await buildOnDisk(this.store, this.host, spec, ids, o) };
  }

  /** A folder of /dev/shm for a new layer, when memory has room for it and for the kept .deb files it copies in. */
  private async memoryBuildFolder(reserve: number): Promise<string | undefined> {
    const debs = (await debFiles(this.store.p('debs'), new Set())).reduce((n, d) => n + d.bytes, 0);
    if (debs > MAX_DEBS_COPIED) return undefined;
    return memoryFolder(reserve + debs, this.host, 'layer');
  }

  /** The entry of `key`, leased (from memory when this process built it there), or undefined when there is none. */
  async lease(key: string, fromCache = true): Promise<OsLayer | undefined> {
    await this.store.init();
    return this.memory.lease(key, fromCache) ?? this.store.lease(key, fromCache);
  }

  /**
   * Remove layers, least recently used first (leased ones stay), then .deb files no build links, oldest
   * first, until layers + .deb files + trees being built fit in maxBytes less `reserve`. The removed
   * layers' keys.
   */
  async evict(reserve = 0): Promise<string[]> {
    return (await this.store.evictFor(reserve)).removed;
  }

  /** Remove what dead processes left (builds with their mounts, evictions, leases); the server calls it when it starts. */
  async sweep(): Promise<void> {
    await this.store.init();
  }

  /** Keys of the complete entries, for inspection. */
  async keys(): Promise<string[]> {
    return this.store.keys();
  }
}

/** Build (or take from the cache at `cacheDir`) the OS layer of a spec. The caller must `release()` it. */
export function buildOsLayer(spec: OsLayerSpec, o: OsLayerOptions & { cacheDir: string; maxBytes?: number | undefined }): Promise<OsLayer> {
  return new OsLayerCache({ dir: o.cacheDir, maxBytes: o.maxBytes }).acquire(spec, o);
}
