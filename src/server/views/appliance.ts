// An appliance template as answered (spec "appliance"): its links, its software by name, its OS profile.
import type { Appliance } from '../../model/resources';
import { uriOf } from '../../model/uris';
import type { Ctx } from '../context';
import { installProfileView } from '../install/profile';
import type { Row } from '../store/store';
import { distributionName, distributionOf } from './catalog';
import { DEFAULT_ORG_ID } from './org';
import { stamp, type Located } from './stamp';
import { uris } from '../uris';

export function applianceView(ctx: Ctx, r: Row<'appliance'>): Located<Appliance> {
  const uid = r.owner;
  const base = uris.appliance(uid, r.id);
  const d = r.doc;
  const dist = distributionOf(ctx, d.distId);
  const profile = ctx.store.list('osprofile', uid, r.id)[0];
  const software = d.softwareIds.flatMap((id) => {
    const s = ctx.store.get('software', id);
    return s ? [{ name: s.doc.name, version: s.doc.version, uri: uris.software(uid, s.id), dbId: s.id }] : [];
  });
  return stamp(r, {
    uuid: d.uuid,
    archName: dist?.arch || undefined,
    baseImagesUri: uriOf('machineImage_getAll', { uid, aid: r.id }),
    baseMySoftwareUri: uriOf('mySoftware_getAll', { uid }),
    baseOsProfileUri: uriOf('applianceOSProfile_create', { uid, aid: r.id }),
    basePublishImagesUri: uriOf('machineImagePublished_getAll', { uid, aid: r.id }),
    description: d.description,
    distributionName: dist && distributionName(dist),
    distributionUri: uris.distribution(d.distId),
    imageUris: ctx.store.list('image', uid, r.id).map((i) => uris.image(uid, r.id, i.id)),
    installProfile: d.installProfile && installProfileView(d.installProfile),
    lastPkgUpdate: d.lastPkgUpdate || undefined,
    mySoftwareList: software,
    name: d.name,
    orgUri: uris.org(DEFAULT_ORG_ID),
    osProfileUri: profile && uris.osprofile(uid, r.id, profile.id),
    revision: d.revision,
    tag: d.tag,
    uri: base,
    version: d.version,
  });
}
