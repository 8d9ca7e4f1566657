// Live status of a job (wire contract §8): `percentage` only grows, terminal states are final, and
// progress writes are throttled so a chatty builder does not hammer SQLite.
import type { OpStatus } from '../../model/resources';
import type { Ctx } from '../context';
import { isTerminal } from '../../model/job-state';

export type JobKind = 'image' | 'pimage';

export const jobKey = (kind: JobKind, id: number): string => `${kind}:${id}`;

export function initialStatus(message: string): OpStatus {
  return { cancelled: false, complete: false, error: false, message, percentage: 0 };
}

/** Apply `patch` to a running job's status; false when the job is gone or already ended. */
export function setStatus(ctx: Ctx, kind: JobKind, id: number, patch: Partial<OpStatus>): boolean {
  return ctx.store.tx(() => {
    const r = ctx.store.get(kind, id);
    if (!r || isTerminal(r.doc.status)) return false;
    const prev = r.doc.status;
    const status: OpStatus = { ...prev, ...patch, percentage: Math.max(prev.percentage ?? 0, patch.percentage ?? 0) };
    ctx.store.update(kind, id, { ...r.doc, status });
    return true;
  });
}

/** A progress reporter that writes at most every `everyMs`, and whenever the percentage moves. */
export function throttled(ctx: Ctx, kind: JobKind, id: number, everyMs = 250): (patch: Partial<OpStatus>) => void {
  let last = 0;
  let lastPct = -1;
  return (patch) => {
    const now = Date.now();
    const pct = patch.percentage ?? lastPct;
    if (pct === lastPct && now - last < everyMs) return;
    last = now;
    lastPct = pct;
    setStatus(ctx, kind, id, patch);
  };
}
