// What the server needs from its sibling modules (docs/contracts.md: Catalog, Imaging, OpenStack).
// Written as interfaces so that `buildServer` takes them as explicit dependencies (style example 10)
// and so that the real modules plug in through `src/server/adapters.ts`.
import type { DistribProfile, Distribution, Pkg } from '../model/resources';
import type { BuildImageOptions, BuiltImage, MirrorConfig, OsLayer, OsLayerOptions, OsLayerSpec } from './imaging';

export interface ListParams {
  query?: string;
  orderBy?: string;
  descending?: boolean;
  count?: number;
  offset?: number;
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

export interface TargetFormatSpec {
  name: string;
  type: 'cloud' | 'virtual';
  credAccountType?: 'openstack';
  disk: 'raw' | 'qcow2' | 'vmdk' | 'vhd' | 'vdi';
  extension: string;
  glanceDiskFormat?: string;
}

/** Imaging contract: the formats, the OS layers (cached) and the disk stage (README "Real images"). */
export interface ImagingPort {
  readonly targetFormats: readonly TargetFormatSpec[];
  /** The Debian mirror the OS layers are installed from. */
  readonly mirror: MirrorConfig;
  /** The cached root tree of `spec` (built when missing); `release()` it when done. */
  osLayer(spec: OsLayerSpec, o: OsLayerOptions): Promise<OsLayer>;
  buildImage(o: BuildImageOptions): Promise<BuiltImage>;
}

export interface OpenStackCredentials {
  keystoneUrl: string;
  glanceUrl?: string;
  login: string;
  password: string;
  domain: string;
  project: string;
}

export interface PublishOptions extends OpenStackCredentials {
  displayName: string;
  publicImage: boolean;
  diskFormat: string;
  file: string;
  size: number;
  sha256?: string;
  signal?: AbortSignal;
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
