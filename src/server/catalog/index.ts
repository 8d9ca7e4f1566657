// The catalog of operating systems, base profiles and packages (docs/contracts.md "Catalog"), read
// once from the data file that scripts/build-catalog.mjs writes, and cached.
import { resolve } from 'node:path';
import { listQuery, type ListOptions } from '../../fiql';
import { formatVersion, packageKey } from '../../imaging/debian';
import type { DistribProfile, Distribution, Pkg } from '../../model/resources';
import { defaultDataFile, readCatalogData, type CatalogData, type CatalogMeta, type PackageEntry } from './data-file';
import { buildDistributions, buildProfile, DEBIAN_ID, PROFILES, selectProfilePackages } from './distributions';
import { packageSelectors, toPkg } from './packages';
import { deepFreeze } from '../deep-freeze';

export { DEBIAN_ID, WINDOWS_ID } from './distributions';
export type { CatalogMeta, PackageEntry } from './data-file';

export interface PackageSearch extends ListOptions {
  /** Only the latest version of each name and arch. */
  latestOnly?: boolean | undefined;
}

export interface Catalog {
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
   * The current version (`[epoch:]upstream[-revision]`, as the index writes it) of a Debian package, or
   * undefined when the catalog has no such name and arch: what a pinned version is checked against.
   */
  resolveVersion(name: string, arch: string): string | undefined;
}

export interface PackageCursor {
  total: number;
  items: Iterable<Pkg>;
  version: string;
}

const cache = new Map<string, Catalog>();

/** The catalog of `file` (default: `defaultDataFile()`), read on first use and cached by path. */
export function loadCatalog(file?: string): Catalog {
  const path = resolve(file ?? defaultDataFile());
  let c = cache.get(path);
  if (!c) {
    c = createCatalog(path);
    cache.set(path, c);
  }
  return c;
}

/** The catalog of `file` if this process has read it already (nothing to read again). */
export function cachedCatalog(file: string): Catalog | undefined {
  return cache.get(resolve(file));
}

/** Keeps a catalog read in full for later `loadCatalog` calls of the same path. */
export function keepCatalog(file: string, catalog: Catalog): void {
  cache.set(resolve(file), catalog);
}

/** The catalog of `file`, read now and not cached (a refreshed file is read again under the same path). */
export function createCatalog(file: string): Catalog {
  return catalogOf(readCatalogData(file));
}

/** The catalog of a data file's contents. */
export function catalogOf(data: CatalogData): Catalog {
  const { meta, packages } = data;
  const latest = packages.filter((e) => e.latest);
  const byId = new Map(packages.map((e) => [e.id, e]));
  const current = new Map(latest.map((e) => [packageKey(e.name, e.arch), e]));
  // Rows are sorted by name (then arch): a search ordered by name needs no sort, one by dbId only while
  // ids still follow the rows (new names of a refresh get ids above the others).
  const idsInOrder = packages.every((e, k) => k === 0 || packages[k - 1]!.id < e.id);
  const profilePkgs = new Map<number, PackageEntry[]>(PROFILES.map((p) => [p.id, selectProfilePackages(p, packages)]));
  const search = packageSearch(meta, idsInOrder);
  const hasRepo = (distId: number) => distId === DEBIAN_ID;
  return {
    ...catalogHead(meta, profilePkgs),
    packageCursor: (distId, opts = {}) => search(distId, opts.latestOnly ? latest : packages, opts),
    searchPackages: (distId, opts = {}) => collect(search(distId, opts.latestOnly ? latest : packages, opts)),
    getPackage: (distId, pkgId) => {
      if (!hasRepo(distId) || !Number.isSafeInteger(pkgId)) return undefined;
      const e = byId.get(pkgId);
      return e && toPkg(distId, e, meta);
    },
    resolveVersion: (name, arch) => {
      const e = current.get(packageKey(name, arch));
      return e && entryVersion(e);
    },
  };
}

export type CatalogHead = Pick<Catalog, 'meta' | 'distributions' | 'getDistribution' | 'profiles' | 'getProfile' | 'profilePackages'>;

/** What a catalog answers from its metadata and its profiles' rows alone. */
export function catalogHead(meta: CatalogMeta, profilePkgs: ReadonlyMap<number, readonly PackageEntry[]>): CatalogHead {
  const distributions = deepFreeze(buildDistributions(meta));
  const profileRecords = PROFILES.map((p) => ({ def: p, record: buildProfile(p, meta, profilePkgs.get(p.id) ?? []) }));
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
      const def = PROFILES.find((p) => p.distId === distId && p.id === pid);
      return def ? (profilePkgs.get(def.id) ?? []).map((e) => toPkg(distId, e, meta)) : [];
    },
  };
}

/**
 * The package search over `rows` (the whole list, or any part of it in the same order that holds every
 * match); `idsInOrder`: the whole list is in id order, so a search ordered by dbId needs no sort.
 */
export function packageSearch(meta: CatalogMeta, idsInOrder: boolean): (distId: number, rows: readonly PackageEntry[], opts: PackageSearch) => PackageCursor {
  const selectors = packageSelectors(meta);
  const hints = { naturalOrder: idsInOrder ? ['dbId', 'name'] : ['name'] };
  return (distId, rows, opts) => {
    if (distId !== DEBIAN_ID) {
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
