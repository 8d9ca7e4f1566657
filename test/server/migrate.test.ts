// `appliance-forge migrate` (src/server/migrate.ts): an embedded server's data folder into a farm's real
// PostgreSQL and S3 on 127.0.0.1, then an API node on them answers as the folder's server did: the
// same ids and ETags, keys that still sign, files whose bytes are those uploaded (sha256 by openssl),
// a job left running ended as interrupted. A second migration into the same database is refused and
// changes nothing; a node with another secret key refuses to start.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client';
import { migrateDataFolder, startServer, type RunningServer } from '../../src/server';
import { LocalBlobs } from '../../src/server/blobs/local';
import { systemClock } from '../../src/server/ports';
import { SqliteStore } from '../../src/server/store/sqlite/store';
import { farmServices, farmUnavailable } from '../support/farm';
import { freshDatabase, sql } from '../support/postgres';
import { startReferenceServer, type ReferenceServer } from '../support/reference-server';

const skip = farmUnavailable();
if (skip) console.warn(`SKIP migrate tests: ${skip}`);

const openssl = (file: string): string => execFileSync('openssl', ['dgst', '-sha256', '-r', file], { encoding: 'utf8' }).split(' ')[0]!;

describe.skipIf(skip !== undefined)('migrate a data folder into PostgreSQL and S3', () => {
  let ref: ReferenceServer<'alice' | 'bob'>;
  let api: RunningServer | undefined;
  let db: { url: string; drop(): Promise<void> };
  let blobStore = '';
  const file = join(process.env.TMPDIR ?? '/tmp', `migrate-${randomBytes(4).toString('hex')}.bin`);
  const ids = { aid: 0, msid: 0, said: 0, running: 0, done: 0 };
  const views: Record<string, unknown> = {};

  beforeAll(async () => {
    const { pg, s3 } = await farmServices();
    db = await freshDatabase(pg);
    blobStore = s3.url(`migrate-${randomBytes(4).toString('hex')}`);
    ref = await startReferenceServer({ alice: { password: 'alice-pass' }, bob: {} });
    const c = ref.client(ref.users.alice);
    const app = await c.appliance_create({ uid: 'alice', body: { name: 'moved', version: '1', distributionUri: 'distributions/1' } });
    ids.aid = app.dbId!;
    const sw = await c.mySoftware_create({ uid: 'alice', body: { name: 'tool', version: '1' } });
    const art = await c.mySoftwareArtifact_add({ uid: 'alice', msid: sw.dbId!, body: { name: 'tool.bin', installLocation: '/opt/tool' } });
    [ids.msid, ids.said] = [sw.dbId!, art.dbId!];
    writeFileSync(file, randomBytes(300_000));
    await c.upload({ uid: 'alice', msid: ids.msid, said: ids.said, fileName: 'tool.bin' }, { file });
    await c.cloudAccount_create({ uid: 'alice', body: { name: 'lab', keystoneUrl: 'http://127.0.0.1:5000/v3', login: 'demo', password: 'sealed-pass' } });
    views.appliance = await c.appliance_get({ uid: 'alice', aid: ids.aid });
    views.artifact = await c.mySoftwareArtifact_get({ uid: 'alice', msid: ids.msid, said: ids.said });
    await ref.server.close();
    // An image made by a build (a file and its record) and a generation the server left running, as a stop leaves them.
    const store = new SqliteStore(ref.dataDir, systemClock);
    const blobs = new LocalBlobs(ref.dataDir);
    const w = await blobs.write(Readable.from([randomBytes(70_000)]), 'images', 'moved-1.qcow2', 1 << 20, 70_000);
    const img = { path: w.key, fileName: 'moved-1.qcow2', size: w.size, sha256: w.sha256!, md5: w.md5!, mimeType: 'application/octet-stream', stored: store.now() };
    const base = { applianceId: ids.aid, formatName: 'QCOW2', compress: false, installProfile: {}, revision: 0 };
    ids.done = (await store.insert('image', { owner: 'alice', parentId: ids.aid, doc: { ...base, file: img, status: { complete: true, percentage: 100 } } })).id;
    ids.running = (await store.insert('image', { owner: 'alice', parentId: ids.aid, doc: { ...base, formatName: 'RAW', status: { percentage: 40, message: 'building' } } })).id;
    await store.close();
  }, 600_000);
  afterAll(async () => {
    await api?.close();
    await ref?.close();
    await db?.drop();
  });

  it('copies users, records and files; an API node on the farm answers as the folder did', async () => {
    const r = await migrateDataFolder({ from: ref.dataDir, to: db.url, blobStore });
    expect(r).toMatchObject({ users: 2, blobs: 2, secretKeyFile: join(ref.dataDir, 'secret.key') });
    expect(r.records).toBeGreaterThanOrEqual(7);
    api = await startServer({ role: 'api', port: 0, dataDir: join(ref.dataDir, 'api-node'), databaseUrl: db.url, blobStore, secretKeyFile: r.secretKeyFile });
    const c = createClient({ url: api.url, auth: ref.users.alice, retry: false });
    try {
      // The same records, views and ETags: ids, dates and docs kept; the API key pair (sealed with the folder's key) signs.
      // (The appliance's view now names the two images added to the folder after it was read.)
      const { imageUris, digest: _d, ...rest } = await c.appliance_get({ uid: 'alice', aid: ids.aid });
      const { imageUris: _i, digest: _e, ...before } = views.appliance as typeof rest & { imageUris?: string[]; digest?: string };
      expect(rest).toEqual(before);
      expect(imageUris).toEqual([ids.done, ids.running].map((id) => `users/alice/appliances/${ids.aid}/images/${id}`));
      expect(await c.mySoftwareArtifact_get({ uid: 'alice', msid: ids.msid, said: ids.said })).toEqual(views.artifact);
      const out = join(process.env.TMPDIR ?? '/tmp', `migrated-${randomBytes(4).toString('hex')}.bin`);
      await c.download((views.artifact as { binaryUri: string }).binaryUri, { to: out });
      expect(openssl(out)).toBe(openssl(file));
      const image = await c.machineImage_get({ uid: 'alice', aid: ids.aid, itid: ids.done });
      const imageOut = `${out}.qcow2`;
      await c.download(image.downloadUri!, { to: imageOut });
      expect(openssl(imageOut)).toBe(image.sha256sum);
      // A generation left running ends as a restart would have ended it.
      expect(await c.machineImageStatus_get({ uid: 'alice', aid: ids.aid, itid: ids.running })).toMatchObject({ error: true, errorMessage: 'interrupted by a server restart' });
      // Basic with the password kept as its hash.
      const basic = createClient({ url: api.url, auth: { login: 'alice', password: 'alice-pass' }, retry: false });
      expect((await basic.user_get({ uid: 'alice' })).loginName).toBe('alice');
      await basic.close();
      // New records take ids after the copied ones.
      const next = await c.appliance_create({ uid: 'alice', body: { name: 'after', version: '1', distributionUri: 'distributions/1' } });
      expect(next.dbId!).toBeGreaterThan(ids.running);
    } finally {
      await c.close();
    }
  });

  it('refuses a database that is not empty, and changes nothing; a node with another key refuses to start', async () => {
    const before = await sql<{ n: string }>(db.url, 'SELECT count(*)::text AS n FROM appliance_forge.records');
    await expect(migrateDataFolder({ from: ref.dataDir, to: db.url, blobStore })).rejects.toThrow(/already holds users or records: migrate into an empty database/);
    expect(await sql<{ n: string }>(db.url, 'SELECT count(*)::text AS n FROM appliance_forge.records')).toEqual(before);
    const other = join(process.env.TMPDIR ?? '/tmp', `other-${randomBytes(4).toString('hex')}.key`);
    writeFileSync(other, randomBytes(32).toString('base64'), { mode: 0o600 });
    await expect(startServer({ role: 'api', port: 0, dataDir: join(ref.dataDir, 'api-other'), databaseUrl: db.url, blobStore, secretKeyFile: other })).rejects.toThrow(
      /is not the secret key of this database .*every node of a farm needs the same key file/,
    );
  });
});
