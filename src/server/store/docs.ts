// What each stored record holds: only what a user set or a job produced. Derived fields (uris,
// counts, dbId, dates, digest) are added by the views (src/server/views/) when a record is sent.
// A record is stored as JSON, where an optional field holding undefined is no field at all.
import type { InstallProfile, OpStatus } from '../../model/resources';
import type { SbomFormat } from '../../model/sbom';

/** A file stored under the data dir (wire contract §8: size and checksums filled when complete). */
export interface StoredFile {
  /** Its blob's key (blobs/port.ts): `files/…`, `images/…`. */
  path: string;
  fileName: string;
  size: number;
  sha256: string;
  md5: string;
  mimeType: string;
  stored: string;
}

/** An uploaded file: its checksums absent for a while after a large upload answered, filled in then (blobs/late-digests.ts). */
export type UploadedFile = Omit<StoredFile, 'sha256' | 'md5'> & { sha256?: string | undefined; md5?: string | undefined };

export interface AccountDoc {
  name: string;
  kind: 'CredAccountOpenStack';
  glanceUrl?: string;
  keystoneUrl?: string;
  login?: string;
  keystoneVersion?: string;
}

export interface ApiKeyDoc {
  name?: string | undefined;
  description?: string | undefined;
  publicKey: string;
  /** `read`: the pair signs GET and HEAD only. Absent: read-write, the platform's default. */
  scope?: 'read' | undefined;
}

export interface ApplianceDoc {
  uuid: string;
  name: string;
  version: string;
  description?: string | undefined;
  tag?: string | undefined;
  distId: number;
  installProfile?: InstallProfile | undefined;
  softwareIds: number[];
  revision: number;
  lastPkgUpdate?: string | undefined;
}

export interface OsProfileDoc {
  applianceId: number;
  distId: number;
  profileId: number;
  kind: 'LinuxProfile' | 'WindowsProfile';
  name: string;
  description?: string | undefined;
  pkgIds: number[];
  /** Pinned packages: package id → full Debian version (`[epoch:]upstream[-revision]`); others follow the mirror. */
  pins?: Record<string, string> | undefined;
}

export interface SoftwareDoc {
  name: string;
  version: string;
  description?: string | undefined;
  tag?: string | undefined;
  revision: number;
}

export interface ArtifactDoc {
  name: string;
  fullName?: string;
  origName?: string;
  kind: 'SoftwareFile';
  installLocation?: string;
  rights?: string;
  ownerGroup?: string;
  type?: string;
  version?: string;
  file?: UploadedFile;
}

export interface ImageDoc {
  applianceId: number;
  /** The job of its latest generation in the queue (queue/port.ts), absent for images made before the queue. */
  job?: string;
  formatName: string;
  compress: boolean;
  installProfile: InstallProfile;
  revision: number;
  status: OpStatus;
  file?: StoredFile;
  /** The image's SBOMs beside its file (extension route), by SBOM_FORMATS' id; absent for images made before them. */
  sbom?: { packages: number; files: Partial<Record<SbomFormat, StoredFile>> };
}

/** Every file an image record names: the image and its SBOMs (kept by the start-up sweep, removed with the record). */
export function imageFilePaths(d: ImageDoc): string[] {
  return [d.file, ...Object.values(d.sbom?.files ?? {})].flatMap((f) => (f ? [f.path] : []));
}

export interface PImageDoc {
  applianceId: number;
  /** The job of the publication in the queue (queue/port.ts), absent for publications made before the queue. */
  job?: string;
  /** The Glance image id chosen before the upload, so that a retried publication finds (or removes) what a lost attempt made. */
  glanceId?: string;
  imageId: number;
  kind: 'PublishImageOpenStack';
  account: AccountDoc;
  keystoneDomain: string;
  keystoneProject: string;
  displayName: string;
  publicImage: boolean;
  status: OpStatus;
  cloudId?: string;
}

/** A setting of the service itself (owner ''), never shown by the API: the farm's secret key check (auth/key-check.ts). */
export interface SettingDoc {
  name: string;
}

export interface KindDocs {
  setting: SettingDoc;
  account: AccountDoc;
  apikey: ApiKeyDoc;
  appliance: ApplianceDoc;
  osprofile: OsProfileDoc;
  software: SoftwareDoc;
  artifact: ArtifactDoc;
  image: ImageDoc;
  pimage: PImageDoc;
}

export type Kind = keyof KindDocs;

export interface UserDoc {
  email?: string;
  firstName?: string;
  surname?: string;
  name?: string;
  /** The web console's session epoch: signing out raises it, which ends every console session of the user (console/session.ts). Never sent. */
  consoleEpoch?: number;
}

export interface UserRow {
  id: number;
  login: string;
  admin: boolean;
  passwordHash: string | null;
  doc: UserDoc;
  created: string;
  modified: string;
}
