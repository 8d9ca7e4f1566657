// Publications to a cloud (wire contract §8–9): 201 with the publishImage and its upload to Glance
// queued as an order; only formats with a credAccountType can be published (400); DELETE removes the
// Glance image.
import { randomUUID } from 'node:crypto';
import type { OpStatus, PublishImage } from '../../model/resources';
import { parseUri } from '../../model/uris';
import type { Ctx } from '../context';
import { assertJobRoom } from '../jobs/quota';
import { cancelJob, deletePublications } from '../jobs/removal';
import { initialStatus } from '../jobs/status';
import { badRequest, notFound, ServiceError } from '../service-error';
import type { AccountDoc, PImageDoc } from '../store/docs';
import type { Row } from '../store/port';
import { publicationStatus, publicationView } from '../views/publication';
import type { Located } from '../views/stamp';
import { targetFormatByName } from '../views/target-format';
import { idParam } from '../uris';
import { accountFromBody, checkCloudEndpoints } from './accounts';
import { ifMatch, ownedRecord, requireText } from './records';

async function loadPub(ctx: Ctx, uid: string, aid: string, itid: string, pitid: string): Promise<Row<'pimage'>> {
  const appliance = await ownedRecord(ctx.store, 'appliance', uid, aid);
  const r = await ownedRecord(ctx.store, 'pimage', uid, pitid, appliance.id);
  if (String(r.doc.imageId) !== itid) throw new ServiceError(404, `no publication ${pitid}`);
  return r;
}

/**
 * Create a publication of image `itid` of template `aid` (both endpoints of §8 end here); the request
 * document is read once the image is known to be the template's.
 */
async function publish(ctx: Ctx, uid: string, aid: string, itid: number, body: () => PublishImage): Promise<Located<PublishImage>> {
  const appliance = await ownedRecord(ctx.store, 'appliance', uid, aid);
  const image = await ctx.store.get('image', itid);
  if (!image || image.owner !== appliance.owner || image.parentId !== appliance.id) throw badRequest('imageUri names no image of this appliance');
  const v = body();
  const format = targetFormatByName(ctx, image.doc.formatName);
  if (!format.credAccountType) throw badRequest(`images in format ${format.name} cannot be published (no cloud for this format)`);

  // An embedded account may name a stored one (uri or dbId): its fields and password are the base.
  const ref = v.credAccount;
  const storedId = ref?.dbId ?? (ref?.uri ? idParam(parseUri(ref.uri, ['cloudAccount_get'])?.params.caid) : undefined);
  const stored = storedId !== undefined ? await ctx.store.get('account', storedId) : undefined;
  if (storedId !== undefined && (!stored || stored.owner !== appliance.owner)) throw badRequest('credAccount names no account of this user');
  // A stored, write-only password goes only to the endpoints stored with it.
  if (stored && !ref?.password) {
    for (const f of ['keystoneUrl', 'glanceUrl'] as const) {
      if (ref?.[f] !== undefined && ref[f] !== stored.doc[f]) {
        throw badRequest(`credAccount.${f} differs from the stored account's: its password is only sent to its own endpoints (send the password to use another)`);
      }
    }
  }
  const account: AccountDoc = accountFromBody(ref ?? {}, stored?.doc);
  checkCloudEndpoints(ctx, account);
  if (!image.doc.status.complete || !image.doc.file) throw badRequest('the image is not generated yet');
  requireText(account.keystoneUrl, 'credAccount.keystoneUrl');
  requireText(account.login, 'credAccount.login');
  const password = ref?.password ?? (stored?.secret ? ctx.box.open(stored.secret) : undefined);
  requireText(password, 'credAccount.password');

  const d: PImageDoc = {
    applianceId: appliance.id,
    imageId: image.id,
    job: randomUUID(),
    glanceId: randomUUID(),
    kind: 'PublishImageOpenStack',
    account,
    keystoneDomain: v.keystoneDomain?.trim() || 'Default',
    keystoneProject: requireText(v.keystoneProject, 'keystoneProject'),
    displayName: v.displayName?.trim() || `${appliance.doc.name}-${appliance.doc.version}`,
    publicImage: v.publicImage ?? false,
    status: initialStatus('queued'),
  };
  // The password is kept sealed: DELETE of the publication needs it to remove the Glance image.
  const row = await ctx.store.tx(async (t) => {
    if (!(await t.get('image', image.id))) throw badRequest('imageUri names no image of this appliance');
    await assertJobRoom(t, ctx.limits, appliance.owner);
    const r = await t.insert('pimage', { owner: appliance.owner, parentId: appliance.id, doc: d, secret: ctx.box.seal(password!) });
    await ctx.queue.submit(t, d.job!, { kind: 'publish', publicationId: r.id, owner: appliance.owner }, { owner: appliance.owner });
    return r;
  });
  return publicationView(ctx, row);
}

