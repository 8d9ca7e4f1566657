// The catalog of operating systems, base profiles and packages (docs/contracts.md "Catalog"): one part per
// release of OS_RELEASES, each read once from the data file that scripts/build-catalog.mjs writes and
// cached, joined with Windows (no repository) into the catalog the server answers from.
import { resolve } from 'node:path';
import { listQuery, type ListOptions } from '../../fiql';
// The light parts of the Debian reader only: its index (suites, gzip, child processes) loads with a refresh.
import { packageKey } from '../../debian/package-key';
import { formatVersion } from '../../debian/version';
import type { DistribProfile, Distribution, Pkg } from '../../model/resources';
import { OS_RELEASES, type OsRelease } from '../../model/releases';
import { defaultDataFile, readCatalogData, type CatalogData, type CatalogMeta, type PackageEntry } from './data-file';
import { buildProfile, PROFILES, type ProfileDef, releaseDistribution, releaseProfiles, selectProfilePackages, WINDOWS_ID, windowsDistribution } from './distributions';
import { packageSelectors, toPkg } from './packages';
import { deepFreeze } from '../deep-freeze';

export { DEBIAN_ID, WINDOWS_ID } from './distributions';
export type { CatalogMeta, PackageEntry } from './data-file';

export interface PackageSearch extends ListOptions {
  /** Only the latest version of each name and arch. */
  latestOnly?: boolean | undefined;
}

export interface Catalog {
  /** The metadata of the catalog's data file; of the first release's (Debian 12) for a joined catalog. */
  readonly meta: CatalogMeta;
  readonly distributions: readonly Distribution[];
  getDistribution(distId: number): Distribution | undefined;
  /** Base profiles of a distribution; empty for an unknown one. */
  profiles(distId: number): DistribProfile[];
  getProfile(distId: number, pid: number): DistribProfile | undefined;
  /** Packages a base profile installs; empty for a Windows or unknown profile. */
  profilePackages(distId: number, pid: number): Pkg[];
  /**
   * FIQL search over the packages (wire contract §7); `total` before paging. Empty for a distribution
   * without a repository or an unknown one (the caller answers 404 for those from `getDistribution`).
   * Throws FiqlError for a bad query, orderBy, count or offset.
   */
  searchPackages(distId: number, opts?: PackageSearch): { total: number; items: Pkg[] };
  /**
   * The same search with its records made as they are read (a whole-catalog answer is streamed, never
   * held); `version` names the catalog's contents (the same search of the same version is the same list).
   */
  packageCursor(distId: number, opts?: PackageSearch): PackageCursor;
  getPackage(distId: number, pkgId: number): Pkg | undefined;
  /**
   * The current version (`[epoch:]upstream[-revision]`, as the index writes it) of a package of a
   * distribution, or undefined when it has no such name and arch: what a pinned version is checked against.
   */
  resolveVersion(distId: number, name: string, arch: string): string | undefined;
}

export interface PackageCursor {
  total: number;
  items: Iterable<Pkg>;
  version: string;
}

const cache = new Map<string, Catalog>();
const joined = new Map<string, Catalog>();
const FIRST = OS_RELEASES[0]!;
const partKey = (file: string, release: OsRelease) => `${release.codename}\t${resolve(file)}`;

/**
 * The catalog of every release: `release` (default: the first, Debian 12) read from `file` (default: its
 * `defaultDataFile`), the others from theirs; each part read on first use and cached by path.
 */
export function loadCatalog(file?: string, release: OsRelease = FIRST): Catalog {
  const files = OS_RELEASES.map((r) => (r === release && file !== undefined ? file : defaultDataFile(r)));
  const key = files.map((f, k) => partKey(f, OS_RELEASES[k]!)).join('\n');
  let c = joined.get(key);
  if (!c) {
    c = joinCatalogs(OS_RELEASES.map((r, k) => loadPart(files[k]!, r)));
    joined.set(key, c);
  }
  return c;
}

