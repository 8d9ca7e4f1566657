// What the server needs from its sibling modules (docs/contracts.md: Catalog, Imaging, OpenStack).
// Written as interfaces so that `buildServer` takes them as explicit dependencies (style example 10)
// and so that the real modules plug in through `src/server/adapters.ts`.
import type { DistribProfile, Distribution, Pkg } from '../model/resources';

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

export interface BuildProgress {
  percentage: number;
  message: string;
  bytesDone?: number;
  bytesTotal?: number;
}

export interface BuildImageOptions {
  disk: TargetFormatSpec['disk'];
  diskSizeMiB: number;
  compress: boolean;
  files: Array<{ source: string; destination: string; rights?: string; ownerGroup?: string }>;
  manifest: string;
  outFile: string;
  workDir: string;
  signal?: AbortSignal;
  onProgress?(p: BuildProgress): void;
}

export interface BuildResult {
  fileSize: number;
  sha256: string;
  md5: string;
  virtualSizeBytes: number;
}

/** Imaging contract: the formats and the disk builder. */
export interface ImagingPort {
  readonly targetFormats: readonly TargetFormatSpec[];
  buildImage(o: BuildImageOptions): Promise<BuildResult>;
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
