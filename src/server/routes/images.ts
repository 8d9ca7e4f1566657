// Machine images (wire contract §8): 201 with the image record and a background generation; at
// most one running generation per template and format (409); cancel; streamed download.
import type { DocumentOf, Image, InstallProfile, OpStatus } from '../../model/resources';
import type { Ctx } from '../context';
import { quoteEtag } from '../http/conditional';
import { NO_CONTENT, type FileResult, type ReqWith, type Routes } from '../http/handler';
import { page } from '../http/list';
import { generationInput, startGeneration } from '../jobs/generation';
import { assertJobRoom } from '../jobs/quota';
import { initialStatus, jobKey, setStatus } from '../jobs/status';
import { badRequest, conflict, notFound } from '../service-error';
import type { ImageDoc } from '../store/docs';
import { isTerminal } from '../../model/job-state';
import type { Row } from '../store/store';
import { uriOf } from '../../model/uris';
import { stamp, uris, type Located } from '../views';
import { checkInstallProfile, installProfileView } from '../install/profile';
import { ifMatch, owned } from './common';
import { deletePublications } from './publications';
import { targetFormatByName, targetFormatRecord } from './target-formats';

export function imageStatus(r: Row<'image'>): OpStatus {
  const ids = { uid: r.owner, aid: r.parentId!, itid: r.id };
  return stamp(r, { ...r.doc.status, uri: uriOf('machineImageStatus_get', ids), parentUri: uriOf('machineImage_get', ids) });
}

export function imageView(ctx: Ctx, r: Row<'image'>): Located<Image> {
  const d = r.doc;
  const ids = { uid: r.owner, aid: d.applianceId, itid: r.id };
  const uri = uriOf('machineImage_get', ids);
  const app = ctx.store.get('appliance', d.applianceId);
  const format = ctx.imaging.targetFormats.find((f) => f.name === d.formatName);
  const dist = app && ctx.catalog.distributions.find((x) => x.dbId === app.doc.distId);
  const f = d.file;
  return stamp(r, {
    ...(f ? { md5sum: f.md5, sha256sum: f.sha256, size: f.size, mimeType: f.mimeType, uploaded: true, uploadedTime: f.stored } : {}),
    status: imageStatus(r),
    parentUri: uris.appliance(r.owner, d.applianceId),
    compress: d.compress,
    ...(dist ? { distributionName: `${dist.name ?? ''} ${dist.version ?? ''}`.trim() } : {}),
    ...(f ? { downloadUri: uriOf('machineImage_downloadFile', { ...ids, fileName: f.fileName }), fileName: f.fileName, fileSize: f.size } : {}),
    ...(format ? { fileExtension: format.extension, targetFormat: targetFormatRecord(ctx, format) } : { targetFormat: { name: d.formatName } }),
    imageCreated: !!f,
    installProfile: installProfileView(d.installProfile),
    ...(app ? { name: app.doc.name, version: app.doc.version } : {}),
    revision: d.revision,
    statusUri: uriOf('machineImageStatus_get', ids),
    uri,
  });
}

function loadImage(ctx: Ctx, req: ReqWith<'uid' | 'aid' | 'itid'>): { appliance: Row<'appliance'>; image: Row<'image'> } {
  const appliance = owned(ctx, req, 'appliance', 'aid');
  return { appliance, image: owned(ctx, req, 'image', 'itid', appliance.id) };
}

/** 409 while a generation of the same template and format runs (wire contract §5). */
function assertNoRunning(ctx: Ctx, appliance: Row<'appliance'>, formatName: string): void {
  const busy = ctx.store.list('image', appliance.owner, appliance.id).find((i) => i.doc.formatName === formatName && !isTerminal(i.doc.status));
  if (busy) throw conflict(`a generation of ${formatName} is already running for this appliance (${uris.image(appliance.owner, appliance.id, busy.id)})`);
}

function assertGeneratable(ctx: Ctx, appliance: Row<'appliance'>): void {
  const profiles = ctx.store.list('osprofile', appliance.owner, appliance.id);
  if (profiles.length === 0) {
    throw badRequest('the appliance has no OS profile yet (POST …/osprofile first)');
  }
  const dist = ctx.catalog.distributions.find((x) => x.dbId === appliance.doc.distId);
  if (dist?.family === 'windows' || profiles.some((p) => p.doc.kind === 'WindowsProfile')) {
    throw badRequest(`images of a Windows template cannot be generated: this service builds Debian images only (distribution ${dist?.name ?? appliance.doc.distId} ${dist?.version ?? ''})`.trimEnd());
  }
}

/** The image's profile: the template's, with the fields the generation request gives replacing its own. */
async function imageProfile(ctx: Ctx, appliance: Row<'appliance'>, asked: InstallProfile | undefined): Promise<InstallProfile> {
  // Checked again even when nothing is asked: a profile stored under older rules (or limits) is refused here, not by the job.
  const stored = appliance.doc.installProfile ?? {};
  return (await checkInstallProfile({ ...stored, ...asked }, ctx.limits, stored)) ?? {};
}

function imageFile(ctx: Ctx, r: Row<'image'>, fileName?: string): FileResult {
  const f = r.doc.file;
  if (!f || !r.doc.status.complete || (fileName !== undefined && fileName !== f.fileName)) throw notFound('no generated file under this name');
  return { file: ctx.files.read(f.path), size: f.size, contentType: f.mimeType, fileName: f.fileName, etag: quoteEtag(f.sha256), lastModified: f.stored };
}

