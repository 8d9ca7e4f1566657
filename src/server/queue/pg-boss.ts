// The JobQueue port on PostgreSQL with pg-boss (an optional peer dependency, loaded only here): the
// queue a farm's API nodes send to and its workers claim from (docs/server.md "Running a build farm").
// - An order is sent in the transaction that creates its record (pg-boss's `db` option on the store's
//   connection): a rollback leaves neither. Its job id is the record's `job`.
// - Claims take the best job with `FOR UPDATE SKIP LOCKED`; an owner's builds queue behind other
//   owners' (the priority is minus the owner's other open jobs), so fair turns hold across workers.
// - A claim heartbeats; a worker that dies (or stops) has its job retried by another once its heartbeat
//   lapses, at most RETRIES times, then the job's dead letter marks the record failed.
// - Every write of a claim is fenced: pg-boss's `touch` (or `complete`) of exactly this attempt, in the
//   same transaction, so a stale attempt writes nothing.
// - A cancel marks the job cancelled; the worker's signal aborts at its next heartbeat refresh.
import { hostname } from 'node:os';
import type { PgBoss as PgBossClass, Job } from 'pg-boss' with { 'resolution-mode': 'import' };
import { messageOf } from '../../errors';
import type { ServerLog } from '../context';
import { openJobs } from '../jobs/quota';
import type { Store, StoreTx } from '../store/port';
import type { BuildOrder } from '../jobs/build-order';
import { recordOf, type AbortReason, type Claim, type Handlers, type JobKind, type JobQueue, type Order, type PublishOrder, type SubmitOptions } from './port';

/** The queue of each kind of order, and where its jobs go once their retries are spent. */
const QUEUES = { image: 'appliance-forge-builds', pimage: 'appliance-forge-publications' } as const satisfies Record<JobKind, string>;
const deadLetter = (name: string): string => `${name}-dead`;

/** Attempts after the first, for jobs whose worker died or stopped (a failure the job reports is never retried). */
const RETRIES = 2;

export interface PgBossQueueOptions {
  readonly log: ServerLog;
  /** Jobs this process runs at once: builds (`--max-builds`), publications alike. */
  readonly concurrency?: number;
  /** How long a job may run before pg-boss fails it (the build time limit plus a margin). */
  readonly expireSeconds: number;
  /** A claim's heartbeat, in seconds (≥ 10): a dead worker's job is taken again about that long after its last beat. */
  readonly heartbeatSeconds?: number | undefined;
  /** How often pg-boss looks for lapsed claims (5 s here: about a minute by default). */
  readonly superviseSeconds?: number | undefined;
  /** The name this process works under in the log and `GET /health` (default `host:pid`). */
  readonly worker?: string;
}

/** pg-boss's answer to a fenced call: how many jobs it changed. */
const affected = (r: unknown): number => (r as { affected?: number }).affected ?? 0;

/** Thrown inside a fenced transaction to roll it back; never leaves this module. */
class StaleClaim extends Error {}

export class PgBossQueue implements JobQueue {
  readonly backend = 'pg-boss' as const;
  readonly worker: string;
  private readonly running = new Map<string, { abort(why: AbortReason): void; done: Promise<void> }>();
  private stopping = false;

  private constructor(
    private readonly boss: PgBossClass,
    private readonly store: Store,
    private readonly o: PgBossQueueOptions,
  ) {
    this.worker = o.worker ?? `${hostname()}:${process.pid}`;
  }

  /** Starts pg-boss on the database (its schema installed or migrated once, under its own lock) and the queues. */
  static async open(url: string, store: Store, o: PgBossQueueOptions): Promise<PgBossQueue> {
    const { PgBoss } = await import('pg-boss');
    const supervise = o.superviseSeconds ?? 5;
    const boss = new PgBoss({
      connectionString: url,
      application_name: 'appliance-forge queue',
      max: 4,
      superviseIntervalSeconds: supervise,
      monitorIntervalSeconds: supervise,
      // A sent job wakes a waiting worker at once (NOTIFY); polling stays as the floor.
      useListenNotify: true,
    });
    boss.on('error', (e: unknown) => o.log.error({ err: e }, `job queue: ${messageOf(e)}`));
    await boss.start();
    const heartbeatSeconds = Math.max(10, o.heartbeatSeconds ?? 10);
    for (const name of Object.values(QUEUES)) {
      await boss.createQueue(deadLetter(name));
      const options = { retryLimit: RETRIES, retryDelay: 0, expireInSeconds: o.expireSeconds, deadLetter: deadLetter(name), notify: true };
      await boss.createQueue(name, { ...options, heartbeatSeconds });
      // A queue made by an older start keeps its settings until updated (createQueue leaves it as it is).
      await boss.updateQueue(name, options);
    }
    return new PgBossQueue(boss, store, o);
  }

  async submit(t: StoreTx, job: string, order: Order, o: SubmitOptions): Promise<void> {
    if (!t.executor) throw new Error('the pg-boss queue needs a PostgreSQL store transaction');
    const { kind } = recordOf(order);
    // Fewest open jobs first: the owner's own new record counts among its open jobs already.
    const priority = kind === 'image' ? 1 - (await openJobs(t, o.owner)) : 0;
    await this.boss.send(QUEUES[kind], order as object, { id: job, priority, db: t.executor });
  }

