// Retry (style example 7; wire contract §5): pure predicates and a backoff function, table-tested,
// then the one layer that uses them. Idempotent operations (GET, PUT, DELETE) are retried on
// 429/500/502/503/504, resets and timeouts; a POST only when the connection was never made, i.e.
// when no byte of it can have reached the server (no duplicate create, no duplicate upload).
import { isForgeError } from '../errors';
import { ApiError, HttpError, TransportError } from './errors';
import { failureKind, type FailureKind } from './transport';
import { sleep } from './waiter';
import type { Handler } from './wire';

export interface RetryPolicy {
  /** Attempts in all, the first one included. Default 4; 1 turns retries off. */
  maxAttempts: number;
  /** First backoff ceiling; doubles per attempt. Default 200 ms. */
  baseDelayMs: number;
  /** Backoff ceiling. Default 10 s. */
  maxDelayMs: number;
  /** A longer `Retry-After` is cut to this. Default 30 s. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: Readonly<RetryPolicy> = { maxAttempts: 4, baseDelayMs: 200, maxDelayMs: 10_000, maxRetryAfterMs: 30_000 };

export const RETRY_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

export type Outcome = { status: number } | { failure: FailureKind };

/** Whether an attempt that ended this way may be made again. */
export function isRetryable(outcome: Outcome, idempotent: boolean): boolean {
  if ('status' in outcome) return idempotent && RETRY_STATUSES.has(outcome.status);
  if (outcome.failure === 'connect') return true; // nothing was sent
  return idempotent && (outcome.failure === 'reset' || outcome.failure === 'timeout');
}

/** `Retry-After` in milliseconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3); undefined if absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  if (!/[a-z]/i.test(v)) return undefined;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * Delay before attempt `attempt + 1` (attempt counts from 1): the server's `Retry-After` when it
 * gave one (capped), else "full jitter" exponential backoff, `random() * min(max, base * 2^(attempt-1))`.
 */
export function backoffDelay(attempt: number, policy: RetryPolicy, retryAfterMs: number | undefined, random: () => number): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, policy.maxRetryAfterMs);
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(attempt - 1, 30));
  return Math.floor(random() * ceiling);
}

/** The outcome an error stands for, or undefined when it is not one the retry layer looks at. */
export function outcomeOf(e: unknown): Outcome | undefined {
  if (e instanceof ApiError || e instanceof HttpError) return { status: e.status };
  if (isForgeError(e, TransportError)) return { failure: failureKind(e.cause) };
  return undefined;
}

export function retryPolicy(o: Partial<RetryPolicy> | false | undefined): RetryPolicy {
  if (o === false) return { ...DEFAULT_RETRY, maxAttempts: 1 };
  const p = { ...DEFAULT_RETRY, ...o };
  for (const [k, v] of Object.entries(p)) {
    if (!Number.isSafeInteger(v) || v < (k === 'maxAttempts' ? 1 : 0)) throw new TypeError(`retry.${k} must be a non-negative integer`);
  }
  if (p.maxAttempts > 20) throw new TypeError('retry.maxAttempts must be at most 20');
  return p;
}

export interface RetryHooks {
  random?: () => number;
  now?: () => number;
  /** Told before each wait: the attempt that failed, the delay and why. */
  onRetry?: (info: { attempt: number; delayMs: number; outcome: Outcome }) => void;
}

export function retry(policy: RetryPolicy, next: Handler, hooks: RetryHooks = {}): Handler {
  const random = hooks.random ?? Math.random;
  const now = hooks.now ?? Date.now;
  return async (call) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await next(call);
      } catch (e) {
        const outcome = outcomeOf(e);
        if (!outcome || attempt >= policy.maxAttempts || !isRetryable(outcome, call.idempotent) || call.signal?.aborted) throw e;
        const headers = e instanceof ApiError || e instanceof HttpError ? e.headers : {};
        const delayMs = backoffDelay(attempt, policy, parseRetryAfter(headers['retry-after'], now()), random);
        hooks.onRetry?.({ attempt, delayMs, outcome });
        await sleep(delayMs, call.signal);
      }
    }
  };
}
