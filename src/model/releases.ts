// The Linux releases the service builds images of: one entry each, read by the catalog (its distributions,
// profiles, data files and refresh), the image builder (suites, kernels, packages every image needs) and
// scripts/build-catalog.mjs. Adding a release of a Debian-family distribution is one entry here (plus its
// data file, `node scripts/build-catalog.mjs --release <version>`). Ubuntu would be one entry too, with its
// own archive (`http://archive.ubuntu.com/ubuntu`, security at `http://security.ubuntu.com/ubuntu`, keyring
// `/usr/share/keyrings/ubuntu-archive-keyring.gpg`), suites `noble`, `noble-updates`, `noble-security`,
// kernels `linux-image-virtual`/`linux-image-generic` and its component `main`; its archive does not
// answer from the machines this is tested on, so it is not listed.
import type { Distribution } from './resources';
import { DEFAULT_PLATFORM } from './platforms';

/** A package archive: where a distribution's packages come from and the key that signs its indexes. */
export interface PackageArchive {
  /** How the distribution calls itself in a description: `Debian GNU/Linux`. */
  readonly label: string;
  readonly mirror: string;
  readonly securityMirror: string;
  readonly keyring: string;
}

export interface OsRelease {
  /** The catalog's distribution: name and version (`Debian`, `13`) and its id, which stored records point to. */
  readonly name: NonNullable<Distribution['name']>;
  readonly version: string;
  readonly distId: number;
  /** Ids of its base profiles, unique across distributions (a profile URI's last segment alone names it). */
  readonly profileIds: { readonly Minimal: number; readonly Standard: number };
  readonly codename: string;
  /** apt suites: the release and its updates from the archive, then the security suite from the security archive. */
  readonly suites: { readonly archive: readonly [string, ...string[]]; readonly security: string };
  readonly archive: PackageArchive;
  /** The X.0 release day, ISO-8601. */
  readonly releaseDate: string;
  /** The kernel package of each flavour (cloud: the small one for KVM, Xen and Hyper-V clouds). */
  readonly kernels: { readonly cloud: string; readonly generic: string };
  /** Packages every image of the release needs beyond its variant's (what the image's own set-up runs). */
  readonly basePackages: readonly string[];
  /** Groups its images have beyond accounts.ts's STANDARD_GROUPS (read from a built tree's /etc/group). */
  readonly extraGroups: readonly string[];
  /** The catalog data file, under `data/`. */
  readonly catalogFile: string;
}

export const DEBIAN_ARCHIVE: PackageArchive = {
  label: 'Debian GNU/Linux',
  mirror: 'http://deb.debian.org/debian',
  securityMirror: 'http://deb.debian.org/debian-security',
  keyring: '/usr/share/keyrings/debian-archive-keyring.gpg',
};

const DEBIAN_KERNELS = DEFAULT_PLATFORM.kernels;

const debianSuites = (c: string) => ({ archive: [c, `${c}-updates`] as [string, string], security: `${c}-security` });

/** Ordered by distribution id. Ids 1 and 3–5 are Debian 12's and 13's; 2 is Windows (src/server/catalog/distributions.ts). */
export const OS_RELEASES: readonly OsRelease[] = [
  {
    name: 'Debian', version: '12', distId: 1, profileIds: { Minimal: 1, Standard: 2 }, codename: 'bookworm', suites: debianSuites('bookworm'),
    archive: DEBIAN_ARCHIVE, releaseDate: '2023-06-10T00:00:00.000Z', kernels: DEBIAN_KERNELS, basePackages: [], extraGroups: [],
    catalogFile: 'debian-12-amd64.tsv.gz',
  },
  {
    name: 'Debian', version: '13', distId: 3, profileIds: { Minimal: 4, Standard: 5 }, codename: 'trixie', suites: debianSuites('trixie'),
    archive: DEBIAN_ARCHIVE, releaseDate: '2025-08-09T00:00:00.000Z', kernels: DEBIAN_KERNELS,
    // `login` is no longer Essential, so nothing essential pulls in `passwd` (useradd, chpasswd): Priority
    // required still brings it, but the accounts of every image need it whatever the variant.
    basePackages: ['passwd'],
    // systemd 257's sysusers group of the real-time clock.
    extraGroups: ['clock'],
    catalogFile: 'debian-13-amd64.tsv.gz',
  },
];

/** The release of a distribution id, if it is one of OS_RELEASES. */
export function releaseById(distId: number): OsRelease | undefined {
  return OS_RELEASES.find((r) => r.distId === distId);
}

/** The release of codename `suite` (an OS layer names its release so, and installs from its suites). */
export function releaseBySuite(suite: string): OsRelease | undefined {
  return OS_RELEASES.find((r) => r.codename === suite);
}

/** The release a declaration or a script names: `13`, `Debian 13`, `trixie`. */
export function releaseNamed(text: string): OsRelease | undefined {
  const t = text.trim().toLowerCase();
  return OS_RELEASES.find((r) => t === r.version || t === `${r.name} ${r.version}`.toLowerCase() || t === r.codename);
}

/** `Debian 13`: how a template, a profile or an image names its distribution. */
export const releaseLabel = (r: Pick<OsRelease, 'name' | 'version'>): string => `${r.name} ${r.version}`;
