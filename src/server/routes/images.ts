// Machine images (wire contract §8): 201 with the image record and a background generation; at
// most one running generation per template and format (409); cancel; streamed download.
import type { DocumentOf, InstallProfile } from '../../model/resources';
import type { Ctx } from '../context';
import { quoteEtag } from '../http/conditional';
import { NO_CONTENT, type FileResult, type ReqWith, type Routes } from '../http/handler';
import { page } from '../http/list';
import { generationInput, startGeneration } from '../jobs/generation';
import { assertDiskRoom, assertImageRoom, assertJobRoom } from '../jobs/quota';
import { cancelJob, deleteImage, removeApplianceImages } from '../jobs/removal';
import { initialStatus } from '../jobs/status';
import { badRequest, conflict, notFound } from '../service-error';
import { imageFilePaths, type ImageDoc } from '../store/docs';
import { isTerminal } from '../../model/job-state';
import type { Row } from '../store/store';
import { imageStatus, imageView } from '../views/image';
import { uris } from '../uris';
import { checkInstallProfile } from '../install/profile';
import { ifMatch, owned } from './common';
import { targetFormatByName } from '../views/target-format';
import { SBOM_FORMATS, sbomFormat } from '../../model/sbom';

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

/** An image's SBOM (extension route): 404 for an unknown format, an image not generated, or one made before SBOMs were kept. */
function sbomFile(ctx: Ctx, r: Row<'image'>, format: string): FileResult {
  const kind = sbomFormat(format);
  const f = kind && r.doc.status.complete ? r.doc.sbom?.files[kind.id] : undefined;
  if (!f) throw notFound(`no SBOM ${JSON.stringify(format)} for this image (formats: ${SBOM_FORMATS.map((x) => x.id).join(', ')})`);
  return { file: ctx.files.read(f.path), size: f.size, contentType: f.mimeType, fileName: f.fileName, etag: quoteEtag(f.sha256), lastModified: f.stored };
}

function statuses(rows: Array<Row<'image'>>): DocumentOf<'statuses'> {
  const items = rows.map(imageStatus);
  return { total: items.length, statuses: items };
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
      assertDiskRoom(ctx, input.settings.diskMiB);
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
        assertImageRoom(ctx, appliance.owner);
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
      assertDiskRoom(ctx, input.settings.diskMiB);
      const old = imageFilePaths(image.doc);
      const row = ctx.store.tx(() => {
        assertNoRunning(ctx, appliance, format.name);
        assertJobRoom(ctx, appliance.owner);
        const { file: _dropped, sbom: _sbom, ...rest } = image.doc;
        return ctx.store.update('image', image.id, { ...rest, revision: appliance.doc.revision, status: initialStatus('queued') });
      });
      for (const path of old) await ctx.files.remove(path);
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
      await cancelJob(ctx, 'image', image.id);
      return req.ok(imageStatus(ctx.store.get('image', image.id)!));
    },

    machineImage_download: (req) => imageFile(ctx, loadImage(ctx, req).image),
    machineImage_downloadFile: (req) => imageFile(ctx, loadImage(ctx, req).image, req.params.fileName),
    machineImageSbom_download: (req) => sbomFile(ctx, loadImage(ctx, req).image, req.params.format),

    userMachineImage_getAll: (req) => {
      const items = ctx.store.list('image', req.params.uid).map((r) => imageView(ctx, r));
      return req.ok({ total: items.length, images: items });
    },

    userMachineImageStatus_get: (req) => req.ok(statuses(ctx.store.list('image', req.params.uid))),
  }) satisfies Partial<Routes>;

