// `startServer`: open the data dir, recover from a previous crash, listen on loopback
// (docs/contracts.md "Server"). `createUser` is the command line's way in.
import type { FastifyInstance } from 'fastify';
import { builtIndexDir, indexedCatalogs, startIndexDir } from './catalog/start-index';
// The builder and formats from their own modules, not the imaging index (every stage of a build).
import { imageBuilder } from '../imaging/builder';
import { TARGET_FORMATS } from '../imaging/formats';
import { defaultMirror } from '../imaging/os/mirror';
import { buildNote } from '../imaging/stage-log';
import type { MirrorConfig } from '../imaging';
import type { ServerLog } from './context';
import { buildServer } from './app';
import { addUser, type CreatedUser } from './auth/keys';
import { SecretBox } from './auth/secret-box';
import type { Limits } from '../model/limits';
import { openDataFolder } from './data-folder';
import { LocalBlobs } from './blobs/local';
import { JobRunner } from './jobs/runner';
import { runBuild } from './jobs/build';
import { runPublish } from './jobs/publish';
import { closeInterruptedJobs, liveBlobKeys } from './jobs/recovery';
import { InProcessQueue } from './queue/in-process';
import { systemClock, type CatalogPort, type Clock, type ImagingPort, type OpenStackPort } from './ports';
import { SqliteStore } from './store/sqlite/store';
import type { Store } from './store/port';
import { messageOf } from '../errors';

export interface StartOptions {
  host?: string;
  port?: number;
  dataDir: string;
  servicePath?: string;
  /** true: request log and errors; 'errors': failed jobs (their whole error) and 5xx only; on stdout. */
  logger?: boolean | 'errors';
  /** The public base URL for `Location` and `requestUri` (behind a proxy); the Host header otherwise. */
  publicUrl?: string;
  /** URL prefixes users may publish to (keystoneUrl/glanceUrl); any when absent. */
  cloudEndpoints?: readonly string[];
  limits?: Partial<Limits>;
  clock?: Clock;
  jobs?: JobRunner;
  /** OS layers and downloaded packages (`serve --cache-dir`); default: `defaultCacheDir()`. */
  cacheDir?: string;
  /** Bound on the OS layer cache's disk usage (layers, downloaded .deb files, builds in progress), in bytes (LRU). */
  maxCacheBytes?: number;
  /** Debian mirror of the image builds (`serve --mirror`); default: the host's first Debian apt source. */
  mirror?: MirrorConfig;
  /** Image builds at once (`serve --max-builds`); default 1. */
  maxBuilds?: number;
  /** Replace a sibling module (tests of failure paths); the real ones by default. */
  catalog?: CatalogPort;
  imaging?: ImagingPort;
  openstack?: OpenStackPort;
}

export interface RunningServer {
  /** `http://127.0.0.1:<port>/api` */
  url: string;
  app: FastifyInstance;
  /** The server's jobs (queued orders and background work): `idle()` resolves once none runs or waits. */
  jobs: { idle(): Promise<void> };
  close(): Promise<void>;
}

interface DataDir {
  dir: string;
  store: Store;
  box: SecretBox;
  blobs: LocalBlobs;
}

/** Checked before anything is read or written there (data-folder.ts); the key before the database. */
function openDataDir(dataDir: string, clock: Clock): DataDir {
  const dir = openDataFolder(dataDir);
  const box = SecretBox.open(dir);
  const blobs = new LocalBlobs(dir);
  return { dir, store: new SqliteStore(dir, clock), box, blobs };
}

/** The real OpenStack port: its modules load with the first publication or removal from Glance. */
const realOpenStack: OpenStackPort = {
  publishToGlance: async (o) => (await import('../openstack/index.js')).publishToGlance(o),
  deleteGlanceImage: async (o) => (await import('../openstack/index.js')).deleteGlanceImage(o),
};

/** The real imaging port: the image library's builder (OS layers cached under `<cacheDir>/os`). */
export function realImaging(o: Pick<StartOptions, 'cacheDir' | 'maxCacheBytes' | 'mirror'>, onWarning?: (message: string) => void): ImagingPort {
  const builder = imageBuilder({ cacheDir: o.cacheDir, maxCacheBytes: o.maxCacheBytes, onWarning });
  return { targetFormats: TARGET_FORMATS, mirror: o.mirror ?? defaultMirror(), cacheDir: builder.cacheDir, sweep: builder.sweep, settle: builder.settle, build: builder.build };
}

export async function startServer(o: StartOptions): Promise<RunningServer> {
  const host = o.host ?? '127.0.0.1';
  const clock = o.clock ?? systemClock;
  const { dir, store, box, blobs } = openDataDir(o.dataDir, clock);
  // Restart recovery: no job stays "running", no half-written file stays.
  await closeInterruptedJobs(store);
  await blobs.sweep(await liveBlobKeys(store), 0);
  const jobs = o.jobs ?? new JobRunner();
  // A layer not kept after its build's answer is said in the server's log (once it exists) and the debug log.
  const late: { log?: ServerLog } = {};
  const imaging = o.imaging ?? realImaging(o, (m) => {
    buildNote(`warning: ${m}`);
    late.log?.warn({}, m);
  });
  // A build killed with the server may have left /proc, /sys, /dev/pts and /dev/shm mounted in the
  // cache: unmount and remove them now, not at the next build. Started before the app is built, so that
  // its file system calls (libuv's thread pool) run while the routes are set up; awaited before the
  // server listens. A failure leaves the server usable (logged below).
  const swept = (async () => imaging.sweep?.())().then(() => undefined, (e: unknown) => ({ e }));
  const log: ServerLog = { error: (d, m) => late.log?.error(d, m), warn: (d, m) => late.log?.warn(d, m) };
  const queue = new InProcessQueue(store, log, o.maxBuilds ?? 1);
  const { app, ctx } = buildServer({
    store,
    box,
    blobs,
    jobs,
    queue,
    clock,
    catalog: o.catalog ?? indexedCatalogs(startIndexDir(dir), builtIndexDir()),
    imaging,
    openstack: o.openstack ?? realOpenStack,
    servicePath: o.servicePath,
    limits: o.limits,
    logger: o.logger,
    publicUrl: o.publicUrl,
    cloudEndpoints: o.cloudEndpoints,
  });
  late.log = ctx.log;
  try {
    const failed = await swept;
    if (failed) ctx.log.warn({ err: failed.e }, `the OS layer cache could not be swept: ${messageOf(failed.e)}`);
    await queue.work({ build: (c) => runBuild(ctx, c), publish: (c) => runPublish(ctx, c) });
    await app.listen({ host, port: o.port ?? 0 });
  } catch (e) {
    await queue.close();
    await store.close();
    throw e;
  }
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : o.port ?? 0;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  let closed: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${port}${ctx.servicePath}`,
    app,
    jobs: {
      async idle() {
        await queue.idle();
        await jobs.idle();
      },
    },
    close: () =>
      (closed ??= (async () => {
        await queue.close();
        await jobs.close();
        await app.close();
        await imaging.settle?.();
        await store.close();
      })()),
  };
}

/** Create a user with a first API key pair (the only way in for a fresh data dir). */
export async function createUser(dataDir: string, o: { login: string; password?: string; admin?: boolean }): Promise<CreatedUser> {
  const { store, box } = openDataDir(dataDir, systemClock);
  try {
    return await addUser(store, box, o);
  } finally {
    await store.close();
  }
}
