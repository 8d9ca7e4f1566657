// `appliance-forge migrate` (docs/server.md "Running a build farm"): a data folder's users, records and files
// into a farm's PostgreSQL database and, when given, its bucket. Ids, dates and blob keys are kept, so
// every URI, ETag and download of the folder's server stays valid; the secrets stay sealed with the
// folder's key, which every node then holds (`--secret-key-file <folder>/secret.key`). The folder is read
// in one transaction (stop its server first) and never changed; the database must be empty, and gets
// everything in one transaction after the blobs are copied, so a failure leaves it empty still.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { isTerminal } from '../model/job-state';
import { checkSecretKey } from './auth/key-check';
import { SecretBox } from './auth/secret-box';
import type { BlobStore } from './blobs/port';
import { openS3Blobs } from './blobs/s3';
import { LocalBlobs } from './blobs/local';
import { ServerConfigError } from './config-error';
import { DATABASE_FILES, openDataFolder, SECRET_KEY_FILE } from './data-folder';
import { INTERRUPTED, liveBlobKeys } from './jobs/recovery';
import { systemClock } from './ports';
import type { Kind, UserRow } from './store/docs';
import { openPgStore } from './store/postgres/store';
import type { Row } from './store/port';
import { SqliteStore } from './store/sqlite/store';

export interface MigrateOptions {
  /** The data folder of an embedded server (stopped). */
  readonly from: string;
  /** The farm's database, `postgres://…`: empty. */
  readonly to: string;
  /** The farm's bucket, `s3://…`; absent, the files stay in the data folder (one node serves it). */
  readonly blobStore?: string | undefined;
  /** One line per step. */
  readonly onProgress?: ((line: string) => void) | undefined;
}

export interface MigrateResult {
  readonly users: number;
  readonly records: number;
  readonly blobs: number;
  readonly bytes: number;
  /** The key every node of the farm must be given (`--secret-key-file`). */
  readonly secretKeyFile: string;
}

const KINDS: readonly Exclude<Kind, 'setting'>[] = ['account', 'apikey', 'appliance', 'osprofile', 'software', 'artifact', 'image', 'pimage'];

export async function migrateDataFolder(o: MigrateOptions): Promise<MigrateResult> {
  const say = o.onProgress ?? (() => undefined);
  const dir = openDataFolder(o.from);
  if (!existsSync(join(dir, DATABASE_FILES[0]))) throw new ServerConfigError(`${dir} holds no ${DATABASE_FILES[0]}: nothing to migrate`);
  const secretKeyFile = join(dir, SECRET_KEY_FILE);
  const box = SecretBox.fromFile(secretKeyFile);
  const source = new SqliteStore(dir, systemClock);
  const local = new LocalBlobs(dir);
  const target = await openPgStore(o.to, systemClock).catch(async (e: unknown) => {
    await source.close();
    throw e;
  });
  let bucket: BlobStore | undefined;
  try {
    bucket = o.blobStore !== undefined ? await openS3Blobs(o.blobStore) : undefined;
    if ((await target.listUsers()).length > 0 || (await Promise.all(KINDS.map((k) => target.list(k)))).some((rows) => rows.length > 0)) {
      throw new ServerConfigError(`${target.where} already holds users or records: migrate into an empty database`);
    }
    // One read transaction: a consistent copy, and a server still writing to the folder waits (or fails).
    const { users, records, keys } = await source.tx(async (t) => ({
      users: await t.listUsers(),
      records: (await Promise.all(KINDS.map((k) => t.list(k)))).flat().sort((a, b) => a.id - b.id),
      keys: await liveBlobKeys(t),
    }));
    say(`read ${users.length} users and ${records.length} records from ${source.where}`);
    let bytes = 0;
    if (bucket) {
      for (const key of keys) {
        const path = local.localPath(key);
        if (!existsSync(path)) throw new ServerConfigError(`${key}, which a record names, is missing from ${dir}: the folder is damaged; nothing was migrated`);
        await bucket.copyIn(path, key);
        bytes += sizeOf(records, key);
      }
      say(`copied ${keys.size} files (${bytes} bytes) to ${bucket.where}`);
    }
    await target.tx(async (t) => {
      for (const u of users) await t.insertUser(u.login, u.admin, u.passwordHash, u.doc, copiedOf(u));
      for (const r of records) {
        // A job the folder's server left running resumes nowhere: it ends as its next start would have ended it.
        const doc = 'status' in r.doc && !isTerminal(r.doc.status) ? { ...r.doc, status: { ...r.doc.status, error: true, errorMessage: INTERRUPTED, message: INTERRUPTED } } : r.doc;
        await t.insert(r.kind, { owner: r.owner, parentId: r.parentId, uniqueKey: r.uniqueKey, doc, secret: r.secret }, undefined, copiedOf(r));
      }
    });
    // The farm's key check, sealed with the folder's key: a node with another key refuses to start.
    await checkSecretKey(target, box);
    say(`wrote them to ${target.where}`);
    return { users: users.length, records: records.length, blobs: bucket ? keys.size : 0, bytes, secretKeyFile };
  } finally {
    bucket?.close?.();
    await target.close();
    await source.close();
  }
}

const copiedOf = (r: Pick<Row<Kind> | UserRow, 'id' | 'created' | 'modified'>) => ({ id: r.id, created: r.created, modified: r.modified });

/** The size a record gives the file of `key`. */
function sizeOf(records: ReadonlyArray<Row<Kind>>, key: string): number {
  for (const r of records) {
    const d = r.doc as { file?: { path: string; size: number }; sbom?: { files: Record<string, { path: string; size: number } | undefined> } };
    if (d.file?.path === key) return d.file.size;
    for (const f of Object.values(d.sbom?.files ?? {})) if (f?.path === key) return f.size;
  }
  return 0;
}
