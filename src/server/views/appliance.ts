// An appliance template as answered (spec "appliance"): its links, its software by name, its OS profile.
import type { Appliance } from '../../model/resources';
import { uriOf } from '../../model/uris';
import type { Ctx } from '../context';
import { installProfileView } from '../install/profile';
import type { Row } from '../store/port';
import { distributionName, distributionOf } from './catalog';
import { DEFAULT_ORG_ID } from './org';
import { stamp, type Located } from './stamp';
import { uris } from '../uris';

export async function applianceView(ctx: Ctx, r: Row<'appliance'>): Promise<Located<Appliance>> {
  const uid = r.owner;
  const base = uris.appliance(uid, r.id);
  const d = r.doc;
  const dist = distributionOf(ctx, d.distId);
  const [profiles, images, ...mine] = await Promise.all([ctx.store.list('osprofile', uid, r.id), ctx.store.list('image', uid, r.id), ...d.softwareIds.map((id) => ctx.store.get('software', id))]);
  const profile = profiles[0];
  const software = mine.flatMap((s) => (s ? [{ name: s.doc.name, version: s.doc.version, uri: uris.software(uid, s.id), dbId: s.id }] : []));
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
    imageUris: images.map((i) => uris.image(uid, r.id, i.id)),
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
