// What stops jobs and removes what they made, for the routes of every resource: cancel a job and
// wait on its promise (JobRunner.cancelAndWait), delete a publication with its Glance image, an
// image with its publications and file, every image of a template. Routes call these; jobs never
// call routes.
import { messageOf } from '../../errors';
import type { Ctx } from '../context';
import { ServiceError } from '../service-error';
import { imageFilePaths } from '../store/docs';
import type { Row } from '../store/store';
import { publicationCredentials } from './publication';
import { jobKey, setStatus, type JobKind } from './status';

/** Mark the job cancelled first (the answer already says so), then stop it and wait for it to record its end. */
export async function cancelJob(ctx: Ctx, kind: JobKind, id: number): Promise<void> {
  setStatus(ctx, kind, id, { cancelled: true, message: 'cancelled' });
  await ctx.jobs.cancelAndWait(jobKey(kind, id));
}

/** Stop, delete from Glance (when published), then forget. A Glance failure → 502 and the record stays. */
export async function deletePublications(ctx: Ctx, rows: Array<Row<'pimage'>>): Promise<void> {
  for (const r of rows) {
    await ctx.jobs.cancelAndWait(jobKey('pimage', r.id));
    const cur = ctx.store.get('pimage', r.id);
    if (!cur) continue;
    if (cur.doc.cloudId) {
      try {
        await ctx.openstack.deleteGlanceImage({ ...publicationCredentials(ctx, cur), imageId: cur.doc.cloudId });
      } catch (e) {
        throw new ServiceError(502, `could not delete the image from the cloud: ${messageOf(e)}`);
      }
    }
    ctx.store.remove('pimage', r.id);
  }
}

/** Cancel a running generation and wait for it to record its end; then the image's publications, record and file go. */
export async function deleteImage(ctx: Ctx, r: Row<'image'>): Promise<void> {
  await ctx.jobs.cancelAndWait(jobKey('image', r.id));
  await deletePublications(ctx, ctx.store.list('pimage', r.owner).filter((p) => p.doc.imageId === r.id));
  const cur = ctx.store.get('image', r.id);
  ctx.store.remove('image', r.id);
  for (const path of cur ? imageFilePaths(cur.doc) : []) await ctx.files.remove(path);
}

/** Used when a template is deleted: every image, its jobs and files go with it. */
export async function removeApplianceImages(ctx: Ctx, appliance: Row<'appliance'>): Promise<void> {
  for (const r of ctx.store.list('image', appliance.owner, appliance.id)) await deleteImage(ctx, r);
}
