// The keyboard table against the XKB symbols each release ships: its xkb-data package, found in the
// release's real (signature-checked) index and unpacked by dpkg-deb, must define every layout and
// variant the table writes to /etc/default/keyboard.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fetchSuite, mergeSuites, packageKey, releaseSuites } from '../../src/debian';
import { KEYBOARD_XKB } from '../../src/model/keyboards';
import { OS_RELEASES } from '../../src/model/releases';
import { sharedIndexCacheDir } from '../../src/server/catalog/refresh';

const tmp = mkdtempSync(join(tmpdir(), 'keyboards-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe.each(OS_RELEASES)('keyboards on $name $version', (release) => {
  it('every layout and variant of the table is in the release\'s xkb-data', async () => {
    const suites = [];
    for (const s of releaseSuites(release)) suites.push(await fetchSuite(s, { cacheDir: sharedIndexCacheDir() }));
    const pkg = (await mergeSuites(suites)).packages.get(packageKey('xkb-data', 'all'))!;
    const res = await fetch(`${release.archive.mirror}/${pkg.filename}`);
    expect(res.status).toBe(200);
    const deb = join(tmp, `${release.codename}.deb`);
    writeFileSync(deb, Buffer.from(await res.arrayBuffer()));
    const root = join(tmp, release.codename);
    execFileSync('dpkg-deb', ['-x', deb, root]);
    const symbols = join(root, 'usr/share/X11/xkb/symbols');
    const missing = Object.entries(KEYBOARD_XKB).flatMap(([name, xkb]) => {
      const [layout, variant] = xkb as readonly [string, string?];
      const file = join(symbols, layout);
      if (!existsSync(file)) return [`${name}: ${layout}`];
      return variant && !readFileSync(file, 'utf8').includes(`xkb_symbols "${variant}"`) ? [`${name}: ${layout}(${variant})`] : [];
    });
    expect(missing).toEqual([]);
  }, 120_000);
});
