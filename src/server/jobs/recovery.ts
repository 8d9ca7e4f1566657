// What a start of the embedded server (one process owns every job) does first: jobs that were running
// when it stopped cannot resume and end as errors, never stuck; blobs that no record names are swept.
// A farm does neither at an API node's start: its queue gives a dead worker's job to another, and its
// sweep keeps blobs younger than a grace period (a write whose record is not committed yet).
import { isTerminal } from '../../model/job-state';
import type { OpStatus } from '../../model/resources';
import { imageFilePaths } from '../store/docs';
import type { Store, StoreOps } from '../store/port';
import type { Ctx } from '../context';
import { recordOf, type Order } from '../queue/port';
import { failedJob } from './job-errors';
import { setStatus } from './status';

export const INTERRUPTED = 'interrupted by a server restart';

/** Closes the jobs a stopped process left open; returns how many. */
export async function closeInterruptedJobs(store: Store): Promise<number> {
  return store.tx(async (t) => {
    let n = 0;
    for (const kind of ['image', 'pimage'] as const) {
      for (const r of await t.list(kind)) {
        if (isTerminal(r.doc.status)) continue;
        const status: OpStatus = { ...r.doc.status, error: true, errorMessage: INTERRUPTED, message: INTERRUPTED };
        await t.update(kind, r.id, { ...r.doc, status });
        n++;
      }
    }
    return n;
  });
}

/** Every blob key a record names: uploads, images and their SBOMs. */
export async function liveBlobKeys(store: StoreOps): Promise<Set<string>> {
  const out = new Set<string>();
  for (const r of await store.list('artifact')) if (r.doc.file) out.add(r.doc.file.path);
  for (const r of await store.list('image')) for (const p of imageFilePaths(r.doc)) out.add(p);
  return out;
}

/** An order whose every attempt ended with the loss of its worker (queue/port.ts Handlers.abandoned): its record fails, in words. */
export async function abandonedJob(ctx: Pick<Ctx, 'store' | 'log' | 'blobs' | 'imaging'>, order: Order, attempts: number): Promise<void> {
  const { kind, id } = recordOf(order);
  const what = kind === 'image' ? 'the build' : 'the publication';
  const words = `${what} was interrupted ${attempts} times by the loss of the worker running it; try again, and if it happens again tell the server's operator`;
  const patch = failedJob(ctx, kind, id, new Error(`${what} lost its worker ${attempts} times`), kind === 'image' ? 'preparation' : 'publication', words);
  await ctx.store.tx((t) => setStatus(t, kind, id, patch));
}
