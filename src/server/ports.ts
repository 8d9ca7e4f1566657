// What the server needs from its sibling modules (docs/contracts.md: Catalog, Imaging, OpenStack).
// Written as interfaces so that `buildServer` takes them as explicit dependencies (style example 10)
// and so that the real modules plug in through `src/server/adapters.ts`.
import type { DistribProfile, Distribution, Pkg } from '../model/resources';
import type { DiskFormat, ImageBuilder, MirrorConfig, TargetFormatInfo } from '../imaging';

export interface ListParams {
  query?: string | undefined;
  orderBy?: string | undefined;
  descending?: boolean | undefined;
  count?: number | undefined;
  offset?: number | undefined;
}

/** Catalog contract: distributions, base profiles and packages (read-only). */
export interface CatalogPort {
  readonly distributions: readonly Distribution[];
  profiles(distId: number): DistribProfile[];
  profilePackages(distId: number, pid: number): Pkg[];
  searchPackages(distId: number, q: ListParams & { latestOnly?: boolean }): { total: number; items: Pkg[] };
  /** The same search, records made as they are read; `version` names the catalog's contents. */
  packageCursor(distId: number, q: ListParams & { latestOnly?: boolean }): { total: number; items: Iterable<Pkg>; version: string };
  getPackage(distId: number, pkgId: number): Pkg | undefined;
}

/** A target format as the routes and jobs see it: the imaging table's own type (imaging/formats.ts). */
export type TargetFormatSpec = TargetFormatInfo;

/** Imaging contract: the formats and the library's one entry point, `build` (docs/images.md "Real images"). */
export interface ImagingPort extends Pick<ImageBuilder, 'build'> {
  readonly targetFormats: readonly TargetFormatSpec[];
  /** The Debian mirror the OS layers are installed from. */
  readonly mirror: MirrorConfig;
  /** OS layers keyed by their owner too (`serve --layers-per-owner`): no cache hit across owners. */
  readonly layersPerOwner?: boolean | undefined;
  /** The cache folder of the OS layers, when there is one (its paths never reach a user). */
  readonly cacheDir?: string | undefined;
  /** Remove what builds of dead processes left in the cache (mounts, then trees): called when the server starts. */
  sweep?(): Promise<void>;
  /** Wait for the work a build leaves after its answer (an OS layer kept on disk): called when the server closes. */
  settle?(): Promise<void>;
}

export interface OpenStackCredentials {
  keystoneUrl: string;
  glanceUrl?: string | undefined;
  login: string;
  password: string;
  domain: string;
  project: string;
}

export interface PublishOptions extends OpenStackCredentials {
  /** The Glance image id to create (a retried publication finds its earlier attempt's image under it). */
  imageId?: string | undefined;
  displayName: string;
  publicImage: boolean;
  /** Glance `disk_format`: every disk format the server writes is one. */
  diskFormat: DiskFormat;
  file: string;
  size: number;
  sha256?: string | undefined;
  signal?: AbortSignal | undefined;
  onProgress?(p: { bytesLoaded: number; bytesTotal: number; message: string }): void;
}

/** OpenStack contract: publish to and delete from Glance. */
export interface OpenStackPort {
  publishToGlance(o: PublishOptions): Promise<{ imageId: string }>;
  deleteGlanceImage(o: OpenStackCredentials & { imageId: string }): Promise<unknown>;
}

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
