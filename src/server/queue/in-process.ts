// The JobQueue port in this process (the embedded default and `serve` without a database): an order
// starts as soon as the transaction that queued it commits; builds wait for one of `--max-builds` slots
// in fair turns between owners (build-slots.ts), publications start at once. One process owns every
// job, so a claim never goes stale and its fenced writes are plain transactions.
import { hostname } from 'node:os';
import { AbortedError, messageOf } from '../../errors';
import type { ServerLog } from '../context';
import type { Store } from '../store/port';
import { setStatus } from '../jobs/status';
import { BuildSlots } from './build-slots';
import { DEFAULT_MAX_BUILDS } from '../../model/limits';
import { recordOf, type AbortReason, type Claim, type Handlers, type JobKind, type JobQueue, type Order, type SubmitOptions } from './port';

interface Running {
  readonly kind: JobKind;
  readonly abort: (why: AbortReason) => void;
  readonly done: Promise<void>;
}

export class InProcessQueue implements JobQueue {
  readonly backend = 'in-process' as const;
  readonly worker = `${hostname()}:${process.pid}`;
  private handlers: Handlers | undefined;
  /** Orders queued before `work` (a server that builds nothing yet): started by it. */
  private readonly early: Array<{ job: string; order: Order; owner: string }> = [];
  private readonly running = new Map<string, Running>();
  private closed = false;
  readonly slots: BuildSlots;

  constructor(
    private readonly store: Store,
    private readonly log: ServerLog,
    maxBuilds = DEFAULT_MAX_BUILDS,
  ) {
    this.slots = new BuildSlots(maxBuilds);
  }

  async submit(t: Parameters<JobQueue['submit']>[0], job: string, order: Order, o: SubmitOptions): Promise<void> {
    // A plain data order, as a worker elsewhere would get it: what cannot cross as JSON fails here too.
    const copy = JSON.parse(JSON.stringify(order)) as Order;
    t.afterCommit(() => this.start(job, copy, o.owner));
  }

  async work(handlers: Handlers): Promise<void> {
    this.handlers = handlers;
    for (const e of this.early.splice(0)) this.start(e.job, e.order, e.owner);
  }

  private start(job: string, order: Order, owner: string): void {
    if (this.closed) return;
    const handlers = this.handlers;
    if (!handlers) {
      this.early.push({ job, order, owner });
      return;
    }
    const { kind, id } = recordOf(order);
    const ctrl = new AbortController();
    let reason: AbortReason | undefined;
    const abort = (why: AbortReason): void => {
      if (ctrl.signal.aborted) return;
      reason = why;
      ctrl.abort(new AbortedError(why === 'cancel' ? 'cancelled' : 'the server is stopping'));
    };
    const claim: Claim = {
      order,
      job,
      attempt: 0,
      worker: this.worker,
      signal: ctrl.signal,
      reason: () => reason,
      fenced: (body) => this.store.tx(body),
    };
    const run = async (): Promise<void> => {
      if (order.kind === 'publish') return handlers.publish(claim as Claim<typeof order>);
      const release = await this.slots.acquire(
        ctrl.signal,
        (ahead) => void this.store.tx((t) => setStatus(t, 'image', id, { message: `waiting for a build slot (${ahead + 1} build${ahead === 0 ? '' : 's'} ahead)` })).catch(() => undefined),
        owner,
      );
      try {
        await handlers.build(claim as Claim<typeof order>);
      } finally {
        release();
      }
    };
    const done = run()
      .catch(async (e: unknown) => {
        // Stopped with the server (or while waiting for a slot): nothing resumes it, so it ends as cancelled.
        if (reason === 'stop' || reason === 'cancel') {
          await this.store.tx((t) => setStatus(t, kind, id, { cancelled: true, message: 'cancelled' })).catch(() => undefined);
          return;
        }
        this.log.error({ err: e, job: `${kind}:${id}` }, `job ${kind}:${id} stopped with an error its handler did not record: ${messageOf(e)}`);
      })
      .finally(() => this.running.delete(job));
    this.running.set(job, { kind, abort, done });
  }

  async cancel(_kind: JobKind, job: string, maxWaitMs = 5000): Promise<void> {
    const j = this.running.get(job);
    if (!j) return;
    j.abort('cancel');
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, maxWaitMs)));
    try {
      await Promise.race([j.done, bound]);
    } finally {
      clearTimeout(timer);
    }
  }

  async describe(): Promise<string> {
    return `${this.running.size} job${this.running.size === 1 ? '' : 's'} in this process (${this.slots.waiting} waiting for a build slot)`;
  }

  async idle(): Promise<void> {
    for (let round = 0; round < 1000 && this.running.size > 0; round++) await Promise.all([...this.running.values()].map((j) => j.done));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const j of this.running.values()) j.abort('stop');
    await this.idle();
  }
}
