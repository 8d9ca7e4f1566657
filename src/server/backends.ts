// Which adapters a server runs on, chosen by configuration (docs/server.md "Running a build farm"): nothing
// configured is the embedded server of one process (SQLite and blobs in the data folder, jobs in this
// process); `--database-url` puts the records and the job queue in PostgreSQL (pg-boss), shared by every
// node; `--blob-store s3://…` puts the blobs in a bucket. A node that only answers the API, or only
// builds, needs both shared backends; anything else is refused before anything opens, in one line.
import { SecretBox } from './auth/secret-box';
import { checkSecretKey } from './auth/key-check';
import { LocalBlobs } from './blobs/local';
import type { BlobStore } from './blobs/port';
import { openS3Blobs } from './blobs/s3';
import { ServerConfigError } from './config-error';
import type { ServerLog } from './context';
import { openDataFolder } from './data-folder';
import type { Clock } from './ports';
import { InProcessQueue } from './queue/in-process';
import { PgBossQueue } from './queue/pg-boss';
import type { JobQueue } from './queue/port';
import { openPgStore } from './store/postgres/store';
import type { Store } from './store/port';
import { SqliteStore } from './store/sqlite/store';

export const SERVER_ROLES = ['all', 'api', 'worker'] as const;
/** `all`: the API and the builds (one node, or each node of a farm); `api`: the API only; `worker`: the builds only. */
export type ServerRole = (typeof SERVER_ROLES)[number];

export interface Topology {
  readonly role: ServerRole;
  /** `postgres://…`: records and the job queue in PostgreSQL. */
  readonly databaseUrl?: string | undefined;
  /** `s3://BUCKET[/PREFIX][?endpoint=…&region=…&path-style=true]`: blobs in a bucket. */
  readonly blobStore?: string | undefined;
}

/** Why this role cannot run on these backends, or undefined when it can. */
export function topologyProblem(t: Topology): string | undefined {
  if (t.role !== 'all' && t.databaseUrl === undefined) {
    return `--role ${t.role} needs the database every node of a farm shares: give --database-url postgres://… (or APPLIANCE_FORGE_DATABASE_URL)`;
  }
  if (t.role !== 'all' && t.blobStore === undefined) {
    return `--role ${t.role} needs blobs every node reaches: give --blob-store s3://BUCKET/PREFIX (or APPLIANCE_FORGE_BLOB_STORE); the data folder is one node's disk`;
  }
  return undefined;
}

export interface BackendOptions extends Topology {
  readonly dataDir: string;
  /** The key secrets are sealed with: every node of a farm needs the same file. Default: `<dataDir>/secret.key`, made on first use. */
  readonly secretKeyFile?: string | undefined;
  readonly clock: Clock;
  readonly log: ServerLog;
  /** Image builds this node runs at once. */
  readonly maxBuilds: number;
  /** The build time limit, which the queue's expiry of a running job must exceed. */
  readonly buildTimeoutMs: number;
  /** Shorter heartbeats and supervision (tests of a worker's death); the defaults find a dead worker within about 20 s. */
  readonly queueTiming?: { readonly heartbeatSeconds?: number; readonly superviseSeconds?: number } | undefined;
}

export interface Backends {
  /** The data folder (absolute). */
  readonly dir: string;
  readonly box: SecretBox;
  readonly store: Store;
  readonly blobs: BlobStore;
  readonly queue: JobQueue;
  /** `store sqlite (…), blobs local (…), queue in-process`: for the start line. */
  readonly summary: string;
  close(): Promise<void>;
}

export async function openBackends(o: BackendOptions): Promise<Backends> {
  const problem = topologyProblem(o);
  if (problem !== undefined) throw new ServerConfigError(problem);
  // Checked before anything is read or written there (data-folder.ts); the key before the database.
  const dir = openDataFolder(o.dataDir);
  const box = o.secretKeyFile !== undefined ? SecretBox.fromFile(o.secretKeyFile) : SecretBox.open(dir);
  const opened: Array<() => Promise<void>> = [];
  const closeAll = async (): Promise<void> => {
    for (const close of opened.splice(0).reverse()) await close().catch(() => undefined);
  };
  try {
    const store: Store = o.databaseUrl !== undefined ? await openPgStore(o.databaseUrl, o.clock, { log: o.log }) : new SqliteStore(dir, o.clock);
    opened.push(() => store.close());
    if (store.backend === 'postgres') await checkSecretKey(store, box);
    const blobs: BlobStore = o.blobStore !== undefined ? await openS3Blobs(o.blobStore) : new LocalBlobs(dir);
    opened.push(async () => blobs.close?.());
    if (store.backend === 'postgres' && blobs.backend === 'local' && !(await store.holdLock?.('appliance-forge local blobs'))) {
      throw new ServerConfigError(`another node already serves this database (${store.where}) with the blobs on its own disk: a second node needs --blob-store s3://… on every node`);
    }
    const queue: JobQueue =
      store.backend === 'postgres'
        ? await PgBossQueue.open(o.databaseUrl!, store, {
            log: o.log,
            concurrency: o.maxBuilds,
            // pg-boss fails a job active longer than this: the build's own limit stops it first.
            expireSeconds: Math.ceil(o.buildTimeoutMs / 1000) + 600,
            heartbeatSeconds: o.queueTiming?.heartbeatSeconds,
            superviseSeconds: o.queueTiming?.superviseSeconds,
          })
        : new InProcessQueue(store, o.log, o.maxBuilds);
    opened.push(() => queue.close());
    const summary = `store ${store.backend} (${store.where}), blobs ${blobs.backend} (${blobs.where}), queue ${queue.backend}`;
    return { dir, box, store, blobs, queue, summary, close: closeAll };
  } catch (e) {
    await closeAll();
    throw e;
  }
}
