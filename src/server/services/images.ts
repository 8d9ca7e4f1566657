// Machine images (wire contract §8): 201 with the image record and its generation queued as an order;
// at most one running generation per template and format (409); cancel; streamed download.
import { randomUUID } from 'node:crypto';
import type { Image, InstallProfile, OpStatus } from '../../model/resources';
import type { Ctx } from '../context';
import { quoteEtag } from '../http/conditional';
import type { FileResult } from '../http/handler';
import { buildOrder } from '../jobs/build-order';
import { assertDiskRoom, assertImageRoom, assertJobRoom } from '../jobs/quota';
import { cancelJob, deleteImage, removeApplianceImages } from '../jobs/removal';
import { initialStatus } from '../jobs/status';
import { badRequest, conflict, notFound } from '../service-error';
import { imageFilePaths, type ImageDoc } from '../store/docs';
import { isTerminal } from '../../model/job-state';
import type { Row, StoreOps, StoreTx } from '../store/port';
import { imageStatus, imageView } from '../views/image';
import type { Located } from '../views/stamp';
import { uris } from '../uris';
import { checkInstallProfile } from '../install/profile';
import { targetFormatByName } from '../views/target-format';
import type { TargetFormatSpec } from '../ports';
import { SBOM_FORMATS, sbomFormat } from '../../model/sbom';
import { ifMatch, ownedRecord } from './records';

async function loadImage(ctx: Ctx, uid: string, aid: string, itid: string): Promise<{ appliance: Row<'appliance'>; image: Row<'image'> }> {
  const appliance = await ownedRecord(ctx.store, 'appliance', uid, aid);
  return { appliance, image: await ownedRecord(ctx.store, 'image', uid, itid, appliance.id) };
}

/** 409 while a generation of the same template and format runs (wire contract §5). */
async function assertNoRunning(t: StoreOps, appliance: Row<'appliance'>, formatName: string): Promise<void> {
  const busy = (await t.list('image', appliance.owner, appliance.id)).find((i) => i.doc.formatName === formatName && !isTerminal(i.doc.status));
  if (busy) throw conflict(`a generation of ${formatName} is already running for this appliance (${uris.image(appliance.owner, appliance.id, busy.id)})`);
}

async function assertGeneratable(ctx: Ctx, appliance: Row<'appliance'>): Promise<void> {
  const profiles = await ctx.store.list('osprofile', appliance.owner, appliance.id);
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
  return (await checkInstallProfile({ ...stored, ...asked }, ctx.limits, appliance.doc, stored)) ?? {};
}

/**
 * Where this process builds (the embedded queue), the disk must have room now (507 at once); a
 * worker elsewhere checks its own before it builds.
 */
function assertRoomHere(ctx: Ctx, diskMiB: number): void {
  if (ctx.queue.backend === 'in-process' && ctx.blobs.backend === 'local') assertDiskRoom(ctx.blobs.where, diskMiB);
}

/**
 * Queue the generation of `image` (just inserted or reset, in `t`): its order is built from the
 * records as they are in this transaction, and waits behind the owner's other open jobs.
 */
async function queueGeneration(ctx: Ctx, t: StoreTx, appliance: Row<'appliance'>, format: TargetFormatSpec, image: Row<'image'>): Promise<void> {
  const order = await buildOrder(ctx, t, appliance, format, image.doc.installProfile, { id: image.id, compress: image.doc.compress });
  assertRoomHere(ctx, order.settings.diskMiB);
  await ctx.queue.submit(t, image.doc.job!, order, { owner: appliance.owner });
}

function imageFile(ctx: Ctx, r: Row<'image'>, fileName?: string): FileResult {
  const f = r.doc.file;
  if (!f || !r.doc.status.complete || (fileName !== undefined && fileName !== f.fileName)) throw notFound('no generated file under this name');
  return { open: () => ctx.blobs.open(f.path), size: f.size, contentType: f.mimeType, fileName: f.fileName, etag: quoteEtag(f.sha256), lastModified: f.stored };
}

/** An image's SBOM (extension route): 404 for an unknown format, an image not generated, or one made before SBOMs were kept. */
function sbomFile(ctx: Ctx, r: Row<'image'>, format: string): FileResult {
  const kind = sbomFormat(format);
  const f = kind && r.doc.status.complete ? r.doc.sbom?.files[kind.id] : undefined;
  if (!f) throw notFound(`no SBOM ${JSON.stringify(format)} for this image (formats: ${SBOM_FORMATS.map((x) => x.id).join(', ')})`);
  return { open: () => ctx.blobs.open(f.path), size: f.size, contentType: f.mimeType, fileName: f.fileName, etag: quoteEtag(f.sha256), lastModified: f.stored };
}

