// What mmdebstrap is asked for: the package set of each profile, pins, sources; hostile input refused.
import { describe, expect, it } from 'vitest';
import { isImagingError } from '../../../src/imaging/errors';
import { checkSpec, includeList, mmdebstrapArgs, sourceLines } from '../../../src/imaging/os/recipe';
import { spec } from './helpers';

const m = { archive: 'http://deb.debian.org/debian', security: 'http://deb.debian.org/debian-security' };

describe('the mmdebstrap recipe', () => {
  it('Minimal: required + the boot set + the kernel of the flavour; openssh only when asked', () => {
    const s = spec({ mirror: m });
    const args = mmdebstrapArgs(s, '/t', '/c/debs', 'root');
    expect(args).toContain('--variant=required');
    expect(includeList(s)).toContain('linux-image-cloud-amd64');
    expect(includeList({ ...s, kernel: 'generic' })).toContain('linux-image-amd64');
    expect(includeList(s)).not.toContain('openssh-server');
    expect(includeList(spec({ packages: [{ name: 'openssh-server' }] }))).toContain('openssh-server');
    for (const p of ['systemd-sysv', 'udev', 'ifupdown', 'isc-dhcp-client', 'initramfs-tools']) expect(includeList(s)).toContain(p);
  });

  it('Standard uses the standard variant; cloud-init brings growpart', () => {
    expect(mmdebstrapArgs(spec({ profile: 'Standard' }), '/t', '/c', 'root')).toContain('--variant=standard');
    expect(includeList(spec({ cloudInit: true }))).toEqual(expect.arrayContaining(['cloud-init', 'cloud-guest-utils']));
    expect(includeList(spec())).not.toContain('cloud-init');
  });

  it('pins as name[:arch]=version, replacing the same boot-set name', () => {
    const l = includeList(spec({ packages: [{ name: 'nginx', version: '1.22.1-9+deb12u3' }, { name: 'zstd', arch: 'amd64', version: '1.5.4+dfsg2-5' }] }));
    expect(l).toContain('nginx=1.22.1-9+deb12u3');
    expect(l).toContain('zstd:amd64=1.5.4+dfsg2-5');
    expect(l).not.toContain('zstd');
  });

  it('sources: suite and -updates from the archive, -security from the security archive', () => {
    expect(sourceLines(spec({ mirror: m }))).toEqual([
      'deb http://deb.debian.org/debian bookworm main',
      'deb http://deb.debian.org/debian bookworm-updates main',
      'deb http://deb.debian.org/debian-security bookworm-security main',
    ]);
    expect(sourceLines(spec({ mirror: { archive: m.archive } }))).toHaveLength(2);
  });

  it('links the kept .deb files into the archive, or copies them for a tree on another file system', () => {
    const hook = (debs?: 'link' | 'copy') => mmdebstrapArgs(spec(), '/t', "/c/it's", 'root', debs).find((a) => a.includes('/var/cache/apt/archives/"'));
    expect(hook()).toContain(`cp -al '/c/it'\\''s/.' "$1/var/cache/apt/archives/"`);
    expect(hook('copy')).toContain(`cp -a '/c/it'\\''s/.' "$1/var/cache/apt/archives/"`);
  });

  it('keeps copyright files while leaving out docs and manual pages', () => {
    const args = mmdebstrapArgs(spec(), '/t', '/c', 'root');
    expect(args).toContain('--dpkgopt=path-exclude=/usr/share/doc/*');
    expect(args.indexOf('--dpkgopt=path-include=/usr/share/doc/*/copyright')).toBeGreaterThan(args.indexOf('--dpkgopt=path-exclude=/usr/share/doc/*'));
  });

  it("leaves out udev's device name tables, not interface naming; removes dpkg's and debconf's backups", () => {
    const args = mmdebstrapArgs(spec(), '/t', '/c', 'root');
    const excluded = args.filter((a) => a.startsWith('--dpkgopt=path-exclude=')).map((a) => a.slice('--dpkgopt=path-exclude='.length));
    // dpkg's globs: `*` spans `/` (fnmatch without FNM_PATHNAME), as dpkg.cfg(5) says.
    const dropped = (p: string): boolean => excluded.some((g) => new RegExp(`^${g.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`).test(p));
    for (const t of ['20-OUI', '20-pci-vendor-model', '20-usb-vendor-model', '20-acpi-vendor', '20-bluetooth-vendor-product', '20-sdio-vendor-model']) {
      expect(dropped(`/usr/lib/udev/hwdb.d/${t}.hwdb`), t).toBe(true);
      expect(dropped(`/lib/udev/hwdb.d/${t}.hwdb`), t).toBe(true);
    }
    for (const t of ['20-net-ifname', '20-pci-classes', '20-dmi-id', '60-keyboard', '70-mouse']) expect(dropped(`/usr/lib/udev/hwdb.d/${t}.hwdb`), t).toBe(false);
    const hook = args.find((a) => a.startsWith('--customize-hook=rm -f'));
    expect(hook).toContain('"$1"/var/lib/dpkg/*-old');
    expect(hook).toContain('"$1"/var/cache/debconf/*-old');
  });

  it('refuses what is not Debian syntax', () => {
    const bad = [
      spec({ suite: 'bookworm main' }),
      spec({ packages: [{ name: '-o=APT::x' }] }),
      spec({ packages: [{ name: 'nginx', version: '1.0 ; reboot' }] }),
      spec({ packages: [{ name: 'nginx', arch: 'amd64,x' }] }),
      { ...spec(), arch: 'arm64' } as unknown as ReturnType<typeof spec>,
    ];
    for (const s of bad) {
      let err: unknown;
      try {
        checkSpec(s);
      } catch (e) {
        err = e;
      }
      expect(isImagingError(err, 'input'), JSON.stringify(s)).toBe(true);
    }
  });
});
