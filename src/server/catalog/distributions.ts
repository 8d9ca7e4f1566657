// The operating systems of the reference server (wire contract §10): Debian 12 x86_64 from the package
// index, and a Windows Server 2022 with no repository, so that Windows OS profiles can be exercised.
import type { DistribProfile, Distribution } from '../../model/resources';
import { uriOf } from '../../model/uris';
import { uris } from '../uris';
import type { CatalogMeta, PackageEntry } from './data-file';

export const DEBIAN_ID = 1;
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
  { id: 1, distId: DEBIAN_ID, name: 'Minimal', description: 'Packages of priority required', priorities: ['required'] },
  {
    id: 2, distId: DEBIAN_ID, name: 'Standard',
    description: 'Packages of priority required, important and standard',
    priorities: ['required', 'important', 'standard'],
  },
  { id: 3, distId: WINDOWS_ID, name: 'Standard', description: 'Windows Server 2022 Standard, full installation' },
];

function profileUris(distId: number): string[] {
  return PROFILES.filter((p) => p.distId === distId).map((p) => uris.profile(distId, p.id));
}

export function buildDistributions(meta: CatalogMeta): Distribution[] {
  return [
    {
      created: meta.date,
      dbId: DEBIAN_ID,
      digest: `${meta.digest}-${DEBIAN_ID}`,
      lastModified: meta.date,
      active: true,
      arch: 'x86_64', // Debian's amd64 (wire contract §10)
      basePkgsUri: uriOf('osPkg_getAll', { id: DEBIAN_ID }),
      baseProfilesUri: uriOf('osTemplate_getAll', { id: DEBIAN_ID }),
      description: `Debian GNU/Linux 12 (${meta.codename || 'bookworm'}) ${meta.version}, ${meta.component} amd64`,
      family: 'linux',
      lastPkgBuildDate: meta.date,
      name: 'Debian',
      pkgType: 'deb',
      profileUris: profileUris(DEBIAN_ID),
      releaseDate: '2023-06-10T00:00:00.000Z', // Debian 12.0 release day
      uri: uris.distribution(DEBIAN_ID),
      version: '12',
      visible: true,
    },
    {
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
    },
  ];
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
