// What stops jobs and removes what they made, for the services of every resource: cancel a job
// (the record says so at once, the queue stops its run), delete a publication with its Glance image,
// an image with its publications and blobs, every image of a template. Services call these; jobs
// never call services.
import { messageOf } from '../../errors';
import type { Ctx } from '../context';
import { ServiceError } from '../service-error';
import { imageFilePaths } from '../store/docs';
import type { Row } from '../store/port';
import type { JobKind } from '../queue/port';
import { publicationCredentials } from './publish';
import { setStatus } from './status';

/** Mark the job cancelled first (the answer already says so), then stop it and wait (bounded) for its run to end. */
export async function cancelJob(ctx: Ctx, kind: JobKind, r: Row<'image'> | Row<'pimage'>): Promise<void> {
  await ctx.store.tx((t) => setStatus(t, kind, r.id, { cancelled: true, message: 'cancelled' }));
  if (r.doc.job !== undefined) await ctx.queue.cancel(kind, r.doc.job);
}

/** Stop, delete from Glance (when published), then forget. A Glance failure → 502 and the record stays. */
export async function deletePublications(ctx: Ctx, rows: Array<Row<'pimage'>>): Promise<void> {
  for (const r of rows) {
    if (r.doc.job !== undefined) await ctx.queue.cancel('pimage', r.doc.job);
    const cur = await ctx.store.get('pimage', r.id);
    if (!cur) continue;
    if (cur.doc.cloudId) {
      try {
        await ctx.openstack.deleteGlanceImage({ ...publicationCredentials(ctx, cur), imageId: cur.doc.cloudId });
      } catch (e) {
        throw new ServiceError(502, `could not delete the image from the cloud: ${messageOf(e)}`);
      }
    }
    await ctx.store.remove('pimage', r.id);
  }
}

/** Cancel a running generation and wait (bounded) for its run to end; then the image's publications, record and blobs go. */
export async function deleteImage(ctx: Ctx, r: Row<'image'>): Promise<void> {
  if (r.doc.job !== undefined) await ctx.queue.cancel('image', r.doc.job);
  await deletePublications(ctx, (await ctx.store.list('pimage', r.owner)).filter((p) => p.doc.imageId === r.id));
  const cur = await ctx.store.get('image', r.id);
  await ctx.store.remove('image', r.id);
  for (const path of cur ? imageFilePaths(cur.doc) : []) await ctx.blobs.remove(path);
}

/** Used when a template is deleted: every image, its jobs and blobs go with it. */
export async function removeApplianceImages(ctx: Ctx, appliance: Row<'appliance'>): Promise<void> {
  for (const r of await ctx.store.list('image', appliance.owner, appliance.id)) await deleteImage(ctx, r);
}