function loadPart(file: string, release: OsRelease): Catalog {
  let c = cache.get(partKey(file, release));
  if (!c) {
    c = createCatalog(file, release);
    cache.set(partKey(file, release), c);
  }
  return c;
}

/** The catalog of `file` for `release` if this process has read it already (nothing to read again). */
export function cachedCatalog(file: string, release: OsRelease = FIRST): Catalog | undefined {
  return cache.get(partKey(file, release));
}

/** Keeps a catalog read in full for later `loadCatalog` calls of the same path. */
export function keepCatalog(file: string, catalog: Catalog, release: OsRelease = FIRST): void {
  cache.set(partKey(file, release), catalog);
}

/** The catalog of `file` for one release, read now and not cached (a refreshed file is read again under the same path). */
export function createCatalog(file: string, release: OsRelease = FIRST): Catalog {
  return catalogOf(readCatalogData(file), release);
}

/** The catalog of a data file's contents: the distribution of `release`, its profiles and packages. */
export function catalogOf(data: CatalogData, release: OsRelease = FIRST): Catalog {
  const { meta, packages } = data;
  const latest = packages.filter((e) => e.latest);
  const byId = new Map(packages.map((e) => [e.id, e]));
  const current = new Map(latest.map((e) => [packageKey(e.name, e.arch), e]));
  // Rows are sorted by name (then arch): a search ordered by name needs no sort, one by dbId only while
  // ids still follow the rows (new names of a refresh get ids above the others).
  const idsInOrder = packages.every((e, k) => k === 0 || packages[k - 1]!.id < e.id);
  const profilePkgs = new Map<number, PackageEntry[]>(releaseProfiles(release).map((p) => [p.id, selectProfilePackages(p, packages)]));
  const search = packageSearch(meta, idsInOrder, release.distId);
  const own = (distId: number) => distId === release.distId;
  return {
    ...catalogHead(meta, profilePkgs, release),
    packageCursor: (distId, opts = {}) => search(distId, opts.latestOnly ? latest : packages, opts),
    searchPackages: (distId, opts = {}) => collect(search(distId, opts.latestOnly ? latest : packages, opts)),
    getPackage: (distId, pkgId) => {
      if (!own(distId) || !Number.isSafeInteger(pkgId)) return undefined;
      const e = byId.get(pkgId);
      return e && toPkg(distId, e, meta);
    },
    resolveVersion: (distId, name, arch) => {
      const e = own(distId) ? current.get(packageKey(name, arch)) : undefined;
      return e && entryVersion(e);
    },
  };
}

/**
 * The releases' catalogs (in OS_RELEASES order) and Windows as one catalog: each question goes to the
 * part of its distribution. Parts may change under it (a live refresh): the joined records follow, and
 * `distributions` stays the same array while no part changed (the server's view cache relies on it).
 */
export function joinCatalogs(parts: readonly Catalog[]): Catalog {
  const first = parts[0]!;
  let seen: { metas: readonly CatalogMeta[]; dists: ReadonlyArray<readonly Distribution[]> } | undefined;
  let windows: CatalogHead | undefined;
  let distributions: readonly Distribution[] = [];
  const refresh = () => {
    const metas = parts.map((p) => p.meta);
    const dists = parts.map((p) => p.distributions);
    if (seen && metas.every((m, k) => m === seen!.metas[k]) && dists.every((d, k) => d === seen!.dists[k])) return;
    seen = { metas, dists };
    windows = windowsCatalog(first.meta);
    distributions = deepFreeze([...dists.flat(), ...windows.distributions].sort((a, b) => a.dbId! - b.dbId!));
  };
  const head = (distId: number): CatalogHead => {
    refresh();
    return parts.find((p) => p.distributions.some((d) => d.dbId === distId)) ?? windows!;
  };
  // A distribution without a repository (Windows, an unknown id) still validates a search: the first part does.
  const searcher = (distId: number): Catalog => parts.find((p) => p.distributions.some((d) => d.dbId === distId)) ?? first;
  return {
    get meta() { return first.meta; },
    get distributions() {
      refresh();
      return distributions;
    },
    getDistribution: (distId) => head(distId).getDistribution(distId),
    profiles: (distId) => head(distId).profiles(distId),
    getProfile: (distId, pid) => head(distId).getProfile(distId, pid),
    profilePackages: (distId, pid) => head(distId).profilePackages(distId, pid),
    packageCursor: (distId, opts) => searcher(distId).packageCursor(distId, opts),
    searchPackages: (distId, opts) => searcher(distId).searchPackages(distId, opts),
    getPackage: (distId, pkgId) => searcher(distId).getPackage(distId, pkgId),
    resolveVersion: (distId, name, arch) => searcher(distId).resolveVersion(distId, name, arch),
  };
}

