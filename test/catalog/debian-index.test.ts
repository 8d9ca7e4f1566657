// The Debian index module against the REAL mirror (deb.debian.org, the suites a bookworm system
// installs from): InRelease checked with gpgv, Packages downloaded once into a shared cache and checked
// against InRelease. Independent vectors: sha256sum and xz/grep on the downloaded file, apt's own index.
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareVersions, fetchSuite, mergeSuites, packageKey, releaseSuites } from '../../src/debian';
import { OS_RELEASES } from '../../src/model/releases';
import { sharedIndexCacheDir } from '../../src/server/catalog/refresh';

const CACHE = sharedIndexCacheDir();
const bookworm = OS_RELEASES[0]!;
const bookwormSuites = (mirror?: string, security?: false) => releaseSuites(bookworm, mirror, security);

describe('Debian index from the real mirror', () => {
  it('verifies InRelease, fetches Packages once and merges the three suites to one current version each', async () => {
    const suites = [];
    for (const s of bookwormSuites()) suites.push(await fetchSuite(s, { cacheDir: CACHE }));
    const [main, updates, security] = suites.map((s) => s.release);
    expect([main!.codename, updates!.codename, security!.codename]).toEqual(['bookworm', 'bookworm-updates', 'bookworm-security']);
    expect(main!.version).toMatch(/^12\.\d+$/);
    expect(bookwormSuites('http://m/debian', false).map((s) => s.suite)).toEqual(['bookworm', 'bookworm-updates']);

    // The cached file is the one InRelease lists (sha256sum is the independent hash).
    const dir = join(CACHE, 'deb.debian.org_debian_bookworm');
    const file = readdirSync(dir).find((f) => f.startsWith('main_binary-amd64_Packages'))!;
    const listed = main!.sha256.get(file.replaceAll('_', '/'))!;
    expect(execFileSync('sha256sum', [join(dir, file)], { encoding: 'utf8' }).split(' ')[0]).toBe(listed.sha256);
    // A second fetch reuses it: same inode, not a new download.
    const ino = execFileSync('stat', ['-c', '%i', join(dir, file)], { encoding: 'utf8' });
    await fetchSuite(bookwormSuites()[0]!, { cacheDir: CACHE });
    expect(execFileSync('stat', ['-c', '%i', join(dir, file)], { encoding: 'utf8' })).toBe(ino);

    const merged = await mergeSuites(suites);
    const decompressed = file.endsWith('.xz') ? ['xz', '-dc'] : ['zcat'];
    const names = execFileSync('sh', ['-c', `${decompressed.join(' ')} '${join(dir, file)}' | grep '^Package: ' | sort -u | wc -l`], { encoding: 'utf8' });
    // Every name of the release is in the merge (updates and security only add versions, or a few names).
    const mergedNames = new Set([...merged.packages.values()].map((p) => p.name));
    expect(mergedNames.size).toBeGreaterThanOrEqual(Number(names));
    expect(mergedNames.size).toBeLessThan(Number(names) + 500);

    // Security updates win over the point release: for each package security ships, the merge holds a
    // version at least as high (dpkg --compare-versions decides, on a sample).
    const secText = execFileSync('sh', ['-c', `xz -dc '${join(CACHE, 'deb.debian.org_debian-security_bookworm-security', 'main_binary-amd64_Packages.xz')}'`], { encoding: 'utf8', maxBuffer: 256 << 20 });
    const sec = [...secText.matchAll(/^Package: (.+)\n(?:.+\n)*?Version: (.+)\n(?:.+\n)*?Architecture: (.+)$/gm)].slice(0, 40);
    expect(sec.length).toBe(40);
    for (const [, name, version, arch] of sec) {
      const cur = merged.packages.get(packageKey(name!, arch!))!;
      execFileSync('dpkg', ['--compare-versions', cur.version, 'ge', version!]);
      expect(compareVersions(cur.version, version!)).toBeGreaterThanOrEqual(0);
    }
  }, 300_000);
});
