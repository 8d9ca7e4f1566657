// What mmdebstrap is asked for, derived from an OsLayerSpec alone (pure, so the cache key and the tests
// see exactly the command that builds the tree).
import { shellQuote } from '../../host/shell';
import { ImagingError } from '../errors';
import { DEFAULT_PLATFORM } from '../../model/platforms';
import type { OsLayerSpec, PackageRequest } from '../stages';
import { OS_RELEASES, releaseBySuite, type OsRelease } from '../../model/releases';

/** Bumped whenever the recipe below changes what a spec builds, so old cache entries are not reused. */
export const RECIPE_VERSION = 4;

/**
 * What every image needs to boot and reach the network (the boot loader comes from the host's GRUB:
 * disk/bootdisk.ts). zstd: bookworm's initramfs-tools compresses with it (COMPRESS=zstd) and falls back
 * to gzip with a warning when it is missing; 0.6 MB buys the smaller initrd.
 */
export const BOOT_PACKAGES = ['systemd-sysv', 'udev', 'ifupdown', 'isc-dhcp-client', 'initramfs-tools', 'zstd'] as const;

/**
 * cloud-init and what growing the root partition needs: growpart (cloud-guest-utils) and sudo for
 * the default user's rule — cloud-init's Recommends, which are off here.
 */
export const CLOUD_INIT_PACKAGES = ['cloud-init', 'cloud-guest-utils', 'sudo'] as const;

/**
 * Small images: no manual pages, documentation, translations or info pages, but the copyright
 * files stay (licences must ship). Recommends are not installed: mmdebstrap's default.
 * udev's vendor and model name tables (the IEEE OUI list, PCI, USB, ACPI, Bluetooth and SDIO ids)
 * only name devices (`udevadm info`, `lsusb`); udev compiles hwdb.bin from what is left (0.4 MB
 * instead of 13.5, and the initramfs carries a copy). Interface naming (20-net-ifname) and the
 * device classes stay. `*` spans folders: bookworm's udev ships them under /lib, trixie's under /usr/lib.
 * These options stay in the image (dpkg.cfg.d), so a later upgrade of udev leaves them out too.
 */
export const DPKG_OPTIONS = [
  'path-exclude=/usr/share/man/*',
  'path-exclude=/usr/share/doc/*',
  'path-include=/usr/share/doc/*/copyright',
  'path-exclude=/usr/share/locale/*',
  'path-include=/usr/share/locale/locale.alias',
  'path-exclude=/usr/share/info/*',
  'path-exclude=*/udev/hwdb.d/20-OUI.hwdb',
  'path-exclude=*/udev/hwdb.d/20-*-vendor*.hwdb',
] as const;

/** The backups dpkg and debconf write before each change of their databases: the next change writes them again. */
export const BUILD_BACKUPS = ['/var/lib/dpkg/*-old', '/var/cache/debconf/*-old'] as const;

/**
 * The environment of the build: the kernel's postinst makes no initramfs (initramfs-tools' kernel hook
 * honours INITRD=No), the customize hook of mmdebstrapArgs makes it once every package is set up.
 * Without it the initramfs is made twice: by the kernel's postinst, then again by initramfs-tools'
 * trigger at the end of the same dpkg run (the trigger now finds no initramfs to update).
 */
export const BUILD_ENV = { INITRD: 'No' } as const;

/**
 * The one initramfs of each installed kernel, made once every package is configured, and the
 * /initrd.img links the kernel's postinst left out without it (INITRD unset: linux-base reads it too).
 */
const MAKE_INITRAMFS = `chroot "$1" sh -ec 'for v in $(linux-version list | linux-version sort); do if [ ! -e "/boot/initrd.img-$v" ]; then update-initramfs -c -k "$v"; env -u INITRD linux-update-symlinks install "$v" "/boot/vmlinuz-$v"; fi; done'`;

/** dpkg options of the build only (removed from the tree at the end, see mmdebstrapArgs). */
export const BUILD_ONLY_DPKG_CFG = '00appliance-forge-build';

const PACKAGE_NAME = /^[a-z0-9][a-z0-9+.-]+$/;
const ARCH = /^[a-z0-9-]+$/;
const VERSION = /^(?:[0-9]+:)?[0-9][A-Za-z0-9.+~-]*$/;
const SUITE = /^[a-z][a-z0-9-]*$/;

