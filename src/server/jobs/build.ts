// The build of a machine image from its order (wire contract §8; docs/images.md "Real images"), wherever the
// order was claimed: the software files from their blobs, then the image library (the OS layer from the
// cache or mmdebstrap: 0–40 %, the disk stage: 40–99 %), then the file and its SBOMs as blobs and the
// record completed, in one write fenced on the claim: a worker that lost its claim leaves nothing. A
// failure the build itself reports (a bad package, the time limit) is the job's error, not retried.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Ctx } from '../context';
import type { StoredFile } from '../store/docs';
import { isTerminal } from '../../model/job-state';
import { MAX_TIMER_MS } from '../../model/limits';
import type { ImageFile } from '../../imaging';
import type { BlobStore } from '../blobs/port';
import type { Claim } from '../queue/port';
import type { BuildOrder, OrderFile } from './build-order';
import { failedJob, type JobStage } from './job-errors';
import { assertDiskRoom } from './quota';
import { storeSboms } from './sbom-files';
import { setStatus, throttled } from './status';

/** What a build needs of the server: no routes, no HTTP. */
export type BuildDeps = Pick<Ctx, 'store' | 'blobs' | 'imaging' | 'limits' | 'log'>;

export async function runBuild(ctx: BuildDeps, claim: Claim<BuildOrder>): Promise<void> {
  const { order, signal } = claim;
  const id = order.imageId;
  const progress = throttled((patch) => claim.fenced((t) => setStatus(t, 'image', id, patch)));
  // The build time limit aborts the same signal plumbing as a cancel: child processes are killed, files removed.
  const overtime = new AbortController();
  const build = AbortSignal.any([signal, overtime.signal]);
  const timer = setTimeout(() => overtime.abort(), Math.min(ctx.limits.buildTimeoutMs, MAX_TIMER_MS));
  const outFile = ctx.blobs.scratchPath(order.fileName);
  const inputs = new Inputs(ctx.blobs);
  // Blobs this attempt wrote: removed unless the record that names them commits.
  let written: string[] = [];
  let stage: JobStage = 'preparation';
  try {
    // The space free when the generation was asked for may be gone after its wait in the queue.
    assertDiskRoom(dirname(outFile), order.settings.diskMiB);
    const files = await inputs.fetch(order.files, build);
    const result = await ctx.imaging.build(
      { recipe: { os: order.os, disk: order.disk, compress: order.compress, reproducible: true, manifest: order.manifest }, settings: order.settings, files, outFile, imageName: order.fileName, owner: order.owner },
      build,
      (p) => {
        stage = p.stage;
        progress({ percentage: Math.min(99, Math.max(1, p.percentage)), message: p.message, bytesLoaded: p.bytesDone, bytesTotal: p.bytesTotal });
      },
    );
    build.throwIfAborted();
    stage = 'disk';
    const key = await ctx.blobs.adopt(outFile, 'images', order.fileName, build);
    written.push(key);
    const file: StoredFile = { path: key, fileName: order.fileName, size: result.fileSize, sha256: result.sha256, md5: result.md5, mimeType: 'application/octet-stream', stored: ctx.store.now() };
    const sbom = await storeSboms(ctx, result.sbom, order.fileName, build);
    written = [key, ...Object.values(sbom.files).flatMap((f) => (f ? [f.path] : []))];
    build.throwIfAborted();
    const kept = await claim.fenced(async (t) => {
      const r = await t.get('image', id);
      if (!r || isTerminal(r.doc.status) || (r.doc.job !== undefined && r.doc.job !== claim.job)) return false;
      await t.update('image', id, { ...r.doc, file, sbom, status: { ...r.doc.status, complete: true, percentage: 100, message: 'generated' } });
      return true;
    }, { last: true });
    if (kept) written = [];
  } catch (e) {
    const why = claim.reason();
    // A lost claim writes nothing (another attempt owns the record); a stop hands the job back to the queue.
    if (why === 'lost') return;
    if (why === 'stop') throw e;
    const patch = why === 'cancel' ? { cancelled: true, message: 'cancelled' } : failedJob(ctx, 'image', id, e, stage, overtime.signal.aborted ? overtimeWords(ctx.limits.buildTimeoutMs) : undefined);
    await claim.fenced((t) => setStatus(t, 'image', id, patch), { last: true });
  } finally {
    clearTimeout(timer);
    // Files first: once the status says the job ended, nothing of it is left (a record written meanwhile names none of these).
    await rm(outFile, { force: true }).catch(() => undefined);
    for (const key of written) await ctx.blobs.remove(key).catch((e: unknown) => ctx.log.warn({ err: e }, `a blob of an unfinished build could not be removed (${key}); the blob sweep removes it`));
    await inputs.close();
  }
}

function overtimeWords(limitMs: number): string {
  const minutes = limitMs / 60_000;
  const limit = minutes >= 1 ? `${Math.round(minutes)} minute${Math.round(minutes) === 1 ? '' : 's'}` : `${Math.round(limitMs / 1000)} seconds`;
  return `the build ran longer than this server's limit of ${limit} and was stopped; make the image smaller (fewer packages or files), or ask the server's operator to raise the limit`;
}

/** The order's software files as local files: the blob's own file where the store has one, else a copy in a private folder. */
class Inputs {
  private dir: string | undefined;
  constructor(private readonly blobs: BlobStore) {}

  async fetch(files: readonly OrderFile[], signal: AbortSignal): Promise<ImageFile[]> {
    const out: ImageFile[] = [];
    for (const [i, f] of files.entries()) {
      let source = this.blobs.localPath?.(f.key);
      if (source === undefined) {
        this.dir ??= await mkdtemp(join(tmpdir(), 'af-build-inputs-'));
        // Named by position: a user's file name never becomes a host path.
        source = join(this.dir, String(i));
        await this.blobs.fetch(f.key, source, signal);
      }
      out.push({ source, destination: f.destination, rights: f.rights, ownerGroup: f.ownerGroup });
    }
    return out;
  }

  async close(): Promise<void> {
    if (this.dir !== undefined) await rm(this.dir, { recursive: true, force: true }).catch(() => undefined);
  }
}
