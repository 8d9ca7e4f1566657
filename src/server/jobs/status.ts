// Live status of a job (wire contract §8): `percentage` only grows (a retried job's progress starts
// again from where clients saw it, not from 0), terminal states are final, and progress writes are
// throttled so a chatty builder does not hammer the database.
import type { OpStatus } from '../../model/resources';
import type { StoreOps } from '../store/port';
import { isTerminal } from '../../model/job-state';
import type { JobKind } from '../queue/port';

export function initialStatus(message: string): OpStatus {
  return { cancelled: false, complete: false, error: false, message, percentage: 0 };
}

/** Apply `patch` to a running job's status (inside a transaction); false when the job is gone or already ended. */
export async function setStatus(t: StoreOps, kind: JobKind, id: number, patch: Partial<OpStatus>): Promise<boolean> {
  const r = await t.get(kind, id);
  if (!r || isTerminal(r.doc.status)) return false;
  const prev = r.doc.status;
  const status: OpStatus = { ...prev, ...patch, percentage: Math.max(prev.percentage ?? 0, patch.percentage ?? 0) };
  await t.update(kind, id, { ...r.doc, status });
  return true;
}

/**
 * A progress reporter that writes (through `write`) at most every `everyMs`, and whenever the
 * percentage moves; one write at a time, the latest patch winning over those that waited.
 */
export function throttled(write: (patch: Partial<OpStatus>) => Promise<unknown>, everyMs = 250): (patch: Partial<OpStatus>) => void {
  let last = 0;
  let lastPct = -1;
  let busy = false;
  let waiting: Partial<OpStatus> | undefined;
  const flush = (patch: Partial<OpStatus>): void => {
    busy = true;
    write(patch)
      .catch(() => undefined)
      .finally(() => {
        busy = false;
        const next = waiting;
        waiting = undefined;
        if (next) flush(next);
      });
  };
  return (patch) => {
    const now = Date.now();
    const pct = patch.percentage ?? lastPct;
    if (pct === lastPct && now - last < everyMs) return;
    last = now;
    lastPct = pct;
    if (busy) waiting = { ...waiting, ...patch, percentage: Math.max(waiting?.percentage ?? 0, patch.percentage ?? 0) };
    else flush(patch);
  };
}