/** Validate a spec: names, versions and suites reach a command line, so only Debian's own syntax passes. */
export function checkSpec(spec: OsLayerSpec): void {
  if (!SUITE.test(spec.suite)) throw new ImagingError('input', `not a Debian suite name: ${JSON.stringify(spec.suite)}`);
  releaseOf(spec);
  if (spec.arch !== DEFAULT_PLATFORM.debianArch) throw new ImagingError('input', `unsupported architecture ${JSON.stringify(spec.arch)} (${DEFAULT_PLATFORM.debianArch} only)`);
  if (spec.profile !== 'Minimal' && spec.profile !== 'Standard') throw new ImagingError('input', `unknown profile ${JSON.stringify(spec.profile)}`);
  if (spec.kernel !== 'cloud' && spec.kernel !== 'generic') throw new ImagingError('input', `unknown kernel flavour ${JSON.stringify(spec.kernel)}`);
  for (const p of spec.packages) {
    if (!PACKAGE_NAME.test(p.name)) throw new ImagingError('input', `not a Debian package name: ${JSON.stringify(p.name)}`);
    if (p.arch !== undefined && !ARCH.test(p.arch)) throw new ImagingError('input', `package ${p.name}: not an architecture: ${JSON.stringify(p.arch)}`);
    if (p.version !== undefined && !VERSION.test(p.version)) throw new ImagingError('input', `package ${p.name}: not a Debian version: ${JSON.stringify(p.version)}`);
  }
}

/** `name[:arch][=version]`, as apt reads it. */
export function packageArg(p: PackageRequest): string {
  return `${p.name}${p.arch ? `:${p.arch}` : ''}${p.version ? `=${p.version}` : ''}`;
}

/** The release an OS layer is built from (its suite is the release's codename). */
export function releaseOf(spec: Pick<OsLayerSpec, 'suite'>): OsRelease {
  const r = releaseBySuite(spec.suite);
  if (!r) throw new ImagingError('input', `unknown release ${JSON.stringify(spec.suite)} (known: ${OS_RELEASES.map((x) => x.codename).join(', ')})`);
  return r;
}

/**
 * Every package asked for by name: the boot set, the release's own, the kernel, cloud-init's, then the
 * spec's (sorted, unique).
 */
export function includeList(spec: OsLayerSpec): string[] {
  const release = releaseOf(spec);
  const own = [...BOOT_PACKAGES, ...release.basePackages, release.kernels[spec.kernel], ...(spec.cloudInit ? CLOUD_INIT_PACKAGES : [])];
  const asked = new Map<string, string>();
  for (const p of spec.packages) asked.set(`${p.name}:${p.arch ?? ''}`, packageArg(p));
  // A spec package with a pin replaces the bare boot-set entry of the same name.
  const pinnedNames = new Set(spec.packages.map((p) => p.name));
  return [...own.filter((n) => !pinnedNames.has(n)), ...[...asked.values()].sort()];
}

/** One-line apt sources: the release's suites from the archive, its security suite from the security archive. */
export function sourceLines(spec: OsLayerSpec): string[] {
  const { archive, security } = spec.mirror;
  const { suites } = releaseOf(spec);
  return [...suites.archive.map((s) => `deb ${archive} ${s} main`), ...(security ? [`deb ${security} ${suites.security} main`] : [])];
}

/**
 * mmdebstrap's arguments for building `target` (a directory). `debCache`: a directory of .deb files
 * put into the tree's apt archive before the download, so apt fetches only what it lacks: hard-linked
 * (`debs: 'link'`, the same file system; a file the namespace's root may not link is fetched again),
 * or copied (`'copy'`: a tree in memory, another file system). The archive is kept (skip
 * cleanup/apt/cache) for the caller to harvest. `mode`: `unshare` as root of the build's user
 * namespace, `root` on the host.
 */
export function mmdebstrapArgs(spec: OsLayerSpec, target: string, debCache: string, mode: 'unshare' | 'root', debs: 'link' | 'copy' = 'link'): string[] {
  return [
    '--verbose',
    `--mode=${mode}`,
    '--format=directory',
    `--variant=${spec.profile === 'Standard' ? 'standard' : 'required'}`,
    `--architectures=${spec.arch}`,
    ...DPKG_OPTIONS.map((o) => `--dpkgopt=${o}`),
    `--include=${includeList(spec).join(',')}`,
    '--skip=essential/unlink,cleanup/apt/cache',
    // cp -a gives the folder the cache folder's owner, which the namespace sees as nobody: the image's root owns it.
    `--setup-hook=mkdir -p "$1/var/cache/apt/archives" && { cp -a${debs === 'link' ? 'l' : ''} ${shellQuote(`${debCache}/.`)} "$1/var/cache/apt/archives/" 2>/dev/null || true; } && chown 0:0 "$1/var/cache/apt/archives"`,
    // dpkg fsyncs every unpacked file; a half-built tree is thrown away anyway, and the cache syncs the
    // finished tree once before it is kept. A hook, not --dpkgopt, so the option does not stay in the image.
    `--setup-hook=mkdir -p "$1/etc/dpkg/dpkg.cfg.d" && echo force-unsafe-io > "$1/etc/dpkg/dpkg.cfg.d/${BUILD_ONLY_DPKG_CFG}"`,
    `--customize-hook=${MAKE_INITRAMFS}`,
    `--customize-hook=rm -f "$1/etc/dpkg/dpkg.cfg.d/${BUILD_ONLY_DPKG_CFG}" ${BUILD_BACKUPS.map((g) => `"$1"${g}`).join(' ')}`,
    spec.suite,
    target,
    ...sourceLines(spec),
  ];
}
