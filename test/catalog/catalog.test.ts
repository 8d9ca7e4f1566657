// Facts of the real Debian 12 main amd64 index, read through the catalog as the server reads it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encode } from '../../src/codec';
import { FiqlError } from '../../src/errors';
import { fiql } from '../../src/fiql';
import { loadCatalog } from '../../src/server/catalog';
import { defaultDataFile, readCatalogData } from '../../src/server/catalog/data-file';
import { OS_RELEASES } from '../../src/model/releases';

const catalog = loadCatalog();
import { XSD } from '../support/shared';
const tmp = mkdtempSync(join(tmpdir(), 'catalog-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function byName(name: string, arch?: string) {
  const q = arch ? fiql.and(fiql.eq('name', name), fiql.eq('arch', arch)) : fiql.eq('name', name);
  return catalog.searchPackages(1, { query: q }).items;
}

describe('distributions', () => {
  it('has Debian 12 x86_64 as distribution 1, Windows 2022 as 2 and Debian 13 as 3, with the platform enumerations', () => {
    expect(catalog.distributions.map((d) => [d.dbId, d.name, d.version, d.arch, d.family, d.uri])).toEqual([
      [1, 'Debian', '12', 'x86_64', 'linux', 'distributions/1'],
      [2, 'Windows', '2022', 'x86_64', 'windows', 'distributions/2'],
      [3, 'Debian', '13', 'x86_64', 'linux', 'distributions/3'],
    ]);
    expect(catalog.getDistribution(1)!.profileUris).toEqual(['distributions/1/profiles/1', 'distributions/1/profiles/2']);
    expect(catalog.getDistribution(3)!.profileUris).toEqual(['distributions/3/profiles/4', 'distributions/3/profiles/5']);
    expect(catalog.getDistribution(4)).toBeUndefined();
    expect(catalog.distributions[0]!.lastPkgBuildDate).toBe(catalog.meta.date);
    // Each release is described and dated by its own index.
    const trixie = readCatalogData(defaultDataFile(OS_RELEASES[1]));
    expect(catalog.getDistribution(3)!.description).toBe(`Debian GNU/Linux 13 (trixie) ${trixie.meta.version}, main amd64`);
    expect(trixie.meta.version).toMatch(/^13\.\d+$/);
    expect(catalog.getDistribution(3)!.lastPkgBuildDate).toBe(trixie.meta.date);
    expect(catalog.getDistribution(1)!.description).toMatch(/^Debian GNU\/Linux 12 \(bookworm\) 12\.\d+, main amd64$/);
  });

  it('answers each Debian release from its own index: packages, profiles and versions', () => {
    const nginx = (distId: number) => catalog.searchPackages(distId, { query: 'name==nginx;arch==amd64' }).items;
    expect(nginx(1)[0]!.version).toMatch(/^1\.22\./);
    expect(nginx(3)[0]!.version).toMatch(/^1\.26\./);
    expect(nginx(3)[0]!.uri).toBe(`distributions/3/pkgs/${nginx(3)[0]!.dbId}`);
    expect(catalog.getPackage(3, nginx(3)[0]!.dbId!)!.version).toBe(nginx(3)[0]!.version);
    expect(catalog.resolveVersion(1, 'bash', 'amd64')).toMatch(/^5\.2\.15-/);
    expect(catalog.resolveVersion(3, 'bash', 'amd64')).toMatch(/^5\.2\.37-/);
    expect(catalog.resolveVersion(2, 'bash', 'amd64')).toBeUndefined();
    expect(catalog.searchPackages(2, { count: 0 }).total).toBe(0);
    expect(catalog.profiles(3).map((p) => [p.dbId, p.name, p.uri])).toEqual([[4, 'Minimal', 'distributions/3/profiles/4'], [5, 'Standard', 'distributions/3/profiles/5']]);
    // A profile id of another distribution is not this one's.
    expect(catalog.getProfile(3, 1)).toBeUndefined();
    expect(catalog.profilePackages(1, 4)).toEqual([]);
    // trixie's required set, from its index (awk over the data file is the independent reading).
    const minimal = catalog.profilePackages(3, 4);
    const required = execFileSync('sh', ['-c', `zcat '${defaultDataFile(OS_RELEASES[1])}' | awk -F'\t' '$9=="required"' | wc -l`], { encoding: 'utf8' });
    expect(minimal).toHaveLength(Number(required));
    expect(minimal.map((p) => p.name)).toContain('passwd');
    expect(minimal.every((p) => p.uri!.startsWith('distributions/3/pkgs/'))).toBe(true);
  });

  it('keeps its cached records safe from callers', () => {
    const d = catalog.getDistribution(1)!;
    d.name = 'Ubuntu';
    expect(catalog.getDistribution(1)!.name).toBe('Debian');
    expect(() => {
      (catalog.distributions[0] as { name: string }).name = 'Ubuntu';
    }).toThrow(TypeError);
  });
});

describe('profiles', () => {
  it('offers Minimal (priority required) and Standard on Debian, each listing its packages', () => {
    const ps = catalog.profiles(1);
    expect(ps.map((p) => [p.dbId, p.name, p.kind, p.uri, p.packagesUri])).toEqual([
      [1, 'Minimal', 'LinuxProfile', 'distributions/1/profiles/1', 'distributions/1/profiles/1/pkgs'],
      [2, 'Standard', 'LinuxProfile', 'distributions/1/profiles/2', 'distributions/1/profiles/2/pkgs'],
    ]);
    const minimal = catalog.profilePackages(1, 1);
    const standard = catalog.profilePackages(1, 2);
    const names = new Set(minimal.map((p) => p.name));
    for (const n of ['bash', 'coreutils', 'dpkg', 'perl-base', 'base-files']) expect(names.has(n)).toBe(true);
    expect(names.has('nginx')).toBe(false);
    expect(names.has('libc6')).toBe(false); // optional in bookworm, pulled in as a dependency
    // Standard is a superset of Minimal, and the priority counts match the index (33 required; 33+32+38).
    expect(minimal).toHaveLength(33);
    expect(standard).toHaveLength(103);
    const std = new Set(standard.map((p) => p.uri));
    expect(minimal.every((p) => std.has(p.uri))).toBe(true);
    expect(ps[0]!.size).toBe(minimal.reduce((n, p) => n + p.size!, 0));
  });

  it('offers one WindowsProfile Standard on Windows, without packages', () => {
    expect(catalog.profiles(2)).toEqual([
      expect.objectContaining({ dbId: 3, name: 'Standard', kind: 'WindowsProfile', edition: 'STANDARD', uri: 'distributions/2/profiles/3' }),
    ]);
    expect(catalog.profilePackages(2, 3)).toEqual([]);
    expect(catalog.getProfile(1, 3)).toBeUndefined();
    expect(catalog.getProfile(2, 3)!.name).toBe('Standard');
  });
});

describe('packages', () => {
  it('holds all of Debian 12 main amd64', () => {
    const all = catalog.searchPackages(1, { count: 0 });
    expect(all.total).toBeGreaterThan(60_000);
    expect(all.items).toEqual([]);
  });

  it('knows bash: amd64, required, with its version split into epoch, upstream and revision', () => {
    const [bash, ...more] = byName('bash');
    expect(more).toEqual([]);
    expect(bash).toMatchObject({ name: 'bash', arch: 'amd64', epoch: 0, version: '5.2.15', repositoryName: 'main' });
    expect(bash!.release).toMatch(/^2\+b\d+$/);
    expect(bash!.fullName).toBe(`bash_${bash!.version}-${bash!.release}_amd64.deb`);
    expect(bash!.uri).toBe(`distributions/1/pkgs/${bash!.dbId}`);
    expect(bash!.pkgBuildDate).toBe(catalog.meta.date);
    expect(catalog.searchPackages(1, { query: "name==bash;priority==required" }).total).toBe(1);
    expect(catalog.getPackage(1, bash!.dbId!)).toEqual(bash);
  });

  it('knows nginx, an arch-all package, and packages with an epoch', () => {
    expect(byName('nginx', 'amd64')).toHaveLength(1);
    expect(byName('nginx-common', 'all')).toHaveLength(1);
    const [perl] = byName('perl', 'amd64'); // no epoch
    expect(perl!.epoch).toBe(0);
    const withEpoch = catalog.searchPackages(1, { query: 'epoch=ge=1', count: 5 });
    expect(withEpoch.total).toBeGreaterThan(100);
    for (const p of withEpoch.items) expect(p.epoch).toBeGreaterThanOrEqual(1);
  });

  it('answers a wildcard search with paging and the right total', () => {
    const q = "name=='lib*';arch==amd64";
    const expected = catalog.searchPackages(1, { query: q }).items;
    expect(expected.every((p) => p.name!.startsWith('lib') && p.arch === 'amd64')).toBe(true);
    const page = catalog.searchPackages(1, { query: q, count: 50, offset: 100, orderBy: 'name' });
    expect(page.total).toBe(expected.length);
    expect(page.total).toBeGreaterThan(10_000);
    expect(page.items.map((p) => p.dbId)).toEqual(expected.slice(100, 150).map((p) => p.dbId));
    const names = page.items.map((p) => p.name!);
    expect(names).toEqual([...names].sort());
    const last = catalog.searchPackages(1, { query: q, count: 1, orderBy: 'name', descending: true }).items[0]!;
    expect(last.dbId).toBe(expected[expected.length - 1]!.dbId);
  });

  it('orders by size descending, biggest first', () => {
    const r = catalog.searchPackages(1, { orderBy: 'size', descending: true, count: 3 });
    expect(r.items[0]!.size).toBeGreaterThanOrEqual(r.items[1]!.size!);
    expect(r.items[0]!.size).toBeGreaterThan(1_000_000_000); // 0ad-data and friends: over 1 GB
  });

  it('holds one current version per name and arch (latestOnly changes nothing), the highest of the suites', () => {
    const total = catalog.searchPackages(1, { count: 0 }).total;
    expect(catalog.searchPackages(1, { count: 0, latestOnly: true }).total).toBe(total);
    const [doc] = catalog.searchPackages(1, { query: "name=='linux-doc'" }).items;
    expect(catalog.searchPackages(1, { query: "name=='linux-doc'" }).total).toBe(1);
    // The catalog's version is what resolveVersion gives, and dpkg (exit 0 when the relation holds)
    // finds it at least as high as the point release's: security updates the kernel.
    const full = catalog.resolveVersion(1, 'linux-doc', 'all')!;
    expect(full).toBe(`${doc!.epoch ? `${doc!.epoch}:` : ''}${doc!.version}${doc!.release ? `-${doc!.release}` : ''}`);
    execFileSync('dpkg', ['--compare-versions', full, 'ge', '6.1.0']);
    expect(catalog.resolveVersion(1, 'linux-doc', 'amd64')).toBeUndefined();
    expect(catalog.resolveVersion(1, 'no-such-package', 'amd64')).toBeUndefined();
  });

  it('refuses a bad query, selector or orderBy with a FiqlError, on any distribution', () => {
    expect(() => catalog.searchPackages(1, { query: "name=='x" })).toThrow(FiqlError);
    expect(() => catalog.searchPackages(1, { query: 'colour==red' })).toThrow(/unknown selector 'colour'/);
    expect(() => catalog.searchPackages(1, { query: 'size==big' })).toThrow(FiqlError);
    expect(() => catalog.searchPackages(1, { orderBy: 'nope' })).toThrow(FiqlError);
    expect(() => catalog.searchPackages(2, { query: 'name==' })).toThrow(FiqlError);
    expect(catalog.searchPackages(2, { query: 'name==bash' })).toEqual({ total: 0, items: [] });
    expect(catalog.getPackage(2, 1)).toBeUndefined();
    expect(catalog.getPackage(1, 0)).toBeUndefined();
    expect(catalog.getPackage(1, 10_000_000)).toBeUndefined();
  });

  it('searches by build date: every package carries the index date', () => {
    const day = catalog.meta.date.slice(0, 10);
    expect(catalog.searchPackages(1, { query: `pkgBuildDate==${day}`, count: 0 }).total).toBe(catalog.searchPackages(1, { count: 0 }).total);
    expect(catalog.searchPackages(1, { query: `pkgBuildDate=gt=${day}`, count: 0 }).total).toBe(0);
  });
});

describe('loading', () => {
  it('is cached, and gives the same ids on a fresh read of the file', () => {
    expect(loadCatalog()).toBe(catalog);
    const again = readCatalogData(defaultDataFile());
    const bash = byName('bash')[0]!;
    expect(again.packages.find((e) => e.id === bash.dbId)!.name).toBe('bash');
    expect(again.meta.digest).toBe(catalog.meta.digest);
    // A copy of the file under another path is another load: same ids, different object.
    const copy = join(tmp, 'copy.tsv.gz');
    execFileSync('cp', [defaultDataFile(), copy]);
    const other = loadCatalog(copy);
    expect(other).not.toBe(catalog);
    expect(other.searchPackages(1, { query: 'name==nginx' }).items.map((p) => p.dbId)).toEqual(byName('nginx').map((p) => p.dbId));
  });

  it('refuses a file that is not a catalog, or whose rows are out of order', () => {
    const bad = join(tmp, 'bad.tsv.gz');
    writeFileSync(bad, execFileSync('gzip', ['-c'], { input: '#format\tsomething else\n' }));
    expect(() => loadCatalog(bad)).toThrow(/not a catalog data file/);
    const unsorted = join(tmp, 'unsorted.tsv.gz');
    const body = [
      '#format\tappliance-forge-catalog 1', '#date\t2024-01-01T00:00:00.000Z',
      'name\tepoch\tversion\trelease\tarch\tsize\tinstalledSize\tpriority\tsection\tfullName',
      'zsh\t0\t5.9\t4\tamd64\t1\t1\toptional\tshells\t', 'bash\t0\t5.2\t1\tamd64\t1\t1\trequired\tshells\t', '',
    ].join('\n');
    writeFileSync(unsorted, execFileSync('gzip', ['-c'], { input: body }));
    expect(() => loadCatalog(unsorted)).toThrow(/out of order/);
  });
});

describe('records on the wire', () => {
  it('encode to XML that validates against uforge.xsd', () => {
    const docs: Array<[string, string]> = [
      ['distribution.xml', encode('xml', 'distribution', catalog.getDistribution(1)!)],
      ['windows.xml', encode('xml', 'distribution', catalog.getDistribution(2)!)],
      ['profile.xml', encode('xml', 'distribProfile', catalog.getProfile(1, 1)!)],
      ['wprofile.xml', encode('xml', 'distribProfile', catalog.getProfile(2, 3)!)],
      ['package.xml', encode('xml', 'package', byName('bash')[0]!)],
    ];
    for (const [name, xml] of docs) {
      const f = join(tmp, name);
      writeFileSync(f, xml);
      execFileSync('xmllint', ['--noout', '--schema', XSD, f], { stdio: 'pipe' });
    }
  });
});
