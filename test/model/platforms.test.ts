// The platform table: its facts against independent sources (util-linux's list of GPT types, the files
// Debian's packages install on this host), and no other file of the image builder or the Debian archive reader naming an architecture.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PLATFORM, PLATFORMS, platformOfDebianArch } from '../../src/model/platforms';

const ROOT = path.resolve(__dirname, '../..');

describe('the platform table', () => {
  it('has the root partition type util-linux names "Linux root" of each architecture', () => {
    const types = execFileSync('sfdisk', ['--label', 'gpt', '-T'], { encoding: 'utf8' });
    const named = { x86_64: 'Linux root (x86-64)', aarch64: 'Linux root (ARM-64)' } as const;
    for (const p of Object.values(PLATFORMS)) {
      expect(types, p.name).toMatch(new RegExp(`^${p.rootPartitionType}\\s+${named[p.name].replace(/[()]/g, '\\$&')}$`, 'm'));
    }
  });

  it("names the host's files that a build of this host's architecture takes (Debian's grub-pc-bin, shim-signed, grub-efi-amd64-signed)", () => {
    const p = DEFAULT_PLATFORM;
    for (const f of [p.efi.signedShim, p.efi.signedGrub, path.join(p.bios.grubDir, 'boot.img'), path.join(p.bios.grubDir, 'kernel.img')]) {
      expect(existsSync(f), f).toBe(true);
    }
    // The removable-media names: the EFI binary names of the host's packages, upper-cased by the UEFI spec.
    expect(p.efi.bootPath.toLowerCase()).toBe(`efi/boot/boot${path.basename(p.efi.signedShim).replace(/^shim|\.efi\.signed$/g, '')}.efi`);
    expect(path.basename(p.efi.grubPath)).toBe(path.basename(p.efi.signedGrub, '.signed'));
  });

  it('maps Debian architecture names back, and knows no other', () => {
    expect(platformOfDebianArch('amd64')?.name).toBe('x86_64');
    expect(platformOfDebianArch('arm64')?.name).toBe('aarch64');
    expect(platformOfDebianArch('i386')).toBeUndefined();
    // dpkg's own name for this host's architecture is the default platform's.
    expect(execFileSync('dpkg', ['--print-architecture'], { encoding: 'utf8' }).trim()).toBe(DEFAULT_PLATFORM.debianArch);
  });

  it('is the only file of the image builder that names an architecture, its files or its console', () => {
    const names = /\b(amd64|arm64|x86_64|aarch64|i386-pc|x86-64|ttyS0|ttyAMA0|BOOTX64|BOOTAA64|shimx64|grubx64|shimaa64|grubaa64|qemu-system-x86_64|qemu-system-aarch64)\b/;
    const found: string[] = [];
    const walk = (dir: string): void => {
      for (const e of readdirSync(dir)) {
        const f = path.join(dir, e);
        if (statSync(f).isDirectory()) walk(f);
        else if (f.endsWith('.ts')) {
          readFileSync(f, 'utf8').split('\n').forEach((line, i) => {
            // Code only: a comment may say what an architecture is.
            const code = line.replace(/\/\*.*?\*\//g, '').replace(/\/\/.*$/, '').replace(/^\s*(\/\*\*?|\*).*$/, '');
            if (names.test(code)) found.push(`${path.relative(ROOT, f)}:${i + 1}: ${line.trim()}`);
          });
        }
      }
    };
    // The Debian archive reader (src/debian) reads the same table.
    for (const dir of ['src/imaging', 'src/debian']) walk(path.join(ROOT, dir));
    expect(found).toEqual([]);
  });
});
