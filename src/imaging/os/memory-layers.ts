// The OS layers built in memory (/dev/shm, ../memory-folder.ts) by this process: a new layer's tree is
// leased from there at once, and copied into the cache, synced and published in the background; the
// tree in memory goes with its last lease once the cache holds the copy.
import { mkdir, readdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { AbortedError, messageOf } from '../../errors';
import type { BuildHost } from '../build-host';
import { runTool } from '../run';
import type { InstalledPackage, OsLayerSpec } from '../stages';
import { timed } from '../stage-log';
import { copyTree } from '../tree';
import { harvestDebs, keepDeb } from './debs';
import { diskUsage } from './disk-usage';
import { leaseOf, type OsLayer, type OsLayerOptions } from './layer';
import { buildTree, type LayerIds } from './layer-build';
import type { LayerStore } from './layer-store';
import { installedPackages, removeTree } from './mmdebstrap';

/** A layer built in memory in this process: leased from there until it is kept on disk and its last lease ends. */
interface MemoryLayer {
  readonly folder: string;
  readonly dir: string;
  readonly key: string;
  readonly installed: InstalledPackage[];
  readonly bytes: number;
  readonly sourceDateEpoch: number;
  refs: number;
  kept: boolean;
}

export class MemoryLayers {
  private readonly layers = new Map<string, MemoryLayer>();

  constructor(
    private readonly store: LayerStore,
    private readonly host: BuildHost,
    /** What went wrong after a build's answer (a layer not kept on disk). */
    private readonly warn: (message: string) => void,
  ) {}

  /** A lease of the layer of `key` in memory, if this process holds one. */
  lease(key: string, fromCache: boolean): OsLayer | undefined {
    const m = this.layers.get(key);
    return m && this.leaseOf(m, fromCache);
  }

  /**
   * Build in `folder` (/dev/shm) and lease the tree from there at once. Its downloads are set aside in
   * `<folder>/debs`; `keeping` copies both to the cache, syncs and publishes them, then the folder goes
   * with the last lease.
   */
  async build(spec: OsLayerSpec, { key, canonical, sourceDateEpoch }: LayerIds, folder: string, o: OsLayerOptions): Promise<{ layer: OsLayer; keeping: Promise<void> }> {
    const tree = await buildTree(this.store, this.host, spec, folder, 'copy', sourceDateEpoch, o);
    const debs = join(folder, 'debs');
    await mkdir(debs);
    await timed('setting the downloaded packages aside', () => harvestDebs(tree, this.host, (file, name) => rename(file, join(debs, name))));
    const installed = await timed('listing the installed packages', () => installedPackages(tree, this.host, o.signal));
    const bytes = await timed('measuring the layer', () => diskUsage(tree));
    if (o.signal?.aborted) throw new AbortedError('image build aborted');
    const m: MemoryLayer = { folder, dir: tree, key, installed, bytes, sourceDateEpoch, refs: 0, kept: false };
    this.layers.set(key, m);
    const layer = this.leaseOf(m, false);
    o.onProgress?.({ phase: 'installing', fraction: 1, message: 'OS layer ready' });
    return { layer, keeping: this.keepOnDisk(m, canonical) };
  }

  /** Copy a layer built in memory into the cache, with its downloads; sync, publish, evict. A failure is a warning: the build that made it goes on. */
  private async keepOnDisk(m: MemoryLayer, canonical: unknown): Promise<void> {
    const work = this.store.work('keep');
    try {
      await mkdir(work);
      await this.host.own(work);
      await timed('keeping the OS layer: copying it to the cache', () => copyTree(m.dir, join(work, 'tree'), this.host));
      await timed('keeping the OS layer: the downloaded packages', async () => {
        for (const name of await readdir(join(m.folder, 'debs'))) await keepDeb(this.store.p('debs'), join(m.folder, 'debs', name), name, this.host);
      });
      await this.store.describe(work, { key: m.key, bytes: await diskUsage(work), installed: m.installed, canonical, builtAt: new Date().toISOString(), sourceDateEpoch: m.sourceDateEpoch });
      await timed('keeping the OS layer: syncing it', () => runTool('sync', ['--file-system', work]));
      await this.store.publish(work, m.key);
      await timed('evicting old layers', () => this.store.evictFor(0));
    } catch (e) {
      await removeTree(work, this.host).catch(() => undefined);
      this.warn(`the OS layer ${m.key.slice(0, 12)} was built but could not be kept in the cache (the next build of it starts again): ${messageOf(e)}`);
    } finally {
      m.kept = true;
      if (m.refs === 0) await this.drop(m);
    }
  }

  private leaseOf(m: MemoryLayer, fromCache: boolean): OsLayer {
    m.refs++;
    return leaseOf(m, fromCache, async () => {
      if (--m.refs === 0 && m.kept) await this.drop(m);
    });
  }

  /** The tree in memory is no longer leased here (later leases read the cache's copy). */
  private async drop(m: MemoryLayer): Promise<void> {
    if (this.layers.get(m.key) === m) this.layers.delete(m.key);
    await removeTree(m.folder, this.host).catch(() => undefined);
  }
}
