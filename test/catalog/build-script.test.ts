// scripts/build-catalog.mjs run as a real process, on apt's real index when this machine has it, and on
// a small hand-written index in any case.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCatalog } from '../../src/server/catalog';
import { defaultDataFile } from '../../src/server/catalog/data-file';
import { sharedIndexCacheDir } from '../../src/server/catalog/refresh';
import { OS_RELEASES } from '../../src/model/releases';

const SCRIPT = join(__dirname, '../../scripts/build-catalog.mjs');
const LISTS = '/var/lib/apt/lists';
const hasIndex = existsSync(LISTS) && readdirSync(LISTS).some((f) => f.includes('_dists_bookworm_main_binary-amd64_Packages'));
const tmp = mkdtempSync(join(tmpdir(), 'build-catalog-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function header(file: string): Record<string, string> {
  const lines = gunzipSync(readFileSync(file)).toString('utf8').split('\n');
  return Object.fromEntries(lines.filter((l) => l.startsWith('#')).map((l) => l.slice(1).split('\t') as [string, string]));
}

describe('build-catalog.mjs', () => {
  it('rebuilds the committed data file byte for byte from the same mirror index, keeping every id', () => {
    // The real mirror: InRelease fetched and checked, Packages from the shared cache when unchanged.
    const out = join(tmp, 'real.tsv.gz');
    // Memory bound: the index is streamed and only the kept fields are held (docs/server.md "Catalog refresh").
    execFileSync(process.execPath, ['--max-old-space-size=128', SCRIPT, '--mirror', 'http://deb.debian.org/debian', '--security-mirror', 'http://deb.debian.org/debian-security',
      '--previous', defaultDataFile(), '--out', out], { stdio: 'pipe' });
    const built = header(out);
    const committed = header(defaultDataFile());
    expect(Number(built.count)).toBeGreaterThan(60_000);
    // The mirror may have moved on since the file was committed: compare bytes only for the same index.
    if (built.date === committed.date) expect(readFileSync(out).equals(readFileSync(defaultDataFile()))).toBe(true);
    const ids = (file: string) => new Map(rowsOf(file).map((r) => [`${r[1]}\t${r[5]}`, r[0]]));
    const before = ids(defaultDataFile());
    const after = ids(out);
    for (const [key, id] of before) if (after.has(key)) expect(after.get(key)).toBe(id);
  }, 120_000);

  it('builds Debian 13 (trixie) from its three suites: one row per name and arch the Packages files list, ids of the committed file kept', () => {
    const trixie = OS_RELEASES.find((r) => r.codename === 'trixie')!;
    const out = join(tmp, 'trixie.tsv.gz');
    execFileSync(process.execPath, ['--max-old-space-size=128', SCRIPT, '--release', '13', '--mirror', 'http://deb.debian.org/debian', '--security-mirror', 'http://deb.debian.org/debian-security',
      '--previous', defaultDataFile(trixie), '--out', out], { stdio: 'pipe' });
    const built = header(out);
    expect([built.codename, built.suite]).toEqual(['trixie', 'stable']);
    expect(built.version).toMatch(/^13\.\d+$/);
    expect(built.source!.split(' ').map((u) => u.replace(/^.*\/dists\/([^/]+)\/.*$/, '$1'))).toEqual(['trixie', 'trixie-updates', 'trixie-security']);
    // An independent count: the distinct (Package, Architecture) pairs of the three fetched Packages files, by awk.
    const files = ['deb.debian.org_debian_trixie', 'deb.debian.org_debian_trixie-updates', 'deb.debian.org_debian-security_trixie-security']
      .map((d) => join(sharedIndexCacheDir(), d, 'main_binary-amd64_Packages.xz'));
    const pairs = execFileSync('sh', ['-c', `xz -dc ${files.map((f) => `'${f}'`).join(' ')} | awk '/^Package: /{p=$2} /^Architecture: /{print p" "$2}' | sort -u | wc -l`], { encoding: 'utf8' });
    expect(Number(built.count)).toBe(Number(pairs));
    expect(Number(built.count)).toBeGreaterThan(60_000);
    const required = execFileSync('sh', ['-c', `xz -dc '${files[0]}' | grep -c '^Priority: required'`], { encoding: 'utf8' });
    const c = loadCatalog(out, trixie);
    // Minimal is every required package; updates may add a few required names, never remove one.
    expect(c.profilePackages(trixie.distId, trixie.profileIds.Minimal).length).toBeGreaterThanOrEqual(Number(required));
    expect(c.profilePackages(trixie.distId, trixie.profileIds.Minimal).length).toBeLessThan(Number(required) + 5);
    expect(c.resolveVersion(trixie.distId, 'passwd', 'amd64')).toMatch(/^1:4\.17\./);
    if (built.date === header(defaultDataFile(trixie)).date) expect(readFileSync(out).equals(readFileSync(defaultDataFile(trixie)))).toBe(true);
  }, 120_000);

  it.runIf(hasIndex)('reads apt\'s lists too', () => {
    const out = join(tmp, 'lists.tsv.gz');
    execFileSync(process.execPath, [SCRIPT, '--previous', defaultDataFile(), '--out', out], { stdio: 'pipe' });
    expect(Number(header(out).count)).toBeGreaterThan(60_000);
    expect(header(out).source).toContain('_dists_bookworm-security_main_binary-amd64_Packages');
  }, 60_000);

  const stanza = (name: string, version: string, arch: string, prio: string) =>
    `Package: ${name}\nVersion: ${version}\nInstalled-Size: 10\nArchitecture: ${arch}\nDescription: x\n more text: here\n` +
    `Section: misc\nPriority: ${prio}\nFilename: pool/main/x/${name}_${version.replace(/^\d+:/, '')}_${arch}.deb\nSize: 100\n`;
  function lists(name: string, main: string[], security: string[] = []): string {
    const dir = join(tmp, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'h_dists_bookworm_main_binary-amd64_Packages'), main.join('\n'));
    writeFileSync(join(dir, 'h_dists_bookworm_InRelease'), 'Origin: Debian\nCodename: bookworm\nVersion: 12.9\nDate: Sat, 11 Jan 2025 10:00:00 UTC\n');
    if (security.length) {
      writeFileSync(join(dir, 's_dists_bookworm-security_main_binary-amd64_Packages'), security.join('\n'));
      writeFileSync(join(dir, 's_dists_bookworm-security_InRelease'), 'Origin: Debian\nCodename: bookworm-security\nDate: Sun, 12 Jan 2025 08:00:00 UTC\n');
    }
    return dir;
  }
  function rowsOf(file: string): string[][] {
    return gunzipSync(readFileSync(file)).toString('utf8').split('\n').filter((l) => l && !l.startsWith('#')).slice(1).map((l) => l.split('\t'));
  }

  it('keeps one current version per name and arch, in dpkg order across suites, with ids stable over a refresh', () => {
    const first = lists('small', [
      stanza('zed', '1.0-1', 'amd64', 'optional'),
      stanza('abc', '1:2.0~rc1-3', 'all', 'required'),
      stanza('abc', '1:2.0-1', 'all', 'required'),
      stanza('abc', '1:2.0~beta-9', 'all', 'required'),
      stanza('native', '3.1', 'amd64', 'standard'),
    ], [stanza('zed', '1.0-1+deb12u1', 'amd64', 'optional')]);
    const out1 = join(tmp, 'small.tsv.gz');
    execFileSync(process.execPath, [SCRIPT, '--lists', first, '--out', out1], { stdio: 'pipe' });
    expect(rowsOf(out1).map((r) => r.join('\t'))).toEqual([
      '1\tabc\t1\t2.0\t1\tall\t100\t10\trequired\tmisc\t',
      '2\tnative\t0\t3.1\t\tamd64\t100\t10\tstandard\tmisc\t',
      // security's 1.0-1+deb12u1 is above the release's 1.0-1; its file name is the derived one again
      '3\tzed\t0\t1.0\t1+deb12u1\tamd64\t100\t10\toptional\tmisc\t',
    ]);
    // The newest Release date stands for every package.
    expect(header(out1).date).toBe('2025-01-12T08:00:00.000Z');
    const c = loadCatalog(out1);
    expect(c.searchPackages(1, { query: 'name==abc' }).items.map((p) => [p.dbId, p.version, p.release])).toEqual([[1, '2.0', '1']]);
    expect(c.searchPackages(1, { query: 'name==native' }).items[0]).not.toHaveProperty('release');
    expect(c.resolveVersion(1, 'abc', 'all')).toBe('1:2.0-1');
    expect(c.resolveVersion(1, 'zed', 'amd64')).toBe('1.0-1+deb12u1');
    expect(c.resolveVersion(1, 'zed', 'all')).toBeUndefined();
    expect(c.profilePackages(1, 1).map((p) => p.dbId)).toEqual([1]);
    expect(c.distributions[0]!.lastPkgBuildDate).toBe('2025-01-12T08:00:00.000Z');

    // A refresh: `native` is gone, `aaa` and `mid` are new, `abc` has a new version.
    const second = lists('small2', [stanza('zed', '1.0-2', 'amd64', 'optional'), stanza('abc', '1:2.1-1', 'all', 'required'),
      stanza('mid', '1', 'amd64', 'optional'), stanza('aaa', '0.1-1', 'amd64', 'optional')]);
    const out2 = join(tmp, 'small2.tsv.gz');
    execFileSync(process.execPath, [SCRIPT, '--lists', second, '--previous', out1, '--out', out2], { stdio: 'pipe' });
    expect(rowsOf(out2).map((r) => [r[0], r[1], r[3]])).toEqual([['4', 'aaa', '0.1'], ['1', 'abc', '2.1'], ['5', 'mid', '1'], ['3', 'zed', '1.0']]);
    expect(header(out2).nextId).toBe('6');
    const text = gunzipSync(readFileSync(out2)).toString('utf8');
    expect(text).toContain('#retired\t2\tnative\tamd64\n');
    const c2 = loadCatalog(out2);
    expect(c2.getPackage(1, 2)).toBeUndefined();
    expect(c2.getPackage(1, 5)!.name).toBe('mid');
    // Ordered by dbId although the rows are by name: the catalog sorts when ids no longer follow rows.
    expect(c2.searchPackages(1, { orderBy: 'dbId' }).items.map((p) => p.dbId)).toEqual([1, 3, 4, 5]);

    // `native` comes back: it gets its old id back, not a new one.
    const third = lists('small3', [stanza('native', '3.2', 'amd64', 'standard'), stanza('aaa', '0.1-1', 'amd64', 'optional')]);
    const out3 = join(tmp, 'small3.tsv.gz');
    execFileSync(process.execPath, [SCRIPT, '--lists', third, '--previous', out2, '--out', out3], { stdio: 'pipe' });
    expect(rowsOf(out3).map((r) => [r[0], r[1]])).toEqual([['4', 'aaa'], ['2', 'native']]);
    expect(gunzipSync(readFileSync(out3)).toString('utf8').match(/^#retired\t.*$/gm)).toEqual(['#retired\t1\tabc\tall', '#retired\t3\tzed\tamd64', '#retired\t5\tmid\tamd64']);
  });

  it('fails with a clear message when there is no index', () => {
    const r = spawnSync(process.execPath, [SCRIPT, '--lists', join(tmp, 'nothing'), '--out', join(tmp, 'none.gz')], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('apt-get update');
    expect(existsSync(join(tmp, 'none.gz'))).toBe(false);
  });
});
