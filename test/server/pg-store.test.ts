// The PostgreSQL store (src/server/store/postgres/) on a real PostgreSQL 15 on 127.0.0.1 (../shared
// /postgres): the Store port's contract (store-contract.ts), and what a database shared by several
// nodes adds: transactions serialized across stores and joined by pg-boss through the executor,
// another node's commit seen through a notification, the schema migrated once by stores that open at
// the same time, a listener lost loudly or silently, a node-wide lock. What the store wrote is read
// back with a plain connection, not with the store.
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/server/ports';
import type { StoreTx } from '../../src/server/store/port';
import { LISTENER_NAME, openPgStore, type PgStore, type PgStoreOptions } from '../../src/server/store/postgres/store';
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

/** Until two looks in a row give one generation again (a listener is back), for at most 15 s. */
const steady = (store: { generation(): number }): Promise<void> =>
  until(() => {
    const x = store.generation();
    return store.generation() === x;
  }, 15_000);

/** A port nothing listens on (it was free a moment ago). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

/**
 * A TCP relay to the database (a stand-in for a NAT or a firewall between a node and it): `silence()`
 * makes every connection made so far drop what it carries, without closing, as one whose state a
 * firewall forgot; connections made afterwards work.
 */
async function relay(to: string): Promise<{ url: string; silence(): void; close(): Promise<void> }> {
  const target = new URL(to);
  const pairs = new Set<{ silent: boolean; sockets: Socket[] }>();
  const server = createServer((inbound) => {
    const outbound = connect(Number(target.port), target.hostname);
    const pair = { silent: false, sockets: [inbound, outbound] };
    pairs.add(pair);
    inbound.on('data', (d: Buffer) => {
      if (!pair.silent) outbound.write(d);
    });
    outbound.on('data', (d: Buffer) => {
      if (!pair.silent) inbound.write(d);
    });
    const end = (): void => {
      pairs.delete(pair);
      inbound.destroy();
      outbound.destroy();
    };
    for (const s of pair.sockets) s.on('close', end).on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = new URL(to);
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    silence: () => {
      for (const p of pairs) p.silent = true;
    },
    close: async () => {
      for (const p of pairs) for (const s of p.sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
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
  const open = async (url: string, o?: PgStoreOptions): Promise<PgStore> => {
    const s = await openPgStore(url, clock, o);
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
    expect(store.where).toBe(`postgres://forge@${new URL(url).host}${new URL(url).pathname}`);
    // Ids an integer column cannot hold match nothing, as in SQLite, rather than fail.
    expect(await store.get('software', 2 ** 31)).toBeUndefined();
    expect(await store.list('software', 'alice', 2 ** 31)).toEqual([]);
    await store.remove('software', 2 ** 40);
    expect(await sql(url, 'SELECT id FROM appliance_forge.records')).toEqual([{ id: r.id }]);
  });

  it('ping answers while the database does, and fails once the store is closed', async () => {
    const store = await open(await fresh());
    await expect(store.ping()).resolves.toBeUndefined();
    await store.close();
    await expect(store.ping()).rejects.toThrow();
  });

  it("the executor runs on the transaction's connection: what pg-boss writes through it commits or rolls back with the transaction", async () => {
    const url = await fresh();
    const store = await open(url);
    await sql(url, 'CREATE TABLE side (n integer)');
    const doc = { name: 'n', version: '1', revision: 0 };
    let kept: StoreTx | undefined;
    await expect(
      store.tx(async (t) => {
        const r = await t.insert('software', { owner: 'a', doc });
        // The transaction's own uncommitted row: the same connection and transaction.
        expect((await t.executor!.executeSql('SELECT id FROM appliance_forge.records')).rows).toEqual([{ id: r.id }]);
        await t.executor!.executeSql('INSERT INTO side (n) VALUES ($1)', [1]);
        expect(await sql(url, 'SELECT n FROM side')).toEqual([]);
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    expect(await sql(url, 'SELECT n FROM side')).toEqual([]);
    expect(await sql(url, 'SELECT id FROM appliance_forge.records')).toEqual([]);
    const r = await store.tx(async (t) => {
      kept = t;
      await t.executor!.executeSql('INSERT INTO side (n) VALUES ($1)', [2]);
      return t.insert('software', { owner: 'a', doc });
    });
    expect(await sql(url, 'SELECT n FROM side')).toEqual([{ n: 2 }]);
    expect(await sql(url, 'SELECT id FROM appliance_forge.records')).toEqual([{ id: r.id }]);
    await expect(kept!.executor!.executeSql('SELECT 1')).rejects.toThrow(/after its transaction ended/);
  });

  it('a copied row moves the id sequence forward only: an id another transaction holds uncommitted is not handed out again', async () => {
    const url = await fresh();
    const store = await open(url);
    const doc = (name: string) => ({ name, version: '1', revision: 0 });
    const [, gap, last] = [await store.insert('software', { owner: 'a', doc: doc('1') }), await store.insert('software', { owner: 'a', doc: doc('2') }), await store.insert('software', { owner: 'a', doc: doc('3') })];
    await store.remove('software', gap.id);
    let release!: () => void;
    const held = new Promise<void>((res) => (release = res));
    let took!: (id: number) => void;
    const taken = new Promise<number>((res) => (took = res));
    const tx = store.tx(async (t) => {
      took((await t.insert('software', { owner: 'a', doc: doc('uncommitted') })).id);
      await held;
    });
    let pending: number;
    try {
      pending = await taken;
      expect(pending).toBeGreaterThan(last.id);
      // Copied into the gap, below the last committed id: max(id) alone would move the sequence back.
      await store.insert('software', { owner: 'a', doc: doc('copied') }, undefined, { id: gap.id, created: 'c', modified: 'm' });
    } finally {
      release();
      await tx;
    }
    const next = await store.insert('software', { owner: 'a', doc: doc('next') });
    expect(next.id).toBeGreaterThan(pending);
    const rows = await sql<{ id: number; name: string }>(url, "SELECT id, doc::json->>'name' AS name FROM appliance_forge.records ORDER BY id");
    expect(rows.map((x) => x.name)).toEqual(['1', 'copied', '3', 'uncommitted', 'next']);
    expect(rows[1]!.id).toBe(gap.id);
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
    const beforeTx = b.generation();
    await a.tx(async (t) => void (await t.insert('software', { owner: 'a', doc: { name: 'm', version: '0', revision: 0 } })));
    await until(() => b.generation() !== beforeTx);
    // A writer outside any store (psql, another tool) is seen too: the trigger notifies every commit.
    const quiet = b.generation();
    await sql(url, "UPDATE appliance_forge.records SET modified = 'x'");
    await until(() => b.generation() !== quiet);
    const beforeTruncate = b.generation();
    await sql(url, 'TRUNCATE appliance_forge.records');
    await until(() => b.generation() !== beforeTruncate);
  });

  it('migrates a new database once when several stores open it at the same time', async () => {
    const url = await fresh();
    const opened = await Promise.all([open(url), open(url), open(url)]);
    expect(opened).toHaveLength(3);
    const versions = await sql<{ version: number }>(url, 'SELECT version FROM appliance_forge.schema_migrations ORDER BY version');
    expect(versions).toEqual([{ version: 1 }, { version: 2 }, { version: 3 }]);
    const triggers = await sql<{ name: string }>(url, "SELECT tgname AS name FROM pg_trigger WHERE tgrelid IN ('appliance_forge.records'::regclass, 'appliance_forge.users'::regclass) ORDER BY tgname");
    expect(triggers.map((t) => t.name)).toEqual(['records_changed', 'records_truncated', 'users_changed', 'users_truncated']);
    // A store opened later finds nothing to do, and works.
    const later = await open(url);
    expect(await sql(url, 'SELECT count(*)::int AS n FROM appliance_forge.schema_migrations')).toEqual([{ n: 3 }]);
    await later.insertUser('u', false, null, {});
    expect((await opened[0].getUser('u'))?.login).toBe('u');
  });

  it('a lost listener makes every look a new generation until it is back; then values are kept again', async () => {
    const url = await fresh();
    const logged: string[] = [];
    const store = await open(url, { log: { warn: (_d, m) => void logged.push(m), info: (_d, m) => void logged.push(m) } });
    const g = store.generation();
    expect(store.generation()).toBe(g);
    const killed = await sql<{ ok: boolean }>(url, 'SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()', [LISTENER_NAME]);
    expect(killed.map((k) => k.ok)).toEqual([true]);
    await until(() => store.generation() !== store.generation());
    // Reconnected (after about a second): stable again, and notified again.
    await steady(store);
    const quiet = store.generation();
    await sql(url, "UPDATE appliance_forge.records SET modified = 'y'");
    await sql(url, "INSERT INTO appliance_forge.users (login, doc, created, modified) VALUES ('z', '{}', 'x', 'x')");
    await until(() => store.generation() !== quiet);
    // The operator is told of both, in words without the password.
    expect(logged).toEqual([expect.stringMatching(/^lost the connection listening to postgres:\/\/forge@.*caches are off/), expect.stringMatching(/^listening to .* again$/)]);
    expect(logged.join('\n')).not.toContain(new URL(url).password);
  });

  it('a listener gone silent (no error, no end) is found by its check: no caching until a new connection listens', async () => {
    const url = await fresh();
    const between = await relay(url);
    try {
      const store = await open(between.url, { listenerCheckMs: 200 });
      const g = store.generation();
      await sql(url, "INSERT INTO appliance_forge.users (login, doc, created, modified) VALUES ('a', '{}', 'x', 'x')");
      await until(() => store.generation() !== g);
      const heard = store.generation();
      expect(store.generation()).toBe(heard);
      between.silence();
      // Its check goes unanswered within 2 × 200 ms: every look is then a new generation.
      await until(() => store.generation() !== store.generation());
      await steady(store);
      // The new connection hears commits.
      const quiet = store.generation();
      await sql(url, "UPDATE appliance_forge.users SET modified = 'y'");
      await until(() => store.generation() !== quiet);
    } finally {
      // The store's silenced pool connections end with the relay's sockets.
      await between.close();
    }
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
    expect((bad as Error).message).toContain(`postgres://forge@${url.host}${url.pathname}`);
    const absent = await openPgStore(withDatabase(base, 'af_no_such_database'), clock).catch((e: unknown) => e);
    expect(String((absent as Error).message)).toMatch(/af_no_such_database/);
    const port = await closedPort();
    const refused = await openPgStore(`postgres://forge:${secret}@127.0.0.1:${port}/forge`, clock).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(new RegExp(`^the database postgres://forge@127\\.0\\.0\\.1:${port}/forge cannot be used: .*ECONNREFUSED`));
    expect(`${(refused as Error).message}\n${(refused as Error).stack ?? ''}`).not.toContain(secret);
  });
});
