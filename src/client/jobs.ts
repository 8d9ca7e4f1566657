// Waiting for generation and publication jobs (wire contract §8) with the one waiter (waiter.ts).
// When a job has ended is `jobState`'s rule (src/model/job-state.ts).
import { AbortedError, messageOf } from '../errors';
import { JobCancelledError, JobFailedError, WaitTimeoutError } from './errors';
import { jobState } from '../model/job-state';
import type { Image, OpStatus, PublishImage } from '../model/resources';
import { parseUri } from '../model/uris';
import { waitUntil } from './waiter';

export type JobTarget = Image | PublishImage | string;

export type Job =
  | { kind: 'generation'; uid: string; aid: string; itid: string }
  | { kind: 'publication'; uid: string; aid: string; itid: string; pitid: string };

export interface WaitForJobOptions {
  /** Give up after this long (WaitTimeoutError); the job itself goes on. Default 1 hour. */
  timeoutMs?: number;
  /** First delay between polls; it doubles up to `maxPollMs`. Default 1000. */
  pollMs?: number;
  /** Default 10 × pollMs, at most 30 s. */
  maxPollMs?: number;
  /** For this long from the start, polls stay pollMs apart (a job of seconds is seen soon after it ends); the delay grows after. Default 0. */
  steadyMs?: number;
  /** Abort: the job is cancelled on the service, then AbortedError is thrown. */
  signal?: AbortSignal | undefined;
  /** Every status read, the terminal one included. */
  onProgress?: (status: OpStatus) => void;
}

/** What the waiter needs from the client: a status read and a cancel, both by job. */
export interface JobCalls {
  status(job: Job, signal?: AbortSignal): Promise<OpStatus>;
  cancel(job: Job, signal?: AbortSignal): Promise<unknown>;
}

/** Which job a record or URI stands for; the parameters come back decoded, `fillPath` encodes them again. */
export function jobOf(target: JobTarget): Job {
  const rec = typeof target === 'string' ? { uri: target } : target;
  if (typeof rec !== 'object' || rec === null || typeof rec.uri !== 'string') {
    throw new TypeError('waitForJob: target must be an image or publishImage record with a uri, or its uri');
  }
  const named = parseUri(rec.uri, ['machineImagePublished_get', 'appliancePublication', 'machineImage_get']);
  switch (named?.shape) {
    case 'machineImagePublished_get':
      return { kind: 'publication', ...named.params };
    case 'appliancePublication': {
      // A publication made through `…/appliances/<aid>/pimages` names its image in `imageUri`.
      const imageUri = 'imageUri' in rec && typeof rec.imageUri === 'string' ? rec.imageUri : '';
      const img = parseUri(imageUri, ['machineImage_get']);
      if (!img) throw new TypeError(`waitForJob: publication ${rec.uri} has no imageUri naming its image`);
      return { kind: 'publication', ...named.params, itid: img.params.itid };
    }
    case 'machineImage_get':
      return { kind: 'generation', ...named.params };
    default:
      throw new TypeError(`waitForJob: ${JSON.stringify(rec.uri)} is neither an image nor a publication URI`);
  }
}

const CANCEL_TIMEOUT_MS = 15_000;

export async function waitForJob(calls: JobCalls, target: JobTarget, o: WaitForJobOptions = {}): Promise<OpStatus> {
  const job = jobOf(target);
  const timeoutMs = o.timeoutMs ?? 3_600_000;
  const minDelayMs = o.pollMs ?? 1000;
  const maxDelayMs = o.maxPollMs ?? Math.min(30_000, Math.max(minDelayMs, minDelayMs * 10));
  const steadyMs = o.steadyMs ?? 0;
  for (const [k, v] of Object.entries({ timeoutMs, pollMs: minDelayMs, maxPollMs: maxDelayMs, steadyMs })) {
    if (!Number.isFinite(v) || v < 0) throw new TypeError(`waitForJob: ${k} must be a non-negative number`);
  }
  if (minDelayMs < 1) throw new TypeError('waitForJob: pollMs must be at least 1');
  try {
    const r = await waitUntil(
      async () => {
        const s = await calls.status(job, o.signal);
        o.onProgress?.(s);
        return s;
      },
      (s) => jobState(s) !== 'running',
      { minDelayMs, maxDelayMs, deadline: Date.now() + timeoutMs, steadyUntil: Date.now() + steadyMs, signal: o.signal },
    );
    if (!r.done) throw new WaitTimeoutError(timeoutMs, r.last);
    const state = jobState(r.value);
    if (state === 'failed') throw new JobFailedError(r.value);
    if (state === 'cancelled') throw new JobCancelledError(r.value);
    return r.value;
  } catch (e) {
    if (!o.signal?.aborted) throw e;
    // Aborted by the caller: stop the work on the service too (§8 cancel), then report the abort.
    try {
      await calls.cancel(job, AbortSignal.timeout(CANCEL_TIMEOUT_MS));
    } catch (ce) {
      throw new AbortedError(`aborted; cancelling the ${job.kind} failed: ${messageOf(ce)}`);
    }
    throw new AbortedError(`aborted; ${job.kind} cancelled`);
  }
}
