// Machine images as answered (wire contract §8): the record, its live status, its file once generated.
import type { Image, OpStatus } from '../../model/resources';
import { uriOf } from '../../model/uris';
import type { Ctx } from '../context';
import { installProfileView } from '../install/profile';
import type { Row } from '../store/port';
import { distributionName, distributionOf } from './catalog';
import { stamp, type Located } from './stamp';
import { targetFormatRecord } from './target-format';
import { uris } from '../uris';

export function imageStatus(r: Row<'image'>): OpStatus {
  const ids = { uid: r.owner, aid: r.parentId!, itid: r.id };
  return stamp(r, { ...r.doc.status, uri: uriOf('machineImageStatus_get', ids), parentUri: uriOf('machineImage_get', ids) });
}

export async function imageView(ctx: Ctx, r: Row<'image'>): Promise<Located<Image>> {
  const d = r.doc;
  const ids = { uid: r.owner, aid: d.applianceId, itid: r.id };
  const uri = uriOf('machineImage_get', ids);
  const app = await ctx.store.get('appliance', d.applianceId);
  const format = ctx.imaging.targetFormats.find((f) => f.name === d.formatName);
  const dist = app && distributionOf(ctx, app.doc.distId);
  const f = d.file;
  return stamp(r, {
    md5sum: f?.md5,
    sha256sum: f?.sha256,
    size: f?.size,
    mimeType: f?.mimeType,
    uploaded: f && true,
    uploadedTime: f?.stored,
    status: imageStatus(r),
    parentUri: uris.appliance(r.owner, d.applianceId),
    compress: d.compress,
    distributionName: dist && distributionName(dist),
    downloadUri: f && uriOf('machineImage_downloadFile', { ...ids, fileName: f.fileName }),
    fileName: f?.fileName,
    fileSize: f?.size,
    ...(format ? { fileExtension: format.extension, targetFormat: targetFormatRecord(ctx, format) } : { targetFormat: { name: d.formatName } }),
    imageCreated: !!f,
    installProfile: installProfileView(d.installProfile),
    name: app?.doc.name,
    version: app?.doc.version,
    revision: d.revision,
    statusUri: uriOf('machineImageStatus_get', ids),
    uri,
  });
}