  async work(handlers: Handlers): Promise<void> {
    const concurrency = Math.max(1, this.o.concurrency ?? 1);
    const options = { localConcurrency: concurrency, pollingIntervalSeconds: 1, notifyPollingIntervalSeconds: 5, heartbeatRefreshSeconds: 2 };
    await this.boss.work<BuildOrder>(QUEUES.image, options, async ([job]) => this.run(QUEUES.image, job!, (c) => handlers.build(c as Claim<BuildOrder>)));
    await this.boss.work<PublishOrder>(QUEUES.pimage, options, async ([job]) => this.run(QUEUES.pimage, job!, (c) => handlers.publish(c as Claim<PublishOrder>)));
    for (const kind of ['image', 'pimage'] as const) {
      await this.boss.work<Order>(deadLetter(QUEUES[kind]), { pollingIntervalSeconds: 2 }, async ([job]) => handlers.abandoned(job!.data, RETRIES + 1));
    }
  }

  /** Runs a claimed job; a throw hands it back to pg-boss (retried by another attempt). */
  private async run(name: string, job: Job<Order>, handle: (c: Claim) => Promise<void>): Promise<void> {
    const attempt = { id: job.id, retryCount: job.retryCount };
    const ctrl = new AbortController();
    let reason: AbortReason | undefined;
    let ended = false;
    const abort = (why: AbortReason): void => {
      if (ctrl.signal.aborted) return;
      reason = why;
      ctrl.abort(new Error(why === 'cancel' ? 'cancelled' : why === 'stop' ? 'this worker is stopping' : 'the claim on the job lapsed'));
    };
    // pg-boss aborts job.signal on a cancel and on a lapsed claim alike (and after a normal return): the job's row says which.
    job.signal.addEventListener('abort', () => {
      if (ended) return;
      void this.boss
        .findJobs(name, { id: job.id })
        .then((rows) => abort(rows[0]?.state === 'cancelled' ? 'cancel' : 'lost'))
        .catch(() => abort('lost'));
    }, { once: true });
    if (this.stopping) abort('stop');
    const claim: Claim = {
      order: job.data,
      job: job.id,
      attempt: job.retryCount,
      worker: this.worker,
      signal: ctrl.signal,
      reason: () => reason,
      fenced: async (body, o) => {
        try {
          return await this.store.tx(async (t) => {
            const fence = o?.last ? await this.boss.complete(name, attempt, null, { db: t.executor! }) : await this.boss.touch(name, attempt, { db: t.executor! });
            if (affected(fence) === 0) throw new StaleClaim();
            return body(t);
          });
        } catch (e) {
          if (e instanceof StaleClaim) return undefined;
          throw e;
        }
      },
    };
    const { kind, id } = recordOf(job.data);
    this.o.log.info({ job: job.id, record: `${kind}:${id}`, attempt: job.retryCount }, `job ${kind}:${id} claimed by ${this.worker} (attempt ${job.retryCount + 1})`);
    const done = handle(claim).finally(() => {
      ended = true;
      this.running.delete(job.id);
    });
    done.then(
      () => this.o.log.info({ job: job.id, record: `${kind}:${id}` }, `job ${kind}:${id} ended on ${this.worker}`),
      (e: unknown) => this.o.log.warn({ job: job.id, record: `${kind}:${id}`, err: e }, `job ${kind}:${id} handed back to the queue by ${this.worker}: ${messageOf(e)}`),
    );
    this.running.set(job.id, { abort, done: done.then(() => undefined, () => undefined) });
    await done;
  }

  async cancel(kind: JobKind, job: string, maxWaitMs = 5000): Promise<void> {
    await this.boss.cancel(QUEUES[kind], job).catch((e: unknown) => this.o.log.warn({ err: e }, `job ${job} could not be cancelled in the queue: ${messageOf(e)}`));
    // A run of this process ends at once; one elsewhere at its next heartbeat refresh (its blobs are its own to remove).
    const here = this.running.get(job);
    if (!here) return;
    here.abort('cancel');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([here.done, new Promise<void>((resolve) => (timer = setTimeout(resolve, maxWaitMs)))]);
    clearTimeout(timer);
  }

  async describe(): Promise<string> {
    const open = await openJobs(this.store).catch(() => undefined);
    return `PostgreSQL (pg-boss): ${open ?? '?'} open job(s) in all, ${this.running.size} running in this process`;
  }

  /** Until no record waits for a job and none runs here (tests; bounded by ten minutes). */
  async idle(): Promise<void> {
    const end = Date.now() + 600_000;
    while (Date.now() < end) {
      if (this.running.size === 0 && (await openJobs(this.store)) === 0) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async close(): Promise<void> {
    this.stopping = true;
    // Running jobs go back to the queue (their handlers throw on 'stop'), where another worker takes them.
    for (const r of this.running.values()) r.abort('stop');
    await Promise.all([...this.running.values()].map((r) => r.done));
    await this.boss.stop({ graceful: true, timeout: 10_000 });
  }
}
