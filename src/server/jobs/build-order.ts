// What an image is built from, captured when its generation is asked for (wire contract §8;
// docs/images.md "Real images"): the OS layer's spec, the disk format, the settings, the software files by blob key
// and the manifest's data. Plain data: the order crosses the job queue as JSON, to this process or to a
// worker elsewhere, which needs nothing else of the server's records until it reports.
import { posix } from 'node:path';
import type { Ctx } from '../context';
import type { TargetFormatSpec } from '../ports';
import type { Row, StoreOps } from '../store/port';
import { redactRecord } from '../../model/redact';
import { installProfile, type InstallProfile } from '../../model/resources';
import { badRequest } from '../service-error';
import { packageRequestsOf } from '../install/packages';
import { systemSettingsOf } from '../install/system-settings';
import { osLayerSpecOf, type DiskFormat, type ManifestSpec, type OsLayerSpec, type SystemSettings } from '../../imaging';
import { uris } from '../uris';
import { OS_RELEASES, releaseById, releaseLabel } from '../../model/releases';

/** A software file to place in the image: its blob, where it goes, its mode and owner. */
export interface OrderFile {
  readonly key: string;
  readonly size: number;
  readonly destination: string;
  readonly rights?: string | undefined;
  readonly ownerGroup?: string | undefined;
}

export interface BuildOrder {
  readonly kind: 'build';
  readonly imageId: number;
  readonly owner: string;
  /** The target format's name (its disk and extension come from the imaging table). */
  readonly format: string;
  readonly disk: DiskFormat;
  readonly compress: boolean;
  readonly os: OsLayerSpec;
  readonly settings: SystemSettings;
  readonly files: readonly OrderFile[];
  readonly manifest: ManifestSpec;
  /** The image file's name (`<template>-<version>.<ext>`). */
  readonly fileName: string;
}

/** The order of an image of `appliance` in `format` with `profileOfImage`; 400 where the template cannot be built. */
export async function buildOrder(
  ctx: Ctx,
  store: StoreOps,
  appliance: Row<'appliance'>,
  format: TargetFormatSpec,
  profileOfImage: InstallProfile,
  image: { id: number; compress: boolean },
): Promise<BuildOrder> {
  const d = appliance.doc;
  const dist = ctx.catalog.distributions.find((x) => x.dbId === d.distId);
  // The template's distribution is the release its OS layer is built from.
  const suite = releaseById(d.distId)?.codename;
  if (!dist || !suite) throw badRequest(`images of ${dist?.name ?? 'distribution'} ${dist?.version ?? d.distId} cannot be built: this service builds ${OS_RELEASES.map(releaseLabel).join(' and ')} images`);
  const profile = (await store.list('osprofile', appliance.owner, appliance.id))[0];
  if (!profile) throw badRequest('the appliance has no OS profile yet (POST …/osprofile first)');
  const asked = packageRequestsOf(ctx.catalog, profile.doc);
  const settings = systemSettingsOf(d.name, profileOfImage);
  const cloudInit = format.credAccountType === 'openstack';
  const os = osLayerSpecOf({ suite, profile: asked.profile, packages: asked.packages, disk: format.disk, cloudInit, settings, mirror: ctx.imaging.mirror, partition: ctx.imaging.layersPerOwner ? appliance.owner : undefined });
  const sw = await softwareFiles(store, appliance.owner, d.softwareIds);
  const files = sw.flatMap(({ artifact }): OrderFile[] => {
    const a = artifact.doc;
    const f = a.file!;
    // installLocation is the destination directory of the artifact's file.
    return [{ key: f.path, size: f.size, destination: posix.join(a.installLocation ?? '/opt', f.fileName), rights: a.rights || undefined, ownerGroup: a.ownerGroup || undefined }];
  });
  const software: Array<ManifestSpec['software'][number]> = [];
  for (const id of d.softwareIds) {
    const s = await store.get('software', id);
    if (s) software.push({ name: s.doc.name, version: s.doc.version, files: sw.filter((x) => x.software.id === id).map((x) => x.artifact.doc.file!.fileName) });
  }
  const manifest: ManifestSpec = {
    template: { name: d.name, version: d.version, description: d.description, revision: d.revision },
    os: { name: dist.name, version: dist.version },
    profile: { name: profile.doc.name, standardProfileUri: uris.profile(d.distId, profile.doc.profileId) },
    software,
    // Without password hashes: the manifest is readable by every user of the image.
    installProfile: redactRecord(installProfile, profileOfImage),
    targetFormat: format.name,
  };
  const base = `${d.name}-${d.version}`.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[.]+/, '') || 'image';
  return {
    kind: 'build',
    imageId: image.id,
    owner: appliance.owner,
    format: format.name,
    disk: format.disk,
    compress: image.compress,
    os,
    settings,
    files,
    manifest,
    fileName: `${base}.${format.extension.replace(/^\./, '')}`,
  };
}

/** Every uploaded file of a template's software, in the template's order (Imaging contract). */
async function softwareFiles(store: StoreOps, owner: string, softwareIds: number[]): Promise<Array<{ software: Row<'software'>; artifact: Row<'artifact'> }>> {
  const out: Array<{ software: Row<'software'>; artifact: Row<'artifact'> }> = [];
  for (const id of softwareIds) {
    const s = await store.get('software', id);
    if (!s || s.owner !== owner) continue;
    for (const artifact of await store.list('artifact', owner, id)) if (artifact.doc.file) out.push({ software: s, artifact });
  }
  return out;
}
