// The start index: the parsed catalog kept in the data folder, one file per catalog digest, so that a
// start reads the metadata, the profiles and the few rows it is asked for instead of the whole data
// file. Rows are kept in slices of consecutive rows (the data file's order: by name, then arch), each
// read on first use. The index is written from the one parse of the data file (readCatalogData); an
// index that does not read back whole (partial, corrupted, another digest) is ignored and written again.
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { compiledScript } from '../../host/compiled-script';
import { parseFiql, type FiqlNode, type ListOptions } from '../../fiql';
import { packageKey } from '../../debian/package-key';
import { realFolder } from '../data-folder';
import { catalogReads, dataDigest, defaultDataFile, readCatalogData, shippedDataFile, type CatalogMeta, type PackageEntry } from './data-file';
import { releaseProfiles, selectProfilePackages } from './distributions';
import { toPkg } from './packages';
import { cachedCatalog, catalogHead, catalogOf, collect, entryVersion, joinCatalogs, keepCatalog, packageSearch, type Catalog, type PackageSearch } from './index';
import { OS_RELEASES, type OsRelease } from '../../model/releases';

// Changed whenever the header or a slice changes shape: an index of another format is written again.
const FORMAT = 'appliance-forge-catalog-index 2';
/** Rows per slice: a slice is a few tens of KB of JSON. */
const SLICE_ROWS = 256;
/** The header's length, as fixed-width decimal digits and a newline, opens the file. */
const LENGTH_DIGITS = 10;
const SUFFIX = '.index';

/** The server's catalog folder in its data folder (the refreshed catalog is kept there too). */
export const CATALOG_DIR = 'catalog';

/** Where a server with data folder `dataDir` keeps its start index. */
export function startIndexDir(dataDir: string): string {
  return join(dataDir, CATALOG_DIR, 'start-index');
}

/**
 * Where a checkout's build (`npm run build`, `prepare`: scripts/build-catalog-index.mjs) writes the
 * shipped catalogs' indexes, `dist/catalog-index/` beside the shipped `data/`, so that no data folder's
 * first start writes them. Not in the published package (31 MB): an installed one writes each index into
 * its data folder at a first start.
 */
export function builtIndexDir(): string {
  return join(dirname(dirname(shippedDataFile(OS_RELEASES[0]!))), 'dist', 'catalog-index');
}

const indexFileOf = (dir: string, release: OsRelease, digest: string): string => join(dir, `${release.codename}.${digest}${SUFFIX}`);

interface Slice {
  readonly first: string;
  readonly last: string;
  /** The slice's ids as runs of consecutive ids, `[from, to]`: a refresh's new ids sit apart from the others. */
  readonly ids: ReadonlyArray<readonly [number, number]>;
  /** Byte offset from the end of the header, and length. */
  readonly offset: number;
  readonly length: number;
  readonly sha256: string;
}

interface Header {
  readonly format: typeof FORMAT;
  readonly meta: CatalogMeta;
  readonly idsInOrder: boolean;
  readonly profiles: ReadonlyArray<readonly [number, readonly PackageEntry[]]>;
  readonly slices: readonly Slice[];
  /** Whole file size: a partial write does not pass for an index. */
  readonly size: number;
}

/** Every release's shipped catalog through its start index in `indexDir` or the build's, joined with Windows. */
export function indexedCatalogs(indexDir: string, built?: string): Catalog {
  return joinCatalogs(OS_RELEASES.map((r) => indexedCatalog(indexDir, defaultDataFile(r), r, built)));
}

/**
 * The catalog of `file` (default: the shipped data file of `release`, Debian 12 by default) through its
 * start index in `indexDir` (`<codename>.<digest>.index`): read in full and the index written when there
 * is no sound index of its digest there nor in `built` (a build's indexes, found by digest), else read
 * from the index. A catalog this process has already read in full is used as it is.
 */
