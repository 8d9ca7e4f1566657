// The PostgreSQL store (src/server/store/postgres/) on a real PostgreSQL 15 on 127.0.0.1 (../shared
// /postgres): the Store port's contract (store-contract.ts), and what a database shared by several
// nodes adds: transactions serialized across stores, another node's commit seen through a
// notification, the schema migrated once by stores that open at the same time, a lost listener, a
// node-wide lock. What the store wrote is read back with a plain connection, not with the store.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/server/ports';
import { openPgStore, type PgStore } from '../../src/server/store/postgres/store';
import { freshDatabase, postgresUnavailable, sql, startPostgres, withDatabase } from '../support/postgres';
import { storeContract } from './store-contract';

const clock: Clock = { now: () => new Date('2026-01-02T03:04:05.000Z') };
const skip = postgresUnavailable();
if (skip) console.warn(`SKIP PostgreSQL store tests: ${skip}`);

/** Polls `fn` every 10 ms until it holds, for at most `ms`. */
async function until(fn: () => boolean | Promise<boolean>, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe.skipIf(skip !== undefined)('store on PostgreSQL', () => {
  let base = '';
  beforeAll(async () => {
    const service = await startPostgres();
    // Where it can start, it must: a failure of the service fails these tests.
    if ('skip' in service) throw new Error(service.skip);
    base = service.url;
  });
  const stores: PgStore[] = [];
  const drops: Array<() => Promise<void>> = [];
  const fresh = async (): Promise<string> => {
    const db = await freshDatabase(base);
    drops.push(db.drop);
    return db.url;
  };
  const open = async (url: string): Promise<PgStore> => {
    const s = await openPgStore(url, clock);
    stores.push(s);
    return s;
  };
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
  });
  afterAll(async () => {
    for (const d of drops.splice(0)) await d();
  });

  storeContract(async () => {
    const url = await fresh();
    return { store: await open(url), again: () => open(url) };
  }, clock);

  it('keeps records in its own schema, docs as the text written, and says where it is without the password', async () => {
    const url = await fresh();
    const store = await open(url);
    const doc = { name: 'web', version: '1', revision: 0, description: 'é ✓ "quoted"' };
    const r = await store.insert('software', { owner: 'alice', uniqueKey: 'k', doc });
    const rows = await sql<{ kind: string; doc: string }>(url, 'SELECT kind, doc FROM appliance_forge.records WHERE id = $1', [r.id]);
    expect(rows).toEqual([{ kind: 'software', doc: JSON.stringify(doc) }]);
    const password = new URL(url).password;
    expect(password.length).toBeGreaterThan(0);
    expect(store.where).not.toContain(password);
    expect(store.where).toContain(new URL(url).pathname);
    await store.ping();
  });

  it('serializes transactions across stores of one database: two read-modify-writes at once both count', async () => {
    const url = await fresh();
    const [a, b] = [await open(url), await open(url)];
    const counter = await a.insert('software', { owner: 'a', doc: { name: 'n', version: '0', revision: 0 } });
    const bump = (s: PgStore) =>
      s.tx(async (t) => {
        const r = (await t.get('software', counter.id))!;
        // Hold the read across a real wait: without the lock, both would write revision 1.
        await new Promise((res) => setTimeout(res, 100));
        await t.update('software', counter.id, { ...r.doc, revision: r.doc.revision + 1 });
      });
    await Promise.all([bump(a), bump(b), bump(a)]);
    const rows = await sql<{ doc: string }>(url, 'SELECT doc FROM appliance_forge.records WHERE id = $1', [counter.id]);
    expect(JSON.parse(rows[0]!.doc).revision).toBe(3);
  });

  it('reads outside a transaction see only what committed', async () => {
    const url = await fresh();
    const store = await open(url);
    const r = await store.insert('software', { owner: 'a', doc: { name: 'n', version: '0', revision: 0 } });
    let release!: () => void;
    const held = new Promise<void>((res) => (release = res));
    let wrote!: () => void;
    const written = new Promise<void>((res) => (wrote = res));
    const tx = store.tx(async (t) => {
      await t.update('software', r.id, { ...r.doc, revision: 7 });
      wrote();
      await held;
    });
    try {
      await written;
      expect((await store.get('software', r.id))!.doc.revision).toBe(0);
    } finally {
      release();
      await tx;
    }
    expect((await store.get('software', r.id))!.doc.revision).toBe(7);
  });

  it("sees another node's commit: its generation moves within a bounded poll; its own writes move it at once", async () => {
    const url = await fresh();
    const [a, b] = [await open(url), await open(url)];
    const seenByB = b.generation();
    expect(b.generation()).toBe(seenByB);
    const before = a.generation();
    await a.insert('software', { owner: 'a', doc: { name: 'n', version: '0', revision: 0 } });
    expect(a.generation()).not.toBe(before);
    await until(() => b.generation() !== seenByB);
    // A writer outside any store (psql, another tool) is seen too: the trigger notifies every commit.
    const quiet = b.generation();
    await sql(url, "UPDATE appliance_forge.records SET modified = 'x'");
    await until(() => b.generation() !== quiet);
  });

  it('migrates a new database once when several stores open it at the same time', async () => {
    const url = await fresh();
    const opened = await Promise.all([open(url), open(url), open(url)]);
    expect(opened).toHaveLength(3);
    const versions = await sql<{ version: number }>(url, 'SELECT version FROM appliance_forge.schema_migrations ORDER BY version');
    expect(versions).toEqual([{ version: 1 }]);
    const triggers = await sql<{ n: string }>(url, "SELECT count(*)::text AS n FROM pg_trigger WHERE tgname IN ('users_changed', 'records_changed')");
    expect(triggers[0]!.n).toBe('2');
  });

  it('a lost listener makes every look a new generation until it is back; then values are kept again', async () => {
    const url = await fresh();
    const store = await open(url);
    const g = store.generation();
    expect(store.generation()).toBe(g);
    const killed = await sql<{ ok: boolean }>(url, "SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = 'appliance-forge listener' AND datname = current_database()");
    expect(killed.map((k) => k.ok)).toEqual([true]);
    await until(() => store.generation() !== store.generation());
    // Reconnected (after about a second): stable again, and notified again.
    await until(() => {
      const x = store.generation();
      return store.generation() === x;
    }, 15_000);
    const quiet = store.generation();
    await sql(url, "UPDATE appliance_forge.records SET modified = 'y'");
    await sql(url, "INSERT INTO appliance_forge.users (login, doc, created, modified) VALUES ('z', '{}', 'x', 'x')");
    await until(() => store.generation() !== quiet);
  });

  it('a node-wide lock is held by one store at a time, and freed when it closes', async () => {
    const url = await fresh();
    const [a, b] = [await open(url), await open(url)];
    expect(await a.holdLock('appliance-forge local blobs')).toBe(true);
    expect(await b.holdLock('appliance-forge local blobs')).toBe(false);
    expect(await b.holdLock('another name')).toBe(true);
    await a.close();
    expect(await b.holdLock('appliance-forge local blobs')).toBe(true);
  });

  it('a wrong password or an absent database is one error naming the database, never the password', async () => {
    const url = new URL(await fresh());
    const secret = url.password;
    url.password = 'not-the-password';
    const bad = await openPgStore(url.toString(), clock).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(Error);
    expect(String((bad as Error).message)).toMatch(/password authentication failed/);
    expect(String((bad as Error).message)).toContain(url.pathname);
    for (const text of [(bad as Error).message, (bad as Error).stack ?? '']) {
      expect(text).not.toContain('not-the-password');
      expect(text).not.toContain(secret);
    }
    const absent = await openPgStore(withDatabase(base, 'af_no_such_database'), clock).catch((e: unknown) => e);
    expect(String((absent as Error).message)).toMatch(/af_no_such_database/);
  });
});
