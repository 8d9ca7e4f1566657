// The OS profile of a template as answered (spec rules 2 and 3): its base profile, its packages with their pins.
import type { DistribProfile, Pkg } from '../../model/resources';
import { uriOf } from '../../model/uris';
import type { Ctx } from '../context';
import { pinnedView } from '../install/packages';
import type { OsProfileDoc } from '../store/docs';
import type { Row } from '../store/port';
import { distributionOf } from './catalog';
import { stamp, type Located } from './stamp';
import { uris } from '../uris';

/** The profile's packages from the catalog, each with its pinned version. */
export function packagesOf(ctx: Ctx, d: OsProfileDoc): Pkg[] {
  return d.pkgIds.flatMap((id) => {
    const p = ctx.catalog.getPackage(d.distId, id);
    return p ? [pinnedView(p, d.pins?.[String(id)])] : [];
  });
}

export function osProfileView(ctx: Ctx, r: Row<'osprofile'>): Located<DistribProfile> {
  const d = r.doc;
  const uri = uris.osprofile(r.owner, d.applianceId, r.id);
  const dist = distributionOf(ctx, d.distId);
  const installedSize = packagesOf(ctx, d).reduce((n, p) => n + (p.size ?? 0), 0);
  return stamp(r, {
    kind: d.kind,
    active: true,
    applianceUri: uris.appliance(r.owner, d.applianceId),
    arch: dist?.arch || undefined,
    description: d.description,
    distributionUri: uris.distribution(d.distId),
    installedSize,
    name: d.name,
    standardProfileUri: uris.profile(d.distId, d.profileId),
    uri,
    ...(d.kind === 'LinuxProfile' ? { packagesUri: uriOf('applianceOSProfilePkg_getAll', { uid: r.owner, aid: d.applianceId, osid: r.id }), packageUris: d.pkgIds.map((id) => uris.pkg(d.distId, id)) } : {}),
  });
}
