// The publication of a generated image to Glance from its order (wire contract §8, OpenStack
// contract), wherever the order was claimed: `cloudId` and `published=true` when done, `errorMessage`
// when not. The Glance image's id is the record's own (chosen when it was asked for), so that an
// attempt after a lost one finds what the first made: finished, it is kept; half-made, it is replaced.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Ctx } from '../context';
import type { OpenStackCredentials } from '../ports';
import type { Row } from '../store/port';
import { isTerminal } from '../../model/job-state';
import type { Claim, PublishOrder } from '../queue/port';
import { failedJob } from './job-errors';
import { setStatus, throttled } from './status';

export type PublishDeps = Pick<Ctx, 'store' | 'blobs' | 'box' | 'imaging' | 'openstack' | 'log'>;

/** The OpenStack credentials of a publication, its password unsealed only here. */
export function publicationCredentials(ctx: Pick<Ctx, 'box'>, p: Row<'pimage'>): OpenStackCredentials {
  const a = p.doc.account;
  return {
    keystoneUrl: a.keystoneUrl ?? '',
    glanceUrl: a.glanceUrl || undefined,
    login: a.login ?? '',
    password: p.secret ? ctx.box.open(p.secret) : '',
    domain: p.doc.keystoneDomain,
    project: p.doc.keystoneProject,
  };
}

export async function runPublish(ctx: PublishDeps, claim: Claim<PublishOrder>): Promise<void> {
  const id = claim.order.publicationId;
  const { signal } = claim;
  const progress = throttled((patch) => claim.fenced((t) => setStatus(t, 'pimage', id, patch)));
  let scratch: string | undefined;
  try {
    const pub = await ctx.store.get('pimage', id);
    if (!pub || isTerminal(pub.doc.status)) return;
    const image = await ctx.store.get('image', pub.doc.imageId);
    const file = image?.doc.file;
    if (!image || !file) throw new Error(`the image of publication ${id} has no file any more`);
    const format = ctx.imaging.targetFormats.find((f) => f.name === image.doc.formatName);
    if (!format) throw new Error(`the image's format ${image.doc.formatName} is not one of this server's`);
    await claim.fenced((t) => setStatus(t, 'pimage', id, { message: 'publishing', percentage: 1, bytesLoaded: 0, bytesTotal: file.size }));
    let path = ctx.blobs.localPath?.(file.path);
    if (path === undefined) {
      scratch = await mkdtemp(join(tmpdir(), 'af-publish-'));
      path = join(scratch, 'image');
      await ctx.blobs.fetch(file.path, path, signal);
    }
    const { imageId } = await ctx.openstack.publishToGlance({
      ...publicationCredentials(ctx, pub),
      imageId: pub.doc.glanceId,
      displayName: pub.doc.displayName,
      publicImage: pub.doc.publicImage,
      diskFormat: format.glanceDiskFormat ?? format.disk,
      file: path,
      size: file.size,
      sha256: file.sha256,
      signal,
      onProgress: (p) =>
        progress({
          bytesLoaded: p.bytesLoaded,
          bytesTotal: p.bytesTotal,
          message: p.message,
          percentage: p.bytesTotal > 0 ? Math.min(99, Math.floor((p.bytesLoaded / p.bytesTotal) * 100)) : 1,
        }),
    });
    const kept = await claim.fenced(async (t) => {
      const r = await t.get('pimage', id);
      if (!r) return false;
      // Even when cancelled at the last moment the Glance image exists: keep its id so DELETE can remove it.
      const status = isTerminal(r.doc.status) ? r.doc.status : { ...r.doc.status, complete: true, published: true, percentage: 100, message: 'published', bytesLoaded: file.size };
      await t.update('pimage', id, { ...r.doc, cloudId: imageId, status });
      return true;
    }, { last: true });
    // The publication was deleted while this upload ran (a DELETE does not wait for a worker elsewhere):
    // nothing names the Glance image any more, so it goes too. (A stale claim leaves it to the current attempt.)
    if (kept === false) {
      await ctx.openstack.deleteGlanceImage({ ...publicationCredentials(ctx, pub), imageId }).catch((e: unknown) =>
        ctx.log.warn({ err: e }, `the Glance image ${imageId} of deleted publication ${id} could not be removed`),
      );
    }
  } catch (e) {
    const why = claim.reason();
    if (why === 'lost') return;
    if (why === 'stop') throw e;
    const patch = why === 'cancel' ? { cancelled: true, message: 'cancelled' } : failedJob(ctx, 'pimage', id, e, 'publication');
    await claim.fenced((t) => setStatus(t, 'pimage', id, patch), { last: true });
  } finally {
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true }).catch(() => undefined);
  }
}
