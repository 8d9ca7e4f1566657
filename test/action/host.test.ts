// What `url: embedded` installs on a runner that lacks the image tools (action/src/host.ts): the
// Debian packages of the tools not found (PATH cut down to hide /usr/bin), each checked against
// dpkg's own record of which package owns the tool's file on this host (an independent source).
import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import hostTools from '../../data/host-tools.json';
import { missingToolPackages } from '../../action/src/host';
import { findOnPath, sbinPath } from '../../src/host/path';

const PATH = process.env.PATH;

/** The package dpkg says owns `file` (`pkg:arch: /path` → pkg); merged /usr: dpkg may know it as /bin/…. */
function owner(file: string): string {
  for (const f of [file, file.replace(/^\/usr\//, '/')]) {
    try {
      return execFileSync('dpkg', ['-S', f], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split(':')[0]!.trim();
    } catch {
      // not under this name
    }
  }
  throw new Error(`dpkg knows no package owning ${file}`);
}

describe('missing image tools', () => {
  afterEach(() => {
    process.env.PATH = PATH;
  });

  it('none on this host (scripts/prereqs.sh installed them)', () => {
    expect(missingToolPackages()).toEqual([]);
  });

  it('with /usr/bin hidden: the packages of the tools outside /usr/sbin and /sbin, each providing its tool per dpkg', () => {
    const outside = Object.keys(hostTools.build).filter((t) => !t.startsWith('/') && !findOnPath(t, '/usr/sbin:/sbin'));
    const files = new Map(outside.map((t) => [t, findOnPath(t, sbinPath())!]));
    process.env.PATH = '/nonexistent';
    const missing = missingToolPackages();
    process.env.PATH = PATH;
    expect(missing).toContain('qemu-utils');
    // Installing each package brings its tool: the package owns the file, or depends on its owner
    // (grub-pc-bin for grub-mkimage: the i386-pc modules, and grub-common's program).
    for (const t of outside) {
      const pkg = (hostTools.build as Record<string, string>)[t]!;
      expect(missing).toContain(pkg);
      const own = owner(files.get(t)!);
      const depends = execFileSync('dpkg-query', ['-W', '-f=${Depends}', pkg], { encoding: 'utf8' });
      expect(own === pkg || depends.split(/[,|]/).some((d) => d.trim().split(' ')[0] === own), `${t}: ${pkg} vs ${own}`).toBe(true);
    }
    expect(missing.length).toBe(new Set(outside.map((t) => (hostTools.build as Record<string, string>)[t])).size);
  });
});
