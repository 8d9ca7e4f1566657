// The catalog data file (written by src/server/catalog/build.ts, through scripts/build-catalog.mjs or a
// refresh): gzip'd TSV, `#key\tvalue` metadata, a column header, one package per row sorted by name and arch.
// Format 2 carries each row's id (stable per name and arch across refreshes), `#nextId` and one
// `#retired\tid\tname\tarch` line per package the index no longer has (its id stays reserved). Format 1
// (ids = row numbers, several versions of a name) is still read, as the previous catalog of a refresh.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { OS_RELEASES, type OsRelease } from '../../model/releases';

/** A release's shipped data file, relative to the package root (or to `action/dist/`). */
export const dataFileOf = (r: OsRelease): string => `data/${r.catalogFile}`;

/** One package row, with its id and whether it is the latest version of its name and arch (always, in format 2). */
export interface PackageEntry {
  readonly id: number;
  readonly name: string;
  readonly epoch: number;
  /** Upstream version, without epoch or Debian revision. */
  readonly version: string;
  /** Debian revision; empty for a native package. */
  readonly release: string;
  readonly arch: string;
  /** Size of the .deb in bytes. */
  readonly size: number;
  /** Installed-Size from the index, in KiB; undefined when the index gives none. */
  readonly installedSize: number | undefined;
  readonly priority: string;
  readonly section: string;
  /** Basename of the .deb's Filename. */
  readonly fullName: string;
  readonly latest: boolean;
}

export interface CatalogMeta {
  readonly origin: string;
  readonly codename: string;
  /** Point release of the index, e.g. `12.15`. */
  readonly version: string;
  readonly component: string;
  /** `Date` of the Release file, ISO-8601; stands for every package's build date. */
  readonly date: string;
  readonly source: string;
  /** SHA-256 (hex, first 32 characters) of the data file: changes whenever any row does. */
  readonly digest: string;
}

/** The id of a package the index no longer has: kept so that the name gets it back if it returns. */
export interface RetiredId {
  readonly id: number;
  readonly name: string;
  readonly arch: string;
}

export interface CatalogData {
  readonly file: string;
  readonly meta: CatalogMeta;
  readonly packages: readonly PackageEntry[];
  /** Lowest id never given out: a new name gets it. */
  readonly nextId: number;
  readonly retired: readonly RetiredId[];
}

export const FORMAT = 'appliance-forge-catalog 2';
export const DATA_COLUMNS = ['name', 'epoch', 'version', 'release', 'arch', 'size', 'installedSize', 'priority', 'section', 'fullName'] as const;
const HEADER_1 = DATA_COLUMNS.join('\t');
const HEADER_2 = `id\t${HEADER_1}`;

/**
 * Where a release's data file is (default: the first release's, Debian 12): `APPLIANCE_FORGE_CATALOG` for
 * the first release, else `data/…` in the first folder above this module that has it: the package root
 * from src/ and dist/src/, `action/dist/` from the Action's bundle.
 */
export function defaultDataFile(release: OsRelease = OS_RELEASES[0]!): string {
  const fromEnv = process.env.APPLIANCE_FORGE_CATALOG;
  if (fromEnv && release === OS_RELEASES[0]) return resolve(fromEnv);
  return shippedDataFile(release);
}

