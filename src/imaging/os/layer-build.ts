// A new OS layer's tree made by mmdebstrap in a folder of the cache (or of memory), and the build of
// an entry on disk: tree, kept downloads, installed packages, meta, synced, then published whole.
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { AbortedError } from '../../errors';
import type { BuildHost } from '../build-host';
import { ImagingError } from '../errors';
import { runTool } from '../run';
import type { OsLayerSpec } from '../stages';
import { timed } from '../stage-log';
import { harvestDebs, keepDeb } from './debs';
import { diskUsage } from './disk-usage';
import type { LayerMeta, OsLayer, OsLayerOptions } from './layer';
import type { LayerStore } from './layer-store';
import { installedPackages, removeTree, runMmdebstrap } from './mmdebstrap';
import { mmdebstrapArgs } from './recipe';

/** What a new layer is known by before it is built. */
export type LayerIds = Pick<LayerMeta, 'key' | 'canonical' | 'sourceDateEpoch'>;

/** mmdebstrap into `<work>/tree` (its temporary files in `<work>/tmp`, removed after); `debs`: link the kept .deb files, or copy them (another file system). */
export async function buildTree(store: LayerStore, host: BuildHost, spec: OsLayerSpec, work: string, debs: 'link' | 'copy', sourceDateEpoch: number, o: OsLayerOptions): Promise<string> {
  const tree = join(work, 'tree');
  const tmpDir = join(work, 'tmp');
  await mkdir(tmpDir, { mode: 0o700 });
  await host.own(tmpDir);
  const mode = host.namespaced ? 'unshare' : 'root';
  await timed('mmdebstrap', () => runMmdebstrap(mmdebstrapArgs(spec, tree, store.p('debs'), mode, debs), tree, { host, tmpDir, sourceDateEpoch, signal: o.signal, onProgress: o.onProgress }));
  await rm(tmpDir, { recursive: true, force: true });
  o.onProgress?.({ phase: 'installing', fraction: 0.97, message: 'recording the installed packages' });
  return tree;
}

/** The new layer of `ids.key` built in the cache's tmp folder, published and leased. */
export async function buildOnDisk(store: LayerStore, host: BuildHost, spec: OsLayerSpec, { key, canonical, sourceDateEpoch }: LayerIds, o: OsLayerOptions): Promise<OsLayer> {
  const work = store.work('build');
  try {
    await mkdir(work);
    // mmdebstrap makes the tree here as the namespace's root.
    await host.own(work);
    const tree = await buildTree(store, host, spec, work, 'link', sourceDateEpoch, o);
    await timed('keeping the downloaded packages', () => harvestDebs(tree, host, (file, name) => keepDeb(store.p('debs'), file, name, host)));
    const installed = await timed('listing the installed packages', () => installedPackages(tree, host, o.signal));
    const bytes = await timed('measuring the layer', () => diskUsage(work));
    await store.describe(work, { key, bytes, installed, canonical, builtAt: new Date().toISOString(), sourceDateEpoch });
    if (o.signal?.aborted) throw new AbortedError('image build aborted');
    // dpkg ran without fsync (recipe.ts): one syncfs makes the tree durable before it is published.
    await timed('syncing the layer', () => runTool('sync', ['--file-system', work], { signal: o.signal }));
    await store.publish(work, key);
  } catch (e) {
    await removeTree(work, host);
    throw e;
  }
  const layer = await store.lease(key, false);
  if (!layer) throw new ImagingError('tool', `OS layer ${key} vanished right after it was built`);
  await timed('evicting old layers', () => store.evictFor(0));
  o.onProgress?.({ phase: 'installing', fraction: 1, message: 'OS layer ready' });
  return layer;
}
