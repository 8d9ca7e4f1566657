// The image builder's one face (docs/contracts.md "Imaging"): the builder, the formats, the errors and
// the types, with the few light helpers its callers need. The stages (os/, system/, disk/, sbom/) load
// with the first call that runs one: importing this module for a format or a type reads none of them.
import type { OsLayer, OsLayerOptions } from './os/layer';
import type { OsLayerSpec } from './stages';
import type { ApplySystemOptions } from './system/apply';
import type { BootableRawOptions } from './disk/bootdisk';
import type { BuildImageOptions, BuiltImage } from './disk/build-options';
import type { DiffOptions, ImageDiff } from './disk/diff-report';

export { imageBuilder, type ImageBuilder, type ImageBuilderOptions, type ImageOrder, type ImageRecipe, type ImageProgress, type BuildStage } from './builder';
export { currentBuildHost, type BuildHost } from './build-host';
export { TARGET_FORMATS, targetFormatByName, imageFileName, type TargetFormatInfo, type DiskFormat } from './formats';
export { MAX_DISK_MIB, MIN_DISK_MIB } from '../model/limits';
export { ImagingError, isImagingError, type ImagingErrorKind } from './errors';
export { defaultCacheDir } from './cache-dir';
export { DEFAULT_MAX_BYTES as DEFAULT_LAYER_CACHE_BYTES } from './os/bounds';
export { defaultMirror, validateMirror } from './os/mirror';
export { parseSharedLayerMeta, SharedLayerError, type SharedLayerMeta, type SharedLayerTier } from './os/shared-tier';
export { kernelFor, osLayerSpecOf, settingsPackages } from './recipe';
export { renderManifest, type ManifestSpec } from './manifest';
export { reproducibleRecord, type Reproducible, type ReproducibleRecord } from './reproducible';
export { buildNote, routeBuildNotes } from './stage-log';
export { diffText, type Difference, type DiffOptions, type ImageDiff } from './disk/diff-report';
export type { BuildProgress } from './progress';
export type { BuildImageOptions, BuiltImage } from './disk/build-options';
export type { ApplySystemOptions } from './system/apply';
export type { BootableRawOptions } from './disk/bootdisk';
export type { ImageFile } from './system/staging';
export type { ImageSboms } from './sbom/documents';
export type { OsLayer, OsLayerOptions } from './os/layer';
export type { InstalledPackage, KernelFlavour, MirrorConfig, OsLayerSpec, PackageRequest, SshKey, SystemGroup, SystemSettings, SystemUser } from './stages';

/** The disk stage on its own (the builder's second stage): an OS layer's tree made into the image file. */
export async function buildImage(o: BuildImageOptions): Promise<BuiltImage> {
  return (await import('./disk/build.js')).buildImage(o);
}

/** The OS layer of a spec, from the cache at `cacheDir` or built; the caller must `release()` it. */
export async function buildOsLayer(spec: OsLayerSpec, o: OsLayerOptions & { cacheDir: string; maxBytes?: number | undefined }): Promise<OsLayer> {
  return (await import('./os/cache.js')).buildOsLayer(spec, o);
}

/** The install profile and the appliance's files applied to a private copy of an OS layer's tree. */
export async function applySystem(tree: string, o: ApplySystemOptions): Promise<void> {
  return (await import('./system/apply.js')).applySystem(tree, o);
}

/** A tree made into a raw disk that boots under a BIOS and under UEFI. */
export async function writeBootableRaw(o: BootableRawOptions): Promise<{ treeBytes: number }> {
  return (await import('./disk/bootdisk.js')).writeBootableRaw(o);
}

/** What differs between two disk images: their files, then their partition tables and superblocks. */
export async function diffImages(imageA: string, imageB: string, o?: DiffOptions): Promise<ImageDiff> {
  return (await import('./disk/diff.js')).diffImages(imageA, imageB, o);
}