export function indexedCatalog(indexDir: string, file?: string, release: OsRelease = OS_RELEASES[0]!, built?: string): Catalog {
  const path = resolve(file ?? defaultDataFile(release));
  const known = cachedCatalog(path, release);
  if (known) return known;
  const digest = digestOf(path, indexDir, release);
  const indexFile = indexFileOf(indexDir, release, digest);
  const readAll = () => rebuild(path, indexDir, indexFile, release);
  const own = readHeader(indexFile, digest);
  if (own) return fromIndex(indexFile, own.header, own.base, release, readAll);
  const builtFile = built === undefined ? undefined : indexFileOf(built, release, digest);
  const prebuilt = builtFile === undefined ? undefined : readHeader(builtFile, digest);
  if (builtFile !== undefined && prebuilt) return fromIndex(builtFile, prebuilt.header, prebuilt.base, release, readAll);
  const written = writeApart(path, indexDir, indexFile, release) ? readHeader(indexFile, digest) : undefined;
  if (written) return fromIndex(indexFile, written.header, written.base, release, readAll);
  return readAll();
}

/**
 * Writes the index of each release's shipped data file into `dir` (a build's `dist/catalog-index/`), where
 * there is no sound one of its digest; readable by every user of the checkout. The written files' names.
 */
export function writeBuiltIndexes(dir: string): string[] {
  mkdirSync(dir, { recursive: true });
  return OS_RELEASES.map((release) => {
    const path = shippedDataFile(release);
    const digest = dataDigest(readFileSync(path));
    const file = indexFileOf(dir, release, digest);
    if (!readHeader(file, digest)) {
      const data = readCatalogData(path);
      writeIndex(dir, file, data.meta, data.packages, release, 0o644);
    }
    return file;
  });
}

/**
 * Writes the index in a child process, whose memory goes with it: parsing a data file in full takes
 * ~70 MiB, which a server would otherwise keep as its peak. False where there is no writer script (the
 * Action's bundle) or it failed: the caller reads the data file itself.
 */
function writeApart(path: string, indexDir: string, indexFile: string, release: OsRelease): boolean {
  const script = compiledScript('catalog-index-main.js', __filename, __dirname);
  if (!existsSync(script)) return false;
  try {
    for (const d of [dirname(indexDir), indexDir]) realFolder(d, true);
  } catch {
    return false;
  }
  if (spawnSync(process.execPath, [script, path, indexDir, indexFile, release.codename], { stdio: 'ignore' }).status !== 0) return false;
  catalogReads.indexWrites++;
  return true;
}

/** Reads a data file in full and writes its index (the writer process's whole work). */
export function writeStartIndex(path: string, indexDir: string, indexFile: string, release: OsRelease): void {
  const data = readCatalogData(path);
  writeIndex(indexDir, indexFile, data.meta, data.packages, release);
}

/**
 * The data file's digest, kept in the index folder (`<codename>.stamp`) with the file's identity: device,
 * inode, size, modification and change times (a change time no one can set back). A start whose file is
 * the same one reads none of it; any other file, or the same one changed, is hashed again.
 */
function digestOf(path: string, indexDir: string, release: OsRelease): string {
  const st = statSync(path);
  const identity = [path, st.dev, st.ino, st.size, st.mtimeMs, st.ctimeMs].join('\t');
  const stamp = join(indexDir, `${release.codename}.stamp`);
  try {
    const [kept, digest] = readFileSync(stamp, 'utf8').split('\n');
    if (kept === identity && digest && /^[0-9a-f]{32}$/.test(digest)) return digest;
  } catch {
    // no stamp yet
  }
  const digest = dataDigest(readFileSync(path));
  try {
    // The folder is made here too: a start through a build's index writes nothing else there.
    for (const d of [dirname(indexDir), indexDir]) realFolder(d, true);
    // Written beside and renamed over: a link there is replaced, never followed.
    const tmp = `${stamp}.${process.pid}.tmp`;
    writeFileSync(tmp, `${identity}\n${digest}\n`, { mode: 0o600, flag: 'wx' });
    renameSync(tmp, stamp);
  } catch {
    // No data folder (yet): the next start writes the stamp.
  }
  return digest;
}

/** Reads the data file in full, keeps the catalog for this process and writes its index. */
function rebuild(path: string, indexDir: string, indexFile: string, release: OsRelease): Catalog {
  const data = readCatalogData(path);
  const catalog = catalogOf(data, release);
  keepCatalog(path, catalog, release);
  try {
    for (const d of [dirname(indexDir), indexDir]) realFolder(d, true);
    writeIndex(indexDir, indexFile, data.meta, data.packages, release);
    catalogReads.indexWrites++;
  } catch {
    // Only the next start is slower: the catalog itself is read.
  }
  return catalog;
}

