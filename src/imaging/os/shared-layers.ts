// The cache's side of the shared tier (shared-tier.ts): a layer another machine built, restored into
// this cache instead of built; a layer built or found here, shared in the background unless the tier
// has it. The tier's lock of a key holds while one machine builds it, so the others wait for it.
import { lchown, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { AbortedError, messageOf } from '../../errors';
import type { BuildHost } from '../build-host';
import { ImagingError } from '../errors';
import { runTool } from '../run';
import { timed } from '../stage-log';
import { diskUsage } from './disk-usage';
import type { LayerMeta, OsLayer, OsLayerOptions } from './layer';
import { packLayer, unpackLayer } from './layer-archive';
import type { LayerStore } from './layer-store';
import { removeTree } from './mmdebstrap';
import type { SharedLayerTier } from './shared-tier';

/** What of the cache the shared side uses. */
export interface SharingCache {
  readonly store: LayerStore;
  readonly host: BuildHost;
  /** A lease of the local layer `key` (in memory or on disk). */
  lease(key: string): Promise<OsLayer | undefined>;
  /** Work that outlives the build that started it (the cache's `settle()` waits for it). */
  background(p: Promise<void>): void;
  warn(message: string): void;
}

export class SharedLayers {
  /** Shared keys this process knows the tier has (or is sharing): a cache hit looks once. */
  private readonly known = new Set<string>();

  constructor(
    readonly tier: SharedLayerTier,
    private readonly cache: SharingCache,
  ) {}

  /**
   * The layer from the shared tier, or the tier's lock of its key to build it here. While another machine
   * holds the lock (it builds the layer), wait and look again. A tier that fails is a warning: the layer
   * is then built here without it.
   */
  async take(sharedKey: string, ids: Pick<LayerMeta, 'key' | 'canonical'>, o: OsLayerOptions): Promise<{ layer?: OsLayer; unlock?: () => Promise<void> }> {
    try {
      for (;;) {
        const restored = await this.restore(sharedKey, ids, o);
        if (restored) return { layer: restored };
        const unlock = await this.tier.tryLock(sharedKey);
        if (unlock) {
          // Shared between the look and the lock.
          const late = await this.restore(sharedKey, ids, o).catch(async (e: unknown) => {
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
      this.cache.warn(`the shared OS layers at ${this.tier.where} cannot be used (this layer is built here): ${messageOf(e)}`);
      return {};
    }
  }

  /** The layer of `ids.key` restored from the shared tier into this cache and leased; undefined when the tier has none. */
  private async restore(sharedKey: string, { key, canonical }: Pick<LayerMeta, 'key' | 'canonical'>, o: OsLayerOptions): Promise<OsLayer | undefined> {
    if (!(await this.tier.has(sharedKey))) return undefined;
    const { store, host } = this.cache;
    host.assertReachable(store.dir, 'cache folder');
    await store.makeRoom();
    const work = store.work('restore');
    const [uid, gid] = [host.hostId(0, 'uid'), host.hostId(0, 'gid')];
    try {
      await mkdir(work);
      const archive = join(work, 'layer.tar');
      o.onProgress?.({ phase: 'resolving', fraction: 0.05, message: `fetching the OS layer from ${this.tier.where}` });
      const meta = await timed('fetching the OS layer from the shared tier', () => this.tier.fetch(sharedKey, archive, o.signal));
      if (!meta) {
        await removeTree(work, host);
        return undefined;
      }
      // Read by the namespace's root, which unpacks it into a folder of its own.
      await lchown(archive, uid, gid);
      const tree = join(work, 'tree');
      await mkdir(tree);
      await lchown(tree, uid, gid);
      o.onProgress?.({ phase: 'installing', fraction: 0.5, message: 'unpacking the OS layer built by another worker' });
      await timed('unpacking the shared OS layer', () => unpackLayer(archive, tree, host, o.signal));
      await rm(archive, { force: true });
      await store.describe(work, { key, bytes: await diskUsage(work), installed: [...meta.installed], canonical, builtAt: new Date().toISOString(), sourceDateEpoch: meta.sourceDateEpoch });
      await timed('syncing the layer', () => runTool('sync', ['--file-system', work], { signal: o.signal }));
      await store.publish(work, key);
    } catch (e) {
      await removeTree(work, host).catch(() => undefined);
      throw o.signal?.aborted ? new AbortedError('image build aborted') : e;
    }
    this.known.add(sharedKey);
    const layer = await this.cache.lease(key);
    if (!layer) throw new ImagingError('tool', `OS layer ${key} vanished right after it was restored`);
    await timed('evicting old layers', () => store.evictFor(0));
    o.onProgress?.({ phase: 'installing', fraction: 1, message: 'OS layer ready (built by another worker)' });
    return layer;
  }

  /**
   * In the background, the local layer `key` packed and put in the shared tier, unless the tier has it.
   * `unlock`: the tier's lock of its key, held already (this process built it), freed once shared.
   */
  shareLater(sharedKey: string, key: string, unlock?: () => Promise<void>): void {
    if (this.known.has(sharedKey)) {
      void unlock?.().catch(() => undefined);
      return;
    }
    this.known.add(sharedKey);
    const { store, host } = this.cache;
    this.cache.background((async () => {
      let done = false;
      try {
        if (!unlock) {
          if (await this.tier.has(sharedKey)) return void (done = true);
          unlock = await this.tier.tryLock(sharedKey);
          // Another machine builds or shares it.
          if (!unlock) return void (done = true);
          if (await this.tier.has(sharedKey)) return void (done = true);
        }
        const layer = await this.cache.lease(key);
        if (!layer) return;
        const work = store.work('share');
        try {
          await mkdir(work);
          await host.own(work);
          const archive = join(work, 'layer.tar');
          await timed('sharing the OS layer: packing it', () => packLayer(layer.dir, archive, host));
          await timed('sharing the OS layer: storing it', () => this.tier.put(sharedKey, archive, { installed: layer.installed, sourceDateEpoch: layer.sourceDateEpoch }));
          done = true;
        } finally {
          await layer.release();
          await removeTree(work, host).catch(() => undefined);
        }
      } catch (e) {
        this.cache.warn(`the OS layer ${key.slice(0, 12)} could not be shared through ${this.tier.where} (the next hit tries again): ${messageOf(e)}`);
      } finally {
        if (!done) this.known.delete(sharedKey);
        await unlock?.().catch(() => undefined);
      }
    })());
  }
}
