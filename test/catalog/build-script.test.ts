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
  it.runIf(hasIndex)('rebuilds the committed data file byte for byte from the same index', () => {
    const out = join(tmp, 'real.tsv.gz');
    execFileSync(process.execPath, [SCRIPT, '--out', out], { stdio: 'pipe' });
    const built = header(out);
    const committed = header(defaultDataFile());
    expect(Number(built.count)).toBeGreaterThan(60_000);
    // apt-get update may have fetched a newer index since the file was committed: compare only the same one.
    if (built.date === committed.date) expect(readFileSync(out).equals(readFileSync(defaultDataFile()))).toBe(true);
  }, 60_000);

  it('turns a small index into sorted rows with split versions, in dpkg version order', () => {
    const lists = join(tmp, 'lists');
    mkdirSync(lists, { recursive: true });
    const stanza = (name: string, version: string, arch: string, prio: string, extra = '') =>
      `Package: ${name}\nVersion: ${version}\nInstalled-Size: 10\nArchitecture: ${arch}\nDescription: x\n more text: here\n` +
      `Section: misc\nPriority: ${prio}\nFilename: pool/main/x/${name}_${version.replace(/^\d+:/, '')}_${arch}.deb\nSize: 100\n${extra}`;
    writeFileSync(
      join(lists, 'h_dists_bookworm_main_binary-amd64_Packages'),
      [
        stanza('zed', '1.0-1', 'amd64', 'optional'),
        stanza('abc', '1:2.0~rc1-3', 'all', 'required'),
        stanza('abc', '1:2.0-1', 'all', 'required'),
        stanza('abc', '1:2.0~beta-9', 'all', 'required'),
        stanza('native', '3.1', 'amd64', 'standard'),
      ].join('\n'),
    );
    writeFileSync(join(lists, 'h_dists_bookworm_InRelease'), 'Origin: Debian\nCodename: bookworm\nVersion: 12.9\nDate: Sat, 11 Jan 2025 10:00:00 UTC\n');
    const out = join(tmp, 'small.tsv.gz');
    execFileSync(process.execPath, [SCRIPT, '--lists', lists, '--out', out], { stdio: 'pipe' });
    const rows = gunzipSync(readFileSync(out)).toString('utf8').split('\n').filter((l) => l && !l.startsWith('#')).slice(1);
    expect(rows).toEqual([
      'abc\t1\t2.0~beta\t9\tall\t100\t10\trequired\tmisc\t',
      'abc\t1\t2.0~rc1\t3\tall\t100\t10\trequired\tmisc\t',
      'abc\t1\t2.0\t1\tall\t100\t10\trequired\tmisc\t',
      'native\t0\t3.1\t\tamd64\t100\t10\tstandard\tmisc\t',
      'zed\t0\t1.0\t1\tamd64\t100\t10\toptional\tmisc\t',
    ]);
    expect(header(out).date).toBe('2025-01-11T10:00:00.000Z');
    const c = loadCatalog(out);
    expect(c.searchPackages(1, { query: 'name==abc', latestOnly: true }).items.map((p) => [p.dbId, p.version, p.release])).toEqual([[3, '2.0', '1']]);
    expect(c.searchPackages(1, { query: 'name==native' }).items[0]).not.toHaveProperty('release');
    expect(c.profilePackages(1, 1).map((p) => p.dbId)).toEqual([3]);
    expect(c.profilePackages(1, 2).map((p) => p.name)).toEqual(['abc', 'native']);
    expect(c.distributions[0]!.lastPkgBuildDate).toBe('2025-01-11T10:00:00.000Z');
  });

  it('fails with a clear message when there is no index', () => {
    const r = spawnSync(process.execPath, [SCRIPT, '--lists', tmp, '--out', join(tmp, 'none.gz')], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('apt-get update');
    expect(existsSync(join(tmp, 'none.gz'))).toBe(false);
  });
});
