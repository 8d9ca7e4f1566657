// The job-is-finished rule, once for the client, the engine and the server (wire contract §8): a
// status is terminal when `error`, `cancelled` or `complete` is true, tested in that order.
import type { OpStatus } from './resources';

export type JobState = 'failed' | 'cancelled' | 'complete' | 'running';

/** Terminal state of a status, per §8: error, then cancelled, then complete. */
export function jobState(s: Pick<OpStatus, 'error' | 'cancelled' | 'complete'>): JobState {
  if (s.error === true) return 'failed';
  if (s.cancelled === true) return 'cancelled';
  if (s.complete === true) return 'complete';
  return 'running';
}

/** The job has ended, whichever way. */
export function isTerminal(s: Pick<OpStatus, 'error' | 'cancelled' | 'complete'>): boolean {
  return jobState(s) !== 'running';
}
