// The OS profile of a template (spec rules 2 and 3): created from a base profile of the template's
// distribution, its package set starting from the base profile's packages, then changed with
// addedPkgUris / deletedPkgUris. Every change increases the template's revision.
import type { DistribProfile, DocumentOf, Pkg } from '../../model/resources';
import { parseUri } from '../../model/uris';
import type { Ctx } from '../context';
import { badRequest, conflict } from '../service-error';
import type { OsProfileDoc } from '../store/docs';
import type { Row } from '../store/port';
import { osProfileView, packagesOf } from '../views/os-profile';
import type { Located } from '../views/stamp';
import { idParam, uris } from '../uris';
import { packageOfEntry, pinOf } from '../install/packages';
import { saveAppliance } from './appliances';
import { ifMatch, ownedRecord, requireText } from './records';

/** Pins after a change set: `pkgs/pkg` entries pin (or, without a version, unpin) and add their package. */
function applyPins(ctx: Ctx, d: OsProfileDoc, entries: Pkg[], ids: number[]): Record<string, string> {
  const pins: Record<string, string> = {};
  for (const [k, v] of Object.entries(d.pins ?? {})) if (ids.includes(Number(k))) pins[k] = v;
  entries.forEach((e, i) => {
    const path = `pkgs[${i}]`;
    const p = packageOfEntry(ctx, d.distId, e, path);
    const pin = pinOf(e, path);
    if (!ids.includes(p.dbId!)) ids.push(p.dbId!);
    if (pin === undefined) delete pins[String(p.dbId)];
    else pins[String(p.dbId)] = pin;
  });
  return pins;
}

async function loadProfile(ctx: Ctx, uid: string, aid: string, osid: string): Promise<{ appliance: Row<'appliance'>; profile: Row<'osprofile'> }> {
  const appliance = await ownedRecord(ctx.store, 'appliance', uid, aid);
  const profile = await ownedRecord(ctx.store, 'osprofile', uid, osid, appliance.id);
  return { appliance, profile };
}

/** Package ids of a change set's URIs; 400 on a URI that names no package of the distribution. */
function pkgIds(ctx: Ctx, distId: number, list: string[] | undefined, field: string): number[] {
  return (list ?? []).map((u, i) => {
    const p = parseUri(u, ['osPkg_get'])?.params;
    const pid = idParam(p?.pid);
    if (idParam(p?.id) !== distId || !ctx.catalog.getPackage(distId, pid)) {
      throw badRequest(`${field}[${i}] ${JSON.stringify(u)} names no package of ${uris.distribution(distId)}`);
    }
    return pid;
  });
}

export const osProfiles = {
  async create(ctx: Ctx, uid: string, aid: string, body: () => DistribProfile): Promise<Located<DistribProfile>> {
    const appliance = await ownedRecord(ctx.store, 'appliance', uid, aid);
    const v = body();
    const named = parseUri(requireText(v.standardProfileUri, 'standardProfileUri'), ['osTemplate_get'])?.params;
    const distId = idParam(named?.id);
    const base = named && distId === appliance.doc.distId ? ctx.catalog.profiles(distId).find((p) => p.dbId === idParam(named.prid)) : undefined;
    if (!base) throw badRequest(`standardProfileUri ${JSON.stringify(v.standardProfileUri)} names no base profile of ${uris.distribution(appliance.doc.distId)}`);
    const d: OsProfileDoc = {
      applianceId: appliance.id,
      distId,
      profileId: base.dbId!,
      kind: base.kind === 'WindowsProfile' ? 'WindowsProfile' : 'LinuxProfile',
      name: v.name?.trim() || base.name || 'profile',
      description: v.description,
      pkgIds: ctx.catalog.profilePackages(distId, base.dbId!).map((p) => p.dbId!),
    };
    const row = await ctx.store.tx(async (t) => {
      if ((await t.list('osprofile', appliance.owner, appliance.id)).length > 0) throw conflict('this appliance already has an OS profile');
      const cur = await t.get('appliance', appliance.id);
      if (!cur) throw badRequest('the appliance was deleted meanwhile');
      const r = await t.insert('osprofile', { owner: appliance.owner, parentId: appliance.id, doc: d });
      await saveAppliance(t, cur, { ...cur.doc, lastPkgUpdate: ctx.store.now() });
      return r;
    });
    return osProfileView(ctx, row);
  },

  async get(ctx: Ctx, uid: string, aid: string, osid: string): Promise<Located<DistribProfile>> {
    return osProfileView(ctx, (await loadProfile(ctx, uid, aid, osid)).profile);
  },

  async remove(ctx: Ctx, uid: string, aid: string, osid: string, precondition?: string | string[]): Promise<void> {
    const { appliance, profile } = await loadProfile(ctx, uid, aid, osid);
    ifMatch(precondition, osProfileView(ctx, profile));
    await ctx.store.tx(async (t) => {
      await t.remove('osprofile', profile.id);
      const cur = await t.get('appliance', appliance.id);
      if (cur) await saveAppliance(t, cur, { ...cur.doc, lastPkgUpdate: ctx.store.now() });
    });
  },

  async packages(ctx: Ctx, uid: string, aid: string, osid: string): Promise<Pkg[]> {
    return packagesOf(ctx, (await loadProfile(ctx, uid, aid, osid)).profile.doc);
  },

  async changePackages(ctx: Ctx, uid: string, aid: string, osid: string, body: () => DocumentOf<'packages'>, precondition?: string | string[]): Promise<Pkg[]> {
    const { appliance, profile } = await loadProfile(ctx, uid, aid, osid);
    ifMatch(precondition, osProfileView(ctx, profile));
    const v = body();
    const d = profile.doc;
    const added = pkgIds(ctx, d.distId, v.addedPkgUris, 'addedPkgUris');
    const deleted = new Set(pkgIds(ctx, d.distId, v.deletedPkgUris, 'deletedPkgUris'));
    const next = d.pkgIds.filter((id) => !deleted.has(id));
    for (const id of added) if (!next.includes(id)) next.push(id);
    const pins = applyPins(ctx, d, v.pkgs ?? [], next);
    const samePins = JSON.stringify(Object.entries(pins).sort()) === JSON.stringify(Object.entries(d.pins ?? {}).sort());
    if (samePins && next.length === d.pkgIds.length && next.every((id, i) => id === d.pkgIds[i])) return packagesOf(ctx, d);
    const updated = await ctx.store.tx(async (t) => {
      const r = await t.update('osprofile', profile.id, { ...d, pkgIds: next, pins: Object.keys(pins).length ? pins : undefined });
      const cur = await t.get('appliance', appliance.id);
      if (cur) await saveAppliance(t, cur, { ...cur.doc, lastPkgUpdate: ctx.store.now() });
      return r;
    });
    return packagesOf(ctx, updated.doc);
  },
};