/** Windows: its distribution and profile, no packages. */
function windowsCatalog(meta: CatalogMeta): CatalogHead {
  const defs = PROFILES.filter((p) => p.distId === WINDOWS_ID);
  return headOf(meta, [windowsDistribution(meta)], defs, new Map());
}

export type CatalogHead = Pick<Catalog, 'meta' | 'distributions' | 'getDistribution' | 'profiles' | 'getProfile' | 'profilePackages'>;

/** What a release's catalog answers from its metadata and its profiles' rows alone. */
export function catalogHead(meta: CatalogMeta, profilePkgs: ReadonlyMap<number, readonly PackageEntry[]>, release: OsRelease = FIRST): CatalogHead {
  return headOf(meta, [releaseDistribution(release, meta)], releaseProfiles(release), profilePkgs);
}

function headOf(meta: CatalogMeta, records: Distribution[], defs: readonly ProfileDef[], profilePkgs: ReadonlyMap<number, readonly PackageEntry[]>): CatalogHead {
  const distributions = deepFreeze(records);
  const profileRecords = defs.map((p) => ({ def: p, record: buildProfile(p, meta, profilePkgs.get(p.id) ?? []) }));
  // Fresh copies out, so no caller can change the cached records.
  const clone = <T>(v: T): T => structuredClone(v);
  return {
    meta,
    distributions,
    getDistribution: (distId) => {
      const d = distributions.find((x) => x.dbId === distId);
      return d && clone(d);
    },
    profiles: (distId) => profileRecords.filter((p) => p.def.distId === distId).map((p) => clone(p.record)),
    getProfile: (distId, pid) => {
      const p = profileRecords.find((x) => x.def.distId === distId && x.def.id === pid);
      return p && clone(p.record);
    },
    profilePackages: (distId, pid) => {
      const def = defs.find((p) => p.distId === distId && p.id === pid);
      return def ? (profilePkgs.get(def.id) ?? []).map((e) => toPkg(distId, e, meta)) : [];
    },
  };
}

/**
 * The package search over `rows` (the whole list, or any part of it in the same order that holds every
 * match); `idsInOrder`: the whole list is in id order, so a search ordered by dbId needs no sort.
 */
export function packageSearch(meta: CatalogMeta, idsInOrder: boolean, ownId: number): (distId: number, rows: readonly PackageEntry[], opts: PackageSearch) => PackageCursor {
  const selectors = packageSelectors(meta);
  const hints = { naturalOrder: idsInOrder ? ['dbId', 'name'] : ['name'] };
  return (distId, rows, opts) => {
    if (distId !== ownId) {
      // Still validate the query, so a bad one is a 400 whatever the distribution.
      listQuery([], opts, selectors);
      return { total: 0, items: [], version: meta.digest };
    }
    const r = listQuery(rows, opts, selectors, hints);
    return { total: r.total, items: (function* () { for (const e of r.items) yield toPkg(distId, e, meta); })(), version: meta.digest };
  };
}

export function collect(c: PackageCursor): { total: number; items: Pkg[] } {
  return { total: c.total, items: [...c.items] };
}

/** `[epoch:]upstream[-revision]` of a row, as the index writes it. */
export function entryVersion(e: PackageEntry): string {
  return formatVersion({ epoch: e.epoch, upstream: e.version, revision: e.release });
}
