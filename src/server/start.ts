// `startServer`: open the data dir, recover from a previous crash, listen on loopback
// (docs/contracts.md "Server"). `createUser` is the command line's way in.
import type { FastifyInstance } from 'fastify';
import { builtIndexDir, indexedCatalogs, startIndexDir } from './catalog/start-index';
// The image builder's face: its stages load with the first build.
import { buildNote, defaultMirror, imageBuilder, TARGET_FORMATS, type MirrorConfig, type SharedLayerTier } from '../imaging';
import type { Ctx, ServerLog } from './context';
import { buildServer } from './app';
import { addUser, type CreatedUser } from './auth/keys';
import { DEFAULT_LIMITS, DEFAULT_MAX_BUILDS, type Limits } from '../model/limits';
import { openBackends, type Backends, type ServerRole } from './backends';
import { JobRunner } from './jobs/runner';
import { runBuild } from './jobs/build';
import { runPublish } from './jobs/publish';
import { abandonedJob, closeInterruptedJobs, liveBlobKeys } from './jobs/recovery';
import type { Handlers } from './queue/port';
import { systemClock, type CatalogPort, type Clock, type ImagingPort, type OpenStackPort } from './ports';
import { messageOf } from '../errors';
import { SecretBox } from './auth/secret-box';
import { checkSecretKey } from './auth/key-check';
import { openDataFolder } from './data-folder';
import { openPgStore } from './store/postgres/store';
import { SqliteStore } from './store/sqlite/store';
import { SHARED_LAYER_DAYS, sharedLayers } from './shared-layers';

/** Where a node keeps its records, blobs and jobs, and what it does (docs/server.md "Running a build farm"). */
export interface NodeOptions {
  /** The node's own folder: its secret key (unless `secretKeyFile`), and the records and blobs when no shared backend is given. */
  dataDir: string;
  /** `postgres://…`: records and the job queue in PostgreSQL, shared by the nodes of a farm. */
  databaseUrl?: string | undefined;
  /** `s3://BUCKET[/PREFIX][?endpoint=…&region=…&path-style=true]`: blobs in a bucket. */
  blobStore?: string | undefined;
  /** The key every node of a farm shares (default `<dataDir>/secret.key`, made on first use). */
  secretKeyFile?: string | undefined;
  limits?: Partial<Limits>;
  clock?: Clock;
  /** OS layers and downloaded packages (`serve --cache-dir`); default: `defaultCacheDir()`. */
  cacheDir?: string | undefined;
  /** OS layers keyed by their owner too (`serve --layers-per-owner`): a cache hit tells no one what another owner built. */
  layersPerOwner?: boolean | undefined;
  /** Bound on the OS layer cache's disk usage (layers, downloaded .deb files, builds in progress), in bytes (LRU). */
  maxCacheBytes?: number | undefined;
  /** Debian mirror of the image builds (`serve --mirror`); default: the host's first Debian apt source. */
  mirror?: MirrorConfig;
  /** Image builds this node runs at once (`serve --max-builds`); default DEFAULT_MAX_BUILDS (1). */
  maxBuilds?: number;
  /** Replace a sibling module (tests of failure paths); the real ones by default. */
  imaging?: ImagingPort;
  openstack?: OpenStackPort;
  /** Shorter queue heartbeats and supervision (tests of a worker's death). */
  queueTiming?: { heartbeatSeconds?: number; superviseSeconds?: number };
}

export interface StartOptions extends NodeOptions {
  /** `all` (default): the API and the builds; `api`: the API only (a farm's workers build). */
  role?: Exclude<ServerRole, 'worker'>;
  host?: string;
  port?: number;
  servicePath?: string;
  /** true: request log and errors; 'errors': failed jobs (their whole error) and 5xx only, on stderr. */
  logger?: boolean | 'errors';
  /** The public base URL for `Location` and `requestUri` (behind a proxy); the Host header otherwise. */
  publicUrl?: string | undefined;
  /** URL prefixes users may publish to (keystoneUrl/glanceUrl); any when absent. */
  cloudEndpoints?: readonly string[] | undefined;
  /** The web console at /console: on unless false. */
  console?: boolean | undefined;
  jobs?: JobRunner;
  catalog?: CatalogPort;
  /** Of a farm's API node: blobs no record names, older than this, are swept every hour (default an hour). */
  sweepGraceMs?: number;
}

export interface RunningServer {
  /** `http://127.0.0.1:<port>/api` */
  url: string;
  app: FastifyInstance;
  /** The server's jobs (queued orders and background work): `idle()` resolves once none runs or waits. */
  jobs: { idle(): Promise<void> };
  /** `role all, store sqlite (…), blobs local (…), queue in-process`: the start line's words. */
  summary: string;
  close(): Promise<void>;
}

