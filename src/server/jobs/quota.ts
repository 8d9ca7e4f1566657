// How many generations and publications may be open (queued or running) at once, per user and in
// all: beyond it a new job is a 429 (the user's) or a 503 (the server's) with
// Retry-After, never an unbounded pile of builds. Call it inside the transaction that inserts the job.
// Also what a user may keep (images per user: 403) and whether the disk has room for a build (507).
import { statfsSync } from 'node:fs';
import type { Limits } from '../../model/limits';
import { ServiceError } from '../service-error';
import type { StoreOps } from '../store/port';
import { isTerminal } from '../../model/job-state';

const RETRY_AFTER_SECONDS = '30';

/** Generations and publications not ended, of `owner` or of everyone. */
export async function openJobs(t: StoreOps, owner?: string): Promise<number> {
  const open = (rows: Array<{ doc: { status: Parameters<typeof isTerminal>[0] } }>): number => rows.filter((r) => !isTerminal(r.doc.status)).length;
  const [images, pubs] = await Promise.all([t.list('image', owner), t.list('pimage', owner)]);
  return open(images) + open(pubs);
}

export async function assertJobRoom(t: StoreOps, limits: Limits, owner: string): Promise<void> {
  const { jobsPerUser, jobsTotal } = limits;
  if ((await openJobs(t, owner)) >= jobsPerUser) {
    throw new ServiceError(429, `${owner} already has ${jobsPerUser} generations or publications open: retry when one ends`, { 'Retry-After': RETRY_AFTER_SECONDS });
  }
  if ((await openJobs(t)) >= jobsTotal) {
    throw new ServiceError(503, `the server already runs ${jobsTotal} generations or publications: retry later`, { 'Retry-After': RETRY_AFTER_SECONDS });
  }
}

/** A new image record past the user's quota is a 403: only deleting images makes room, so retrying does not help. */
export async function assertImageRoom(t: StoreOps, limits: Limits, owner: string): Promise<void> {
  const { imagesPerUser } = limits;
  if ((await t.list('image', owner)).length >= imagesPerUser) {
    throw new ServiceError(403, `${owner} already has ${imagesPerUser} images, this server's limit per user: delete images you no longer need to generate another`);
  }
}

/**
 * A build writes at most about its disk size where its output goes (the finished image never exceeds
 * the disk, sparse or converted): refuse it (507) while less than that is free in `dir`, before the disk fills.
 */
export function assertDiskRoom(dir: string, diskMiB: number): void {
  const fs = statfsSync(dir);
  const free = fs.bavail * fs.bsize;
  const need = diskMiB * 1024 * 1024;
  if (free < need) {
    throw new ServiceError(507, `the server has ${Math.floor(free / 1024 ** 2)} MiB of disk space free and an image of ${diskMiB} MiB needs up to that much: retry later, or ask for a smaller diskSize`);
  }
}
