// The job queue on PostgreSQL (src/server/queue/pg-boss.ts) with a real PostgreSQL 15 on 127.0.0.1 and
// real pg-boss, its handlers in this process: an order exists only if the transaction that sent it
// commits; owners take turns; a cancel reaches the claim and fences its writes; an attempt that ends
// with its worker is retried, and the last one's record fails in words. What the queue did is read
// back from pg-boss's own tables with a plain connection.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ServerLog } from '../../src/server/context';
import { abandonedJob } from '../../src/server/jobs/recovery';
import { setStatus } from '../../src/server/jobs/status';
import type { BuildOrder } from '../../src/server/jobs/build-order';
import { PgBossQueue } from '../../src/server/queue/pg-boss';
import type { Claim, Handlers } from '../../src/server/queue/port';
import type { ImageDoc } from '../../src/server/store/docs';
import { openPgStore, type PgStore } from '../../src/server/store/postgres/store';
import { systemClock } from '../../src/server/ports';
import { freshDatabase, postgresUnavailable, sql, startPostgres } from '../support/postgres';

const skip = postgresUnavailable();
if (skip) console.warn(`SKIP pg-boss queue tests: ${skip}`);

const logged: string[] = [];
const log: ServerLog = { error: (_d, m) => void logged.push(m), warn: (_d, m) => void logged.push(m), info: (_d, m) => void logged.push(m) };

async function until<T>(fn: () => T | undefined | false | Promise<T | undefined | false>, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** An order as the API sends it, for an image record of `owner` (what the handlers here never build). */
const order = (imageId: number, owner: string): BuildOrder => ({ kind: 'build', imageId, owner } as unknown as BuildOrder);

describe.skipIf(skip !== undefined)('job queue on PostgreSQL (pg-boss)', () => {
  let base = '';
  const drops: Array<() => Promise<void>> = [];
  const open: Array<{ close(): Promise<void> }> = [];
  beforeAll(async () => {
    const s = await startPostgres();
    if ('skip' in s) throw new Error(s.skip);
    base = s.url;
  });
  afterEach(async () => {
    for (const o of open.splice(0).reverse()) await o.close();
  });
  afterAll(async () => {
    for (const d of drops) await d();
  });

  async function farm(): Promise<{ url: string; store: PgStore; queue: PgBossQueue }> {
    const db = await freshDatabase(base);
    drops.push(db.drop);
    const store = await openPgStore(db.url, systemClock);
    open.push(store);
    const queue = await PgBossQueue.open(db.url, store, { log, expireSeconds: 600 });
    open.push(queue);
    return { url: db.url, store, queue };
  }

  /** An image record and its order, sent in one transaction; `fail` rolls it back. */
  async function submit(store: PgStore, queue: PgBossQueue, owner: string, fail = false): Promise<{ id: number; job: string }> {
    const job = crypto.randomUUID();
    const doc: ImageDoc = { applianceId: 1, job, formatName: 'QCOW2', compress: false, installProfile: {}, revision: 0, status: { percentage: 0, message: 'queued' } };
    return store.tx(async (t) => {
      const r = await t.insert('image', { owner, parentId: 1, doc });
      await queue.submit(t, job, order(r.id, owner), { owner });
      if (fail) throw new Error('rolled back');
      return { id: r.id, job };
    });
  }

  const jobsOf = (url: string) => sql<{ id: string; state: string; retry_count: number; priority: number }>(url, "SELECT id::text, state::text, retry_count, priority FROM pgboss.job WHERE name = 'appliance-forge-builds'");

  const handlers = (build: Handlers['build'], abandoned: Handlers['abandoned'] = async () => undefined): Handlers => ({ build, publish: async () => undefined, abandoned });

  it('an order sent in a transaction that rolls back is no job; one that commits is', async () => {
    const { url, store, queue } = await farm();
    await expect(submit(store, queue, 'alice', true)).rejects.toThrow('rolled back');
    expect(await jobsOf(url)).toEqual([]);
    expect(await store.list('image')).toEqual([]);
    const { job } = await submit(store, queue, 'alice');
    expect((await jobsOf(url)).map((j) => [j.id, j.state])).toEqual([[job, 'created']]);
  });

  it('owners take turns: three builds of one owner and one of another are claimed A, B, A, A', async () => {
    const { store, queue } = await farm();
    const a = [await submit(store, queue, 'alice'), await submit(store, queue, 'alice'), await submit(store, queue, 'alice')];
    const b = await submit(store, queue, 'bob');
    const claimed: number[] = [];
    await queue.work(handlers(async (c) => {
      claimed.push(c.order.imageId);
      await c.fenced((t) => setStatus(t, 'image', c.order.imageId, { complete: true, percentage: 100 }), { last: true });
    }));
    await until(() => claimed.length === 4, 30_000, 'four claims');
    expect(claimed).toEqual([a[0]!.id, b.id, a[1]!.id, a[2]!.id]);
  });

  it('a cancel reaches the running claim (reason cancel) and its writes are fenced: nothing after it is written', async () => {
    const { store, queue } = await farm();
    const { id, job } = await submit(store, queue, 'alice');
    let claim: Claim<BuildOrder> | undefined;
    let release!: () => void;
    const ended = new Promise<void>((r) => (release = r));
    await queue.work(handlers(async (c) => {
      claim = c;
      expect(await c.fenced((t) => setStatus(t, 'image', id, { percentage: 30, message: 'building' }))).toBe(true);
      await new Promise<void>((resolve) => c.signal.addEventListener('abort', () => resolve(), { once: true }));
      // After the cancel, even a write that would be allowed by the record is refused by the fence.
      expect(await c.fenced(async (t) => t.update('image', id, { ...(await t.get('image', id))!.doc, revision: 99 }))).toBeUndefined();
      release();
    }));
    await until(() => claim, 30_000, 'the claim');
    const started = Date.now();
    await queue.cancel('image', job, 0);
    await ended;
    // pg-boss aborts a claim at its next heartbeat refresh (2 s here): within seconds.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(claim!.reason()).toBe('cancel');
    const doc = (await store.get('image', id))!.doc;
    expect(doc).toMatchObject({ revision: 0, status: { percentage: 30, message: 'building' } });
  });

  it('an attempt that ends with its worker (the handler throws) is retried, attempt by attempt; after the last, the record fails in words', async () => {
    const { store, queue } = await farm();
    const { id } = await submit(store, queue, 'alice');
    const attempts: number[] = [];
    await queue.work(
      handlers(
        async (c) => {
          attempts.push(c.attempt);
          throw new Error('this worker is stopping');
        },
        (o, n) => abandonedJob({ store, log, blobs: { backend: 's3', where: 's3://x' } as never, imaging: {} as never }, o, n),
      ),
    );
    const failed = await until(async () => ((await store.get('image', id))!.doc.status.error ? (await store.get('image', id))!.doc.status : undefined), 60_000, 'the record failed');
    expect(attempts).toEqual([0, 1, 2]);
    expect(failed.errorMessage).toMatch(/interrupted 3 times by the loss of the worker running it; try again/);
    expect(logged.some((l) => /handed back to the queue/.test(l))).toBe(true);
  });
});