function writeIndex(indexDir: string, indexFile: string, meta: CatalogMeta, packages: readonly PackageEntry[], release: OsRelease, mode = 0o600): void {
  const bodies: Buffer[] = [];
  const slices: Slice[] = [];
  let offset = 0;
  for (let k = 0; k < packages.length; k += SLICE_ROWS) {
    const rows = packages.slice(k, k + SLICE_ROWS);
    const body = Buffer.from(JSON.stringify(rows));
    slices.push({
      first: rows[0]!.name,
      last: rows[rows.length - 1]!.name,
      ids: idRuns(rows.map((e) => e.id)),
      offset,
      length: body.length,
      sha256: createHash('sha256').update(body).digest('hex'),
    });
    bodies.push(body);
    offset += body.length;
  }
  const idsInOrder = packages.every((e, k) => k === 0 || packages[k - 1]!.id < e.id);
  const profiles = releaseProfiles(release).map((p) => [p.id, selectProfilePackages(p, packages)] as const);
  // The size is part of the header: find the width that makes it true.
  let size = 0;
  let head = Buffer.alloc(0);
  for (let round = 0; round < 3; round++) {
    const header: Header = { format: FORMAT, meta, idsInOrder, profiles, slices, size };
    head = Buffer.from(`${JSON.stringify(header)}\n`);
    const next = LENGTH_DIGITS + 1 + head.length + offset;
    if (next === size) break;
    size = next;
  }
  const tmp = `${indexFile}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, Buffer.concat([Buffer.from(`${String(head.length).padStart(LENGTH_DIGITS, '0')}\n`), head, ...bodies]), { mode });
    renameSync(tmp, indexFile);
  } catch (e) {
    // A full disk leaves a partial file: removed at once, so the space is the data's again.
    rmSync(tmp, { force: true });
    throw e;
  }
  // Indexes of other digests (an older catalog, or one named without its release) are of no more use, nor
  // what an interrupted write left; those of the other releases are theirs.
  const others = OS_RELEASES.filter((r) => r !== release).map((r) => `${r.codename}.`);
  for (const name of readdirSync(indexDir)) {
    if (others.some((p) => name.startsWith(p))) continue;
    if ((name.endsWith(SUFFIX) || name.endsWith('.tmp')) && join(indexDir, name) !== indexFile) rmSync(join(indexDir, name), { force: true });
  }
}

/** The header of a sound index of `digest` and where its slices start, or undefined (none, partial, corrupted). */
function readHeader(indexFile: string, digest: string): { header: Header; base: number } | undefined {
  let fd: number;
  try {
    fd = openSync(indexFile, 'r');
  } catch {
    return undefined;
  }
  try {
    const lengthText = readAt(fd, 0, LENGTH_DIGITS + 1).toString('latin1');
    if (!/^\d+\n$/.test(lengthText)) return undefined;
    const length = Number(lengthText.trim());
    // A damaged length must not size a buffer: nothing in the file is longer than the file.
    const fileSize = fstatSync(fd).size;
    if (LENGTH_DIGITS + 1 + length > fileSize) return undefined;
    const header = JSON.parse(readAt(fd, LENGTH_DIGITS + 1, length).toString('utf8')) as Header;
    if (header.format !== FORMAT || header.meta?.digest !== digest || header.size !== fileSize) return undefined;
    const base = LENGTH_DIGITS + 1 + length;
    if (!Array.isArray(header.profiles) || !Array.isArray(header.slices) || !header.slices.every((s) => soundSlice(s, fileSize - base))) return undefined;
    return { header, base };
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** A slice entry of the right shape that lies inside the `room` bytes after the header. */
function soundSlice(s: Slice, room: number): boolean {
  return (
    typeof s.first === 'string' && typeof s.last === 'string' && Array.isArray(s.ids) && typeof s.sha256 === 'string' &&
    Number.isSafeInteger(s.offset) && Number.isSafeInteger(s.length) && s.offset >= 0 && s.length >= 0 && s.offset + s.length <= room
  );
}

function readAt(fd: number, position: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  const n = readSync(fd, buf, 0, length, position);
  catalogReads.indexBytes += n;
  if (n !== length) throw new Error('index ends early');
  return buf;
}

/**
 * The catalog answered from the index: slices are read when a lookup needs them. A search that does
 * not name one package exactly, or a slice that does not read back as written, reads the whole catalog.
 */
function fromIndex(indexFile: string, header: Header, base: number, release: OsRelease, readAll: () => Catalog): Catalog {
  const { meta } = header;
  const own = release.distId;
  const profilePkgs = new Map(header.profiles.map(([id, rows]) => [id, rows]));
  const profileRows = new Map<number, PackageEntry>();
  for (const [, rows] of header.profiles) for (const e of rows) profileRows.set(e.id, e);
  const search = packageSearch(meta, header.idsInOrder, own);
  const loaded = new Map<number, readonly PackageEntry[]>();
  let whole: Catalog | undefined;
  const all = (): Catalog => (whole ??= readAll());

  /** The rows of the slices that `pick` selects, in file order; undefined when a slice is unsound. */
  const rowsOf = (pick: (s: Slice) => boolean): PackageEntry[] | undefined => {
    const rows: PackageEntry[] = [];
    for (let k = 0; k < header.slices.length; k++) {
      const s = header.slices[k]!;
      if (!pick(s)) continue;
      let part = loaded.get(k);
      if (!part) {
        try {
          const fd = openSync(indexFile, 'r');
          try {
            const body = readAt(fd, base + s.offset, s.length);
            if (createHash('sha256').update(body).digest('hex') !== s.sha256) return undefined;
            part = JSON.parse(body.toString('utf8')) as PackageEntry[];
          } finally {
            closeSync(fd);
          }
        } catch {
          return undefined;
        }
        loaded.set(k, part);
      }
      rows.push(...part);
    }
    return rows;
  };
  const byName = (name: string) => rowsOf((s) => s.first <= name && name <= s.last);

  return {
    ...catalogHead(meta, profilePkgs, release),
    packageCursor: (distId, opts = {}) => cursor(distId, opts),
    searchPackages: (distId, opts = {}) => collect(cursor(distId, opts)),
    getPackage: (distId, pkgId) => {
      if (whole) return whole.getPackage(distId, pkgId);
      if (distId !== own || !Number.isSafeInteger(pkgId)) return undefined;
      const known = profileRows.get(pkgId);
      if (known) return toPkg(distId, known, meta);
      const rows = rowsOf((s) => s.ids.some(([from, to]) => from <= pkgId && pkgId <= to));
      if (!rows) return all().getPackage(distId, pkgId);
      const e = rows.find((r) => r.id === pkgId);
      return e && toPkg(distId, e, meta);
    },
    resolveVersion: (distId, name, arch) => {
      if (whole) return whole.resolveVersion(distId, name, arch);
      if (distId !== own) return undefined;
      const rows = byName(name);
      if (!rows) return all().resolveVersion(distId, name, arch);
      const e = rows.find((r) => r.latest && packageKey(r.name, r.arch) === packageKey(name, arch));
      return e && entryVersion(e);
    },
  };

  function cursor(distId: number, opts: PackageSearch) {
    const query = parsed(opts.query);
    const name = whole || distId !== own ? undefined : exactName(query);
    const rows = name === undefined ? undefined : byName(name);
    if (!rows) return all().packageCursor(distId, opts);
    // Every match is a row of that name, all of which are in these slices, in the catalog's order.
    return search(distId, opts.latestOnly ? rows.filter((e) => e.latest) : rows, { ...opts, query });
  }
}

function idRuns(ids: number[]): Array<[number, number]> {
  const runs: Array<[number, number]> = [];
  for (const id of ids.sort((a, b) => a - b)) {
    const last = runs[runs.length - 1];
    if (last && last[1] + 1 === id) last[1] = id;
    else runs.push([id, id]);
  }
  return runs;
}

function parsed(q: ListOptions['query']): FiqlNode | undefined {
  return q === undefined || (typeof q === 'string' && q.trim() === '') ? undefined : typeof q === 'string' ? parseFiql(q) : q;
}

/** The one name a query requires (`name==x` without a wildcard, alone or in an AND), if any. */
function exactName(q: FiqlNode | undefined): string | undefined {
  const exact = (n: FiqlNode) => (n.type === 'cmp' && n.selector === 'name' && n.op === '==' && !n.value.includes('*') ? n.value : undefined);
  if (!q) return undefined;
  if (q.type === 'cmp') return exact(q);
  return q.type === 'and' ? q.children.map(exact).find((v) => v !== undefined) : undefined;
}
