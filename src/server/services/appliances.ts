// Appliance templates (spec "appliance"): 409 on the same name and version for a user (§5);
// `revision` grows on every change of the template, its OS profile packages or software list.
import { randomUUID } from 'node:crypto';
import type { Appliance, MySoftware } from '../../model/resources';
import { parseUri } from '../../model/uris';
import { checkInstallProfile } from '../install/profile';
import type { Ctx } from '../context';
import { badRequest, conflict } from '../service-error';
import type { ApplianceDoc } from '../store/docs';
import { nameVersionKey } from '../store/keys';
import type { Row, StoreOps } from '../store/port';
import { applianceView } from '../views/appliance';
import { distributionOf } from '../views/catalog';
import { DEFAULT_ORG_ID } from '../views/org';
import type { Located } from '../views/stamp';
import { idParam, uris } from '../uris';
import { viewCache } from '../view-cache';
import { removeApplianceImages } from '../jobs/removal';
import { ifMatch, ownedRecord, requireText } from './records';

function distIdOf(ctx: Ctx, u: string | undefined): number {
  const id = idParam(parseUri(requireText(u, 'distributionUri'), ['os_get'])?.params.id);
  if (!distributionOf(ctx, id)) throw badRequest(`distributionUri ${JSON.stringify(u)} names no distribution`);
  return id;
}

/** Software entries by uri, dbId, or name and version, all the caller's own (400 otherwise). */
async function softwareIds(ctx: Ctx, uid: string, list: MySoftware[]): Promise<number[]> {
  const mine = list.length === 0 ? [] : await ctx.store.list('software', uid);
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
export async function saveAppliance(store: StoreOps, r: Row<'appliance'>, next: ApplianceDoc): Promise<Row<'appliance'>> {
  if (JSON.stringify({ ...next, revision: 0 }) === JSON.stringify({ ...r.doc, revision: 0 })) return r;
  return store.update('appliance', r.id, { ...next, revision: r.doc.revision + 1 }, { uniqueKey: nameVersionKey(next) }, conflictMsg(next));
}

export const appliances = {
  list(ctx: Ctx, uid: string): readonly Located<Appliance>[] | Promise<readonly Located<Appliance>[]> {
    const cache = viewCache(ctx);
    return cache.all('appliance', uid, async () => {
      const rows = await ctx.store.list('appliance', uid);
      return Promise.all(rows.map(async (r) => cache.one('appliance', uid, r.id, () => applianceView(ctx, r))));
    });
  },

  /** Filed under the path's uid and id: built (and kept) only when that user owns that record; a kept view answers at once. */
  get(ctx: Ctx, uid: string, aid: string): Located<Appliance> | Promise<Located<Appliance>> {
    return viewCache(ctx).one('appliance', uid, idParam(aid), async () => applianceView(ctx, await ownedRecord(ctx.store, 'appliance', uid, aid)));
  },

  async create(ctx: Ctx, uid: string, v: Appliance): Promise<Located<Appliance>> {
    if (v.orgUri !== undefined && v.orgUri.replace(/^\//, '') !== uris.org(DEFAULT_ORG_ID)) throw badRequest(`orgUri must be ${uris.org(DEFAULT_ORG_ID)}`);
    const [name, version] = [requireText(v.name, 'name'), requireText(v.version, 'version')];
    const installProfile = await checkInstallProfile(v.installProfile, ctx.limits, { name, version });
    const d: ApplianceDoc = {
      uuid: randomUUID(),
      name,
      version,
      distId: distIdOf(ctx, v.distributionUri),
      softwareIds: await softwareIds(ctx, uid, v.mySoftwareList ?? []),
      revision: 0,
      description: v.description,
      tag: v.tag,
      installProfile,
    };
    const row = await ctx.store.insert('appliance', { owner: uid, uniqueKey: nameVersionKey(d), doc: d }, conflictMsg(d));
    return applianceView(ctx, row);
  },

  async update(ctx: Ctx, uid: string, aid: string, body: () => Appliance, precondition?: string | string[]): Promise<Located<Appliance>> {
    const row = await ownedRecord(ctx.store, 'appliance', uid, aid);
    ifMatch(precondition, await applianceView(ctx, row));
    const v = body();
    if (v.uri !== undefined && v.uri.replace(/^\//, '') !== uris.appliance(uid, row.id)) throw badRequest('uri does not name this appliance');
    if (v.distributionUri !== undefined && distIdOf(ctx, v.distributionUri) !== row.doc.distId) throw badRequest('distributionUri cannot be changed');
    // Fields left out keep their value: clients send the fields they change (spec rule 4d).
    const next: ApplianceDoc = { ...row.doc };
    if (v.name !== undefined) next.name = requireText(v.name, 'name');
    if (v.version !== undefined) next.version = requireText(v.version, 'version');
    if (v.description !== undefined) next.description = v.description;
    if (v.tag !== undefined) next.tag = v.tag;
    if (v.installProfile !== undefined) next.installProfile = (await checkInstallProfile(v.installProfile, ctx.limits, next, row.doc.installProfile))!;
    if (v.mySoftwareList !== undefined) next.softwareIds = await softwareIds(ctx, uid, v.mySoftwareList);
    return applianceView(ctx, await saveAppliance(ctx.store, row, next));
  },

  async remove(ctx: Ctx, uid: string, aid: string, precondition?: string | string[]): Promise<void> {
    const row = await ownedRecord(ctx.store, 'appliance', uid, aid);
    ifMatch(precondition, await applianceView(ctx, row));
    // Removing images waits (jobs stop, Glance answers): a generation started meanwhile is removed too,
    // and the template goes only in a transaction that sees no image left.
    for (let round = 0; ; round++) {
      await removeApplianceImages(ctx, row);
      const gone = await ctx.store.tx(async (t) => {
        if ((await t.list('image', row.owner, row.id)).length > 0) return false;
        for (const p of await t.list('osprofile', row.owner, row.id)) await t.remove('osprofile', p.id);
        await t.remove('appliance', row.id);
        return true;
      });
      if (gone) return;
      if (round >= 4) throw conflict('images keep being generated for this appliance while it is deleted: retry');
    }
  },
};
