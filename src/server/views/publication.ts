// Publications to a cloud as answered (wire contract §8–9): the image's names, the account without its password, the live status.
import type { OpStatus, PublishImage } from '../../model/resources';
import { uriOf } from '../../model/uris';
import type { Ctx } from '../context';
import type { Row } from '../store/port';
import { accountRecord } from './account';
import { imageView } from './image';
import { stamp, type Located } from './stamp';
import { uris } from '../uris';

const pubIds = (r: Row<'pimage'>) => ({ uid: r.owner, aid: r.doc.applianceId, itid: r.doc.imageId, pitid: r.id });

export function publicationStatus(r: Row<'pimage'>): OpStatus {
  const ids = pubIds(r);
  return stamp(r, { ...r.doc.status, uri: uriOf('machineImagePublishedStatus_get', ids), parentUri: uriOf('machineImagePublished_get', ids) });
}

export async function publicationView(ctx: Ctx, r: Row<'pimage'>): Promise<Located<PublishImage>> {
  const d = r.doc;
  const image = await ctx.store.get('image', d.imageId);
  const iv = image ? await imageView(ctx, image) : undefined;
  const ids = pubIds(r);
  const uri = uriOf('machineImagePublished_get', ids);
  return stamp(r, {
    kind: d.kind,
    status: publicationStatus(r),
    parentUri: uris.image(r.owner, d.applianceId, d.imageId),
    credAccount: accountRecord(d.account),
    name: iv?.name,
    version: iv?.version,
    targetFormat: iv?.targetFormat,
    revision: iv?.revision,
    fileName: iv?.fileName,
    fileSize: iv?.fileSize,
    statusUri: uriOf('machineImagePublishedStatus_get', ids),
    uri,
    cloudId: d.cloudId || undefined,
    imageUri: uris.image(r.owner, d.applianceId, d.imageId),
    keystoneDomain: d.keystoneDomain,
    keystoneProject: d.keystoneProject,
    displayName: d.displayName,
    publicImage: d.publicImage,
  });
}