export interface RunningWorker {
  /** `role worker (host:pid), store postgres (…), …`. */
  summary: string;
  close(): Promise<void>;
}

/** The real OpenStack port: its modules load with the first publication or removal from Glance. */
const realOpenStack: OpenStackPort = {
  publishToGlance: async (o) => (await import('../openstack/index.js')).publishToGlance(o),
  deleteGlanceImage: async (o) => (await import('../openstack/index.js')).deleteGlanceImage(o),
};

/** The real imaging port: the image library's builder (OS layers cached under `<cacheDir>/os`). */
export function realImaging(o: Pick<StartOptions, 'cacheDir' | 'maxCacheBytes' | 'mirror' | 'layersPerOwner'>, onWarning?: (message: string) => void, sharedLayers?: SharedLayerTier): ImagingPort {
  const builder = imageBuilder({ cacheDir: o.cacheDir, maxCacheBytes: o.maxCacheBytes, onWarning, sharedLayers });
  return { targetFormats: TARGET_FORMATS, mirror: o.mirror ?? defaultMirror(), layersPerOwner: o.layersPerOwner, cacheDir: builder.cacheDir, sweep: builder.sweep, settle: builder.settle, build: builder.build };
}

/** What a job needs of a node: no routes, no HTTP. */
type JobDeps = Pick<Ctx, 'store' | 'blobs' | 'box' | 'imaging' | 'openstack' | 'limits' | 'log'>;

function jobHandlers(deps: JobDeps): Handlers {
  return { build: (c) => runBuild(deps, c), publish: (c) => runPublish(deps, c), abandoned: (order, n) => abandonedJob(deps, order, n) };
}

/** A log that exists before the app (whose logger it forwards to once it does). */
function lateLog(): { log: ServerLog; to(log: ServerLog): void } {
  let target: ServerLog | undefined;
  return { log: { error: (d, m) => target?.error(d, m), warn: (d, m) => target?.warn(d, m), info: (d, m) => target?.info(d, m) }, to: (l) => (target = l) };
}

/**
 * The imaging port, with a layer not kept after its build's answer said in the log and the debug log.
 * On a farm (a database with a layer index, blobs every node reaches) OS layers are shared between workers.
 */
function imagingOf(o: NodeOptions, log: ServerLog, b: Pick<Backends, 'store' | 'blobs'>): ImagingPort {
  const tier = b.store.layers && b.blobs.shared ? sharedLayers(b.store.layers, b.blobs) : undefined;
  return o.imaging ?? realImaging(o, (m) => {
    buildNote(`warning: ${m}`);
    log.warn({}, m);
  }, tier);
}

async function backendsOf(o: NodeOptions, role: ServerRole, log: ServerLog): Promise<Backends> {
  const limits = { ...DEFAULT_LIMITS, ...o.limits };
  return openBackends({
    role, dataDir: o.dataDir, databaseUrl: o.databaseUrl, blobStore: o.blobStore, secretKeyFile: o.secretKeyFile,
    clock: o.clock ?? systemClock, log, maxBuilds: o.maxBuilds ?? DEFAULT_MAX_BUILDS, buildTimeoutMs: limits.buildTimeoutMs, queueTiming: o.queueTiming,
  });
}

/**
 * Blobs no record names (a node that died between a blob and its record): removed every `everyMs` when
 * older than `graceMs`, so that a write whose record is not committed yet is never taken. Unref'd.
 */
function sweepBlobsEvery(ctx: Pick<Ctx, 'store' | 'blobs' | 'log'>, everyMs: number, graceMs: number): () => void {
  const sweep = async (): Promise<void> => {
    try {
      const live = await liveBlobKeys(ctx.store);
      const layers = ctx.store.layers;
      if (layers) {
        // Shared OS layers no worker used for a while (a mirror moved on) go; the others' archives stay.
        await layers.expire(new Date(Date.now() - SHARED_LAYER_DAYS * 86_400_000).toISOString());
        for (const k of await layers.blobKeys()) live.add(k);
      }
      const { removed } = await ctx.blobs.sweep(live, graceMs);
      if (removed > 0) ctx.log.warn({ removed }, `the blob sweep removed ${removed} blob(s) or interrupted upload(s) that no record names`);
    } catch (e) {
      ctx.log.warn({ err: e }, `the blob sweep failed: ${messageOf(e)}`);
    }
  };
  const timer = setInterval(() => void sweep(), everyMs);
  timer.unref();
  void sweep();
  return () => clearInterval(timer);
}

