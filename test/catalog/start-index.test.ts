// The start index in the data folder: written once per catalog digest, written again for another
// digest or when it does not read back whole, and a start through it reads a small part of it and never
// parses the data file; a checkout's build writes the shipped catalogs' indexes, found by digest. Each "start" reads a copy of the shipped data file under a new path, which this
// process has not read yet (a catalog read in full is kept per path).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { DEBIAN_ID } from '../../src/server/catalog';
import { catalogReads, defaultDataFile, readCatalogData } from '../../src/server/catalog/data-file';
import { createCatalog, type Catalog } from '../../src/server/catalog/index';
import { builtIndexDir, indexedCatalog, indexedCatalogs, startIndexDir } from '../../src/server/catalog/start-index';
import { startServer } from '../../src/server';
import { OS_RELEASES } from '../../src/model/releases';

const root = join(__dirname, '../..');
const tmp = mkdtempSync(join(tmpdir(), 'catalog-start-index-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const shipped = defaultDataFile();
const reference = createCatalog(shipped);
let copies = 0;

/** A copy of `file` under a path this process has not read. */
function copyOf(file = shipped): string {
  const to = join(tmp, `copy-${++copies}.tsv.gz`);
  copyFileSync(file, to);
  return to;
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function indexFiles(dir: string): string[] {
  return readdirSync(dir).filter((n) => n.endsWith('.index'));
}

/** What a no-op plan asks of the catalog: the profiles, one profile's packages, two packages by name and by id. */
function noOpLookups(c: Catalog) {
  const found = ['nginx', 'curl'].map((name) => c.searchPackages(DEBIAN_ID, { query: `name==${name};arch==amd64`, latestOnly: true }));
  return {
    meta: c.meta,
    distributions: c.distributions,
    profiles: c.profiles(DEBIAN_ID),
    minimal: c.profilePackages(DEBIAN_ID, 1),
    found,
    byId: found.map((r) => c.getPackage(DEBIAN_ID, r.items[0]!.dbId!)),
    version: c.resolveVersion(DEBIAN_ID, 'nginx', 'amd64'),
  };
}

describe('the catalog start index', () => {
  it('is written once per digest; a start through it answers as the data file does and reads a small part of it', () => {
    const dir = startIndexDir(mkdtempSync(join(tmp, 'data-')));
    const parsed = catalogReads.dataFiles;
    const writes = catalogReads.indexWrites;
    const first = indexedCatalog(dir, copyOf());
    // Written by the writer process: this one parsed nothing.
    expect(catalogReads.indexWrites).toBe(writes + 1);
    expect(catalogReads.dataFiles).toBe(parsed);
    const [name] = indexFiles(dir);
    expect(name).toBe(`bookworm.${reference.meta.digest}.index`);
    const written = statSync(join(dir, name!));

    const bytes = catalogReads.indexBytes;
    const second = indexedCatalog(dir, copyOf());
    const answers = noOpLookups(second);
    // The data file was not parsed, and the index not rewritten.
    expect(catalogReads.dataFiles).toBe(parsed);
    expect(catalogReads.indexWrites).toBe(writes + 1);
    expect(statSync(join(dir, name!)).mtimeMs).toBe(written.mtimeMs);
    expect(answers).toEqual(noOpLookups(reference));
    expect(answers.found.map((r) => r.total)).toEqual([1, 1]);
    expect(answers.minimal.length).toBeGreaterThan(10);
    // The bound: the header and a few slices, under a twentieth of the index.
    expect(catalogReads.indexBytes - bytes).toBeLessThan(written.size / 20);
    expect(noOpLookups(first)).toEqual(answers);

    // A search that names no one package reads the whole catalog, and answers the same.
    const sections = { query: 'section==web;priority==optional', orderBy: 'dbId', descending: true, count: 5 };
    expect(second.searchPackages(DEBIAN_ID, sections)).toEqual(reference.searchPackages(DEBIAN_ID, sections));
    expect(catalogReads.dataFiles).toBe(parsed + 1);
    // A wildcard is no exact name; a bad query is still refused.
    const third = indexedCatalog(dir, copyOf());
    expect(third.searchPackages(DEBIAN_ID, { query: 'name==nginx*' })).toEqual(reference.searchPackages(DEBIAN_ID, { query: 'name==nginx*' }));
    expect(() => indexedCatalog(dir, copyOf()).searchPackages(DEBIAN_ID, { query: 'name==nginx;nosuch==1' })).toThrow(/unknown selector/);
    expect(indexedCatalog(dir, copyOf()).searchPackages(DEBIAN_ID, { query: 'name==no-such-package' }).total).toBe(0);
  });

  it('is written again for another digest, and the old one and unfinished writes removed', () => {
    const dir = startIndexDir(mkdtempSync(join(tmp, 'data-')));
    indexedCatalog(dir, copyOf());
    // The same rows compressed otherwise: another digest.
    const other = join(tmp, 'recompressed.tsv.gz');
    writeFileSync(other, gzipSync(gunzipSync(readFileSync(shipped)), { level: 1 }));
    const digest = readCatalogData(other).meta.digest;
    expect(digest).not.toBe(reference.meta.digest);
    writeFileSync(join(dir, `bookworm.${reference.meta.digest}.index.1.tmp`), 'left by a write that did not end');
    // An index named as before releases were told apart is of no more use; another release's is kept.
    writeFileSync(join(dir, `${reference.meta.digest}.index`), 'an index of the single-release layout');
    writeFileSync(join(dir, 'trixie.0123.index'), 'another release\'s index');
    const writes = catalogReads.indexWrites;
    const c = indexedCatalog(dir, copyOf(other));
    expect(catalogReads.indexWrites).toBe(writes + 1);
    expect(c.meta.digest).toBe(digest);
    expect(readdirSync(dir).sort()).toEqual([`bookworm.${digest}.index`, 'bookworm.stamp', 'trixie.0123.index']);
    indexedCatalog(dir, copyOf(other));
    expect(catalogReads.indexWrites).toBe(writes + 1);
  });

  it('knows its data file by a stamp, and a file changed under the same path by its digest', () => {
    const dir = startIndexDir(mkdtempSync(join(tmp, 'data-')));
    const file = copyOf();
    indexedCatalog(dir, file);
    indexedCatalog(dir, file);
    expect(readFileSync(join(dir, 'bookworm.stamp'), 'utf8')).toContain(reference.meta.digest);
    // The same rows compressed otherwise, under the same path: another digest, read and indexed.
    writeFileSync(file, gzipSync(gunzipSync(readFileSync(shipped)), { level: 1 }));
    const c = indexedCatalog(dir, file);
    expect(c.meta.digest).not.toBe(reference.meta.digest);
    expect(indexFiles(dir)).toEqual([`bookworm.${c.meta.digest}.index`]);
    expect(readFileSync(join(dir, 'bookworm.stamp'), 'utf8')).toContain(c.meta.digest);
  });

  it('is written again when it is partial or a slice does not read back as written', () => {
    const dir = startIndexDir(mkdtempSync(join(tmp, 'data-')));
    indexedCatalog(dir, copyOf());
    const file = join(dir, indexFiles(dir)[0]!);
    const whole = readFileSync(file);

    truncateSync(file, whole.length - 100);
    let writes = catalogReads.indexWrites;
    expect(noOpLookups(indexedCatalog(dir, copyOf()))).toEqual(noOpLookups(reference));
    expect(catalogReads.indexWrites).toBe(writes + 1);
    expect(sha(readFileSync(file))).toBe(sha(whole));

    // One byte changed inside nginx's slice (same size, the header intact): found when that slice is read.
    const damaged = Buffer.from(whole);
    const slices = damaged.indexOf('\n', damaged.indexOf('\n') + 1) + 1;
    const at = damaged.indexOf('"name":"nginx"', slices) + 2;
    expect(at).toBeGreaterThan(slices);
    damaged[at] = 'N'.charCodeAt(0);
    writeFileSync(file, damaged);
    writes = catalogReads.indexWrites;
    const c = indexedCatalog(dir, copyOf());
    expect(catalogReads.indexWrites).toBe(writes);
    expect(noOpLookups(c)).toEqual(noOpLookups(reference));
    expect(catalogReads.indexWrites).toBe(writes + 1);
    expect(sha(readFileSync(file))).toBe(sha(whole));

    // A header of the right format whose slices lack a field (an index of an earlier shape).
    const header = whole.subarray(11, whole.indexOf('\n', 11)).toString();
    writeFileSync(file, Buffer.concat([whole.subarray(0, 11), Buffer.from(header.replaceAll('"ids":', '"idz":')), whole.subarray(11 + header.length)]));
    writes = catalogReads.indexWrites;
    expect(noOpLookups(indexedCatalog(dir, copyOf()))).toEqual(noOpLookups(reference));
    expect(catalogReads.indexWrites).toBe(writes + 1);
    expect(sha(readFileSync(file))).toBe(sha(whole));

    // A damaged header length (9.9 GB) sizes no buffer: refused before anything past it is read.
    writeFileSync(file, Buffer.concat([Buffer.from('9999999999\n'), whole.subarray(11)]));
    writes = catalogReads.indexWrites;
    const readBefore = catalogReads.indexBytes;
    expect(indexedCatalog(dir, copyOf()).meta).toEqual(reference.meta);
    // Its 11 bytes, then the header of the index written again.
    expect(catalogReads.indexBytes - readBefore).toBe(11 + 11 + Number(whole.subarray(0, 10).toString()));
    expect(catalogReads.indexWrites).toBe(writes + 1);
    expect(sha(readFileSync(file))).toBe(sha(whole));

    // Not an index at all.
    writeFileSync(file, 'garbage');
    writes = catalogReads.indexWrites;
    expect(indexedCatalog(dir, copyOf()).meta).toEqual(reference.meta);
    expect(catalogReads.indexWrites).toBe(writes + 1);
    expect(sha(readFileSync(file))).toBe(sha(whole));
  });

  it('is kept in the data folder of a started server without a build\'s indexes (an installed package)', () => {
    const dir = startIndexDir(mkdtempSync(join(tmp, 'installed-')));
    indexedCatalogs(dir);
    // One per release, each named by its release and digest.
    expect(indexFiles(dir).sort()).toEqual([`bookworm.${reference.meta.digest}.index`, `trixie.${trixieDigest()}.index`]);
  });

  it('of a checkout is the build\'s (scripts/build-catalog-index.mjs): a first start writes and parses nothing', async () => {
    const built = spawnSync(process.execPath, [join(root, 'scripts/build-catalog-index.mjs')], { encoding: 'utf8' });
    expect(built.status, built.stderr).toBe(0);
    expect(indexFiles(builtIndexDir()).sort()).toEqual([`bookworm.${reference.meta.digest}.index`, `trixie.${trixieDigest()}.index`]);
    const dataDir = join(tmp, 'server');
    const parsed = catalogReads.dataFiles;
    const writes = catalogReads.indexWrites;
    const server = await startServer({ dataDir, cacheDir: join(tmp, 'cache') });
    await server.close();
    expect(catalogReads.indexWrites).toBe(writes);
    expect(catalogReads.dataFiles).toBe(parsed);
    // The data folder keeps only each data file's stamp.
    expect(readdirSync(startIndexDir(dataDir)).sort()).toEqual(['bookworm.stamp', 'trixie.stamp']);
  });

  it('of a build is found by digest: another data file writes its own, a damaged slice is read around', () => {
    const builtDir = mkdtempSync(join(tmp, 'built-'));
    const [bookworm] = indexFiles(builtIndexDir()).filter((n) => n.startsWith('bookworm.'));
    const whole = readFileSync(join(builtIndexDir(), bookworm!));
    writeFileSync(join(builtDir, bookworm!), whole);
    let writes = catalogReads.indexWrites;
    const dir = startIndexDir(mkdtempSync(join(tmp, 'data-')));
    expect(noOpLookups(indexedCatalog(dir, copyOf(), OS_RELEASES[0], builtDir))).toEqual(noOpLookups(reference));
    expect(catalogReads.indexWrites).toBe(writes);
    expect(indexFiles(dir)).toEqual([]);

    // Another data file (the same rows compressed otherwise): not the build's digest, so its own index is written.
    const other = join(tmp, 'other-built.tsv.gz');
    writeFileSync(other, gzipSync(gunzipSync(readFileSync(shipped)), { level: 1 }));
    const otherDir = startIndexDir(mkdtempSync(join(tmp, 'data-')));
    writes = catalogReads.indexWrites;
    expect(indexedCatalog(otherDir, copyOf(other), OS_RELEASES[0], builtDir).meta.digest).not.toBe(reference.meta.digest);
    expect(catalogReads.indexWrites).toBe(writes + 1);
    expect(indexFiles(otherDir)).toHaveLength(1);

    // A byte of the slice holding nginx changed: its checksum fails, the data file is read and an index written.
    const headLength = Number(whole.subarray(0, 10).toString());
    const header = JSON.parse(whole.subarray(11, 11 + headLength).toString()) as { slices: Array<{ first: string; last: string; offset: number }> };
    const slice = header.slices.find((x) => x.first <= 'nginx' && 'nginx' <= x.last)!;
    const damaged = Buffer.from(whole);
    const at = 11 + headLength + slice.offset + 5;
    damaged[at] = damaged[at]! ^ 1;
    writeFileSync(join(builtDir, bookworm!), damaged);
    const thirdDir = startIndexDir(mkdtempSync(join(tmp, 'data-')));
    writes = catalogReads.indexWrites;
    expect(noOpLookups(indexedCatalog(thirdDir, copyOf(), OS_RELEASES[0], builtDir))).toEqual(noOpLookups(reference));
    expect(catalogReads.indexWrites).toBe(writes + 1);
  });
});

function trixieDigest(): string {
  return createHash('sha256').update(readFileSync(defaultDataFile(OS_RELEASES[1]))).digest('hex').slice(0, 32);
}
