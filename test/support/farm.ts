// A build farm on this machine, made of real parts (docs/server.md "Running a build farm"): a database of its
// own in the loopback PostgreSQL (../shared/postgres), a prefix of its own in the loopback S3
// (../shared/s3), one secret key file, an API node in this process (`startServer({ role: 'api' })`) and
// worker processes (`appliance-forge serve --role worker`, from dist/). `APPLIANCE_FORGE_TEST_BACKEND=farm`
// makes every reference server of the suites one of these (test/support/reference-server.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type RunningServer, type StartOptions } from '../../src/server';
import { freshDatabase, postgresUnavailable, startPostgres } from './postgres';
import { s3Unavailable, startS3, type S3Service } from './s3';

export const ROOT = join(__dirname, '..', '..');
export const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');

/** The suites run on the farm when this is set (vitest's `farm` project). */
export const onFarm = (): boolean => process.env.APPLIANCE_FORGE_TEST_BACKEND === 'farm';

/** Why a farm cannot run here, or undefined. */
export function farmUnavailable(): string | undefined {
  return postgresUnavailable() ?? s3Unavailable() ?? (existsSync(CLI) ? undefined : `${CLI} is missing: build first (npx tsc -p tsconfig.json)`);
}

let services: Promise<{ pg: string; s3: S3Service }> | undefined;

/** PostgreSQL and S3, started once per test file; their variables are set for this process (the API node's SDK reads them). */
export function farmServices(): Promise<{ pg: string; s3: S3Service }> {
  services ??= (async () => {
    const [pg, s3] = await Promise.all([startPostgres(), startS3()]);
    if ('skip' in pg) throw new Error(pg.skip);
    if ('skip' in s3) throw new Error(s3.skip);
    for (const k of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_REQUEST_CHECKSUM_CALCULATION', 'AWS_RESPONSE_CHECKSUM_VALIDATION']) {
      if (s3.env[k]) process.env[k] = s3.env[k];
    }
    return { pg: pg.url, s3 };
  })();
  return services;
}

export interface WorkerProcess {
  readonly proc: ChildProcess;
  /** What it wrote (stdout and stderr), line by line. */
  readonly lines: string[];
  /** Its start line (`role worker (host:pid), …`). */
  readonly started: Promise<string>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export interface Farm {
  readonly databaseUrl: string;
  readonly blobStore: string;
  readonly secretKeyFile: string;
  /** The S3 prefix of its blobs (objects under `<prefix>/files`, `<prefix>/images`). */
  readonly blobPrefix: string;
  readonly s3: S3Service;
  /** The API node (a new one after `restartApi`). */
  readonly api: RunningServer;
  readonly apiDir: string;
  readonly workers: WorkerProcess[];
  /** Starts one more worker process. */
  addWorker(extra?: string[]): WorkerProcess;
  restartApi(): Promise<void>;
  close(): Promise<void>;
}

export interface FarmOptions {
  /** Worker processes (default 2). */
  readonly workers?: number;
  /** Options of the API node (limits, catalog…); its backends are the farm's. */
  readonly api?: Partial<StartOptions>;
  /** Flags of every worker (`--max-builds 2`). */
  readonly workerFlags?: readonly string[];
}

export async function startFarm(o: FarmOptions = {}): Promise<Farm> {
  const { pg, s3 } = await farmServices();
  const db = await freshDatabase(pg);
  const root = mkdtempSync(join(tmpdir(), 'forge-farm-'));
  const secretKeyFile = join(root, 'secret.key');
  writeFileSync(secretKeyFile, randomBytes(32).toString('base64'), { mode: 0o600 });
  const sub = `farm-${randomBytes(4).toString('hex')}`;
  const blobStore = s3.url(sub);
  const node = { databaseUrl: db.url, blobStore, secretKeyFile };
  const apiDir = join(root, 'api');
  const startApi = () => startServer({ port: 0, ...o.api, ...node, dataDir: apiDir, role: 'api' });
  let api = await startApi();
  const workers: WorkerProcess[] = [];
  const addWorker = (extra: string[] = []): WorkerProcess => {
    const dir = join(root, `worker-${workers.length + 1}`);
    const w = spawnWorker([
      'serve', '--role', 'worker', '--data-dir', dir, '--database-url', db.url, '--blob-store', blobStore, '--secret-key-file', secretKeyFile,
      ...(o.workerFlags ?? []), ...extra,
    ]);
    workers.push(w);
    return w;
  };
  try {
    for (let i = 0; i < (o.workers ?? 2); i++) addWorker();
    await Promise.all(workers.map((w) => w.started));
  } catch (e) {
    await Promise.all(workers.map((w) => w.kill('SIGKILL')));
    await api.close();
    throw e;
  }
  return {
    databaseUrl: db.url,
    blobStore,
    secretKeyFile,
    blobPrefix: `${s3.prefix}/${sub}`,
    s3,
    get api() {
      return api;
    },
    apiDir,
    workers,
    addWorker,
    async restartApi() {
      await api.close();
      api = await startApi();
    },
    async close() {
      await Promise.all(workers.map((w) => w.kill('SIGTERM')));
      await api.close();
      await db.drop();
      await s3.remove(sub); // its blobs: GiBs after the large uploads and builds
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** A worker process of the CLI in dist/; its start line resolves `started`. */
function spawnWorker(args: string[]): WorkerProcess {
  const proc = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
  const lines: string[] = [];
  let partial = '';
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const started = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the worker did not start within 60 s:\n${lines.join('\n')}`)), 60_000);
    const take = (chunk: Buffer): void => {
      const parts = (partial + chunk.toString('utf8')).split('\n');
      partial = parts.pop() ?? '';
      for (const l of parts) {
        lines.push(l);
        if (/serve: role worker /.test(l)) {
          clearTimeout(timer);
          resolve(l);
        }
      }
    };
    proc.stdout.on('data', take);
    proc.stderr.on('data', take);
    proc.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the worker exited (${code ?? signal}) before it started:\n${lines.join('\n')}`));
    });
  });
  started.catch(() => undefined);
  return {
    proc,
    lines,
    started,
    async kill(signal: NodeJS.Signals = 'SIGTERM') {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      // A graceful stop hands its jobs back; bounded, then killed.
      const timer = setTimeout(() => proc.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
