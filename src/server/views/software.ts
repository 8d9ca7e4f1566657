// The software library as answered (spec rule 4): components with their size and users, artifacts with their file.
import type { MySoftware, SoftwareArtifact } from '../../model/resources';
import { uriOf } from '../../model/uris';
import type { Ctx } from '../context';
import type { Row } from '../store/port';
import { stamp, type Located } from './stamp';
import { uris } from '../uris';

export async function softwareView(ctx: Ctx, r: Row<'software'>): Promise<Located<MySoftware>> {
  const uri = uris.software(r.owner, r.id);
  const [arts, all] = await Promise.all([ctx.store.list('artifact', r.owner, r.id), ctx.store.list('appliance', r.owner)]);
  const apps = all.filter((a) => a.doc.softwareIds.includes(r.id));
  return stamp(r, {
    tag: r.doc.tag,
    name: r.doc.name,
    version: r.doc.version,
    description: r.doc.description,
    size: arts.reduce((n, a) => n + (a.doc.file?.size ?? 0), 0),
    revision: r.doc.revision,
    artifactsUri: uriOf('mySoftwareArtifact_getAll', { uid: r.owner, msid: r.id }),
    uri,
    softwareArtifactUris: arts.map((a) => uris.artifact(r.owner, r.id, a.id)),
    applianceUris: apps.map((a) => uris.appliance(r.owner, a.id)),
  });
}

export function artifactView(r: Row<'artifact'>): Located<SoftwareArtifact> {
  const d = r.doc;
  const f = d.file;
  const uri = uris.artifact(r.owner, r.parentId!, r.id);
  return stamp(r, {
    kind: d.kind,
    md5sum: f?.md5,
    mimeType: f?.mimeType,
    sha256sum: f?.sha256,
    size: f?.size,
    uploaded: !!f,
    uploadedTime: f?.stored,
    uri,
    binaryUri: uriOf('mySoftwareArtifact_download', { uid: r.owner, msid: r.parentId!, said: r.id }),
    parentUri: uris.software(r.owner, r.parentId!),
    installLocation: d.installLocation,
    name: d.name,
    fullName: d.fullName,
    origName: d.origName,
    type: d.type,
    version: d.version,
    subSoftwareArtifacts: [],
    ownerGroup: d.ownerGroup,
    rights: d.rights,
  });
}
