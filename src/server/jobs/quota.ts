// How many generations and publications may be open (queued or running) at once, per user and in
// all: beyond it a new job is a 429 (the user's) or a 503 (the server's) with
// Retry-After, never an unbounded pile of builds. Call it inside the transaction that inserts the job.
// Also what a user may keep (images per user: 403) and whether the disk has room for a build (507).
import { statfsSync } from 'node:fs';
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

/** A new image record past the user's quota is a 403: only deleting images makes room, so retrying does not help. */
export function assertImageRoom(ctx: Ctx, owner: string): void {
  const { imagesPerUser } = ctx.limits;
  if (ctx.store.list('image', owner).length >= imagesPerUser) {
    throw new ServiceError(403, `${owner} already has ${imagesPerUser} images, this server's limit per user: delete images you no longer need to generate another`);
  }
}

/**
 * A build writes at most about its disk size into the data folder (the finished image never exceeds
 * the disk, sparse or converted): refuse it (507) while less than that is free, before the disk fills.
 */
export function assertDiskRoom(ctx: Ctx, diskMiB: number): void {
  const fs = statfsSync(ctx.files.dataDir);
  const free = fs.bavail * fs.bsize;
  const need = diskMiB * 1024 * 1024;
  if (free < need) {
    throw new ServiceError(507, `the server has ${Math.floor(free / 1024 ** 2)} MiB of disk space free and an image of ${diskMiB} MiB needs up to that much: retry later, or ask for a smaller diskSize`);
  }
}
