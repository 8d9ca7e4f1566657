// Reads the catalog data file written by scripts/build-catalog.mjs (its header explains the format):
// gzip'd TSV, `#key\tvalue` metadata, a column header, one package per row in id order.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';

export const DEFAULT_DATA_FILE = 'data/debian-12-amd64.tsv.gz';

/** One package row, with its id (1-based row number) and whether it is the latest version of its name and arch. */
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

export interface CatalogData {
  readonly file: string;
  readonly meta: CatalogMeta;
  readonly packages: readonly PackageEntry[];
}

const COLUMNS = 'name\tepoch\tversion\trelease\tarch\tsize\tinstalledSize\tpriority\tsection\tfullName';

/** Where the data file is: `APPLIANCE_FORGE_CATALOG`, else `data/…` in the package root (source or dist). */
export function defaultDataFile(): string {
  const fromEnv = process.env.APPLIANCE_FORGE_CATALOG;
  if (fromEnv) return resolve(fromEnv);
  // Walk up from this module to the folder that holds package.json: works from src/ and dist/src/ alike.
  let dir = __dirname;
  for (let i = 0; i < 8; i++) {
    if (existsSync(join(dir, 'package.json'))) return join(dir, DEFAULT_DATA_FILE);
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  throw new Error(`catalog data file not found: no package.json above ${__dirname}`);
}

export function readCatalogData(file: string): CatalogData {
  const gz = readFileSync(file);
  const text = gunzipSync(gz).toString('utf8');
  const lines = text.split('\n');
  const meta: Record<string, string> = {};
  let i = 0;
  for (; i < lines.length && lines[i]!.startsWith('#'); i++) {
    const line = lines[i]!;
    const tab = line.indexOf('\t');
    if (tab > 0) meta[line.slice(1, tab)] = line.slice(tab + 1);
  }
  if (meta.format !== 'appliance-forge-catalog 1') throw new Error(`${file}: not a catalog data file (format ${JSON.stringify(meta.format)})`);
  if (lines[i] !== COLUMNS) throw new Error(`${file}: unexpected column header`);
  const date = meta.date ?? '';
  if (Number.isNaN(Date.parse(date))) throw new Error(`${file}: no valid #date`);

  const rows: Array<{ -readonly [K in keyof PackageEntry]: PackageEntry[K] }> = [];
  for (i++; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === '') continue;
    const c = line.split('\t');
    if (c.length !== 10) throw new Error(`${file}: line ${i + 1} has ${c.length} columns, expected 10`);
    const [name, epoch, version, release, arch, size, installed, priority, section, fullName] = c as [string, ...string[]];
    const prev = rows[rows.length - 1];
    // Ids are row numbers and `latest` is read from the order: refuse a file that is not sorted.
    if (prev && (prev.name > name || (prev.name === name && prev.arch > arch!))) {
      throw new Error(`${file}: line ${i + 1} is out of order (${name} after ${prev.name})`);
    }
    const upstream = release ? `${version}-${release}` : version!;
    rows.push({
      id: rows.length + 1,
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
  return {
    file,
    meta: {
      origin: meta.origin ?? 'Debian',
      codename: meta.codename ?? '',
      version: meta.version ?? '',
      component: meta.component ?? 'main',
      date: new Date(date).toISOString(),
      source: meta.source ?? '',
      digest: createHash('sha256').update(gz).digest('hex').slice(0, 32),
    },
    packages,
  };
}
