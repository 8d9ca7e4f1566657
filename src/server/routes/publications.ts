// Publications to a cloud (wire contract §8–9): 201 with the publishImage and a background upload to
// Glance; only formats with a credAccountType can be published (400); DELETE removes the Glance image.
import type { DocumentOf, PublishImage } from '../../model/resources';
import type { Ctx } from '../context';
import { NO_CONTENT, type ReqWith, type Routes } from '../http/handler';
import { startPublication } from '../jobs/publication';
import { assertJobRoom } from '../jobs/quota';
import { cancelJob, deletePublications } from '../jobs/removal';
import { initialStatus } from '../jobs/status';
import { badRequest, ServiceError } from '../service-error';
import type { AccountDoc, PImageDoc } from '../store/docs';
import type { Row } from '../store/store';
import { parseUri } from '../../model/uris';
import { publicationStatus, publicationView } from '../views/publication';
import type { Located } from '../views/stamp';
import { idParam } from '../uris';
import { accountFromBody, checkCloudEndpoints } from './accounts';
import { ifMatch, owned, requireText } from './common';
import { targetFormatByName } from '../views/target-format';

function list(ctx: Ctx, rows: Array<Row<'pimage'>>): DocumentOf<'publishImages'> {
  const items = rows.map((r) => publicationView(ctx, r));
  return { total: items.length, publishImages: items };
}

/**
 * Create a publication of image `itid` of template `aid` (both endpoints of §8 end here); the
 * request document is read once the image is known to be the template's.
 */
function publish(ctx: Ctx, req: ReqWith<'uid' | 'aid'>, itid: number, body: () => PublishImage): Located<PublishImage> {
  const appliance = owned(ctx, req, 'appliance', 'aid');
  const image = ctx.store.get('image', itid);
  if (!image || image.owner !== appliance.owner || image.parentId !== appliance.id) throw badRequest('imageUri names no image of this appliance');
  const v = body();
  const format = targetFormatByName(ctx, image.doc.formatName);
  if (!format.credAccountType) throw badRequest(`images in format ${format.name} cannot be published (no cloud for this format)`);

  // An embedded account may name a stored one (uri or dbId): its fields and password are the base.
  const ref = v.credAccount;
  const storedId = ref?.dbId ?? (ref?.uri ? idParam(parseUri(ref.uri, ['cloudAccount_get'])?.params.caid) : undefined);
  const stored = storedId !== undefined ? ctx.store.get('account', storedId) : undefined;
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
    kind: 'PublishImageOpenStack',
    account,
    keystoneDomain: v.keystoneDomain?.trim() || 'Default',
    keystoneProject: requireText(v.keystoneProject, 'keystoneProject'),
    displayName: v.displayName?.trim() || `${appliance.doc.name}-${appliance.doc.version}`,
    publicImage: v.publicImage ?? false,
    status: initialStatus('queued'),
  };
  // The password is kept sealed: DELETE of the publication needs it to remove the Glance image.
  const row = ctx.store.tx(() => {
    assertJobRoom(ctx, appliance.owner);
    return ctx.store.insert('pimage', { owner: appliance.owner, parentId: appliance.id, doc: d, secret: ctx.box.seal(password!) });
  });
  startPublication(ctx, row, image, format);
  return publicationView(ctx, row);
}

function loadPub(ctx: Ctx, req: ReqWith<'uid' | 'aid' | 'itid' | 'pitid'>): Row<'pimage'> {
  const appliance = owned(ctx, req, 'appliance', 'aid');
  const r = owned(ctx, req, 'pimage', 'pitid', appliance.id);
  if (String(r.doc.imageId) !== req.params.itid) throw new ServiceError(404, `no publication ${req.params.pitid}`);
  return r;
}

export const publicationRoutes = (ctx: Ctx) =>
  ({
    applianceImage_publish: (req) => {
      const { id } = owned(ctx, req, 'image', 'itid');
      return req.created(publish(ctx, req, id, () => req.body().value));
    },

    machineImage_publish: (req) => {
      const { value } = req.body();
      const image = parseUri(requireText(value.imageUri, 'imageUri'), ['machineImage_get'])?.params;
      if (!image || image.uid !== req.params.uid || image.aid !== req.params.aid) throw badRequest('imageUri names no image of this appliance');
      return req.created(publish(ctx, req, idParam(image.itid), () => value));
    },

    machineImagePublished_get: (req) => req.ok(publicationView(ctx, loadPub(ctx, req))),
    machineImagePublishedStatus_get: (req) => req.ok(publicationStatus(loadPub(ctx, req))),

    machineImagePublish_cancel: async (req) => {
      const r = loadPub(ctx, req);
      await cancelJob(ctx, 'pimage', r.id);
      return req.ok(publicationStatus(ctx.store.get('pimage', r.id)!));
    },

    machineImagePublished_delete: async (req) => {
      const r = loadPub(ctx, req);
      ifMatch(req, publicationView(ctx, r));
      await deletePublications(ctx, [r]);
      return NO_CONTENT;
    },

    machineImagePublished_getAll: (req) => {
      const appliance = owned(ctx, req, 'appliance', 'aid');
      return req.ok(list(ctx, ctx.store.list('pimage', appliance.owner, appliance.id)));
    },

    machineImagePublished_deleteAll: async (req) => {
      const appliance = owned(ctx, req, 'appliance', 'aid');
      await deletePublications(ctx, ctx.store.list('pimage', appliance.owner, appliance.id));
      return NO_CONTENT;
    },

    userMachineImagePublished_getAll: (req) => req.ok(list(ctx, ctx.store.list('pimage', req.params.uid))),

    userMachineImagePublishedStatus_getAll: (req) => {
      const items = ctx.store.list('pimage', req.params.uid).map(publicationStatus);
      return req.ok({ total: items.length, statuses: items });
    },
  }) satisfies Partial<Routes>;
