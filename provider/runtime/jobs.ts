// The two kinds made by a service job (MachineImage: a generation; Publication: a publication) wait the
// same way: bounded by the `timeout` input, and a job that did not finish leaves nothing behind.
import type { Client } from '../../src/client';
import { WaitTimeoutError } from '../../src/client/errors';
import { isForgeError, messageOf } from '../../src/errors';
import type { Image, PublishImage } from '../../src/model/resources';
import { ProviderError } from './errors';
import type { Inputs } from './inputs';

/** Seconds; the default wait for a job. */
export const DEFAULT_TIMEOUT_S = 3600;

/** The `timeout` input: seconds, at most a week. */
export const checkTimeout = (r: Inputs): number | string | undefined =>
  r.integer('timeout', { min: 1, max: 7 * 24 * 3600, default: DEFAULT_TIMEOUT_S, unit: 'seconds' });

/** Waits for the job of `record`; on failure or timeout runs `undo` (errors ignored) and throws "`what` failed: why". */
export async function waitOrUndo(client: Client, record: Image | PublishImage, timeoutS: number, what: string, undo: () => Promise<unknown>): Promise<void> {
  try {
    await client.waitForJob(record, { timeoutMs: timeoutS * 1000, pollMs: 500, maxPollMs: 5000 });
  } catch (e) {
    const why = isForgeError(e, WaitTimeoutError) ? `did not finish within ${timeoutS} s (raise \`timeout\`)` : messageOf(e);
    await undo().catch(() => undefined);
    throw new ProviderError('job', `${what} failed: ${why}`, {}, { cause: e });
  }
}

/** A job record that did not fail and was not cancelled (for `adopt` and `read`). */
export const isAlive = (r: Image | PublishImage): boolean => r.status?.error !== true && r.status?.cancelled !== true;
