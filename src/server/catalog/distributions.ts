// The operating systems of the reference server (wire contract §10): each release of OS_RELEASES (Debian 12
// and 13 x86_64) from its package index, and a Windows Server 2022 with no repository, so that Windows OS
// profiles can be exercised.
import type { DistribProfile, Distribution } from '../../model/resources';
import { OS_RELEASES, type OsRelease } from '../../model/releases';
import { uriOf } from '../../model/uris';
import { uris } from '../uris';
import type { CatalogMeta, PackageEntry } from './data-file';
import { DEFAULT_PLATFORM } from '../../model/platforms';

/** Debian 12's id (the first release's): records made before Debian 13 point to it. */
export const DEBIAN_ID = OS_RELEASES[0]!.distId;
export const WINDOWS_ID = 2;

/** A base profile and how to pick its packages (Linux only). */
export interface ProfileDef {
  readonly id: number;
  readonly distId: number;
  readonly name: string;
  readonly description: string;
  /** Debian priorities whose packages the profile installs. */
  readonly priorities?: readonly string[];
}

/** Profile ids are unique across distributions, so a profile URI's last segment alone names it. */
export const PROFILES: readonly ProfileDef[] = [
  ...OS_RELEASES.flatMap((r): ProfileDef[] => [
    { id: r.profileIds.Minimal, distId: r.distId, name: 'Minimal', description: 'Packages of priority required', priorities: ['required'] },
    {
      id: r.profileIds.Standard, distId: r.distId, name: 'Standard',
      description: 'Packages of priority required, important and standard',
      priorities: ['required', 'important', 'standard'],
    },
  ]),
  { id: 3, distId: WINDOWS_ID, name: 'Standard', description: 'Windows Server 2022 Standard, full installation' },
];

/** The base profiles of a release (those a catalog of its data file selects packages for). */
export const releaseProfiles = (r: OsRelease): ProfileDef[] => PROFILES.filter((p) => p.distId === r.distId);

function profileUris(distId: number): string[] {
  return PROFILES.filter((p) => p.distId === distId).map((p) => uris.profile(distId, p.id));
}

/** A release's distribution record, dated by its catalog. */
export function releaseDistribution(r: OsRelease, meta: CatalogMeta): Distribution {
  return {
    created: meta.date,
    dbId: r.distId,
    digest: `${meta.digest}-${r.distId}`,
    lastModified: meta.date,
    active: true,
    arch: DEFAULT_PLATFORM.name, // its Debian name in the description (wire contract §10)
    basePkgsUri: uriOf('osPkg_getAll', { id: r.distId }),
    baseProfilesUri: uriOf('osTemplate_getAll', { id: r.distId }),
    description: `${r.archive.label} ${r.version} (${meta.codename || r.codename}) ${meta.version}, ${meta.component} ${DEFAULT_PLATFORM.debianArch}`,
    family: 'linux',
    lastPkgBuildDate: meta.date,
    name: r.name,
    pkgType: 'deb',
    profileUris: profileUris(r.distId),
    releaseDate: r.releaseDate,
    uri: uris.distribution(r.distId),
    version: r.version,
    visible: true,
  };
}

/** The Windows record, dated by the first release's catalog (as it always was). */
export function windowsDistribution(meta: CatalogMeta): Distribution {
  return {
    created: meta.date,
    dbId: WINDOWS_ID,
    digest: `${meta.digest}-${WINDOWS_ID}`,
    lastModified: meta.date,
    active: true,
    arch: 'x86_64',
    baseProfilesUri: uriOf('osTemplate_getAll', { id: WINDOWS_ID }),
    description: 'Windows Server 2022 (no package repository)',
    family: 'windows',
    name: 'Windows',
    profileUris: profileUris(WINDOWS_ID),
    releaseDate: '2021-08-18T00:00:00.000Z', // Windows Server 2022 general availability
    uri: uris.distribution(WINDOWS_ID),
    version: '2022',
    visible: true,
  };
}

/** The packages of a Linux profile: latest version of each name and arch whose priority it lists. */
export function selectProfilePackages(def: ProfileDef, packages: readonly PackageEntry[]): PackageEntry[] {
  const wanted = new Set(def.priorities ?? []);
  return packages.filter((e) => e.latest && wanted.has(e.priority));
}

/**
 * The profile record. `size` sums the .deb sizes and `installedSize` the installed sizes, both in bytes
 * (the index gives Installed-Size in KiB).
 */
export function buildProfile(def: ProfileDef, meta: CatalogMeta, pkgs: readonly PackageEntry[]): DistribProfile {
  const uri = uris.profile(def.distId, def.id);
  const common: DistribProfile = {
    created: meta.date,
    dbId: def.id,
    digest: `${meta.digest}-p${def.id}`,
    lastModified: meta.date,
    active: true,
    arch: 'x86_64',
    description: def.description,
    distributionUri: uris.distribution(def.distId),
    name: def.name,
    uri,
  };
  if (def.distId === WINDOWS_ID) {
    return { ...common, kind: 'WindowsProfile', edition: 'STANDARD', type: 'FULL', language: 'en-US' };
  }
  return {
    ...common,
    kind: 'LinuxProfile',
    installedSize: pkgs.reduce((n, e) => n + (e.installedSize ?? 0) * 1024, 0),
    size: pkgs.reduce((n, e) => n + e.size, 0),
    packagesUri: uriOf('osTemplatePkgs_get', { id: def.distId, prid: def.id }),
  };
}
