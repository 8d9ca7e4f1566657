// The OS profile of a template (spec rules 2 and 3): created from a base profile of the template's
// distribution, its package set starting from the base profile's packages, then changed with
// addedPkgUris / deletedPkgUris. Every change increases the template's revision.
import type { Pkg } from '../../model/resources';
import type { Ctx } from '../context';
import { NO_CONTENT, type ReqWith, type Routes } from '../http/handler';
import { badRequest, conflict } from '../service-error';
import type { OsProfileDoc } from '../store/docs';
import type { Row } from '../store/store';
import { parseUri } from '../../model/uris';
import { osProfileView, packagesOf } from '../views/os-profile';
import { idParam, uris } from '../uris';
import { saveAppliance } from './appliances';
import { ifMatch, owned, requireText } from './common';
import { packageOfEntry, pinOf } from '../install/packages';

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

function loadProfile(ctx: Ctx, req: ReqWith<'uid' | 'aid' | 'osid'>): { appliance: Row<'appliance'>; profile: Row<'osprofile'> } {
  const appliance = owned(ctx, req, 'appliance', 'aid');
  const profile = owned(ctx, req, 'osprofile', 'osid', appliance.id);
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

export const osProfileRoutes = (ctx: Ctx) =>
  ({
    applianceOSProfile_create: (req) => {
      const appliance = owned(ctx, req, 'appliance', 'aid');
      const { value: v } = req.body();
      const named = parseUri(requireText(v.standardProfileUri, 'standardProfileUri'), ['osTemplate_get'])?.params;
      const distId = idParam(named?.id);
      const base = named && distId === appliance.doc.distId ? ctx.catalog.profiles(distId).find((p) => p.dbId === idParam(named.prid)) : undefined;
      if (!base) throw badRequest(`standardProfileUri ${JSON.stringify(v.standardProfileUri)} names no base profile of ${uris.distribution(appliance.doc.distId)}`);
      if (ctx.store.list('osprofile', appliance.owner, appliance.id).length > 0) throw conflict('this appliance already has an OS profile');
      const d: OsProfileDoc = {
        applianceId: appliance.id,
        distId,
        profileId: base.dbId!,
        kind: base.kind === 'WindowsProfile' ? 'WindowsProfile' : 'LinuxProfile',
        name: v.name?.trim() || base.name || 'profile',
        description: v.description,
        pkgIds: ctx.catalog.profilePackages(distId, base.dbId!).map((p) => p.dbId!),
      };
      const row = ctx.store.tx(() => {
        const r = ctx.store.insert('osprofile', { owner: appliance.owner, parentId: appliance.id, doc: d });
        saveAppliance(ctx, appliance, { ...appliance.doc, lastPkgUpdate: ctx.store.now() });
        return r;
      });
      return req.created(osProfileView(ctx, row));
    },

    applianceOSProfile_get: (req) => req.ok(osProfileView(ctx, loadProfile(ctx, req).profile)),

    applianceOSProfile_delete: (req) => {
      const { appliance, profile } = loadProfile(ctx, req);
      ifMatch(req, osProfileView(ctx, profile));
      ctx.store.tx(() => {
        ctx.store.remove('osprofile', profile.id);
        saveAppliance(ctx, appliance, { ...appliance.doc, lastPkgUpdate: ctx.store.now() });
      });
      return NO_CONTENT;
    },

    applianceOSProfilePkg_getAll: (req) => req.ok({ pkgs: packagesOf(ctx, loadProfile(ctx, req).profile.doc) }),

    applianceOSProfilePkg_updateAll: (req) => {
      const { appliance, profile } = loadProfile(ctx, req);
      ifMatch(req, osProfileView(ctx, profile));
      const { value: v } = req.body();
      const d = profile.doc;
      const added = pkgIds(ctx, d.distId, v.addedPkgUris, 'addedPkgUris');
      const deleted = new Set(pkgIds(ctx, d.distId, v.deletedPkgUris, 'deletedPkgUris'));
      const next = d.pkgIds.filter((id) => !deleted.has(id));
      for (const id of added) if (!next.includes(id)) next.push(id);
      const pins = applyPins(ctx, d, v.pkgs ?? [], next);
      const updated = ctx.store.tx(() => {
        const samePins = JSON.stringify(Object.entries(pins).sort()) === JSON.stringify(Object.entries(d.pins ?? {}).sort());
        if (samePins && next.length === d.pkgIds.length && next.every((id, i) => id === d.pkgIds[i])) return profile;
        const r = ctx.store.update('osprofile', profile.id, { ...d, pkgIds: next, pins: Object.keys(pins).length ? pins : undefined });
        saveAppliance(ctx, appliance, { ...appliance.doc, lastPkgUpdate: ctx.store.now() });
        return r;
      });
      return req.ok({ pkgs: packagesOf(ctx, updated.doc) });
    },
  }) satisfies Partial<Routes>;

