// One waiter (style example 9): poll with a delay that grows from min to max with jitter, up to a
// deadline, abortable at any point. Job waits (jobs.ts) and retries (retry.ts) share its sleep.
import { AbortedError } from '../errors';

/** Resolve after `ms`, or reject with AbortedError as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(new AbortedError());
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new AbortedError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, Math.max(0, ms));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export interface WaitOptions {
  minDelayMs: number;
  maxDelayMs: number;
  /** Absolute time (ms since epoch) after which no further poll starts. */
  deadline: number;
  signal?: AbortSignal | undefined;
  /** Absolute time (ms since epoch) until which polls stay minDelayMs apart; the delay grows after it. */
  steadyUntil?: number | undefined;
  /** 0..1: each delay is drawn from [d·(1-jitter), d]. Default 0.2. */
  jitter?: number;
  random?: () => number;
  now?: () => number;
}

/** The delay before poll `n + 1` (n from 1): min · 2^(n-1), capped at max, with jitter. */
export function pollDelay(n: number, o: Pick<WaitOptions, 'minDelayMs' | 'maxDelayMs' | 'jitter'>, random: () => number): number {
  const d = Math.min(o.maxDelayMs, o.minDelayMs * 2 ** Math.min(n - 1, 30));
  const j = o.jitter ?? 0.2;
  return Math.round(d * (1 - j * random()));
}

export type WaitResult<T> = { done: true; value: T } | { done: false; last: T | undefined; reason: 'timeout' };

/**
 * Call `poll` until `isDone` holds or the deadline passes. Bounded: at most one poll per
 * `minDelayMs`, none after the deadline. Errors from `poll` propagate; abort rejects with AbortedError.
 */
export async function waitUntil<T>(poll: () => Promise<T>, isDone: (v: T) => boolean, o: WaitOptions): Promise<WaitResult<T>> {
  const random = o.random ?? Math.random;
  const now = o.now ?? Date.now;
  let last: T | undefined;
  for (let n = 1; ; ) {
    if (o.signal?.aborted) throw new AbortedError();
    last = await poll();
    if (isDone(last)) return { done: true, value: last };
    const left = o.deadline - now();
    if (left <= 0) return { done: false, last, reason: 'timeout' };
    const steady = o.steadyUntil !== undefined && now() < o.steadyUntil;
    await sleep(Math.min(left, pollDelay(steady ? 1 : n++, o, random)), o.signal);
  }
}
