// The library's one entry point for a whole image: the OS layer (from the cache, or mmdebstrap from
// the mirror: 0–40 %), then the disk stage (software, settings, bootable disk, format: 40–100 %).
// A caller (the server's job runner, a script) hands over what to build and where, a signal and a
// progress sink; the layer's lease, the scratch folder and the stages' percentages stay in here.
// The stages' modules load with their first use (a sweep, a build): a server that only answers (the
// command line's embedded one, for a plan) never reads them.
import { join } from 'node:path';
import type { BuiltImage } from './disk/build-options';
import { currentBuildHost } from './build-host';
import { defaultCacheDir, layerArchiveDir } from './cache-dir';
import { ImagingError } from './errors';
import type { DiskFormat } from './formats';
import type { OsLayerCache } from './os/cache';
import type { SharedLayerTier } from './os/shared-tier';
import type { BuildProgress } from './progress';
import { imageSeed } from './reproducible';
import { renderManifest, type ManifestSpec } from './manifest';
import type { ImageFile } from './system/staging';
import type { OsLayerSpec, SystemSettings } from './stages';
import { timed } from './stage-log';

/** What an image is made of. */
export interface ImageRecipe {
  readonly os: OsLayerSpec;
  readonly disk: DiskFormat;
  /** gzip the final file. */
  readonly compress: boolean;
  /** Build the same bytes from the same inputs (docs/images.md "Reproducible images"): ids from a seed, times clamped. */
  readonly reproducible?: boolean;
  /** What the manifest written into the image says, completed with the versions installed (and, when reproducible, the seed). */
  readonly manifest: ManifestSpec;
}

/** Where a build is when it reports (and when it fails). */
export type BuildStage = 'os-layer' | 'disk';

export interface ImageProgress extends BuildProgress {
  readonly stage: BuildStage;
}

/** One image to build: the recipe, the install profile to apply, the files to add, the finished file's path. */
export interface ImageOrder {
  readonly recipe: ImageRecipe;
  readonly settings: SystemSettings;
  readonly files: readonly ImageFile[];
  /** Its directory must exist; replaced only by a complete image. */
  readonly outFile: string;
  /** The image's name in its SBOMs when the output file's is not (a stored file's random prefix). */
  readonly imageName?: string | undefined;
  /** Whose build it is (a user's login): on a shared server, its tools run in that owner's id range (BuildHost.forOwner). */
  readonly owner?: string | undefined;
}

export interface ImageBuilder {
  /** The OS layer cache's folder (its paths are the builder's, never a user's). */
  readonly cacheDir: string;
  /** Removes what builds of dead processes left in the cache (mounts, then trees). */
  sweep(): Promise<void>;
  /** Resolves once the OS layers built in memory are kept on disk (they are after their build's answer). */
  settle(): Promise<void>;
  build(order: ImageOrder, signal: AbortSignal, progress: (p: ImageProgress) => void): Promise<BuiltImage>;
}

export interface ImageBuilderOptions {
  /** Default: defaultCacheDir(); the layers go under `<cacheDir>/os`. */
  readonly cacheDir?: string | undefined;
  /** Bound on the layer cache's disk usage (OsLayerCache's default when undefined). */
  readonly maxCacheBytes?: number | undefined;
  /** What went wrong after a build's answer (OsLayerCache's default when undefined: the debug log). */
  readonly onWarning?: ((message: string) => void) | undefined;
  /** OS layers shared with other machines (OsLayerCache's `shared`); default: the folder of `layerArchiveDir()`, if set. */
  readonly sharedLayers?: SharedLayerTier | undefined;
}

/** Share of the whole build that the OS layer takes. */
const LAYER_PERCENT = 40;

export function imageBuilder(o: ImageBuilderOptions = {}): ImageBuilder {
  // Layers under <cache>/os: the other stages may keep their own folders beside it.
  const cacheDir = join(o.cacheDir ?? defaultCacheDir(), 'os');
  const disksDir = join(o.cacheDir ?? defaultCacheDir(), 'disks');
  if (o.maxCacheBytes !== undefined && !(o.maxCacheBytes > 0)) throw new ImagingError('input', `maxBytes must be positive, not ${o.maxCacheBytes}`);
  let opened: Promise<OsLayerCache> | undefined;
  const layers = (): Promise<OsLayerCache> => (opened ??= (async () => {
    const [{ OsLayerCache }, { folderLayerTier }] = await Promise.all([import('./os/cache.js'), import('./os/folder-tier.js')]);
    const archives = layerArchiveDir();
    const shared = o.sharedLayers ?? (archives !== undefined ? folderLayerTier(archives) : undefined);
    return new OsLayerCache({ dir: cacheDir, maxBytes: o.maxCacheBytes, onWarning: o.onWarning, shared, host: currentBuildHost() });
  })());
  return {
    cacheDir,
    sweep: async () => (await layers()).sweep(),
    // Nothing to wait for when no layer was ever asked for.
    settle: async () => (opened === undefined ? undefined : (await opened).settle()),
    async build({ recipe, settings, files, outFile, imageName, owner }, signal, progress) {
      progress({ stage: 'os-layer', percentage: 0, message: 'resolving packages' });
      const cache = await layers();
      const layer = await timed('OS layer', () => cache.acquire(recipe.os, {
        signal,
        onProgress: (p) => progress({ stage: 'os-layer', percentage: Math.floor(LAYER_PERCENT * p.fraction), message: p.message }),
      }));
      try {
        progress({ stage: 'disk', percentage: LAYER_PERCENT, message: 'applying software and settings' });
        const { installed, sourceDateEpoch } = layer;
        const reproducible = recipe.reproducible
          ? { seed: await timed('the build seed', () => imageSeed({ ...recipe, installed, sourceDateEpoch, settings, files, manifest: renderManifest(recipe.manifest, recipe.os, installed) }, signal)), sourceDateEpoch }
          : undefined;
        const { buildImage } = await import('./disk/build.js');
        const shared = [layer.dir, join(cacheDir, 'layers'), join(cacheDir, 'debs'), join(disksDir, 'entries')];
        // The owner's range is held until its scratch files are gone (buildImage removes them).
        const owned = await currentBuildHost().leaseOwner(owner);
        try {
          return await timed('disk stage', () => buildImage({
            layerDir: layer.dir, layerBytes: layer.bytes, settings, cloudInit: recipe.os.cloudInit, disk: recipe.disk, compress: recipe.compress, files,
            manifest: renderManifest(recipe.manifest, recipe.os, installed, reproducible), outFile, imageName, reproducible,
            // The owner's build host (its own id range on a shared server), which only reads what every
            // build shares (the layers, the .deb files, the base disks); the layer's tree is the cache's.
            host: owned.host.readOnly(shared),
            layerHost: currentBuildHost().readOnly(shared),
            // Scratch trees beside the layers: reachable from the build's user namespace, swept after a crash.
            workDir: join(cacheDir, 'tmp'),
            // Base disks beside the layers: a rebuild after a software change starts from its base.
            baseCache: { dir: disksDir, layerKey: layer.key, portableKey: layer.portableKey },
            signal, progressRange: { from: LAYER_PERCENT, to: 100 },
            onProgress: (p) => progress({ ...p, stage: 'disk' }),
          }));
        } finally {
          await owned.release();
        }
      } finally {
        await layer.release();
      }
    },
  };
}