export const publications = {
  /** `applianceImage_publish`: the image by its path id. */
  async publishImage(ctx: Ctx, uid: string, aid: string, itid: string, body: () => PublishImage): Promise<Located<PublishImage>> {
    const { id } = await ownedRecord(ctx.store, 'image', uid, itid);
    return publish(ctx, uid, aid, id, body);
  },

  /** `machineImage_publish`: the image by the document's `imageUri`. */
  async publishByUri(ctx: Ctx, uid: string, aid: string, value: PublishImage): Promise<Located<PublishImage>> {
    const image = parseUri(requireText(value.imageUri, 'imageUri'), ['machineImage_get'])?.params;
    if (!image || image.uid !== uid || image.aid !== aid) throw badRequest('imageUri names no image of this appliance');
    return publish(ctx, uid, aid, idParam(image.itid), () => value);
  },

  async get(ctx: Ctx, uid: string, aid: string, itid: string, pitid: string): Promise<Located<PublishImage>> {
    return publicationView(ctx, await loadPub(ctx, uid, aid, itid, pitid));
  },

  async status(ctx: Ctx, uid: string, aid: string, itid: string, pitid: string): Promise<OpStatus> {
    return publicationStatus(await loadPub(ctx, uid, aid, itid, pitid));
  },

  async cancel(ctx: Ctx, uid: string, aid: string, itid: string, pitid: string): Promise<OpStatus> {
    const r = await loadPub(ctx, uid, aid, itid, pitid);
    await cancelJob(ctx, 'pimage', r);
    const now = await ctx.store.get('pimage', r.id);
    if (!now) throw notFound(`no publication ${pitid}`);
    return publicationStatus(now);
  },

  async remove(ctx: Ctx, uid: string, aid: string, itid: string, pitid: string, precondition?: string | string[]): Promise<void> {
    const r = await loadPub(ctx, uid, aid, itid, pitid);
    ifMatch(precondition, await publicationView(ctx, r));
    await deletePublications(ctx, [r]);
  },

  async ofAppliance(ctx: Ctx, uid: string, aid: string): Promise<Array<Row<'pimage'>>> {
    const appliance = await ownedRecord(ctx.store, 'appliance', uid, aid);
    return ctx.store.list('pimage', appliance.owner, appliance.id);
  },

  async list(ctx: Ctx, uid: string, aid: string): Promise<Array<Located<PublishImage>>> {
    return Promise.all((await publications.ofAppliance(ctx, uid, aid)).map((r) => publicationView(ctx, r)));
  },

  async removeAll(ctx: Ctx, uid: string, aid: string): Promise<void> {
    await deletePublications(ctx, await publications.ofAppliance(ctx, uid, aid));
  },

  async ofUser(ctx: Ctx, uid: string): Promise<Array<Located<PublishImage>>> {
    return Promise.all((await ctx.store.list('pimage', uid)).map((r) => publicationView(ctx, r)));
  },

  async statusesOfUser(ctx: Ctx, uid: string): Promise<OpStatus[]> {
    return (await ctx.store.list('pimage', uid)).map(publicationStatus);
  },
};
