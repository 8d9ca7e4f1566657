// Reads what the service already holds for a declaration: the appliance by name and version, its
// OS profile and packages, the software components by name and version with their artifacts, the
// appliance's images and publications. Only GETs.
import type { Client } from '../client';
import { digestFile } from '../digest';
import { fiql } from '../fiql/builder';
import type { Appliance } from '../model/resources';
import type { Declaration } from './declaration';
import { idOf, recordUri, urisOf } from './plan';
import type { LocalFile, Observed, ObservedSoftware } from './state';

export async function findAppliance(client: Client, name: string, version: string, signal?: AbortSignal): Promise<Appliance | undefined> {
  const r = await client.appliance_getAll({ params: { query: fiql.and(fiql.eq('name', name), fiql.eq('version', version)) }, signal });
  return (r.appliances ?? []).find((a) => a.name === name && a.version === version);
}

export async function observe(client: Client, decl: Declaration, signal?: AbortSignal): Promise<Observed> {
  const [appliance, software] = await Promise.all([
    findAppliance(client, decl.stack.name, decl.stack.version, signal),
    observeSoftware(client, decl, signal),
  ]);
  if (!appliance?.uri) return { profilePkgUris: [], software, images: [], publications: [] };
  return { ...(await observeAppliance(client, appliance, signal)), software };
}

/** The appliance's profile, packages, images and publications. */
export async function observeAppliance(
  client: Client, appliance: Appliance, signal?: AbortSignal,
): Promise<Omit<Observed, 'software'> & { appliance: Appliance }> {
  const aid = idOf(recordUri(appliance, 'appliance'));
  const osid = appliance.osProfileUri ? idOf(appliance.osProfileUri) : undefined;
  const [osProfile, pkgs, images, pubs] = await Promise.all([
    osid ? client.applianceOSProfile_get({ aid, osid, signal }) : Promise.resolve(undefined),
    osid ? client.applianceOSProfilePkg_getAll({ aid, osid, signal }) : Promise.resolve(undefined),
    client.machineImage_getAll({ aid, signal }),
    client.machineImagePublished_getAll({ aid, signal }),
  ]);
  return {
    appliance,
    osProfile,
    profilePkgUris: urisOf(pkgs?.pkgs),
    images: images.images ?? [],
    publications: pubs.publishImages ?? [],
  };
}

async function observeSoftware(client: Client, decl: Declaration, signal?: AbortSignal): Promise<Map<string, ObservedSoftware>> {
  const out = new Map<string, ObservedSoftware>();
  await Promise.all(
    decl.stack.bundles.map(async (b) => {
      const r = await client.mySoftware_getAll({ params: { query: fiql.and(fiql.eq('name', b.name), fiql.eq('version', b.version)) }, signal });
      const record = (r.mySoftwareList ?? []).find((s) => s.name === b.name && s.version === b.version);
      if (!record?.uri) return;
      const arts = await client.mySoftwareArtifact_getAll({ msid: idOf(record.uri), signal });
      out.set(b.name, { record, artifacts: arts.softwareArtifacts ?? [] });
    }),
  );
  return out;
}

/** sha256 and size of every bundle file, read as a stream (files may be large). */
export async function hashBundleFiles(decl: Declaration): Promise<Map<string, LocalFile>> {
  const paths = [...new Set(decl.stack.bundles.flatMap((b) => b.files.map((f) => f.path)))];
  const entries = await Promise.all(paths.map(async (p) => [p, await hashFile(p)] as const));
  return new Map(entries);
}

async function hashFile(p: string): Promise<LocalFile> {
  const { sha256, size } = await digestFile(p, ['sha256']);
  return { sha256, size };
}