export const images = {
  async list(ctx: Ctx, uid: string, aid: string): Promise<Array<Located<Image>>> {
    const appliance = await ownedRecord(ctx.store, 'appliance', uid, aid);
    return Promise.all((await ctx.store.list('image', appliance.owner, appliance.id)).map((r) => imageView(ctx, r)));
  },

  async get(ctx: Ctx, uid: string, aid: string, itid: string): Promise<Located<Image>> {
    return imageView(ctx, (await loadImage(ctx, uid, aid, itid)).image);
  },

  async generate(ctx: Ctx, uid: string, aid: string, body: () => Image): Promise<Located<Image>> {
    const appliance = await ownedRecord(ctx.store, 'appliance', uid, aid);
    const v = body();
    const format = targetFormatByName(ctx, v.targetFormat?.name);
    await assertGeneratable(ctx, appliance);
    const profile = await imageProfile(ctx, appliance, v.installProfile);
    const row = await ctx.store.tx(async (t) => {
      // The profile check awaited: the template may have been deleted or changed meanwhile.
      const cur = await t.get('appliance', appliance.id);
      if (!cur) throw notFound(`no appliance ${appliance.id}`);
      await assertNoRunning(t, cur, format.name);
      await assertJobRoom(t, ctx.limits, cur.owner);
      await assertImageRoom(t, ctx.limits, cur.owner);
      const d: ImageDoc = {
        applianceId: cur.id,
        job: randomUUID(),
        formatName: format.name,
        compress: v.compress ?? false,
        installProfile: profile,
        revision: cur.doc.revision,
        status: initialStatus('queued'),
      };
      const r = await t.insert('image', { owner: cur.owner, parentId: cur.id, doc: d });
      await queueGeneration(ctx, t, cur, format, r);
      return r;
    });
    return imageView(ctx, row);
  },

  async regenerate(ctx: Ctx, uid: string, aid: string, itid: string): Promise<Located<Image>> {
    const { appliance, image } = await loadImage(ctx, uid, aid, itid);
    if (!isTerminal(image.doc.status)) throw conflict('this image is still being generated');
    await assertGeneratable(ctx, appliance);
    const format = targetFormatByName(ctx, image.doc.formatName);
    const old = imageFilePaths(image.doc);
    const row = await ctx.store.tx(async (t) => {
      const cur = await t.get('image', image.id);
      if (!cur) throw notFound(`no image ${itid}`);
      if (!isTerminal(cur.doc.status)) throw conflict('this image is still being generated');
      await assertNoRunning(t, appliance, format.name);
      await assertJobRoom(t, ctx.limits, appliance.owner);
      const { file: _dropped, sbom: _sbom, ...rest } = cur.doc;
      const r = await t.update('image', image.id, { ...rest, job: randomUUID(), revision: appliance.doc.revision, status: initialStatus('queued') });
      await queueGeneration(ctx, t, appliance, format, r);
      return r;
    });
    for (const path of old) await ctx.blobs.remove(path);
    return imageView(ctx, row);
  },

  async remove(ctx: Ctx, uid: string, aid: string, itid: string, precondition?: string | string[]): Promise<void> {
    const { image } = await loadImage(ctx, uid, aid, itid);
    ifMatch(precondition, await imageView(ctx, image));
    await deleteImage(ctx, image);
  },

  async removeAll(ctx: Ctx, uid: string, aid: string): Promise<void> {
    await removeApplianceImages(ctx, await ownedRecord(ctx.store, 'appliance', uid, aid));
  },

  async status(ctx: Ctx, uid: string, aid: string, itid: string): Promise<OpStatus> {
    return imageStatus((await loadImage(ctx, uid, aid, itid)).image);
  },

  async statuses(ctx: Ctx, uid: string, aid: string): Promise<OpStatus[]> {
    const appliance = await ownedRecord(ctx.store, 'appliance', uid, aid);
    return (await ctx.store.list('image', appliance.owner, appliance.id)).map(imageStatus);
  },

  async cancel(ctx: Ctx, uid: string, aid: string, itid: string): Promise<OpStatus> {
    const { image } = await loadImage(ctx, uid, aid, itid);
    await cancelJob(ctx, 'image', image);
    return imageStatus((await ctx.store.get('image', image.id)) ?? image);
  },

  async download(ctx: Ctx, uid: string, aid: string, itid: string, fileName?: string): Promise<FileResult> {
    return imageFile(ctx, (await loadImage(ctx, uid, aid, itid)).image, fileName);
  },

  async sbom(ctx: Ctx, uid: string, aid: string, itid: string, format: string): Promise<FileResult> {
    return sbomFile(ctx, (await loadImage(ctx, uid, aid, itid)).image, format);
  },

  async ofUser(ctx: Ctx, uid: string): Promise<Array<Located<Image>>> {
    return Promise.all((await ctx.store.list('image', uid)).map((r) => imageView(ctx, r)));
  },

  async statusesOfUser(ctx: Ctx, uid: string): Promise<OpStatus[]> {
    return (await ctx.store.list('image', uid)).map(imageStatus);
  },
};
