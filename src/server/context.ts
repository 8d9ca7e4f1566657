// What every routes file receives: the explicit dependencies of the server (style example 10).
import type { SecretBox } from './auth/secret-box';
import type { BlobStore } from './blobs/port';
import type { JobRunner } from './jobs/runner';
import type { JobQueue } from './queue/port';
import type { CatalogPort, Clock, ImagingPort, OpenStackPort } from './ports';
import type { Store } from './store/port';
import type { Limits } from '../model/limits';

/** Where the server writes what only the operator may read (a failed job's whole error): Fastify's logger. */
export interface ServerLog {
  error(detail: object, message: string): void;
  warn(detail: object, message: string): void;
  /** What a farm's operator follows (a job claimed, handed back): shown by `--log` and by workers. */
  info(detail: object, message: string): void;
}

export interface ServerDeps {
  store: Store;
  box: SecretBox;
  blobs: BlobStore;
  /** Background work of this process (late digests): aborted and awaited when it closes. */
  jobs: JobRunner;
  /** Where image builds and publications are queued and claimed (queue/port.ts). */
  queue: JobQueue;
  clock: Clock;
  catalog: CatalogPort;
  imaging: ImagingPort;
  openstack: OpenStackPort;
  /** The base URL's path, `/api` by default. */
  servicePath?: string | undefined;
  limits?: Partial<Limits> | undefined;
  /** true: every request and every error on stdout (pino JSON lines); 'errors': failed jobs and 5xx only, on stderr; false: nothing. */
  logger?: boolean | 'errors' | undefined;
  /** The service's public base URL (`https://forge.example.org/api`): `Location` and `requestUri` use it, not the Host header. */
  publicUrl?: string | undefined;
  /** What this node does, for `GET /health` (`all` by default). */
  role?: 'all' | 'api' | undefined;
  /**
   * Cloud endpoints users may name as keystoneUrl/glanceUrl (URL prefixes, `serve --cloud-endpoint`); any when
   * absent. Otherwise the server connects wherever a user says: to an internal service too (SSRF).
   */
  cloudEndpoints?: readonly string[] | undefined;
  /** The web console at /console (console/routes.ts): on unless false (`serve --no-console`). */
  console?: boolean | undefined;
}

export interface Ctx extends Required<Omit<ServerDeps, 'servicePath' | 'limits' | 'logger' | 'publicUrl' | 'cloudEndpoints' | 'role' | 'console'>> {
  servicePath: string;
  limits: Limits;
  log: ServerLog;
  version: string;
  publicUrl?: string | undefined;
  cloudEndpoints?: readonly string[] | undefined;
}
