// How many generations and publications may be open (queued or running) at once, per user and in
// all (issue 12, weakness 4): beyond it a new job is a 429 (the user's) or a 503 (the server's) with
// Retry-After, never an unbounded pile of builds. Call it inside the transaction that inserts the job.
import type { Ctx } from '../context';
import { ServiceError } from '../service-error';
import { isTerminal } from '../../model/job-state';

const RETRY_AFTER_SECONDS = '30';

function openJobs(ctx: Ctx, owner?: string): number {
  const open = (rows: Array<{ doc: { status: Parameters<typeof isTerminal>[0] } }>): number => rows.filter((r) => !isTerminal(r.doc.status)).length;
  return open(ctx.store.list('image', owner)) + open(ctx.store.list('pimage', owner));
}

export function assertJobRoom(ctx: Ctx, owner: string): void {
  const { jobsPerUser, jobsTotal } = ctx.limits;
  if (openJobs(ctx, owner) >= jobsPerUser) {
    throw new ServiceError(429, `${owner} already has ${jobsPerUser} generations or publications open: retry when one ends`, { 'Retry-After': RETRY_AFTER_SECONDS });
  }
  if (openJobs(ctx) >= jobsTotal) {
    throw new ServiceError(503, `the server already runs ${jobsTotal} generations or publications: retry later`, { 'Retry-After': RETRY_AFTER_SECONDS });
  }
}
