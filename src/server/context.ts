// What every routes file receives: the explicit dependencies of the server (style example 10).
import type { SecretBox } from './auth/secret-box';
import type { FileStore } from './files/file-store';
import type { BuildSlots } from './jobs/build-slots';
import type { JobRunner } from './jobs/runner';
import type { CatalogPort, Clock, ImagingPort, OpenStackPort } from './ports';
import type { Store } from './store/store';
import { DEFAULT_MAX_DISK_MIB } from './install/profile';

export interface Limits {
  /** XML/JSON request documents (→ 413 above it). */
  bodyBytes: number;
  /** One uploaded artifact (→ 413 above it). */
  uploadBytes: number;
  /** Largest installProfile.diskSize a user may ask for, in MiB (→ 400 above it; `serve --max-disk-mib`). */
  maxDiskMiB: number;
  /**
   * When above 0, every signed URL must carry a signed `expires` (Unix seconds) at most this far ahead
   * (→ 401 otherwise; `serve --signed-url-max-age`). An `expires` in the past is refused in any case.
   */
  signedUrlMaxAgeSeconds: number;
  /** A request's head must arrive within this (→ 408). */
  headersTimeoutMs: number;
  /** A whole request, body included, must arrive within this (→ 408; raise it for very large uploads on slow links). */
  requestTimeoutMs: number;
  /** A connection with no byte in either direction for this long is answered 408 (when no answer began) and closed. */
  idleTimeoutMs: number;
  /** Open (queued or running) generations and publications per user (→ 429 + Retry-After; `serve --max-jobs-per-user`). */
  jobsPerUser: number;
  /** … and on the whole server (→ 503 + Retry-After; `serve --max-jobs`). */
  jobsTotal: number;
  /** Failed authentications (a bad signature or password) one address may make per minute; then 429 + Retry-After. */
  authFailuresPerMinute: number;
  /**
   * A build (from its build slot to its file) that runs longer is stopped and ends in error
   * (`serve --max-build-minutes`): a build that hangs on a mirror or a package script holds a slot forever otherwise.
   */
  buildTimeoutMs: number;
  /** Images (any status) one user may hold; one more is a 403 (`serve --max-images-per-user`). */
  imagesPerUser: number;
}

/** Where the server writes what only the operator may read (a failed job's whole error): Fastify's logger. */
export interface ServerLog {
  error(detail: object, message: string): void;
  warn(detail: object, message: string): void;
}

export interface ServerDeps {
  store: Store;
  box: SecretBox;
  files: FileStore;
  jobs: JobRunner;
  /** At most this many image builds at once; the others wait in order (`serve --max-builds`). */
  buildSlots: BuildSlots;
  clock: Clock;
  catalog: CatalogPort;
  imaging: ImagingPort;
  openstack: OpenStackPort;
  /** The base URL's path, `/api` by default. */
  servicePath?: string;
  limits?: Partial<Limits>;
  /** true: every request and every error on stdout (pino JSON lines); 'errors': failed jobs and 5xx only; false: nothing. */
  logger?: boolean | 'errors';
  /** The service's public base URL (`https://forge.example.org/api`): `Location` and `requestUri` use it, not the Host header. */
  publicUrl?: string;
  /**
   * Cloud endpoints users may name as keystoneUrl/glanceUrl (URL prefixes, `serve --cloud-endpoint`); any when
   * absent. Otherwise the server connects wherever a user says: to an internal service too (SSRF).
   */
  cloudEndpoints?: readonly string[];
}

export interface Ctx extends Required<Omit<ServerDeps, 'limits' | 'logger' | 'publicUrl' | 'cloudEndpoints'>> {
  limits: Limits;
  log: ServerLog;
  version: string;
  publicUrl?: string;
  cloudEndpoints?: readonly string[];
}

export const DEFAULT_LIMITS: Limits = { bodyBytes: 1024 * 1024, uploadBytes: 4 * 1024 * 1024 * 1024, maxDiskMiB: DEFAULT_MAX_DISK_MIB, signedUrlMaxAgeSeconds: 0,
  headersTimeoutMs: 30_000,
  requestTimeoutMs: 15 * 60_000,
  idleTimeoutMs: 120_000,
  jobsPerUser: 8,
  jobsTotal: 16,
  authFailuresPerMinute: 60,
  buildTimeoutMs: 60 * 60_000,
  imagesPerUser: 50,
};