export async function startServer(o: StartOptions): Promise<RunningServer> {
  const host = o.host ?? '127.0.0.1';
  const role = o.role ?? 'all';
  const clock = o.clock ?? systemClock;
  const late = lateLog();
  const backends = await backendsOf(o, role, late.log);
  const { dir, store, box, blobs, queue } = backends;
  const farm = queue.backend !== 'in-process';
  if (!farm) {
    // Restart recovery of the one process that owned every job: no job stays "running", no half-written file stays.
    await closeInterruptedJobs(store);
    await blobs.sweep(await liveBlobKeys(store), 0);
  }
  const jobs = o.jobs ?? new JobRunner();
  const imaging = imagingOf(o, late.log, backends);
  // A build killed with the server may have left /proc, /sys, /dev/pts and /dev/shm mounted in the
  // cache: unmount and remove them now, not at the next build. Started before the app is built, so that
  // its file system calls (libuv's thread pool) run while the routes are set up; awaited before the
  // server listens. A failure leaves the server usable (logged below).
  const swept = (async () => (role === 'all' ? imaging.sweep?.() : undefined))().then(() => undefined, (e: unknown) => ({ e }));
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
    console: o.console,
    role,
  });
  late.to(ctx.log);
  let stopSweeps = (): void => undefined;
  try {
    const failed = await swept;
    if (failed) ctx.log.warn({ err: failed.e }, `the OS layer cache could not be swept: ${messageOf(failed.e)}`);
    if (role === 'all') await queue.work(jobHandlers(ctx));
    if (farm) stopSweeps = sweepBlobsEvery(ctx, 3_600_000, o.sweepGraceMs ?? 3_600_000);
    await app.listen({ host, port: o.port ?? 0 });
  } catch (e) {
    stopSweeps();
    await backends.close();
    throw e;
  }
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : o.port ?? 0;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  let closed: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${port}${ctx.servicePath}`,
    app,
    summary: `role ${role}${role === 'all' ? ` (worker ${queue.worker})` : ''}, ${backends.summary}`,
    jobs: {
      async idle() {
        await queue.idle();
        await jobs.idle();
      },
    },
    close: () =>
      (closed ??= (async () => {
        stopSweeps();
        await queue.close();
        await jobs.close();
        await app.close();
        await imaging.settle?.();
        await backends.close();
      })()),
  };
}

/** A farm's build worker: claims orders from the shared queue, builds and publishes; no HTTP. */
export async function startWorker(o: NodeOptions): Promise<RunningWorker> {
  const late = lateLog();
  const backends = await backendsOf(o, 'worker', late.log);
  const log = stderrLog();
  late.to(log);
  const imaging = imagingOf(o, log, backends);
  try {
    await imaging.sweep?.();
  } catch (e) {
    log.warn({ err: e }, `the OS layer cache could not be swept: ${messageOf(e)}`);
  }
  const { store, blobs, box, queue } = backends;
  const limits = { ...DEFAULT_LIMITS, ...o.limits };
  const openstack = o.openstack ?? realOpenStack;
  try {
    await queue.work(jobHandlers({ store, blobs, box, imaging, openstack, limits, log }));
  } catch (e) {
    await backends.close();
    throw e;
  }
  let closed: Promise<void> | undefined;
  return {
    summary: `role worker (${queue.worker}), ${backends.summary}`,
    close: () =>
      (closed ??= (async () => {
        await queue.close();
        await imaging.settle?.();
        await backends.close();
      })()),
  };
}

/** A worker's log: one JSON line per event on stderr (a farm's service manager keeps it). */
function stderrLog(): ServerLog {
  const line = (level: 'error' | 'warn' | 'info', detail: object, msg: string): void => {
    const d = { ...detail } as Record<string, unknown>;
    if (d.err instanceof Error) d.err = { type: d.err.name, message: d.err.message, stack: d.err.stack };
    process.stderr.write(`${JSON.stringify({ level, time: new Date().toISOString(), pid: process.pid, msg, ...d })}\n`);
  };
  return { error: (d, m) => line('error', d, m), warn: (d, m) => line('warn', d, m), info: (d, m) => line('info', d, m) };
}

/**
 * Create a user with a first API key pair (the only way in for a fresh server): in the data dir's
 * database, or the farm's (`databaseUrl`, with the farm's `secretKeyFile`).
 */
export async function createUser(
  dataDir: string,
  o: { login: string; password?: string | undefined; admin?: boolean } & Pick<NodeOptions, 'databaseUrl' | 'secretKeyFile'>,
): Promise<CreatedUser> {
  const dir = openDataFolder(dataDir);
  const box = o.secretKeyFile !== undefined ? SecretBox.fromFile(o.secretKeyFile) : SecretBox.open(dir);
  const store = o.databaseUrl !== undefined ? await openPgStore(o.databaseUrl, systemClock) : new SqliteStore(dir, systemClock);
  try {
    if (store.backend === 'postgres') await checkSecretKey(store, box);
    return await addUser(store, box, o);
  } finally {
    await store.close();
  }
}