function statuses(rows: Array<Row<'image'>>): DocumentOf<'statuses'> {
  const items = rows.map(imageStatus);
  return { total: items.length, statuses: items };
}

/** Cancel a running job and wait for it to record its end. */
async function deleteImage(ctx: Ctx, r: Row<'image'>): Promise<void> {
  await ctx.jobs.cancelAndWait(jobKey('image', r.id));
  await deletePublications(ctx, ctx.store.list('pimage', r.owner).filter((p) => p.doc.imageId === r.id));
  const cur = ctx.store.get('image', r.id);
  ctx.store.remove('image', r.id);
  await ctx.files.remove(cur?.doc.file?.path);
}

/** Used when a template is deleted: every image, its jobs and files go with it. */
export async function removeApplianceImages(ctx: Ctx, appliance: Row<'appliance'>): Promise<void> {
  for (const r of ctx.store.list('image', appliance.owner, appliance.id)) await deleteImage(ctx, r);
}

export const imageRoutes = (ctx: Ctx) =>
  ({
    machineImage_getAll: (req) => {
      const appliance = owned(ctx, req, 'appliance', 'aid');
      const all = ctx.store.list('image', appliance.owner, appliance.id).map((r) => imageView(ctx, r));
      const { total, items } = page('image', all, req.query);
      return req.ok({ total, images: items });
    },

    machineImage_get: (req) => req.ok(imageView(ctx, loadImage(ctx, req).image)),

    machineImage_generate: async (req) => {
      const appliance = owned(ctx, req, 'appliance', 'aid');
      const { value: v } = req.body();
      const format = targetFormatByName(ctx, v.targetFormat?.name);
      assertGeneratable(ctx, appliance);
      const profile = await imageProfile(ctx, appliance, v.installProfile);
      const input = generationInput(ctx, appliance, format, profile);
      const d: ImageDoc = {
        applianceId: appliance.id,
        formatName: format.name,
        compress: v.compress ?? false,
        installProfile: profile,
        revision: appliance.doc.revision,
        status: initialStatus('queued'),
      };
      const row = ctx.store.tx(() => {
        // The profile check awaited: the template may have been deleted meanwhile.
        if (!ctx.store.get('appliance', appliance.id)) throw notFound(`no appliance ${appliance.id}`);
        assertNoRunning(ctx, appliance, format.name);
        assertJobRoom(ctx, appliance.owner);
        return ctx.store.insert('image', { owner: appliance.owner, parentId: appliance.id, doc: d });
      });
      startGeneration(ctx, row, input);
      return req.created(imageView(ctx, row));
    },

    machineImage_regenerate: async (req) => {
      const { appliance, image } = loadImage(ctx, req);
      if (!isTerminal(image.doc.status)) throw conflict('this image is still being generated');
      assertGeneratable(ctx, appliance);
      const format = targetFormatByName(ctx, image.doc.formatName);
      const input = generationInput(ctx, appliance, format, image.doc.installProfile);
      const old = image.doc.file?.path;
      const row = ctx.store.tx(() => {
        assertNoRunning(ctx, appliance, format.name);
        assertJobRoom(ctx, appliance.owner);
        const { file: _dropped, ...rest } = image.doc;
        return ctx.store.update('image', image.id, { ...rest, revision: appliance.doc.revision, status: initialStatus('queued') });
      });
      await ctx.files.remove(old);
      startGeneration(ctx, row, input);
      return req.ok(imageView(ctx, row));
    },

    machineImage_delete: async (req) => {
      const { image } = loadImage(ctx, req);
      ifMatch(req, imageView(ctx, image));
      await deleteImage(ctx, image);
      return NO_CONTENT;
    },

    machineImage_deleteAll: async (req) => {
      await removeApplianceImages(ctx, owned(ctx, req, 'appliance', 'aid'));
      return NO_CONTENT;
    },

    machineImageStatus_get: (req) => req.ok(imageStatus(loadImage(ctx, req).image)),

    machineImageStatus_getAll: (req) => {
      const appliance = owned(ctx, req, 'appliance', 'aid');
      return req.ok(statuses(ctx.store.list('image', appliance.owner, appliance.id)));
    },

    machineImageGeneration_cancel: async (req) => {
      const { image } = loadImage(ctx, req);
      // Mark first, so the answer already says cancelled; the job then stops and cleans up.
      setStatus(ctx, 'image', image.id, { cancelled: true, message: 'cancelled' });
      await ctx.jobs.cancelAndWait(jobKey('image', image.id));
      return req.ok(imageStatus(ctx.store.get('image', image.id)!));
    },

    machineImage_download: (req) => imageFile(ctx, loadImage(ctx, req).image),
    machineImage_downloadFile: (req) => imageFile(ctx, loadImage(ctx, req).image, req.params.fileName),

    userMachineImage_getAll: (req) => {
      const items = ctx.store.list('image', req.params.uid).map((r) => imageView(ctx, r));
      return req.ok({ total: items.length, images: items });
    },

    userMachineImageStatus_get: (req) => req.ok(statuses(ctx.store.list('image', req.params.uid))),
  }) satisfies Partial<Routes>;