/** The data file the package ships for `release` (`data/…` in the first folder above this module that has it). */
export function shippedDataFile(release: OsRelease): string {
  const file = dataFileOf(release);
  let dir = __dirname;
  for (let i = 0; i < 8; i++) {
    if (existsSync(join(dir, file))) return join(dir, file);
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  throw new Error(`catalog data file not found: no ${file} above ${__dirname}`);
}

/** SHA-256 (hex, first 32 characters) of a data file's bytes: the catalog's digest. */
export function dataDigest(gz: Buffer): string {
  return createHash('sha256').update(gz).digest('hex').slice(0, 32);
}

/**
 * What this process has read: data files parsed in full, bytes of start indexes; and start indexes it has
 * written, itself or through its writer process (start-index.ts).
 */
export const catalogReads = { dataFiles: 0, indexBytes: 0, indexWrites: 0 };

export function readCatalogData(file: string): CatalogData {
  const gz = readFileSync(file);
  catalogReads.dataFiles++;
  const text = gunzipSync(gz).toString('utf8');
  const lines = text.split('\n');
  const meta: Record<string, string> = {};
  const retired: RetiredId[] = [];
  let i = 0;
  for (; i < lines.length && lines[i]!.startsWith('#'); i++) {
    const line = lines[i]!;
    const tab = line.indexOf('\t');
    if (tab <= 0) continue;
    const key = line.slice(1, tab);
    if (key !== 'retired') meta[key] = line.slice(tab + 1);
    else {
      const [id, name, arch] = line.slice(tab + 1).split('\t');
      if (!/^\d+$/.test(id ?? '') || !name || !arch) throw new Error(`${file}: line ${i + 1} is not a #retired id`);
      retired.push({ id: Number(id), name, arch });
    }
  }
  const v2 = meta.format === FORMAT;
  if (!v2 && meta.format !== 'appliance-forge-catalog 1') throw new Error(`${file}: not a catalog data file (format ${JSON.stringify(meta.format)})`);
  if (lines[i] !== (v2 ? HEADER_2 : HEADER_1)) throw new Error(`${file}: unexpected column header`);
  const date = meta.date ?? '';
  if (Number.isNaN(Date.parse(date))) throw new Error(`${file}: no valid #date`);

  const rows: Array<{ -readonly [K in keyof PackageEntry]: PackageEntry[K] }> = [];
  for (i++; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === '') continue;
    const c = line.split('\t');
    const width = v2 ? 11 : 10;
    if (c.length !== width) throw new Error(`${file}: line ${i + 1} has ${c.length} columns, expected ${width}`);
    const idText = v2 ? c.shift()! : String(rows.length + 1);
    const [name, epoch, version, release, arch, size, installed, priority, section, fullName] = c as [string, ...string[]];
    const prev = rows[rows.length - 1];
    // `latest` is read from the order (format 1), lookups by name rely on it: refuse a file that is not sorted.
    if (prev && (prev.name > name || (prev.name === name && (prev.arch > arch! || (v2 && prev.arch === arch))))) {
      throw new Error(`${file}: line ${i + 1} is out of order (${name} after ${prev.name})`);
    }
    if (!/^[1-9]\d{0,8}$/.test(idText)) throw new Error(`${file}: line ${i + 1} has no valid id`);
    const upstream = release ? `${version}-${release}` : version!;
    rows.push({
      id: Number(idText),
      name,
      epoch: Number(epoch),
      version: version!,
      release: release!,
      arch: arch!,
      size: Number(size),
      installedSize: installed ? Number(installed) : undefined,
      priority: priority!,
      section: section!,
      fullName: fullName || `${name}_${upstream}_${arch}.deb`,
      latest: true,
    });
  }
  if (meta.count !== undefined && Number(meta.count) !== rows.length) {
    throw new Error(`${file}: ${rows.length} rows, header says ${meta.count}`);
  }
  // Rows of one name and arch are in Debian version order: the last of a run is the latest.
  for (let k = 0; k + 1 < rows.length; k++) {
    const r = rows[k]!;
    const next = rows[k + 1]!;
    if (next.name === r.name && next.arch === r.arch) r.latest = false;
  }
  const packages: readonly PackageEntry[] = rows;
  const ids = new Set<number>();
  for (const { id } of [...rows, ...retired]) {
    if (ids.has(id)) throw new Error(`${file}: id ${id} is given twice`);
    ids.add(id);
  }
  let maxId = 0;
  for (const id of ids) if (id > maxId) maxId = id;
  const nextId = Math.max(maxId + 1, Number(meta.nextId) || 0);
  return {
    nextId,
    retired,
    file,
    meta: {
      origin: meta.origin ?? 'Debian',
      codename: meta.codename ?? '',
      version: meta.version ?? '',
      component: meta.component ?? 'main',
      date: new Date(date).toISOString(),
      source: meta.source ?? '',
      digest: dataDigest(gz),
    },
    packages,
  };
}
