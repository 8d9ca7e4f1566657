// Appliance templates (spec "appliance"): 409 on the same name and version for a user (§5);
// `revision` grows on every change of the template, its OS profile packages or software list.
import { randomUUID } from 'node:crypto';
import type { MySoftware } from '../../model/resources';
import { checkInstallProfile } from '../install/profile';
import type { Ctx } from '../context';
import { NO_CONTENT, type ReqWith, type Routes } from '../http/handler';
import { page } from '../http/list';
import { badRequest, conflict } from '../service-error';
import type { ApplianceDoc } from '../store/docs';
import type { Row } from '../store/store';
import { nameVersionKey } from '../store/keys';
import { parseUri } from '../../model/uris';
import { applianceView } from '../views/appliance';
import { distributionOf } from '../views/catalog';
import { DEFAULT_ORG_ID } from '../views/org';
import { idParam, uris } from '../views/uris';
import { viewCache } from '../view-cache';
import { ifMatch, owned, requireText } from './common';
import { removeApplianceImages } from '../jobs/removal';

function distIdOf(ctx: Ctx, u: string | undefined): number {
  const id = idParam(parseUri(requireText(u, 'distributionUri'), ['os_get'])?.params.id);
  if (!distributionOf(ctx, id)) throw badRequest(`distributionUri ${JSON.stringify(u)} names no distribution`);
  return id;
}


/** Software entries by uri, dbId, or name and version, all the caller's own (400 otherwise). */
function softwareIds(ctx: Ctx, uid: string, list: MySoftware[]): number[] {
  const mine = ctx.store.list('software', uid);
  const ids: number[] = [];
  for (const [i, e] of list.entries()) {
    const byUri = e.uri !== undefined ? parseUri(e.uri, ['mySoftware_get'])?.params : undefined;
    const found = mine.find((s) =>
      byUri ? byUri.uid === uid && idParam(byUri.msid) === s.id : e.dbId !== undefined ? e.dbId === s.id : s.doc.name === e.name && s.doc.version === e.version,
    );
    if (!found) throw badRequest(`mySoftwareList[${i}] names no software component of ${uid}`);
    if (!ids.includes(found.id)) ids.push(found.id);
  }
  return ids;
}

const conflictMsg = (d: Pick<ApplianceDoc, 'name' | 'version'>): string => `an appliance named ${JSON.stringify(d.name)} version ${JSON.stringify(d.version)} already exists`;

/** Save a changed template with its revision increased (only when something changed). */
export function saveAppliance(ctx: Ctx, r: Row<'appliance'>, next: ApplianceDoc): Row<'appliance'> {
  if (JSON.stringify({ ...next, revision: 0 }) === JSON.stringify({ ...r.doc, revision: 0 })) return r;
  return ctx.store.update('appliance', r.id, { ...next, revision: r.doc.revision + 1 }, { uniqueKey: nameVersionKey(next) }, conflictMsg(next));
}

function loadAppliance(ctx: Ctx, req: ReqWith<'uid' | 'aid'>): Row<'appliance'> {
  return owned(ctx, req, 'appliance', 'aid');
}

export const applianceRoutes = (ctx: Ctx) =>
  ({
    appliance_getAll: (req) => {
      const { uid } = req.params;
      const cache = viewCache(ctx);
      const all = cache.all('appliance', uid, () => ctx.store.list('appliance', uid).map((r) => cache.one('appliance', uid, r.id, () => applianceView(ctx, r))));
      const { total, items } = page('appliance', all, req.query);
      return req.ok({ total, appliances: items });
    },

    // Filed under the path's uid and id: built (and kept) only when that user owns that record.
    appliance_get: (req) => req.ok(viewCache(ctx).one('appliance', req.params.uid, idParam(req.params.aid), () => applianceView(ctx, loadAppliance(ctx, req)))),

    appliance_create: async (req) => {
      const { uid } = req.params;
      const { value: v } = req.body();
      if (v.orgUri !== undefined && v.orgUri.replace(/^\//, '') !== uris.org(DEFAULT_ORG_ID)) throw badRequest(`orgUri must be ${uris.org(DEFAULT_ORG_ID)}`);
      const installProfile = await checkInstallProfile(v.installProfile, ctx.limits);
      const d: ApplianceDoc = {
        uuid: randomUUID(),
        name: requireText(v.name, 'name'),
        version: requireText(v.version, 'version'),
        distId: distIdOf(ctx, v.distributionUri),
        softwareIds: softwareIds(ctx, uid, v.mySoftwareList ?? []),
        revision: 0,
        ...(v.description !== undefined ? { description: v.description } : {}),
        ...(v.tag !== undefined ? { tag: v.tag } : {}),
        ...(installProfile ? { installProfile } : {}),
      };
      const row = ctx.store.insert('appliance', { owner: uid, uniqueKey: nameVersionKey(d), doc: d }, conflictMsg(d));
      return req.created(applianceView(ctx, row));
    },

    appliance_update: async (req) => {
      const { uid } = req.params;
      const row = loadAppliance(ctx, req);
      ifMatch(req, applianceView(ctx, row));
      const { value: v } = req.body();
      if (v.uri !== undefined && v.uri.replace(/^\//, '') !== uris.appliance(uid, row.id)) throw badRequest('uri does not name this appliance');
      if (v.distributionUri !== undefined && distIdOf(ctx, v.distributionUri) !== row.doc.distId) throw badRequest('distributionUri cannot be changed');
      // Fields left out keep their value: clients send the fields they change (spec rule 4d).
      const next: ApplianceDoc = { ...row.doc };
      if (v.name !== undefined) next.name = requireText(v.name, 'name');
      if (v.version !== undefined) next.version = requireText(v.version, 'version');
      if (v.description !== undefined) next.description = v.description;
      if (v.tag !== undefined) next.tag = v.tag;
      if (v.installProfile !== undefined) next.installProfile = (await checkInstallProfile(v.installProfile, ctx.limits, row.doc.installProfile))!;
      if (v.mySoftwareList !== undefined) next.softwareIds = softwareIds(ctx, uid, v.mySoftwareList);
      return req.ok(applianceView(ctx, saveAppliance(ctx, row, next)));
    },

    appliance_delete: async (req) => {
      const row = loadAppliance(ctx, req);
      ifMatch(req, applianceView(ctx, row));
      // Removing images waits (jobs stop, Glance answers): a generation started meanwhile is removed too,
      // and the template goes only in a transaction that sees no image left (issue 12, defect 4's shape).
      for (let round = 0; ; round++) {
        await removeApplianceImages(ctx, row);
        const gone = ctx.store.tx(() => {
          if (ctx.store.list('image', row.owner, row.id).length > 0) return false;
          for (const p of ctx.store.list('osprofile', row.owner, row.id)) ctx.store.remove('osprofile', p.id);
          ctx.store.remove('appliance', row.id);
          return true;
        });
        if (gone) return NO_CONTENT;
        if (round >= 4) throw conflict('images keep being generated for this appliance while it is deleted: retry');
      }
    },
  }) satisfies Partial<Routes>;
