// Background publication of a generated image to Glance (wire contract §8, OpenStack contract):
// `cloudId` and `published=true` when done, `errorMessage` when not.
import type { Ctx } from '../context';
import type { OpenStackCredentials, TargetFormatSpec } from '../ports';
import type { Row } from '../store/store';
import { isTerminal } from '../../model/job-state';
import { jobKey, setStatus, throttled } from './status';
import { failedJob } from './job-errors';

/** The OpenStack credentials of a publication, its password unsealed only here. */
export function publicationCredentials(ctx: Ctx, p: Row<'pimage'>): OpenStackCredentials {
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

export function startPublication(ctx: Ctx, pub: Row<'pimage'>, image: Row<'image'>, format: TargetFormatSpec): void {
  const id = pub.id;
  const file = image.doc.file!;
  ctx.jobs.start(jobKey('pimage', id), async (signal) => {
    const progress = throttled(ctx, 'pimage', id);
    try {
      setStatus(ctx, 'pimage', id, { message: 'publishing', percentage: 1, bytesLoaded: 0, bytesTotal: file.size });
      const { imageId } = await ctx.openstack.publishToGlance({
        ...publicationCredentials(ctx, pub),
        displayName: pub.doc.displayName,
        publicImage: pub.doc.publicImage,
        diskFormat: format.glanceDiskFormat ?? format.disk,
        file: ctx.files.abs(file.path),
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
      ctx.store.tx(() => {
        const r = ctx.store.get('pimage', id);
        if (!r) return;
        // Even when cancelled at the last moment the Glance image exists: keep its id so DELETE can remove it.
        const status = isTerminal(r.doc.status) ? r.doc.status : { ...r.doc.status, complete: true, published: true, percentage: 100, message: 'published', bytesLoaded: file.size };
        ctx.store.update('pimage', id, { ...r.doc, cloudId: imageId, status });
      });
    } catch (e) {
      if (signal.aborted) setStatus(ctx, 'pimage', id, { cancelled: true, message: 'cancelled' });
      else setStatus(ctx, 'pimage', id, failedJob(ctx, 'pimage', id, e, 'publication'));
    }
  });
}
