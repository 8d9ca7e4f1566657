// The JobQueue port: image builds and publications are orders, plain data that survive a JSON round
// trip (no function, no host path: files by blob key), queued in the transaction that creates their
// record and claimed by whoever works: this process (queue/in-process.ts, the embedded default) or
// any worker of a farm (queue/pg-boss.ts on PostgreSQL). A claim's results are written fenced: only
// while the claim is still the job's current one, so a worker that lost its claim cannot report.
import type { StoreTx } from '../store/port';
import type { BuildOrder } from '../jobs/build-order';

export type JobKind = 'image' | 'pimage';

/** Publish image `imageId`'s file to Glance as publication `publicationId` (jobs/publish.ts). */
export interface PublishOrder {
  readonly kind: 'publish';
  readonly publicationId: number;
  readonly owner: string;
}

export type Order = BuildOrder | PublishOrder;

/** The record a kind of order reports on. */
export const recordOf = (o: Order): { kind: JobKind; id: number } => (o.kind === 'build' ? { kind: 'image', id: o.imageId } : { kind: 'pimage', id: o.publicationId });

/**
 * Why a claim's signal aborted: its job was cancelled (the record says so already), the claim lapsed
 * (another attempt owns the job: write nothing), or this process stops (the job goes back to the queue
 * where a worker elsewhere takes it; the embedded queue records it as cancelled).
 */
export type AbortReason = 'cancel' | 'lost' | 'stop';

/** What the queue hands a handler: the order, a signal that aborts on cancel, a lost claim or a stop, and its fenced writes. */
export interface Claim<O extends Order = Order> {
  readonly order: O;
  /** The job's id, which its record keeps: a record whose job is another was generated again meanwhile. */
  readonly job: string;
  /** Which attempt this is (0 the first): a worker that died mid-job leaves the next attempt to another. */
  readonly attempt: number;
  /** Who works it, for the log (`host:pid`). */
  readonly worker: string;
  readonly signal: AbortSignal;
  /** Why `signal` aborted; undefined while it has not. */
  reason(): AbortReason | undefined;
  /**
   * Runs `body` in a store transaction that commits only while this claim is the job's current one
   * (and, with `last`, ends the job in it). Undefined when the claim is stale: nothing was written.
   */
  fenced<T>(body: (t: StoreTx) => Promise<T>, o?: { last?: boolean }): Promise<T | undefined>;
}

export interface Handlers {
  build(claim: Claim<BuildOrder>): Promise<void>;
  publish(claim: Claim<PublishOrder>): Promise<void>;
  /** Every attempt of the order ended with the loss of its worker (`attempts` of them): its record must say so. */
  abandoned(order: Order, attempts: number): Promise<void>;
}

export type QueueBackend = 'in-process' | 'pg-boss';

export interface SubmitOptions {
  /** Who asked: an owner's builds wait in turn with other owners' (fewest open first). */
  readonly owner: string;
}

export interface JobQueue {
  readonly backend: QueueBackend;
  /** Who claims for this process (`host:pid`): the start line and the log name it. */
  readonly worker: string;
  /** Queues the order as job `job` (a UUID kept on its record); it exists only once `t` commits. */
  submit(t: StoreTx, job: string, order: Order, o: SubmitOptions): Promise<void>;
  /**
   * Stops job `job` of `kind`: a waiting one never runs, a running one's signal aborts (here at once, on a
   * worker elsewhere within seconds). Resolves once this process's run of it has ended, or `maxWaitMs` passed.
   */
  cancel(kind: JobKind, job: string, maxWaitMs?: number): Promise<void>;
  /** Starts claiming orders for these handlers (roles `all` and `worker`). */
  work(handlers: Handlers): Promise<void>;
  /** A short line for the start line and `GET /health`: waiting and running jobs, or why it cannot tell. */
  describe(): Promise<string>;
  /** Resolves once no job of this process runs or waits (tests). */
  idle(): Promise<void>;
  /** Stops claiming; running jobs of this process are aborted and their end awaited. */
  close(): Promise<void>;
}
